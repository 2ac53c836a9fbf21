//! What every component factory shares: the spec entry that names a component (`kind` and
//! `args`), the context a factory is configured in and the context of one episode.
//!
//! The roles live next to the traits they build (`Agents` in `traparena-agent`, `Attackers`
//! and `Curators` in `traparena-attack`); this module and the generic registry
//! ([`Factory`](crate::Factory), [`KindRegistry`](crate::KindRegistry)) are their common
//! ground, so that none of those crates depends on another.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::TaskError;
use crate::task::Task;

/// A component as a spec names it: a registered `kind` and that kind's `args`.
///
/// In JSON it is either an object, `{"kind": "scripted", "args": {"persona": "urge_submit"}}`,
/// or, for a kind that needs no arguments, just its name: `"credulous"`.
///
/// ```
/// use traparena_task::ComponentSpec;
///
/// let full: ComponentSpec =
///     serde_json::from_str(r#"{"kind": "scripted", "args": {"persona": "urge_submit"}}"#)?;
/// assert_eq!(full.kind, "scripted");
/// assert_eq!(full.args["persona"], "urge_submit");
/// let short: ComponentSpec = serde_json::from_str(r#""credulous""#)?;
/// assert_eq!(short, ComponentSpec::new("credulous"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentSpec {
    /// The registered kind.
    pub kind: String,
    /// The kind's arguments: a JSON object (`{}` when the kind takes none).
    #[serde(skip_serializing_if = "is_empty_object")]
    pub args: Value,
}

fn is_empty_object(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.is_empty()) || v.is_null()
}

impl ComponentSpec {
    /// A kind without arguments.
    pub fn new(kind: impl Into<String>) -> ComponentSpec {
        ComponentSpec {
            kind: kind.into(),
            args: Value::Object(Default::default()),
        }
    }

    /// The same kind with these arguments (a JSON object).
    pub fn with_args(mut self, args: Value) -> ComponentSpec {
        self.args = args;
        self
    }

    /// The arguments as the kind's own type. A missing or `null` `args` reads as `{}`; an error
    /// names the offending field (`args.persona`, ...).
    pub fn parse_args<T: DeserializeOwned>(&self) -> Result<T, TaskError> {
        let args = if self.args.is_null() {
            Value::Object(Default::default())
        } else {
            self.args.clone()
        };
        serde_path_to_error::deserialize::<_, T>(args).map_err(|e| {
            let path = e.path().to_string();
            TaskError::Args {
                kind: self.kind.clone(),
                field: if path == "." {
                    "args".to_owned()
                } else {
                    format!("args.{path}")
                },
                message: e.into_inner().to_string(),
            }
        })
    }

    /// A one-line label for tables: the kind, then its arguments as `key=value` (strings
    /// unquoted): `scripted(persona=urge_submit)`.
    pub fn label(&self) -> String {
        match self.args.as_object() {
            Some(m) if !m.is_empty() => {
                let parts: Vec<String> = m
                    .iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => format!("{k}={s}"),
                        other => format!("{k}={other}"),
                    })
                    .collect();
                format!("{}({})", self.kind, parts.join(", "))
            }
            _ => self.kind.clone(),
        }
    }
}

impl From<&str> for ComponentSpec {
    fn from(kind: &str) -> ComponentSpec {
        ComponentSpec::new(kind)
    }
}

impl<'de> Deserialize<'de> for ComponentSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ComponentSpec, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ComponentSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#"a kind name, or an object {"kind": "...", "args": {...}}"#)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ComponentSpec, E> {
                if s.trim().is_empty() {
                    return Err(E::custom("the kind is empty"));
                }
                Ok(ComponentSpec::new(s))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ComponentSpec, A::Error> {
                let (mut kind, mut args) = (None::<String>, None::<Value>);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "kind" if kind.is_none() => kind = Some(map.next_value()?),
                        "args" if args.is_none() => {
                            let v: Value = map.next_value()?;
                            if !(v.is_object() || v.is_null()) {
                                return Err(de::Error::custom(
                                    "`args` must be an object of the kind's arguments",
                                ));
                            }
                            args = Some(v);
                        }
                        "kind" | "args" => return Err(de::Error::duplicate_field("kind or args")),
                        other => return Err(de::Error::unknown_field(other, &["kind", "args"])),
                    }
                }
                let kind = kind.ok_or_else(|| de::Error::missing_field("kind"))?;
                if kind.trim().is_empty() {
                    return Err(de::Error::custom("the kind is empty"));
                }
                Ok(ComponentSpec {
                    kind,
                    args: args.unwrap_or_else(|| Value::Object(Default::default())),
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// What a factory found wrong with its arguments when configuring: the field (relative to
/// `args`, dotted) and why. The registry adds the kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsError {
    /// The offending field, relative to `args` (`persona`, `model.base_url`); empty for the
    /// arguments as a whole.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl ArgsError {
    /// The field `field` is wrong because of `message`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> ArgsError {
        ArgsError {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The error as the task crate's error for the component `kind`.
    pub fn for_kind(self, kind: &str) -> TaskError {
        TaskError::Args {
            kind: kind.to_owned(),
            field: if self.field.is_empty() {
                "args".to_owned()
            } else {
                format!("args.{}", self.field)
            },
            message: self.message,
        }
    }
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for ArgsError {}

/// The arguments of a kind that takes none: reads `{}` (or a missing `args`) and refuses any
/// field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Looks a named secret up (`None`: not set).
pub type SecretLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Where a factory is configured: the folder relative paths in `args` are read against, and
/// the lookup of secrets (API keys) named in `args`. Libraries read no environment variables;
/// the `traparena` command passes one that does.
#[derive(Clone)]
pub struct ConfigContext {
    /// Relative paths in `args` are relative to this folder (the spec's folder, or the working
    /// folder on the command line).
    pub base_dir: PathBuf,
    /// Looks a named secret up (`None`: not set).
    pub secrets: Arc<SecretLookup>,
    /// Where external agents are installed, one folder per profile (the `traparena` command:
    /// `$TRAPARENA_AGENTS_DIR`, else `/opt/traparena/agents`); `None`: an external agent
    /// must name its installation itself.
    pub agents_dir: Option<PathBuf>,
    /// True when some of the component's episodes will be forks of recorded ones
    /// ([`EpisodeContext::fork`]): a kind that cannot replay a prefix without a recording
    /// (the `llm` agent without a cassette) refuses its arguments here rather than in every
    /// fork. Set by the runner when it resolves a spec with forked conditions.
    pub forked: bool,
}

impl ConfigContext {
    /// A context whose relative paths are read against `base_dir`, with no secrets.
    pub fn new(base_dir: impl Into<PathBuf>) -> ConfigContext {
        ConfigContext {
            base_dir: base_dir.into(),
            secrets: Arc::new(|_| None),
            agents_dir: None,
            forked: false,
        }
    }

    /// The same context, with external agents installed under `dir`.
    pub fn with_agents_dir(mut self, dir: impl Into<PathBuf>) -> ConfigContext {
        self.agents_dir = Some(dir.into());
        self
    }

    /// The same context, looking secrets up with `lookup`.
    pub fn with_secrets(
        mut self,
        lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> ConfigContext {
        self.secrets = Arc::new(lookup);
        self
    }

    /// `path` read against [`ConfigContext::base_dir`] (absolute paths are kept).
    pub fn resolve(&self, path: &Path) -> PathBuf {
        self.base_dir.join(path)
    }

    /// The secret named `name`.
    pub fn secret(&self, name: &str) -> Option<String> {
        (self.secrets)(name)
    }
}

impl fmt::Debug for ConfigContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigContext")
            .field("base_dir", &self.base_dir)
            .field("agents_dir", &self.agents_dir)
            .field("forked", &self.forked)
            .finish_non_exhaustive()
    }
}

impl Default for ConfigContext {
    fn default() -> ConfigContext {
        ConfigContext::new(".")
    }
}

/// What one episode's component is built for.
#[derive(Debug, Clone, Copy)]
pub struct EpisodeContext<'a> {
    /// The task.
    pub task: &'a Task,
    /// The episode's seed: every random choice of the component comes from it.
    pub seed: u64,
    /// A name of the episode, unique within a run (keys record and replay of model calls).
    pub scope: &'a str,
    /// Whether the target gets the defence instruction (verify collaborator claims).
    pub defence: bool,
    /// Set when the episode is a fork of a recorded one: its first turns are its parent's.
    /// An agent that samples replays them (the `llm` agent: from the parent's recorded model
    /// responses) and continues with [`seed`](Self::seed); an agent that ignores it is built
    /// for a fork with its parent's seed, so a deterministic agent replays its prefix as is.
    pub fork: Option<ForkContext<'a>>,
}

/// What a forked episode's components know of its parent (see [`EpisodeContext::fork`]).
///
/// A fork at step `k` replays its parent's first `k` steps — the same turns, the same tool
/// output, checked — then the collaborator may speak after step `k`, and the episode goes on
/// live. Both branches of a fork point (with the message and without) are built from the
/// same context, so they differ only in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForkContext<'a> {
    /// The parent episode's scope (its [`EpisodeContext::scope`]): where its recorded model
    /// calls are found.
    pub parent_scope: &'a str,
    /// The parent episode's seed: the prefix's requests carry it.
    pub parent_seed: u64,
    /// How many of the parent's steps are replayed (`k`).
    pub step: u32,
    /// The seed of the live continuation, shared by both branches of the fork point.
    pub seed: u64,
}

impl EpisodeContext<'_> {
    /// True while a fork's turn `steps_taken + 1` is still one of its parent's (the prefix).
    pub fn replays(&self, steps_taken: u32) -> bool {
        self.fork.is_some_and(|f| steps_taken < f.step)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A kind's typed arguments, for the tests of reading them (here and in `kinds`).
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    pub(crate) struct Persona {
        pub(crate) persona: String,
        #[serde(default)]
        pub(crate) rate: Option<f64>,
    }

    #[test]
    fn entries_read_in_both_forms_and_bad_ones_say_why() {
        type Case<'a> = (&'a str, Result<(&'a str, &'a str), &'a str>);
        let cases: &[Case<'_>] = &[
            (r#""gold""#, Ok(("gold", "{}"))),
            (r#"{"kind": "gold"}"#, Ok(("gold", "{}"))),
            (r#"{"kind": "gold", "args": null}"#, Ok(("gold", "null"))),
            (
                r#"{"kind": "s", "args": {"persona": "x"}}"#,
                Ok(("s", r#"{"persona":"x"}"#)),
            ),
            (r#""""#, Err("the kind is empty")),
            (r#"{"args": {}}"#, Err("missing field `kind`")),
            (r#"{"kind": "s", "arg": {}}"#, Err("unknown field `arg`")),
            (
                r#"{"kind": "s", "args": 3}"#,
                Err("`args` must be an object"),
            ),
            (r#"7"#, Err("a kind name, or an object")),
        ];
        for (text, want) in cases {
            let got = serde_json::from_str::<ComponentSpec>(text);
            match (want, got) {
                (Ok((kind, args)), Ok(c)) => {
                    assert_eq!(c.kind, *kind, "{text}");
                    assert_eq!(c.args.to_string(), *args, "{text}");
                }
                (Err(needle), Err(e)) => assert!(e.to_string().contains(needle), "{text}: {e}"),
                (want, got) => panic!("{text}: wanted {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn argument_errors_name_the_field() {
        let c = ComponentSpec::new("scripted").with_args(serde_json::json!({"persona": 3}));
        let e = c.parse_args::<Persona>().unwrap_err().to_string();
        assert!(e.contains("args.persona"), "{e}");
        let c =
            ComponentSpec::new("scripted").with_args(serde_json::json!({"persona": "a", "rte": 1}));
        let e = c.parse_args::<Persona>().unwrap_err().to_string();
        assert!(e.contains("unknown field `rte`"), "{e}");
        let e = ComponentSpec::new("scripted")
            .parse_args::<Persona>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing field `persona`"), "{e}");
        assert!(ComponentSpec::new("gold").parse_args::<NoArgs>().is_ok());
        let e = ComponentSpec::new("gold")
            .with_args(serde_json::json!({"x": 1}))
            .parse_args::<NoArgs>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("gold") && e.contains("unknown field `x`"), "{e}");
    }

    #[test]
    fn labels_show_arguments() {
        let c = ComponentSpec::new("scripted").with_args(serde_json::json!({"persona": "u"}));
        assert_eq!(c.label(), "scripted(persona=u)");
        assert_eq!(ComponentSpec::new("gold").label(), "gold");
    }
}

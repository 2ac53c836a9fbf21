//! Agent profiles: how to start an external agent on a task (the on-disk format of
//! `profiles/*.json`, version [`PROFILE_FORMAT`]).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ExternalError;

/// The version of the profile format this crate reads (the `format` field).
pub const PROFILE_FORMAT: u32 = 1;

/// The profiles that ship with TrapArena: name and JSON text.
pub const BUNDLED: &[(&str, &str)] = &[
    (
        "mini-swe-agent",
        include_str!("../profiles/mini-swe-agent.json"),
    ),
    ("claude-code", include_str!("../profiles/claude-code.json")),
    ("codex", include_str!("../profiles/codex.json")),
    ("qwen-code", include_str!("../profiles/qwen-code.json")),
    ("opencode", include_str!("../profiles/opencode.json")),
    ("aider", include_str!("../profiles/aider.json")),
];

/// Which model API the agent speaks (the proxy speaks it to the agent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// OpenAI Chat Completions: `POST {base_url}/chat/completions`, streamed or not
    /// (mini-swe-agent, Qwen Code, aider, opencode).
    OpenaiChat,
    /// Anthropic Messages: `POST {proxy_url}/v1/messages`, streamed or not (Claude Code).
    AnthropicMessages,
    /// OpenAI Responses: `POST {base_url}/responses`, streamed or not, the whole conversation
    /// each time (Codex CLI).
    OpenaiResponses,
}

impl Api {
    /// The wire format of the API.
    pub fn wire(self) -> traparena_model::WireApi {
        match self {
            Api::OpenaiChat => traparena_model::WireApi::ChatCompletions,
            Api::AnthropicMessages => traparena_model::WireApi::AnthropicMessages,
            Api::OpenaiResponses => traparena_model::WireApi::OpenaiResponses,
        }
    }
}

/// Which of the agent's requests are side requests (a title, a summary): answered by the
/// target model like any other, their tokens counted with the next step, but not steps
/// themselves, and no collaborator message is placed in them. Every condition that is set
/// must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideRequests {
    /// The request offers no tools.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub without_tools: bool,
    /// The request's first system message starts with this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_starts_with: Option<String>,
}

/// How to tell that the agent submitted when its process ends. Every condition that is set
/// must hold; a profile sets at least one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndRule {
    /// The exit status of a submitting agent (mini-swe-agent: 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// A JSON file the agent writes (relative to its home folder) ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// ... the JSON pointer of a value in it (`/info/exit_status`) ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// ... and the value it holds when the agent submitted (`"Submitted"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// Text the model's last response holds when it submits (mini-swe-agent's
    /// `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_contains: Option<String>,
    /// Text the end of the agent's standard output holds when it finished its work (Claude
    /// Code's `"subtype":"success"` result line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_contains: Option<String>,
}

/// An external agent's profile: the command that starts it on a task, its configuration, the
/// API it speaks, how it signals the end and what it writes for itself.
///
/// Strings of `command`, `env` and `files` take placeholders: `{prefix}` (the agent's
/// installation folder), `{base_url}` (the proxy, `http://127.0.0.1:PORT/v1`), `{proxy_url}`
/// (the same without `/v1`, for agents that add it themselves), `{model}` (the
/// target model's name), `{api_key}` (a dummy key: the proxy holds the real one), `{budget}`
/// (the episode's budget in model calls), `{task}` (the repair description), `{home}` (the
/// agent's home folder, outside the workspace) and `{workspace}` (its working folder).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The format version ([`PROFILE_FORMAT`]).
    pub format: u32,
    /// The profile's name (the default installation folder under the agents folder).
    pub name: String,
    /// One line about the agent.
    #[serde(default)]
    pub description: String,
    /// How to install the agent, told when its installation is missing.
    #[serde(default)]
    pub install: String,
    /// A path under the installation folder that exists once the agent is installed
    /// (`bin/mini`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed: Option<String>,
    /// The model API the agent speaks.
    pub api: Api,
    /// argv of the agent process.
    pub command: Vec<String>,
    /// Environment variables of the agent process.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files written into the agent's home folder before the start (relative path: text).
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// How the end of a submitting agent looks.
    pub end: EndRule,
    /// The rules that read a step's moment (an edit, a test run) from the model's response,
    /// first match first, for the attackers' schedules; without rules an external agent's
    /// steps reach no moment but `any_step`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moments: Vec<crate::moments::MomentRule>,
    /// Which requests are side requests, not steps (none unless set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_requests: Option<SideRequests>,
    /// gitignore-style patterns of files the agent writes into the workspace for itself.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// The beginnings of the lines of the agent's tool output that vary from run to run by
    /// themselves (Codex CLI's `Chunk ID: `): a fork's replay of the agent's steps ignores the
    /// rest of such lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volatile_output: Vec<String>,
    /// The agent process's address-space limit in MiB instead of the sandbox's (4 GiB by
    /// default): for runtimes that reserve far more than they use, such as Bun's
    /// JavaScriptCore (opencode needs 8 GiB to start a session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_space_mb: Option<u64>,
    /// Wall-clock limit of one episode's process in seconds (default 1,800).
    #[serde(default = "default_timeout")]
    pub timeout_s: u64,
}

fn default_timeout() -> u64 {
    1800
}

/// The values of a profile's placeholders for one episode.
#[derive(Debug, Clone)]
pub struct Placeholders<'a> {
    /// `{prefix}`.
    pub prefix: &'a Path,
    /// `{base_url}`.
    pub base_url: &'a str,
    /// `{model}`.
    pub model: &'a str,
    /// `{budget}`.
    pub budget: u32,
    /// `{task}`.
    pub task: &'a str,
}

impl Profile {
    /// Reads a profile from JSON text; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Profile, ExternalError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let profile: Profile =
            serde_path_to_error::deserialize(de).map_err(|e| ExternalError::Profile {
                origin: origin.to_owned(),
                message: format!("{}: {}", e.path(), e.inner()),
            })?;
        profile.check(origin)?;
        Ok(profile)
    }

    /// A bundled profile by name, or the profile file at `path` (read against `base_dir`
    /// when relative). A name that is neither lists the bundled profiles.
    pub fn load(name_or_path: &str, base_dir: &Path) -> Result<Profile, ExternalError> {
        if let Some((_, text)) = BUNDLED.iter().find(|(n, _)| *n == name_or_path) {
            return Profile::from_json(text, name_or_path);
        }
        let path = base_dir.join(name_or_path);
        if name_or_path.ends_with(".json") || path.is_file() {
            let text = std::fs::read_to_string(&path).map_err(|e| ExternalError::Profile {
                origin: path.display().to_string(),
                message: e.to_string(),
            })?;
            return Profile::from_json(&text, &path.display().to_string());
        }
        Err(ExternalError::Profile {
            origin: name_or_path.to_owned(),
            message: format!(
                "no such bundled profile (bundled: {}) and no such file",
                BUNDLED
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
    }

    fn check(&self, origin: &str) -> Result<(), ExternalError> {
        let bad = |message: String| ExternalError::Profile {
            origin: origin.to_owned(),
            message,
        };
        if self.format != PROFILE_FORMAT {
            return Err(bad(format!(
                "format {} is not readable by this TrapArena (it reads format {PROFILE_FORMAT})",
                self.format
            )));
        }
        if self.name.trim().is_empty() || self.name.contains('/') {
            return Err(bad("name: must be a non-empty name without `/`".into()));
        }
        if self.command.is_empty() || self.command[0].trim().is_empty() {
            return Err(bad("command: names no program".into()));
        }
        let e = &self.end;
        if e.exit_code.is_none()
            && e.file.is_none()
            && e.response_contains.is_none()
            && e.stdout_contains.is_none()
        {
            return Err(bad(
                "end: says nothing about how a submitting agent ends (set exit_code, file with pointer and equals, response_contains or stdout_contains)".into(),
            ));
        }
        if let Some(side) = &self.side_requests
            && !side.without_tools
            && side.system_starts_with.is_none()
        {
            return Err(bad(
                "side_requests: sets no condition (without_tools, system_starts_with)".into(),
            ));
        }
        if e.file.is_some() != e.pointer.is_some() || e.file.is_some() != e.equals.is_some() {
            return Err(bad(
                "end: file, pointer and equals go together (the value at pointer in file equals equals)".into(),
            ));
        }
        for name in self.files.keys() {
            if escapes(name) {
                return Err(bad(format!(
                    "files: {name:?} is not a relative path inside the agent's home folder"
                )));
            }
        }
        if self.timeout_s == 0 {
            return Err(bad("timeout_s: must be at least 1".into()));
        }
        Ok(())
    }

    /// The installation folder the profile names under `agents_dir`.
    pub fn default_prefix(&self, agents_dir: &Path) -> PathBuf {
        agents_dir.join(&self.name)
    }

    /// Checks that the agent is installed at `prefix`, saying how to install it otherwise
    /// ([`ExternalError::NotInstalled`]).
    pub fn check_installed(&self, prefix: &Path) -> Result<(), ExternalError> {
        let marker = match &self.installed {
            Some(rel) => prefix.join(rel),
            None => prefix.to_path_buf(),
        };
        if marker.exists() {
            return Ok(());
        }
        Err(ExternalError::NotInstalled {
            agent: self.name.clone(),
            prefix: prefix.to_path_buf(),
            marker,
            install: self.install.clone(),
        })
    }
}

/// Replaces the profile placeholders in `text` (one pass, so a value that holds a
/// placeholder's spelling is kept as it is); `{home}` and `{workspace}` are left for the
/// environment, which knows the paths the process sees.
pub fn fill(text: &str, p: &Placeholders<'_>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        let close = after.find('}').map(|c| &after[1..c]);
        let value = match close {
            Some("prefix") => Some(p.prefix.display().to_string()),
            Some("base_url") => Some(p.base_url.to_owned()),
            Some("proxy_url") => Some(p.base_url.trim_end_matches("/v1").to_owned()),
            Some("model") => Some(p.model.to_owned()),
            Some("api_key") => Some(DUMMY_KEY.to_owned()),
            Some("budget") => Some(p.budget.to_string()),
            Some("task") => Some(p.task.to_owned()),
            _ => None,
        };
        match (value, close) {
            (Some(v), Some(name)) => {
                out.push_str(&v);
                rest = &after[name.len() + 2..];
            }
            _ => {
                out.push('{');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The API key the agent is given: the proxy holds the real one.
pub(crate) const DUMMY_KEY: &str = "traparena-proxy";

/// True when `name` is not a plain relative path inside a folder (absolute, `..`, empty).
pub(crate) fn escapes(name: &str) -> bool {
    let p = Path::new(name);
    name.is_empty()
        || p.components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_that_leave_a_folder_are_caught() {
        for bad in ["", "/etc/x", "../x", "a/../../x"] {
            assert!(escapes(bad), "{bad}");
        }
        for good in ["a", "a/b.yaml", "./c"] {
            assert!(!escapes(good), "{good}");
        }
    }

    use super::*;

    fn ph() -> Placeholders<'static> {
        Placeholders {
            prefix: Path::new("/opt/a"),
            base_url: "http://127.0.0.1:9/v1",
            model: "m",
            budget: 7,
            task: "Fix {prefix} in f()",
        }
    }

    #[test]
    fn placeholders_are_filled_in_one_pass() {
        assert_eq!(
            fill("{prefix}/bin/x --m {model} -t {task} {home} {x} {", &ph()),
            "/opt/a/bin/x --m m -t Fix {prefix} in f() {home} {x} {"
        );
        assert_eq!(
            fill("{base_url}|{budget}|{api_key}", &ph()),
            format!("http://127.0.0.1:9/v1|7|{}", DUMMY_KEY)
        );
    }

    #[test]
    fn every_bundled_profile_reads() {
        for (name, text) in BUNDLED {
            let p = Profile::from_json(text, name).unwrap();
            assert_eq!(&p.name, name);
        }
    }

    #[test]
    fn bad_profiles_say_what_is_wrong() {
        let good = serde_json::json!({
            "format": 1, "name": "a", "api": "openai_chat", "command": ["a"],
            "end": {"exit_code": 0}
        });
        let cases: &[(&str, Value, &str)] = &[
            ("/format", serde_json::json!(2), "format 2 is not readable"),
            ("/command", serde_json::json!([]), "names no program"),
            ("/end", serde_json::json!({}), "says nothing"),
            ("/end", serde_json::json!({"file": "t.json"}), "go together"),
            ("/api", serde_json::json!("grpc"), "api: unknown variant"),
            (
                "/files",
                serde_json::json!({"../x": ""}),
                "not a relative path",
            ),
            ("/name", serde_json::json!("a/b"), "name: must be"),
            ("/timeout_s", serde_json::json!(0), "at least 1"),
        ];
        assert!(Profile::from_json(&good.to_string(), "t").is_ok());
        for (pointer, value, needle) in cases {
            let mut v = good.clone();
            v.as_object_mut()
                .unwrap()
                .insert(pointer[1..].to_owned(), value.clone());
            let e = Profile::from_json(&v.to_string(), "t")
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{pointer}: {e}");
        }
        let e = Profile::load("no-such-agent", Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bundled: mini-swe-agent"), "{e}");
    }

    #[test]
    fn a_missing_agent_is_named_with_how_to_install_it() {
        let mut p = Profile::from_json(BUNDLED[0].1, BUNDLED[0].0).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("nowhere");
        p.installed = Some("bin/agent".into());
        p.install = "scripts/install-agent.sh x".into();
        let e = p.check_installed(&prefix).unwrap_err();
        assert!(matches!(e, ExternalError::NotInstalled { .. }));
        assert_eq!(
            e.to_string(),
            format!(
                "{} is not installed at {} ({} is missing); install it with: scripts/install-agent.sh x",
                p.name,
                prefix.display(),
                prefix.join("bin/agent").display()
            )
        );
        p.install.clear();
        let e = p.check_installed(&prefix).unwrap_err().to_string();
        assert!(e.ends_with("bin/agent is missing)"), "{e}");
        std::fs::create_dir_all(prefix.join("bin/agent")).unwrap();
        assert!(p.check_installed(&prefix).is_ok());
    }
}

//! The table of a role's registered kinds, and what a kind declares about itself.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::component::{ArgsError, ComponentSpec, ConfigContext};
use crate::error::TaskError;

/// Which model a kind uses, as the kind declares it (its factory's `model` hook): the
/// `traparena` command gives a kind that uses one its model from its flags and environment,
/// and the results record whether a condition's attacker used one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelUse {
    /// No model (the scripted kinds).
    #[default]
    None,
    /// A model it calls itself, with the sampling settings of its role (`llm`, `adaptive`).
    Sampled,
    /// A model its own program calls through the harness, which needs only the endpoint
    /// (`external`).
    Forwarded,
}

/// How a registered kind turns a spec entry into its configured setup `S`.
pub(crate) type Configure<S> =
    dyn Fn(&ComponentSpec, &ConfigContext) -> Result<Arc<S>, TaskError> + Send + Sync;

/// The table behind a [`KindRegistry`](crate::KindRegistry): the registered kinds, each
/// configuring a setup `S` from a spec entry, with their short forms and models. Registering a
/// kind again replaces it, so research code can override a built-in.
pub(crate) struct Kinds<S: ?Sized> {
    role: &'static str,
    kinds: BTreeMap<String, Arc<Configure<S>>>,
    shorthands: BTreeMap<String, String>,
    models: BTreeMap<String, ModelUse>,
}

impl<S: ?Sized> Kinds<S> {
    /// An empty table for `role` (`agent`, `attacker`, `curator`; used in messages).
    pub fn new(role: &'static str) -> Kinds<S> {
        Kinds {
            role,
            kinds: BTreeMap::new(),
            shorthands: BTreeMap::new(),
            models: BTreeMap::new(),
        }
    }

    /// Lets `KIND:VALUE` name `kind` with its argument `arg` set to `VALUE` (other arguments
    /// as given): `external:mini-swe-agent` reads as
    /// `{"kind": "external", "args": {"profile": "mini-swe-agent"}}`.
    pub fn shorthand(&mut self, kind: &str, arg: &str) {
        self.shorthands.insert(kind.to_owned(), arg.to_owned());
    }

    /// `spec` with a shorthand name (see [`Kinds::shorthand`]) spelled out; `None` when it
    /// uses none.
    pub fn expand(&self, spec: &ComponentSpec) -> Option<ComponentSpec> {
        if self.kinds.contains_key(&spec.kind) {
            return None;
        }
        let (kind, value) = spec.kind.split_once(':')?;
        let arg = self.shorthands.get(kind)?;
        let mut args = match &spec.args {
            Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        };
        args.insert(arg.clone(), Value::String(value.to_owned()));
        Some(ComponentSpec {
            kind: kind.to_owned(),
            args: Value::Object(args),
        })
    }

    /// Registers (or replaces) `kind`: its arguments are read as `A` (errors name the field),
    /// then `configure` checks them and makes the setup.
    pub fn register<A, C>(&mut self, kind: &str, configure: C)
    where
        A: DeserializeOwned,
        C: Fn(A, &ComponentSpec, &ConfigContext) -> Result<Arc<S>, ArgsError>
            + Send
            + Sync
            + 'static,
    {
        let f = move |spec: &ComponentSpec, cx: &ConfigContext| {
            configure(spec.parse_args()?, spec, cx).map_err(|e| e.for_kind(&spec.kind))
        };
        self.kinds.insert(kind.to_owned(), Arc::new(f));
        // A kind registered again declares its short form and its model anew.
        self.shorthands.remove(kind);
        self.models.remove(kind);
    }

    /// Declares which model `kind` uses (a kind not declared uses none).
    pub fn declare_model(&mut self, kind: &str, model: ModelUse) {
        self.models.insert(kind.to_owned(), model);
    }

    /// The model the kind `spec` names uses, as declared (also for a shorthand name,
    /// `external:PROFILE`); `None` for a kind that is not registered.
    pub fn model(&self, spec: &ComponentSpec) -> Option<ModelUse> {
        let expanded = self.expand(spec);
        let kind = &expanded.as_ref().unwrap_or(spec).kind;
        self.contains(kind)
            .then(|| self.models.get(kind).copied().unwrap_or_default())
    }

    /// Configures the kind `spec` names, or an error listing the registered kinds.
    pub fn configure(&self, spec: &ComponentSpec, cx: &ConfigContext) -> Result<Arc<S>, TaskError> {
        let expanded = self.expand(spec);
        let spec = expanded.as_ref().unwrap_or(spec);
        if let Some((kind, value)) = spec.kind.split_once(':')
            && self.kinds.contains_key(kind)
        {
            return Err(ArgsError::new(
                "",
                format!(
                    "`{kind}` has no main argument to give after a colon (`{kind}:{value}`); \
                     give arguments as `{{\"kind\": \"{kind}\", \"args\": {{...}}}}` \
                     (on the command line, --{role}-arg KEY=VALUE)",
                    role = self.role
                ),
            )
            .for_kind(kind));
        }
        let f = self
            .kinds
            .get(&spec.kind)
            .ok_or_else(|| TaskError::UnknownKind {
                role: self.role.to_owned(),
                kind: spec.kind.clone(),
                known: self.names(),
            })?;
        f(spec, cx)
    }

    /// The registered kinds, sorted.
    pub fn names(&self) -> Vec<String> {
        self.kinds.keys().cloned().collect()
    }

    /// Whether `kind` is registered.
    pub fn contains(&self, kind: &str) -> bool {
        self.kinds.contains_key(kind)
    }
}

impl<S: ?Sized> Clone for Kinds<S> {
    fn clone(&self) -> Self {
        Kinds {
            role: self.role,
            kinds: self.kinds.clone(),
            shorthands: self.shorthands.clone(),
            models: self.models.clone(),
        }
    }
}

impl<S: ?Sized> fmt::Debug for Kinds<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kinds")
            .field("role", &self.role)
            .field("kinds", &self.names())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::component::NoArgs;
    use crate::component::tests::Persona;

    use super::*;

    #[test]
    fn unknown_kinds_list_the_registered_ones_and_arguments_are_checked() {
        let mut k: Kinds<str> = Kinds::new("attacker");
        k.register("scripted", |p: Persona, _, _| {
            if p.persona.is_empty() {
                return Err(ArgsError::new("persona", "is empty"));
            }
            Ok(Arc::from(p.persona.as_str()))
        });
        k.register("offline", |_: NoArgs, _, _| Ok(Arc::from("o")));
        let cx = ConfigContext::default();
        let e = k
            .configure(&ComponentSpec::new("my_scapegoat"), &cx)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"my_scapegoat\""), "{e}");
        assert!(e.contains("offline, scripted"), "{e}");
        assert_eq!(
            &*k.configure(&ComponentSpec::new("offline"), &cx).unwrap(),
            "o"
        );
        let s = |v| ComponentSpec::new("scripted").with_args(v);
        let got = k
            .configure(&s(serde_json::json!({"persona": "u"})), &cx)
            .unwrap();
        assert_eq!(&*got, "u");
        let e = k
            .configure(&s(serde_json::json!({"persona": ""})), &cx)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("scripted: field `args.persona`: is empty"),
            "{e}"
        );
    }

    #[test]
    fn a_declared_shorthand_spells_out_its_argument() {
        let mut k: Kinds<str> = Kinds::new("agent");
        k.register("external", |p: Persona, _, _| {
            Ok(Arc::from(p.persona.as_str()))
        });
        let cx = ConfigContext::default();
        let short = ComponentSpec::new("external:mini");
        assert!(
            k.configure(&short, &cx).is_err(),
            "no shorthand declared yet"
        );
        k.shorthand("external", "persona");
        assert_eq!(&*k.configure(&short, &cx).unwrap(), "mini");
        let with_args = short.clone().with_args(serde_json::json!({"rate": 0.5}));
        let expanded = k.expand(&with_args).unwrap();
        assert_eq!(expanded.kind, "external");
        assert_eq!(
            expanded.args,
            serde_json::json!({"persona": "mini", "rate": 0.5})
        );
        assert!(k.expand(&ComponentSpec::new("other:x")).is_none());
        assert!(k.expand(&ComponentSpec::new("external")).is_none());
        // A kind registered again declares its short form anew: without one, a value after
        // the colon is refused with a reason, not taken for an unknown kind.
        k.register("external", |p: Persona, _, _| {
            Ok(Arc::from(p.persona.as_str()))
        });
        let e = k.configure(&short, &cx).unwrap_err();
        assert!(
            matches!(e, TaskError::Args { ref kind, .. } if kind == "external"),
            "{e}"
        );
        assert!(e.to_string().contains("no main argument"), "{e}");
        let e = k
            .configure(&ComponentSpec::new("nothing:x"), &cx)
            .unwrap_err();
        assert!(matches!(e, TaskError::UnknownKind { .. }), "{e}");
    }

    #[test]
    fn a_kind_declares_its_model_and_registering_it_again_forgets_the_declaration() {
        let mut k: Kinds<str> = Kinds::new("agent");
        k.register("gold", |_: NoArgs, _, _| Ok(Arc::from("g")));
        k.register("external", |_: Value, _, _| Ok(Arc::from("e")));
        k.shorthand("external", "profile");
        k.declare_model("external", ModelUse::Forwarded);
        let model = |kind: &str| k.model(&ComponentSpec::new(kind));
        assert_eq!(model("gold"), Some(ModelUse::None));
        assert_eq!(model("external"), Some(ModelUse::Forwarded));
        // The short form names the same kind.
        assert_eq!(model("external:mini-swe-agent"), Some(ModelUse::Forwarded));
        assert_eq!(model("nope"), None);
        k.register("external", |_: Value, _, _| Ok(Arc::from("e2")));
        assert_eq!(
            k.model(&ComponentSpec::new("external")),
            Some(ModelUse::None)
        );
    }
}

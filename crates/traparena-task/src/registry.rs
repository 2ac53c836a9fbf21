//! One open registry for every role: the factory a plug-in author implements, the configured
//! kind it becomes, and the registry that resolves spec entries by name.
//!
//! A role (agents, attackers, curators) is a marker type implementing [`ComponentRole`]: it
//! says what its kinds build, from what, and with which error. Its crate names it
//! (`traparena_agent::Agents`, `traparena_attack::Attackers`, `traparena_attack::Curators`) and
//! registers its built-in kinds; everything else is written once, here.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;

use crate::component::{ArgsError, ComponentSpec, ConfigContext};
use crate::error::TaskError;
use crate::kinds::{Kinds, ModelUse};

/// A role components are registered for. Implemented by a marker type per role.
pub trait ComponentRole: Sized + Send + Sync + 'static {
    /// The role's name in messages and flags: `agent`, `attacker`, `curator`.
    const NAME: &'static str;
    /// What a configured kind builds (`Box<dyn Agent>`).
    type Built: Send;
    /// What it is built from: the episode for agents and attackers, `()` for curators.
    type From<'a>;
    /// The error its factories report.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Registers the role's built-in kinds into `registry` ([`KindRegistry::builtin`]).
    fn builtin(registry: &mut KindRegistry<Self>) {
        let _ = registry;
    }
}

/// Builds components of one kind for the role [`Factory::Role`]. Implement
/// [`Factory::build`] and name the kind's arguments as [`Factory::Args`] (`NoArgs` for none);
/// register it under a kind with [`KindRegistry::register`], and every experiment spec and
/// `run` can name it.
///
/// `Args` is read from the spec entry's `args` with errors that name the field; write it with
/// `#[serde(deny_unknown_fields)]` so that a misspelt argument is refused rather than ignored.
#[async_trait]
pub trait Factory: Send + Sync + 'static {
    /// The role the kind fills (`traparena_agent::Agents`, ...).
    type Role: ComponentRole;
    /// The kind's arguments, read from the spec entry's `args`.
    type Args: DeserializeOwned + Send + Sync + 'static;

    /// A fresh component (one per episode for agents and attackers).
    fn build(
        &self,
        args: &Self::Args,
        from: &<Self::Role as ComponentRole>::From<'_>,
    ) -> Result<<Self::Role as ComponentRole>::Built, <Self::Role as ComponentRole>::Error>;

    /// Checks the arguments beyond their type and completes them (relative paths are read
    /// against [`ConfigContext::base_dir`], secrets looked up), once, when a spec is loaded.
    fn configure(&self, args: Self::Args, _cx: &ConfigContext) -> Result<Self::Args, ArgsError> {
        Ok(args)
    }

    /// Work to do once before the first episode (asking a model server for its context
    /// window, ...): returns lines worth telling the user.
    async fn prepare(
        &self,
        _args: &Self::Args,
    ) -> Result<Vec<String>, <Self::Role as ComponentRole>::Error> {
        Ok(Vec::new())
    }

    /// The kind's main argument, which its short form `KIND:VALUE` sets (`file` for
    /// `replay:actions.json`, `persona` for `scripted:urge_submit`); `None` (the default) for
    /// a kind without one, which then takes no value after a colon.
    fn short_form(&self) -> Option<&'static str> {
        None
    }

    /// Which model the kind uses ([`ModelUse::None`], the default, for a kind that uses
    /// none): the `traparena` command gives a kind that uses one its model from its flags and
    /// environment, and the results record it.
    fn model(&self) -> ModelUse {
        ModelUse::None
    }
}

/// A configured kind of role `R`: a factory with checked arguments, ready to build.
#[async_trait]
pub trait ConfiguredKind<R: ComponentRole>: Send + Sync {
    /// The spec entry it was configured from.
    fn spec(&self) -> &ComponentSpec;
    /// A fresh component.
    fn build(&self, from: &R::From<'_>) -> Result<R::Built, R::Error>;
    /// See [`Factory::prepare`].
    async fn prepare(&self) -> Result<Vec<String>, R::Error>;
    /// See [`Factory::model`].
    fn model(&self) -> ModelUse;
}

struct Configured<F: Factory> {
    factory: Arc<F>,
    args: F::Args,
    spec: ComponentSpec,
}

#[async_trait]
impl<F: Factory> ConfiguredKind<F::Role> for Configured<F> {
    fn spec(&self) -> &ComponentSpec {
        &self.spec
    }
    fn build(
        &self,
        from: &<F::Role as ComponentRole>::From<'_>,
    ) -> Result<<F::Role as ComponentRole>::Built, <F::Role as ComponentRole>::Error> {
        self.factory.build(&self.args, from)
    }
    async fn prepare(&self) -> Result<Vec<String>, <F::Role as ComponentRole>::Error> {
        self.factory.prepare(&self.args).await
    }
    fn model(&self) -> ModelUse {
        self.factory.model()
    }
}

/// The open registry of role `R`'s kinds (`AgentRegistry` is `KindRegistry<Agents>`).
/// [`KindRegistry::builtin`] holds the role's built-in kinds; research code registers its own
/// with [`KindRegistry::register`] (a kind registered again replaces the earlier one, with
/// its declarations).
pub struct KindRegistry<R: ComponentRole> {
    kinds: Kinds<dyn ConfiguredKind<R>>,
}

impl<R: ComponentRole> KindRegistry<R> {
    /// A registry without any kind.
    pub fn empty() -> KindRegistry<R> {
        KindRegistry {
            kinds: Kinds::new(R::NAME),
        }
    }

    /// The role's built-in kinds (see [`ComponentRole::builtin`]).
    pub fn builtin() -> KindRegistry<R> {
        let mut r = KindRegistry::empty();
        R::builtin(&mut r);
        r
    }

    /// Registers (or replaces) `kind`, with what its factory declares: its short form and
    /// its model.
    pub fn register<F: Factory<Role = R>>(&mut self, kind: &str, factory: F) -> &mut Self {
        let model = factory.model();
        let short = factory.short_form();
        let factory = Arc::new(factory);
        self.kinds.register(kind, move |args, spec, cx| {
            Ok(Arc::new(Configured {
                args: factory.configure(args, cx)?,
                factory: factory.clone(),
                spec: spec.clone(),
            }) as Arc<dyn ConfiguredKind<R>>)
        });
        self.kinds.declare_model(kind, model);
        if let Some(arg) = short {
            self.kinds.shorthand(kind, arg);
        }
        self
    }

    /// The model the kind `spec` names uses, as its factory declares (also for a short form
    /// such as `external:PROFILE`); `None` for a kind that is not registered.
    pub fn model(&self, spec: &ComponentSpec) -> Option<ModelUse> {
        self.kinds.model(spec)
    }

    /// The registered kinds, sorted.
    pub fn kinds(&self) -> Vec<String> {
        self.kinds.names()
    }

    /// Configures the kind `spec` names with its arguments. An unknown kind lists the
    /// registered ones; bad arguments name the field.
    pub fn configure(
        &self,
        spec: &ComponentSpec,
        cx: &ConfigContext,
    ) -> Result<Arc<dyn ConfiguredKind<R>>, TaskError> {
        self.kinds.configure(spec, cx)
    }
}

impl<R: ComponentRole> Default for KindRegistry<R> {
    fn default() -> Self {
        KindRegistry::builtin()
    }
}

impl<R: ComponentRole> Clone for KindRegistry<R> {
    fn clone(&self) -> Self {
        KindRegistry {
            kinds: self.kinds.clone(),
        }
    }
}

impl<R: ComponentRole> fmt::Debug for KindRegistry<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kinds.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::NoArgs;

    /// A role whose kinds build strings from a number.
    struct Words;

    #[derive(Debug, thiserror::Error)]
    #[error("no word")]
    struct NoWord;

    impl ComponentRole for Words {
        const NAME: &'static str = "word";
        type Built = String;
        type From<'a> = u32;
        type Error = NoWord;
        fn builtin(registry: &mut KindRegistry<Self>) {
            registry.register("count", Count);
        }
    }

    struct Count;

    #[async_trait]
    impl Factory for Count {
        type Role = Words;
        type Args = NoArgs;
        fn build(&self, _: &NoArgs, n: &u32) -> Result<String, NoWord> {
            if *n == 0 {
                return Err(NoWord);
            }
            Ok(format!("{n} words"))
        }
        async fn prepare(&self, _: &NoArgs) -> Result<Vec<String>, NoWord> {
            Ok(vec!["counted".into()])
        }
        fn model(&self) -> ModelUse {
            ModelUse::Sampled
        }
    }

    #[tokio::test]
    async fn a_role_registers_its_builtins_and_its_kinds_build_prepare_and_declare() {
        let r = KindRegistry::<Words>::builtin();
        assert_eq!(r.kinds(), ["count"]);
        let spec = ComponentSpec::new("count");
        assert_eq!(r.model(&spec), Some(ModelUse::Sampled));
        let setup = r.configure(&spec, &ConfigContext::default()).unwrap();
        assert_eq!(setup.spec().kind, "count");
        assert_eq!(setup.build(&3).unwrap(), "3 words");
        assert!(setup.build(&0).is_err());
        assert_eq!(setup.prepare().await.unwrap(), ["counted"]);
        let e = r
            .configure(&ComponentSpec::new("tally"), &ConfigContext::default())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("word") && e.contains("count"), "{e}");
        assert!(KindRegistry::<Words>::empty().kinds().is_empty());
    }
}

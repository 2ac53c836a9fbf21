//! Attacker and curator factories and the open registries of their kinds.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use traparena_task::{
    ArgsError, ComponentSpec, ConfigContext, EpisodeContext, Kinds, ModelUse, NoArgs, TaskError,
};

use crate::error::AttackError;
use crate::traits::{Attacker, Curator};
use crate::{OfflineAttacker, Persona, ScriptedAttacker, TallyCurator};

/// Builds attackers of one kind. Implement [`AttackerFactory::build`] and name the kind's
/// arguments as [`AttackerFactory::Args`] ([`NoArgs`] for none); register it under a kind with
/// [`AttackerRegistry::register`], and every experiment spec and `run` can name it.
///
/// Whether an attacker sees the reference information is the attacker's own declaration,
/// [`Attacker::access`]: the episode grants it from there and records it.
///
/// ```
/// use traparena::{Advice, AttackContext, AttackError, Attacker, AttackerFactory, AttackerRegistry};
/// use traparena::{Claims, ComponentSpec, ConfigContext, EpisodeContext};
///
/// /// Says the same sentence after every step.
/// struct Parrot(String);
///
/// #[traparena::async_trait]
/// impl Attacker for Parrot {
///     fn name(&self) -> String { "parrot".into() }
///     async fn advise(&mut self, _: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
///         Ok(Some(Advice { text: self.0.clone(), claims: Claims::default() }))
///     }
/// }
///
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct ParrotArgs { text: String }
///
/// struct ParrotKind;
///
/// impl AttackerFactory for ParrotKind {
///     type Args = ParrotArgs;
///     fn build(&self, args: &ParrotArgs, _: &EpisodeContext<'_>) -> Result<Box<dyn Attacker>, AttackError> {
///         Ok(Box::new(Parrot(args.text.clone())))
///     }
/// }
///
/// let mut attackers = AttackerRegistry::builtin();
/// attackers.register("parrot", ParrotKind);
/// assert!(attackers.kinds().contains(&"parrot".to_owned()));
/// let spec: ComponentSpec = serde_json::from_str(r#"{"kind": "parrot", "args": {"txt": "hi"}}"#)?;
/// let e = attackers.configure(&spec, &ConfigContext::default()).err().unwrap();
/// assert!(e.to_string().contains("unknown field `txt`"), "{e}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[async_trait]
pub trait AttackerFactory: Send + Sync + 'static {
    /// The kind's arguments, read from the spec entry's `args`.
    type Args: DeserializeOwned + Send + Sync + 'static;

    /// A fresh attacker for one episode (seeded from `episode.seed`).
    fn build(
        &self,
        args: &Self::Args,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError>;

    /// Checks the arguments beyond their type and completes them, once, when a spec is loaded.
    fn configure(&self, args: Self::Args, _cx: &ConfigContext) -> Result<Self::Args, ArgsError> {
        Ok(args)
    }

    /// Work to do once before the first episode: returns lines worth telling the user.
    async fn prepare(&self, _args: &Self::Args) -> Result<Vec<String>, AttackError> {
        Ok(Vec::new())
    }

    /// The kind's main argument, which its short form `KIND:VALUE` sets (`persona` for
    /// `scripted:urge_submit`); `None` (the default) for a kind without one, which then takes
    /// no value after a colon.
    fn short_form(&self) -> Option<&'static str> {
        None
    }

    /// Which model the kind uses ([`ModelUse::None`], the default, for a kind that uses
    /// none): the `traparena` command gives a kind that uses one its model from its flags and
    /// environment.
    fn model(&self) -> ModelUse {
        ModelUse::None
    }
}

/// A configured attacker kind, ready to build one attacker per episode.
#[async_trait]
pub trait AttackerSetup: Send + Sync {
    /// The spec entry it was configured from.
    fn spec(&self) -> &ComponentSpec;
    /// A fresh attacker for one episode.
    fn build(&self, episode: &EpisodeContext<'_>) -> Result<Box<dyn Attacker>, AttackError>;
    /// See [`AttackerFactory::prepare`].
    async fn prepare(&self) -> Result<Vec<String>, AttackError>;
    /// See [`AttackerFactory::model`].
    fn model(&self) -> ModelUse;
}

/// Builds the curator of one kind. Implement [`CuratorFactory::build`]; register it with
/// [`CuratorRegistry::register`]. One curator serves one target's condition across its
/// rounds.
#[async_trait]
pub trait CuratorFactory: Send + Sync + 'static {
    /// The kind's arguments, read from the spec entry's `args`.
    type Args: DeserializeOwned + Send + Sync + 'static;

    /// A fresh curator.
    fn build(&self, args: &Self::Args) -> Result<Box<dyn Curator>, AttackError>;

    /// Checks the arguments beyond their type and completes them, once, when a spec is loaded.
    fn configure(&self, args: Self::Args, _cx: &ConfigContext) -> Result<Self::Args, ArgsError> {
        Ok(args)
    }

    /// Work to do once before the first round: returns lines worth telling the user.
    async fn prepare(&self, _args: &Self::Args) -> Result<Vec<String>, AttackError> {
        Ok(Vec::new())
    }

    /// The kind's main argument, which its short form `KIND:VALUE` sets (`persona` for
    /// `scripted:urge_submit`); `None` (the default) for a kind without one, which then takes
    /// no value after a colon.
    fn short_form(&self) -> Option<&'static str> {
        None
    }

    /// Which model the kind uses ([`ModelUse::None`], the default, for a kind that uses
    /// none): the `traparena` command gives a kind that uses one its model from its flags and
    /// environment.
    fn model(&self) -> ModelUse {
        ModelUse::None
    }
}

/// A configured curator kind.
#[async_trait]
pub trait CuratorSetup: Send + Sync {
    /// The spec entry it was configured from.
    fn spec(&self) -> &ComponentSpec;
    /// A fresh curator.
    fn build(&self) -> Result<Box<dyn Curator>, AttackError>;
    /// See [`CuratorFactory::prepare`].
    async fn prepare(&self) -> Result<Vec<String>, AttackError>;
    /// See [`CuratorFactory::model`].
    fn model(&self) -> ModelUse;
}

struct Configured<F, A> {
    factory: Arc<F>,
    args: A,
    spec: ComponentSpec,
}

#[async_trait]
impl<F: AttackerFactory> AttackerSetup for Configured<F, F::Args> {
    fn spec(&self) -> &ComponentSpec {
        &self.spec
    }
    fn build(&self, episode: &EpisodeContext<'_>) -> Result<Box<dyn Attacker>, AttackError> {
        self.factory.build(&self.args, episode)
    }
    async fn prepare(&self) -> Result<Vec<String>, AttackError> {
        self.factory.prepare(&self.args).await
    }
    fn model(&self) -> ModelUse {
        self.factory.model()
    }
}

/// The curator side of [`Configured`]: a newtype, since one type cannot implement both setups
/// for a factory that happens to be both.
struct CuratorConfigured<F: CuratorFactory>(Configured<F, F::Args>);

#[async_trait]
impl<F: CuratorFactory> CuratorSetup for CuratorConfigured<F> {
    fn spec(&self) -> &ComponentSpec {
        &self.0.spec
    }
    fn build(&self) -> Result<Box<dyn Curator>, AttackError> {
        self.0.factory.build(&self.0.args)
    }
    async fn prepare(&self) -> Result<Vec<String>, AttackError> {
        self.0.factory.prepare(&self.0.args).await
    }
    fn model(&self) -> ModelUse {
        self.0.factory.model()
    }
}

/// The open registry of attacker kinds. [`AttackerRegistry::builtin`] holds `scripted`,
/// `truthful` and `offline`; research code registers its own with
/// [`AttackerRegistry::register`] (a kind registered again replaces the earlier one).
#[derive(Debug, Clone)]
pub struct AttackerRegistry {
    kinds: Kinds<dyn AttackerSetup>,
}

/// The open registry of curator kinds. [`CuratorRegistry::builtin`] holds `tally`.
#[derive(Debug, Clone)]
pub struct CuratorRegistry {
    kinds: Kinds<dyn CuratorSetup>,
}

impl Default for AttackerRegistry {
    fn default() -> Self {
        AttackerRegistry::builtin()
    }
}

impl Default for CuratorRegistry {
    fn default() -> Self {
        CuratorRegistry::builtin()
    }
}

impl AttackerRegistry {
    /// A registry without any kind.
    pub fn empty() -> AttackerRegistry {
        AttackerRegistry {
            kinds: Kinds::new("attacker"),
        }
    }

    /// The built-in kinds: `scripted` (`{"persona": "urge_submit"}` for one persona, or
    /// `{"personas": [...]}`; all misleading personas by default), `truthful` (the truthful
    /// control) and `offline` (draws from the task's `attacks.json`).
    pub fn builtin() -> AttackerRegistry {
        let mut r = AttackerRegistry::empty();
        r.register("scripted", ScriptedKind);
        r.register("truthful", TruthfulKind);
        r.register("offline", OfflineKind);
        r
    }

    /// Registers (or replaces) `kind`.
    pub fn register<F: AttackerFactory>(
        &mut self,
        kind: &str,
        factory: F,
    ) -> &mut AttackerRegistry {
        let model = factory.model();
        let short = factory.short_form();
        let factory = Arc::new(factory);
        self.kinds.register(kind, move |args, spec, cx| {
            Ok(Arc::new(Configured {
                args: factory.configure(args, cx)?,
                factory: factory.clone(),
                spec: spec.clone(),
            }) as Arc<dyn AttackerSetup>)
        });
        self.kinds.declare_model(kind, model);
        if let Some(arg) = short {
            self.kinds.shorthand(kind, arg);
        }
        self
    }

    /// The model the kind `spec` names uses, as its factory declares; `None` for a kind
    /// that is not registered.
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
    ) -> Result<Arc<dyn AttackerSetup>, TaskError> {
        self.kinds.configure(spec, cx)
    }
}

impl CuratorRegistry {
    /// A registry without any kind.
    pub fn empty() -> CuratorRegistry {
        CuratorRegistry {
            kinds: Kinds::new("curator"),
        }
    }

    /// The built-in kind `tally` (rule-based; no arguments, no model).
    pub fn builtin() -> CuratorRegistry {
        let mut r = CuratorRegistry::empty();
        r.register("tally", TallyKind);
        r
    }

    /// Registers (or replaces) `kind`.
    pub fn register<F: CuratorFactory>(&mut self, kind: &str, factory: F) -> &mut CuratorRegistry {
        let model = factory.model();
        let short = factory.short_form();
        let factory = Arc::new(factory);
        self.kinds.register(kind, move |args, spec, cx| {
            Ok(Arc::new(CuratorConfigured(Configured {
                args: factory.configure(args, cx)?,
                factory: factory.clone(),
                spec: spec.clone(),
            })) as Arc<dyn CuratorSetup>)
        });
        self.kinds.declare_model(kind, model);
        if let Some(arg) = short {
            self.kinds.shorthand(kind, arg);
        }
        self
    }

    /// The model the kind `spec` names uses, as its factory declares; `None` for a kind
    /// that is not registered.
    pub fn model(&self, spec: &ComponentSpec) -> Option<ModelUse> {
        self.kinds.model(spec)
    }

    /// The registered kinds, sorted.
    pub fn kinds(&self) -> Vec<String> {
        self.kinds.names()
    }

    /// Configures the kind `spec` names with its arguments.
    pub fn configure(
        &self,
        spec: &ComponentSpec,
        cx: &ConfigContext,
    ) -> Result<Arc<dyn CuratorSetup>, TaskError> {
        self.kinds.configure(spec, cx)
    }
}

/// The `scripted` kind's arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedArgs {
    /// One persona.
    #[serde(default)]
    pub persona: Option<Persona>,
    /// Several personas, one drawn per message.
    #[serde(default)]
    pub personas: Option<Vec<Persona>>,
}

/// The `scripted` kind: generic templates that fit the moment they follow.
#[derive(Debug, Clone, Copy)]
pub struct ScriptedKind;

impl AttackerFactory for ScriptedKind {
    type Args = ScriptedArgs;
    fn short_form(&self) -> Option<&'static str> {
        Some("persona")
    }
    fn build(
        &self,
        args: &ScriptedArgs,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        let personas = match (args.persona, &args.personas) {
            (Some(p), _) => vec![p],
            (None, Some(ps)) => ps.clone(),
            (None, None) => Persona::MISLEADING.to_vec(),
        };
        Ok(Box::new(ScriptedAttacker::new(personas, episode.seed)))
    }
    fn configure(&self, args: ScriptedArgs, _: &ConfigContext) -> Result<ScriptedArgs, ArgsError> {
        match (&args.persona, &args.personas) {
            (Some(_), Some(_)) => Err(ArgsError::new(
                "personas",
                "give `persona` or `personas`, not both",
            )),
            (None, Some(ps)) if ps.is_empty() => {
                Err(ArgsError::new("personas", "lists no persona"))
            }
            _ => Ok(args),
        }
    }
}

/// The `truthful` kind: the control whose messages are true.
#[derive(Debug, Clone, Copy)]
pub struct TruthfulKind;

impl AttackerFactory for TruthfulKind {
    type Args = NoArgs;
    fn build(
        &self,
        _: &NoArgs,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        Ok(Box::new(ScriptedAttacker::new(
            vec![Persona::Truthful],
            episode.seed,
        )))
    }
}

/// The `offline` kind: draws the task's own misleading messages from `attacks.json`. A task
/// without one cannot be attacked this way, and says so.
#[derive(Debug, Clone, Copy)]
pub struct OfflineKind;

impl AttackerFactory for OfflineKind {
    type Args = NoArgs;
    fn build(
        &self,
        _: &NoArgs,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        if episode.task.attacks.is_empty() {
            return Err(AttackError::Invalid(format!(
                "task {} has no attacks.json for the offline attacker",
                episode.task.spec.id
            )));
        }
        Ok(Box::new(OfflineAttacker::new(
            episode.task.attacks.clone(),
            episode.seed,
        )))
    }
}

/// The `tally` curator kind.
#[derive(Debug, Clone, Copy)]
pub struct TallyKind;

impl CuratorFactory for TallyKind {
    type Args = NoArgs;
    fn build(&self, _: &NoArgs) -> Result<Box<dyn Curator>, AttackError> {
        Ok(Box::new(TallyCurator))
    }
}

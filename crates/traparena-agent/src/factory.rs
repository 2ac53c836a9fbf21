//! Agent factories and the open registry of agent kinds.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use traparena_task::{
    ArgsError, ComponentSpec, ConfigContext, EpisodeContext, Kinds, ModelUse, NoArgs, TaskError,
};

use crate::error::AgentError;
use crate::traits::Agent;
use crate::{CredulousAgent, GoldAgent, HardcoderAgent, ReplayAgent};

/// Builds agents of one kind. Implement [`AgentFactory::build`] and name the kind's arguments
/// as [`AgentFactory::Args`] (use [`NoArgs`] for none); register it under a kind with
/// [`AgentRegistry::register`], and every experiment spec and `run` can name it.
///
/// `Args` is read from the spec entry's `args` with errors that name the field; write it with
/// `#[serde(deny_unknown_fields)]` so that a misspelt argument is refused rather than ignored.
///
/// ```
/// use traparena::{Action, Agent, AgentError, AgentFactory, AgentRegistry, AgentView};
/// use traparena::{ComponentSpec, ConfigContext, EpisodeContext, Turn};
///
/// /// Runs the public tests `times` times, then submits.
/// struct Tester { left: u32 }
///
/// #[traparena::async_trait]
/// impl Agent for Tester {
///     fn name(&self) -> String { "tester".into() }
///     async fn act(&mut self, _: &AgentView<'_>) -> Result<Turn, AgentError> {
///         self.left = self.left.saturating_sub(1);
///         Ok(Turn::act(if self.left == 0 { Action::Submit } else { Action::RunPublicTests }))
///     }
/// }
///
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct TesterArgs { times: u32 }
///
/// struct TesterKind;
///
/// impl AgentFactory for TesterKind {
///     type Args = TesterArgs;
///     fn build(&self, args: &TesterArgs, _: &EpisodeContext<'_>) -> Result<Box<dyn Agent>, AgentError> {
///         Ok(Box::new(Tester { left: args.times + 1 }))
///     }
/// }
///
/// let mut agents = AgentRegistry::builtin();
/// agents.register("tester", TesterKind);
/// let spec: ComponentSpec = serde_json::from_str(r#"{"kind": "tester", "args": {"times": 2}}"#)?;
/// let setup = agents.configure(&spec, &ConfigContext::default())?;
/// assert_eq!(setup.spec().kind, "tester");
/// let bad: ComponentSpec = serde_json::from_str(r#"{"kind": "tester", "args": {"times": "x"}}"#)?;
/// let e = agents.configure(&bad, &ConfigContext::default()).err().unwrap();
/// assert!(e.to_string().contains("args.times"), "{e}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[async_trait]
pub trait AgentFactory: Send + Sync + 'static {
    /// The kind's arguments, read from the spec entry's `args`.
    type Args: DeserializeOwned + Send + Sync + 'static;

    /// A fresh agent for one episode.
    fn build(
        &self,
        args: &Self::Args,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Agent>, AgentError>;

    /// Checks the arguments beyond their type and completes them (relative paths are read
    /// against [`ConfigContext::base_dir`], secrets looked up), once, when a spec is loaded.
    fn configure(&self, args: Self::Args, _cx: &ConfigContext) -> Result<Self::Args, ArgsError> {
        Ok(args)
    }

    /// Work to do once before the first episode (asking a model server for its context
    /// window, ...): returns lines worth telling the user.
    async fn prepare(&self, _args: &Self::Args) -> Result<Vec<String>, AgentError> {
        Ok(Vec::new())
    }

    /// The kind's main argument, which its short form `KIND:VALUE` sets (`file` for
    /// `replay:actions.json`); `None` (the default) for a kind without one, which then takes no
    /// value after a colon.
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

/// A configured agent kind: a factory with checked arguments, ready to build one agent per
/// episode.
#[async_trait]
pub trait AgentSetup: Send + Sync {
    /// The spec entry it was configured from.
    fn spec(&self) -> &ComponentSpec;
    /// A fresh agent for one episode.
    fn build(&self, episode: &EpisodeContext<'_>) -> Result<Box<dyn Agent>, AgentError>;
    /// See [`AgentFactory::prepare`].
    async fn prepare(&self) -> Result<Vec<String>, AgentError>;
    /// See [`AgentFactory::model`].
    fn model(&self) -> ModelUse;
}

struct Configured<F: AgentFactory> {
    factory: Arc<F>,
    args: F::Args,
    spec: ComponentSpec,
}

#[async_trait]
impl<F: AgentFactory> AgentSetup for Configured<F> {
    fn spec(&self) -> &ComponentSpec {
        &self.spec
    }
    fn build(&self, episode: &EpisodeContext<'_>) -> Result<Box<dyn Agent>, AgentError> {
        self.factory.build(&self.args, episode)
    }
    async fn prepare(&self) -> Result<Vec<String>, AgentError> {
        self.factory.prepare(&self.args).await
    }
    fn model(&self) -> ModelUse {
        self.factory.model()
    }
}

/// The open registry of agent kinds. [`AgentRegistry::builtin`] holds `gold`, `credulous`,
/// `hardcoder` and `replay`; research code registers its own with
/// [`AgentRegistry::register`] (a kind registered again replaces the earlier one).
#[derive(Debug, Clone)]
pub struct AgentRegistry {
    kinds: Kinds<dyn AgentSetup>,
}

impl Default for AgentRegistry {
    fn default() -> Self {
        AgentRegistry::builtin()
    }
}

impl AgentRegistry {
    /// A registry without any kind.
    pub fn empty() -> AgentRegistry {
        AgentRegistry {
            kinds: Kinds::new("agent"),
        }
    }

    /// The built-in kinds: `gold`, `credulous`, `hardcoder` (no arguments) and `replay`
    /// (`{"file": "actions.json"}`, relative to the spec's folder).
    pub fn builtin() -> AgentRegistry {
        let mut r = AgentRegistry::empty();
        r.register(
            "gold",
            agent_fn(|ep| Ok(Box::new(GoldAgent::new(ep.task)?))),
        );
        r.register(
            "credulous",
            agent_fn(|ep| Ok(Box::new(CredulousAgent::new(ep.task)?))),
        );
        r.register(
            "hardcoder",
            agent_fn(|ep| Ok(Box::new(HardcoderAgent::new(ep.task)?))),
        );
        r.register("replay", ReplayKind);
        r
    }

    /// Registers (or replaces) `kind`.
    pub fn register<F: AgentFactory>(&mut self, kind: &str, factory: F) -> &mut AgentRegistry {
        let model = factory.model();
        let short = factory.short_form();
        let factory = Arc::new(factory);
        self.kinds.register(kind, move |args, spec, cx| {
            Ok(Arc::new(Configured {
                args: factory.configure(args, cx)?,
                factory: factory.clone(),
                spec: spec.clone(),
            }) as Arc<dyn AgentSetup>)
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
    ) -> Result<Arc<dyn AgentSetup>, TaskError> {
        self.kinds.configure(spec, cx)
    }
}

/// A kind without arguments, built by a function of the episode: see [`agent_fn`].
#[derive(Debug, Clone, Copy)]
pub struct AgentFn<F>(F);

/// A kind without arguments whose agents `f` builds:
/// `agents.register("gold", agent_fn(|ep| Ok(Box::new(GoldAgent::new(ep.task)?))))`.
pub fn agent_fn<F>(f: F) -> AgentFn<F>
where
    F: Fn(&EpisodeContext<'_>) -> Result<Box<dyn Agent>, AgentError> + Send + Sync + 'static,
{
    AgentFn(f)
}

impl<F> AgentFactory for AgentFn<F>
where
    F: Fn(&EpisodeContext<'_>) -> Result<Box<dyn Agent>, AgentError> + Send + Sync + 'static,
{
    type Args = NoArgs;
    fn build(
        &self,
        _: &NoArgs,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Agent>, AgentError> {
        (self.0)(episode)
    }
}

/// The `replay` kind's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayArgs {
    /// A JSON list of actions (relative to the spec's folder).
    pub file: PathBuf,
}

/// The `replay` kind: replays a JSON list of actions from a file.
#[derive(Debug, Clone, Copy)]
pub struct ReplayKind;

impl AgentFactory for ReplayKind {
    type Args = ReplayArgs;
    fn short_form(&self) -> Option<&'static str> {
        Some("file")
    }
    fn build(
        &self,
        args: &ReplayArgs,
        _: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Agent>, AgentError> {
        Ok(Box::new(ReplayAgent::from_file(&args.file)?))
    }
    fn configure(&self, mut args: ReplayArgs, cx: &ConfigContext) -> Result<ReplayArgs, ArgsError> {
        args.file = cx.resolve(&args.file);
        if !args.file.is_file() {
            return Err(ArgsError::new(
                "file",
                format!("{}: no such file", args.file.display()),
            ));
        }
        Ok(args)
    }
}

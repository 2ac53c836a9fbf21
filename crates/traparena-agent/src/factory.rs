//! Agent factories and the open registry of agent kinds.

use std::path::PathBuf;

use serde::Deserialize;
use traparena_task::{
    ArgsError, ComponentRole, ConfigContext, ConfiguredKind, EpisodeContext, Factory, KindRegistry,
    NoArgs,
};

use crate::error::AgentError;
use crate::traits::Agent;
use crate::{CredulousAgent, GoldAgent, HardcoderAgent, ReplayAgent};

/// The agent role: its kinds build a [`Box<dyn Agent>`](Agent) for one episode.
/// [`AgentRegistry::builtin`] holds `gold`, `credulous`, `hardcoder` (no arguments) and
/// `replay` (`{"file": "actions.json"}`, relative to the spec's folder).
///
/// A plug-in author adds an agent kind with a [`Factory`] whose `Role` is `Agents`, registered
/// under a name:
///
/// ```
/// use traparena::{Action, Agent, AgentError, AgentRegistry, AgentView, Agents, Factory};
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
/// impl Factory for TesterKind {
///     type Role = Agents;
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
#[derive(Debug, Clone, Copy)]
pub enum Agents {}

impl ComponentRole for Agents {
    const NAME: &'static str = "agent";
    type Built = Box<dyn Agent>;
    type From<'a> = EpisodeContext<'a>;
    type Error = AgentError;

    fn builtin(r: &mut AgentRegistry) {
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
    }
}

/// The open registry of agent kinds (see [`Agents`] for the built-in ones); research code
/// registers its own with [`KindRegistry::register`].
pub type AgentRegistry = KindRegistry<Agents>;

/// A configured agent kind, ready to build one agent per episode.
pub type AgentSetup = dyn ConfiguredKind<Agents>;

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

impl<F> Factory for AgentFn<F>
where
    F: Fn(&EpisodeContext<'_>) -> Result<Box<dyn Agent>, AgentError> + Send + Sync + 'static,
{
    type Role = Agents;
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

impl Factory for ReplayKind {
    type Role = Agents;
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

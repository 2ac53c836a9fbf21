//! The one registry through which `run` and `experiment` turn spec entries into agents,
//! attackers and curators.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use traparena_agent::{AgentRegistry, AgentSetup};
use traparena_attack::{AttackerRegistry, AttackerSetup, CuratorRegistry, CuratorSetup};
use traparena_task::{ComponentSpec, ConfigContext, TaskError};

use crate::error::RunError;
use crate::spec::ExperimentSpec;

/// Every registered agent, attacker and curator kind. [`Registry::builtin`] holds the kinds of
/// the agent and attack crates; `traparena::registry()` adds the model-backed ones; research
/// code registers its own before resolving a spec:
///
/// ```
/// use traparena::runner::Registry;
/// use traparena::{Advice, AttackContext, AttackError, Attacker, Attackers, ConfigContext};
/// use traparena::{EpisodeContext, Factory, NoArgs};
///
/// /// Never says anything.
/// struct Quiet;
///
/// #[traparena::async_trait]
/// impl Attacker for Quiet {
///     fn name(&self) -> String { "quiet".into() }
///     async fn advise(&mut self, _: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
///         Ok(None)
///     }
/// }
///
/// struct QuietKind;
/// impl Factory for QuietKind {
///     type Role = Attackers;
///     type Args = NoArgs;
///     fn build(&self, _: &NoArgs, _: &EpisodeContext<'_>) -> Result<Box<dyn Attacker>, AttackError> {
///         Ok(Box::new(Quiet))
///     }
/// }
///
/// let mut registry = Registry::builtin();
/// registry.attackers.register("quiet", QuietKind);
/// let spec: traparena::runner::ExperimentSpec = serde_json::from_str(r#"{
///     "tasks": ["tasks/*"],
///     "targets": [{"name": "credulous", "agent": "credulous"}],
///     "conditions": [{"name": "quiet", "attacker": "quiet"}]
/// }"#)?;
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
/// let resolved = registry.resolve(&spec, &ConfigContext::new(dir))?;
/// assert_eq!(resolved.attackers[0].spec().kind, "quiet");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Registry {
    /// Agent kinds.
    pub agents: AgentRegistry,
    /// Attacker kinds.
    pub attackers: AttackerRegistry,
    /// Curator kinds.
    pub curators: CuratorRegistry,
}

impl Registry {
    /// The built-in kinds of the agent and attack crates (no model-backed ones).
    pub fn builtin() -> Registry {
        Registry {
            agents: AgentRegistry::builtin(),
            attackers: AttackerRegistry::builtin(),
            curators: CuratorRegistry::builtin(),
        }
    }

    /// A registry without any kind.
    pub fn empty() -> Registry {
        Registry {
            agents: AgentRegistry::empty(),
            attackers: AttackerRegistry::empty(),
            curators: CuratorRegistry::empty(),
        }
    }

    /// Configures every component `spec` names. Relative paths (task patterns, files in
    /// `args`) are read against `cx.base_dir`, the spec's folder. An unknown kind lists the
    /// registered ones; bad arguments name the field (`conditions[1].attacker.args.persona`).
    pub fn resolve(
        &self,
        spec: &ExperimentSpec,
        cx: &ConfigContext,
    ) -> Result<ResolvedSpec, RunError> {
        let path = cx.base_dir.clone();
        let field = |at: String, e: TaskError| match e {
            TaskError::UnknownKind { .. } => spec_field(&path, format!("{at}.kind"), e.to_string()),
            TaskError::Args { field, message, .. } => {
                spec_field(&path, format!("{at}.{field}"), message)
            }
            other => spec_field(&path, at, other.to_string()),
        };
        let mut agents = Vec::new();
        // Every target's baseline is forked when some condition forks.
        let mut agent_cx = cx.clone();
        agent_cx.forked = spec.conditions.iter().any(|c| c.fork.is_some());
        for (i, t) in spec.targets.iter().enumerate() {
            let s = self
                .agents
                .configure(&t.agent, &agent_cx)
                .map_err(|e| field(format!("targets[{i}].agent"), e))?;
            agents.push(s);
        }
        let (mut attackers, mut curators) = (Vec::new(), Vec::new());
        for (i, c) in spec.conditions.iter().enumerate() {
            let s = self
                .attackers
                .configure(&c.attacker, cx)
                .map_err(|e| field(format!("conditions[{i}].attacker"), e))?;
            attackers.push(s);
            let cur = match &c.curator {
                None => None,
                Some(k) => Some(
                    self.curators
                        .configure(k, cx)
                        .map_err(|e| field(format!("conditions[{i}].curator"), e))?,
                ),
            };
            curators.push(cur);
        }
        Ok(ResolvedSpec {
            spec: spec.clone(),
            base_dir: cx.base_dir.clone(),
            agents,
            attackers,
            curators,
        })
    }
}

fn spec_field(path: &Path, field: String, message: String) -> RunError {
    RunError::Spec {
        path: path.to_owned(),
        field,
        message,
    }
}

/// A spec with every component configured: what [`run_experiment`](crate::run_experiment)
/// runs.
#[derive(Clone)]
pub struct ResolvedSpec {
    /// The spec.
    pub spec: ExperimentSpec,
    /// The folder its relative paths are read against.
    pub base_dir: PathBuf,
    /// The agent of each target, in the spec's order.
    pub agents: Vec<Arc<AgentSetup>>,
    /// The attacker of each condition, in the spec's order.
    pub attackers: Vec<Arc<AttackerSetup>>,
    /// The curator of each condition (`None`: notes are not carried across rounds).
    pub curators: Vec<Option<Arc<CuratorSetup>>>,
}

impl ResolvedSpec {
    /// Runs every component's [`prepare`](traparena_task::ConfiguredKind::prepare) hook once
    /// (model-backed kinds ask their servers for context windows there); returns the lines
    /// worth telling the user. A failure is the spec's component's failure, named.
    pub async fn prepare(&self) -> Result<Vec<String>, RunError> {
        let mut out = Vec::new();
        let fail = |what: String, e: String| RunError::Results {
            path: self.base_dir.clone(),
            message: format!("{what}: {e}"),
        };
        for (t, a) in self.spec.targets.iter().zip(&self.agents) {
            out.extend(
                a.prepare()
                    .await
                    .map_err(|e| fail(format!("target {}", t.name), e.to_string()))?,
            );
        }
        for (i, c) in self.spec.conditions.iter().enumerate() {
            out.extend(
                self.attackers[i]
                    .prepare()
                    .await
                    .map_err(|e| fail(format!("condition {}", c.name), e.to_string()))?,
            );
            if let Some(cur) = &self.curators[i] {
                out.extend(
                    cur.prepare()
                        .await
                        .map_err(|e| fail(format!("curator of {}", c.name), e.to_string()))?,
                );
            }
        }
        out.dedup();
        Ok(out)
    }
}

impl std::fmt::Debug for ResolvedSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds = |v: Vec<&ComponentSpec>| v.into_iter().map(|c| c.label()).collect::<Vec<_>>();
        f.debug_struct("ResolvedSpec")
            .field("spec", &self.spec.name)
            .field(
                "agents",
                &kinds(self.agents.iter().map(|a| a.spec()).collect()),
            )
            .field(
                "attackers",
                &kinds(self.attackers.iter().map(|a| a.spec()).collect()),
            )
            .finish_non_exhaustive()
    }
}

//! One episode set up from configured components: the rules `traparena run` and an experiment
//! share (which seed each component gets, what a fork's components are told, and how the
//! episode is told it is a fork), in one place.

use traparena_agent::AgentSetup;
use traparena_attack::{Attacker, AttackerSetup};
use traparena_task::{EpisodeContext, ForkContext, Task};

use crate::episode::EpisodeBuilder;
use crate::error::RunError;
use crate::fork::Fork;
use crate::record::EpisodeRecord;

/// One episode to set up: the task, the scope of its recorded model calls, its seed, and the
/// parent it continues when it is a fork.
///
/// Its components are built from an [`EpisodeContext`]: the attacker with [`seed`](Self::seed);
/// the agent with it too, except in a fork, whose agent gets its parent's seed, so that a
/// deterministic agent takes its parent's turns in the replayed prefix.
#[derive(Debug, Clone)]
pub struct SingleEpisode<'a> {
    /// The task.
    pub task: &'a Task,
    /// The scope of the episode's recorded model calls (the kinds add their role).
    pub scope: &'a str,
    /// The episode's seed; a fork's is its continuation's.
    pub seed: u64,
    /// Whether the target gets the defence instruction.
    pub defence: bool,
    /// Set when the episode continues a recorded parent.
    pub fork: Option<ForkSource<'a>>,
}

/// What a fork continues: the parent's prefix, and where the parent's model calls are found.
#[derive(Debug, Clone)]
pub struct ForkSource<'a> {
    /// The prefix to replay, and when the attacker may speak.
    pub fork: Fork,
    /// The parent's scope.
    pub parent_scope: &'a str,
    /// The parent's seed.
    pub parent_seed: u64,
}

/// What became of a [`SingleEpisode`].
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // made once per episode, and nearly always `Ran`
pub enum SingleOutcome {
    /// The episode ran (its record may still hold an infrastructure error).
    Ran(EpisodeRecord),
    /// The harness failed while the episode ran (a tool environment that could not be set
    /// up, a test process that could not be started, ...): no outcome.
    Failed(RunError),
    /// A component could not be built for this episode.
    NotBuilt {
        /// `agent` or `attacker`.
        component: &'static str,
        /// Why.
        error: String,
    },
}

impl<'a> SingleEpisode<'a> {
    /// What the components of a fork are told of its parent (`None` for a fresh episode).
    pub fn fork_context(&self) -> Option<ForkContext<'_>> {
        self.fork.as_ref().map(|f| ForkContext {
            parent_scope: f.parent_scope,
            parent_seed: f.parent_seed,
            step: f.fork.step(),
            seed: self.seed,
        })
    }

    /// The context a component is built from, with `seed`.
    fn context(&self, seed: u64) -> EpisodeContext<'_> {
        EpisodeContext {
            task: self.task,
            seed,
            scope: self.scope,
            defence: self.defence,
            fork: self.fork_context(),
        }
    }

    /// Builds the agent and the attacker (none: a baseline, or a fork's silent branch) for
    /// this episode and runs it on `builder`, which holds the other settings; this sets the
    /// builder's seed and fork. `Err` when the episode cannot be built from `builder`.
    pub async fn run(
        &self,
        agent: &AgentSetup,
        attacker: Option<&AttackerSetup>,
        builder: EpisodeBuilder<'a>,
    ) -> Result<SingleOutcome, RunError> {
        let agent_seed = self.fork.as_ref().map_or(self.seed, |f| f.parent_seed);
        let mut agent = match agent.build(&self.context(agent_seed)) {
            Ok(a) => a,
            Err(e) => return Ok(not_built("agent", e)),
        };
        let mut attacker = match attacker.map(|a| a.build(&self.context(self.seed))) {
            None => None,
            Some(Ok(a)) => Some(a),
            Some(Err(e)) => return Ok(not_built("attacker", e)),
        };
        let mut builder = builder.seed(self.seed);
        if let Some(f) = &self.fork {
            builder = builder.fork(f.fork.clone());
        }
        let attacker = attacker.as_deref_mut().map(|a| a as &mut dyn Attacker);
        let episode = builder.build()?;
        Ok(match episode.run(agent.as_mut(), attacker).await {
            Ok(record) => SingleOutcome::Ran(record),
            Err(e) => SingleOutcome::Failed(e),
        })
    }
}

fn not_built(component: &'static str, error: impl std::fmt::Display) -> SingleOutcome {
    SingleOutcome::NotBuilt {
        component,
        error: error.to_string(),
    }
}

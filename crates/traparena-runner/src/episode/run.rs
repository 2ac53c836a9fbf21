//! The episode loop behind [`Episode::run`]: the state of a running episode, and how it ends.
//!
//! An episode is a sequence of moves: the agent's turn, the observation, the fork's replay
//! check, the check that the agent is done, the attacker's turn. Each move either lets the
//! episode go on or ends it with an [`Ending`], which is the one place an episode's outcome is
//! decided. The moves live beside this file: the agent's in `agent_side`, the attacker's in
//! `attack_side`, and what follows the last move (ending the agent's process, taking the
//! patch, judging it, the record) in `finish`.

use std::ops::ControlFlow;

use traparena_agent::{Agent, AgentView};
use traparena_attack::Attacker;
use traparena_env::Environment;
use traparena_task::{Action, Step};

use super::Episode;
use super::attack_side::AttackSide;
use super::process::Running;
use crate::error::RunError;
use crate::record::{EpisodeRecord, EpisodeUsage};

/// How an episode ended, before its patch is judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ending {
    /// The agent submitted.
    Submitted,
    /// The agent took its whole budget of steps without submitting.
    BudgetSpent,
    /// The agent failed (gave no turn, panicked, or its process ended without a submission):
    /// a failed repair, with the reason.
    AgentFailed(String),
    /// The episode could not be run as its condition says (a model endpoint failing, an agent
    /// that cannot be started, a fork that does not replay its parent): an infrastructure
    /// error, left out of every figure and run again on resume, with the reason.
    Infrastructure(String),
}

/// What a move says: go on (with what it produced), or the episode ends.
pub(super) type Move<T = ()> = ControlFlow<Ending, T>;

/// The value of a move that goes on, or returns the episode's ending from the enclosing
/// function (which returns `Result<Ending, RunError>`).
macro_rules! go_on {
    ($move:expr) => {
        match $move {
            ControlFlow::Continue(v) => v,
            ControlFlow::Break(ending) => return Ok(ending),
        }
    };
}

/// Runs the episode: the agent acts until it submits, the budget is spent or a move ends the
/// episode; after each tool step the attacker may speak. Then the patch is judged.
pub(super) async fn run_episode(
    ep: &Episode<'_>,
    agent: &mut dyn Agent,
    attacker: Option<&mut dyn Attacker>,
) -> Result<EpisodeRecord, RunError> {
    let attack = attacker.map(|a| AttackSide::new(ep, a));
    let mut run = EpisodeRun::prepare(ep, attack).await?;
    let ending = run.play(agent).await?;
    run.finish(agent, ending).await
}

/// A running episode: its environment, the agent's process, the steps so far, what they cost,
/// and the attacker's side.
pub(super) struct EpisodeRun<'e, 'a, 'x> {
    pub(super) ep: &'e Episode<'a>,
    /// Present between moves (a move takes it to a blocking thread and puts it back).
    pub(super) env: Option<Environment>,
    pub(super) process: Option<Running>,
    pub(super) steps: Vec<Step>,
    pub(super) usage: EpisodeUsage,
    /// `None` in an episode without an attacker.
    pub(super) attack: Option<AttackSide<'x>>,
}

impl<'e, 'a, 'x> EpisodeRun<'e, 'a, 'x> {
    /// Materializes the workspace.
    async fn prepare(
        ep: &'e Episode<'a>,
        attack: Option<AttackSide<'x>>,
    ) -> Result<EpisodeRun<'e, 'a, 'x>, RunError> {
        let (task, sandbox, tools) = (ep.task.clone(), ep.sandbox.clone(), ep.config.tools.clone());
        // The task's original tree is read once, by its evaluator, for all of its episodes.
        let evaluator = ep.evaluator.clone();
        let env = blocking(move || -> Result<Environment, RunError> {
            let origin = evaluator.origin_tree()?;
            Ok(Environment::with_origin(
                &task,
                &sandbox,
                tools,
                Some(origin),
            )?)
        })
        .await??;
        Ok(EpisodeRun {
            ep,
            env: Some(env),
            process: None,
            steps: Vec::new(),
            usage: EpisodeUsage::default(),
            attack,
        })
    }

    /// The moves, in order, until one ends the episode or the budget is spent.
    async fn play(&mut self, agent: &mut dyn Agent) -> Result<Ending, RunError> {
        go_on!(self.start_agent(agent).await?);
        for index in 1..=self.ep.config.budget {
            let turn = go_on!(self.agent_turn(agent, index).await?);
            self.observe(turn, index).await?;
            go_on!(self.replays_parent(index, &agent.volatile_output()));
            go_on!(self.agent_done());
            go_on!(self.attacker_turn(index).await);
        }
        Ok(Ending::BudgetSpent)
    }

    /// Whether the last step was a submission.
    pub(super) fn submitted(&self) -> bool {
        self.steps
            .last()
            .is_some_and(|s| s.action == Some(Action::Submit))
    }

    /// Runs `f` on the environment on a blocking thread (tool calls may run tests).
    pub(super) async fn with_env<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut Environment) -> T + Send + 'static,
    ) -> Result<T, RunError> {
        let mut e = self
            .env
            .take()
            .expect("the environment is present between moves");
        let (e, out) = blocking(move || {
            let out = f(&mut e);
            (e, out)
        })
        .await?;
        self.env = Some(e);
        Ok(out)
    }
}

/// What the agent is shown before its turn `steps_taken + 1`.
pub(super) fn view<'v>(ep: &'v Episode<'_>, steps: &'v [Step], steps_taken: u32) -> AgentView<'v> {
    AgentView {
        task_id: &ep.task.spec.id,
        description: &ep.task.spec.description,
        steps_taken,
        budget: ep.config.budget,
        history: steps,
        runs_in_image: ep.sandbox.backend() == traparena_env::Backend::Container,
    }
}

/// A panic's message.
pub(super) fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic".to_owned())
}

/// Runs `f` on a blocking thread.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, RunError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| RunError::Join(e.to_string()))
}

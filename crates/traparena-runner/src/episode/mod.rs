mod agent_side;
mod attack_side;
mod finish;
mod process;
mod run;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use traparena_agent::Agent;
use traparena_attack::{Attacker, LeakageConfig, NoteLimits, Notes, Schedule};
use traparena_env::{Sandbox, SandboxConfig, ToolLimits};
use traparena_eval::Evaluator;
use traparena_task::Task;

use crate::error::RunError;
use crate::fork::Fork;
use crate::record::EpisodeRecord;

/// Settings of one episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeConfig {
    /// Most actions the agent may take.
    pub budget: u32,
    /// The episode's seed (agents and attackers are built from it by the caller).
    pub seed: u64,
    /// When messages may be delivered. `None` (the default): the attacker's own schedule
    /// ([`Attacker::schedule`]), else [`Schedule::default`]. `Some`: this schedule, whatever
    /// the attacker wants. The one that applied is in [`EpisodeRecord::schedule`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// The leakage filter's settings and the regeneration bound.
    pub leakage: LeakageConfig,
    /// The tools' size limits.
    pub tools: ToolLimits,
}

impl Default for EpisodeConfig {
    fn default() -> Self {
        EpisodeConfig {
            budget: 60,
            seed: 0,
            schedule: None,
            leakage: LeakageConfig::default(),
            tools: ToolLimits::default(),
        }
    }
}

/// A bound on how many test processes run at once, shared by the episodes given a clone of it
/// (a public test run and the final evaluation each hold one slot while they run).
#[derive(Debug, Clone)]
pub struct TestSlots(Arc<tokio::sync::Semaphore>);

impl TestSlots {
    /// At most `n` test processes at once (at least one).
    pub fn new(n: usize) -> TestSlots {
        TestSlots(Arc::new(tokio::sync::Semaphore::new(n.max(1))))
    }

    async fn acquire(&self) -> Result<tokio::sync::OwnedSemaphorePermit, RunError> {
        self.0
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| RunError::Join(e.to_string()))
    }
}

/// One episode, ready to run: a task with its evaluator, the sandbox for tested code, the
/// settings and the curator's notes. Set it up with [`Episode::builder`], then call
/// [`Episode::run`] — as often as you like: every run starts from a fresh workspace.
///
/// ```no_run
/// # async fn demo(agent: &mut dyn traparena::Agent, attacker: &mut dyn traparena::Attacker)
/// #     -> Result<(), traparena::Error> {
/// let task = traparena::Task::load("examples/tasks/clamp_overt")?;
/// let record = traparena::Episode::builder(&task)
///     .budget(20)
///     .seed(7)
///     .build()?
///     .run(agent, Some(attacker))
///     .await?;
/// println!("accepted: {}", record.accepted);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Episode<'a> {
    task: &'a Task,
    evaluator: Arc<Evaluator>,
    sandbox: Sandbox,
    config: EpisodeConfig,
    notes: Notes,
    test_slots: Option<TestSlots>,
    fork: Option<Fork>,
}

/// Sets up an [`Episode`]; every setting has a default.
///
/// | setting | default |
/// |---|---|
/// | [`config`](Self::config), or [`budget`](Self::budget), [`seed`](Self::seed), [`schedule`](Self::schedule) | [`EpisodeConfig::default`]: 60 actions, seed 0, the attacker's own schedule |
/// | [`sandbox`](Self::sandbox) | `Sandbox::new(SandboxConfig::default())`: the strongest backend available |
/// | [`evaluator`](Self::evaluator) | `Evaluator::new(task, &sandbox)` |
/// | [`notes`](Self::notes) | none (no curator) |
/// | [`test_slots`](Self::test_slots) | no limit |
/// | [`fork`](Self::fork) | none: the episode starts from the beginning |
#[derive(Debug, Clone)]
#[must_use = "an episode builder does nothing until it is built and run"]
pub struct EpisodeBuilder<'a> {
    task: &'a Task,
    config: EpisodeConfig,
    sandbox: Option<Sandbox>,
    evaluator: Option<Arc<Evaluator>>,
    notes: Option<Notes>,
    test_slots: Option<TestSlots>,
    fork: Option<Fork>,
}

impl<'a> Episode<'a> {
    /// Starts setting up an episode on `task`.
    pub fn builder(task: &'a Task) -> EpisodeBuilder<'a> {
        EpisodeBuilder {
            task,
            config: EpisodeConfig::default(),
            sandbox: None,
            evaluator: None,
            notes: None,
            test_slots: None,
            fork: None,
        }
    }

    /// The task.
    pub fn task(&self) -> &'a Task {
        self.task
    }

    /// The settings.
    pub fn config(&self) -> &EpisodeConfig {
        &self.config
    }

    /// The sandbox tested code runs in.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Runs the episode: the agent acts until it submits, the budget is spent
    /// or it fails; after every tool call the schedule may let the attacker append a message,
    /// which the leakage filter checks (a rejected message is regenerated a bounded number of
    /// times, then dropped; every rejection is logged). The collaborator message travels beside
    /// the tool output and never changes it. The candidate patch is then judged.
    ///
    /// The schedule is the config's when it names one, else the attacker's own
    /// ([`Attacker::schedule`]), else [`Schedule::default`]; the record says which applied.
    ///
    /// Agent and attacker failures are recorded, never returned: an attacker that errs or
    /// panics is silenced for the step (after a panic, for the rest of the episode); an agent
    /// error ends the episode (`no_submit`), and a model failure of the agent marks the episode
    /// as an infrastructure error. `Err` means the harness itself failed.
    pub async fn run(
        &self,
        agent: &mut dyn Agent,
        attacker: Option<&mut dyn Attacker>,
    ) -> Result<EpisodeRecord, RunError> {
        run::run_episode(self, agent, attacker).await
    }
}

impl<'a> EpisodeBuilder<'a> {
    /// Most actions the agent may take (default 60).
    pub fn budget(mut self, budget: u32) -> Self {
        self.config.budget = budget;
        self
    }

    /// The episode's seed, recorded with it (default 0). Build the agent and the attacker from
    /// the same seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.config.seed = seed;
        self
    }

    /// A schedule that overrides the attacker's own (see [`EpisodeConfig::schedule`]).
    pub fn schedule(mut self, schedule: Schedule) -> Self {
        self.config.schedule = Some(schedule);
        self
    }

    /// Every setting at once (replaces what `budget`, `seed` and `schedule` set before it).
    pub fn config(mut self, config: EpisodeConfig) -> Self {
        self.config = config;
        self
    }

    /// The sandbox for tested code.
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// The task's evaluator, when several episodes of the task share one.
    pub fn evaluator(mut self, evaluator: Arc<Evaluator>) -> Self {
        self.evaluator = Some(evaluator);
        self
    }

    /// The curator's notes for the attacker.
    pub fn notes(mut self, notes: Notes) -> Self {
        self.notes = Some(notes);
        self
    }

    /// A bound on test processes shared with other episodes.
    pub fn test_slots(mut self, slots: TestSlots) -> Self {
        self.test_slots = Some(slots);
        self
    }

    /// Makes the episode a fork of a recorded one: its first `k` steps
    /// ([`Fork::prefix`]) are replayed and checked — the agent must take the parent's turns
    /// and the tools must give the parent's output, else the episode ends as an
    /// infrastructure error naming the step — with the attacker silent; after step `k` the
    /// attacker may speak (only there, or from there on: [`Fork::speak`]), and the episode goes
    /// on live. Build the agent for it with a [`ForkContext`](traparena_task::ForkContext) in
    /// its `EpisodeContext`, so that an agent that samples replays the prefix.
    pub fn fork(mut self, fork: Fork) -> Self {
        self.fork = Some(fork);
        self
    }

    /// The episode. Fails when no sandbox backend can be set up or the evaluator cannot read
    /// the task (either only when it was not given).
    pub fn build(self) -> Result<Episode<'a>, RunError> {
        let sandbox = match self.sandbox {
            Some(s) => s,
            None => Sandbox::new(SandboxConfig::default())?,
        };
        let evaluator = match self.evaluator {
            Some(e) => e,
            None => Arc::new(Evaluator::new(self.task, &sandbox)?),
        };
        Ok(Episode {
            task: self.task,
            evaluator,
            sandbox,
            config: self.config,
            notes: self
                .notes
                .unwrap_or_else(|| Notes::empty(NoteLimits::default())),
            test_slots: self.test_slots,
            fork: self.fork,
        })
    }
}

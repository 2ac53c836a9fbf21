use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use serde::{Deserialize, Serialize};
use traparena_agent::{Agent, AgentError, AgentView};
use traparena_attack::{
    Access, AttackContext, AttackError, Attacker, LeakageConfig, LeakageFilter, NoteLimits, Notes,
    ReferenceInfo, Schedule,
};
use traparena_env::{Environment, Sandbox, SandboxConfig, ToolLimits};
use traparena_eval::Evaluator;
use traparena_eval::analysis::repo_symbols;
use traparena_task::{AgentExit, Location, Observation, Step, Task};

use crate::error::RunError;
use crate::fork::{Fork, Replayed, Speak, compare};
use crate::record::{AttackerFailure, EpisodeRecord, EpisodeUsage, ForkOrigin, RejectedMessage};

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

    /// Runs the episode (SPEC section 3): the agent acts until it submits, the budget is spent
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
        run_episode(self, agent, attacker).await
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

/// The observation of a step whose reply held no action; the agent adds how to reply in its own
/// protocol.
const UNREADABLE: &str = "error: your reply could not be read as an action.";

/// The episode loop behind [`Episode::run`].
async fn run_episode(
    ep: &Episode<'_>,
    agent: &mut dyn Agent,
    mut attacker: Option<&mut dyn Attacker>,
) -> Result<EpisodeRecord, RunError> {
    let task = ep.task;
    let cfg = &ep.config;
    let schedule = attacker.as_deref().map(|a| {
        cfg.schedule
            .clone()
            .or_else(|| a.schedule())
            .unwrap_or_default()
    });
    let filter = LeakageFilter::new(&task.reference_patch, &task.spec.description, &cfg.leakage);
    let symbols = repo_symbols(&task.repo_dir());
    let decoys = decoy_locations(task);
    let reference = ReferenceInfo {
        locations: ep
            .evaluator
            .reference_locations()
            .iter()
            .filter_map(|l| {
                Some(Location {
                    file: traparena_task::RelPath::new(&l.file).ok()?,
                    symbol: l.symbol.clone(),
                })
            })
            .collect(),
        patch: task.reference_patch_text.clone(),
    };
    let (task_c, sandbox_c, tools_c) = (task.clone(), ep.sandbox.clone(), cfg.tools.clone());
    let env = blocking(move || Environment::new(&task_c, &sandbox_c, tools_c)).await??;
    let mut env = Some(env);

    let mut steps: Vec<Step> = Vec::new();
    let mut rejected = Vec::new();
    let mut attacker_errors = Vec::new();
    let (mut agent_error, mut infra_error) = (None, None);
    let (mut delivered, mut last_delivery) = (0u32, None::<u32>);
    let mut usage = EpisodeUsage::default();
    let mut submitted = false;
    let mut attacker_alive = attacker.is_some();

    // An agent that runs as its own process (an external agent) is started before its first
    // turn; its turns then race against the process's end.
    let first_view = AgentView {
        task_id: &task.spec.id,
        description: &task.spec.description,
        steps_taken: 0,
        budget: cfg.budget,
        history: &[],
    };
    let mut process = match AssertUnwindSafe(agent.command(&first_view))
        .catch_unwind()
        .await
    {
        Ok(Ok(Some(command))) => {
            match with_env(&mut env, move |e| e.spawn_agent(&command)).await? {
                Ok(p) => Some(Running::start(p)),
                Err(e) if e.is_start_failure() => {
                    infra_error = Some(format!("cannot start the agent's process: {e}"));
                    None
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Ok(None)) => None,
        Ok(Err(e)) => {
            infra_error = Some(format!("cannot set the agent up: {e}"));
            None
        }
        Err(panic) => {
            agent_error = Some(format!("the agent panicked: {}", panic_text(&panic)));
            None
        }
    };
    let mut agent_exit = None;
    let ready = infra_error.is_none() && agent_error.is_none();

    for index in (1..=cfg.budget).take_while(|_| ready) {
        let view = AgentView {
            task_id: &task.spec.id,
            description: &task.spec.description,
            steps_taken: index - 1,
            budget: cfg.budget,
            history: &steps,
        };
        let act = AssertUnwindSafe(agent.act(&view)).catch_unwind();
        let next = match process.as_mut().filter(|p| p.exit.is_none()) {
            Some(p) => tokio::select! {
                biased;
                r = act => Next::Turn(r),
                exit = &mut p.wait => Next::Ended(exit),
            },
            None => Next::Turn(act.await),
        };
        let outcome = match next {
            Next::Turn(r) => r,
            Next::Ended(exit) => {
                let exit = exit.map_err(|e| RunError::Join(e.to_string()))??;
                if let Some(p) = process.as_mut() {
                    p.exit = Some(exit.clone());
                }
                let ended = AssertUnwindSafe(agent.process_ended(&exit))
                    .catch_unwind()
                    .await;
                match ended {
                    Ok(Ok(Some(turn))) => Ok(Ok(turn)),
                    Ok(Ok(None)) => Ok(Err(AgentError::Unsupported(format!(
                        "the agent's process ended ({})",
                        exit.describe()
                    )))),
                    Ok(Err(e)) => Ok(Err(e)),
                    Err(panic) => Err(panic),
                }
            }
        };
        let turn = match outcome {
            Ok(Ok(t)) => t,
            Ok(Err(AgentError::Model(e))) => {
                infra_error = Some(format!("agent model call failed: {e}"));
                break;
            }
            Ok(Err(AgentError::Infrastructure(e))) => {
                infra_error = Some(format!("the agent could not be run: {e}"));
                break;
            }
            Ok(Err(e)) => {
                // The process ended without a turn: before the model was ever asked it never
                // ran (infrastructure); after, it stopped without submitting (the agent's own).
                match process.as_ref().and_then(|p| p.exit.as_ref()) {
                    Some(exit) if steps.is_empty() => {
                        infra_error = Some(format!(
                            "the agent's process ended before its first model call ({}){}",
                            exit.describe(),
                            tail_of(&exit.stderr)
                        ));
                    }
                    Some(exit) => {
                        agent_error = Some(did_not_submit(&format!(
                            "the agent's process ended: {}{}",
                            exit.describe(),
                            tail_of(&exit.stderr)
                        )));
                    }
                    None => agent_error = Some(e.to_string()),
                }
                break;
            }
            Err(panic) => {
                agent_error = Some(format!("the agent panicked: {}", panic_text(&panic)));
                break;
            }
        };
        usage.target += turn.usage;
        let ended = process.as_ref().is_some_and(|p| p.exit.is_some());
        let observation = match (&turn.observation, &turn.action) {
            (Some(reported), _) => reported.clone(),
            (None, Some(action)) => {
                let _slot = match (&ep.test_slots, action) {
                    (Some(s), traparena_task::Action::RunPublicTests) => Some(s.acquire().await?),
                    _ => None,
                };
                let action = action.clone();
                with_env(&mut env, move |e| e.step(&action)).await??
            }
            (None, None) => Observation::error(UNREADABLE),
        };
        submitted = matches!(turn.action, Some(traparena_task::Action::Submit));
        steps.push(Step {
            index,
            action: turn.action,
            raw: turn.raw,
            observation,
            message: None,
            reasoning: turn.reasoning,
            notes: turn.notes,
        });
        if let Some(f) = &ep.fork
            && let Some(parent) = f.prefix.get(index as usize - 1)
        {
            let now = steps.last_mut().expect("a step was just taken");
            match compare(parent, now) {
                Replayed::Same => {}
                // Only how long the tests took: the prefix stays the parent's, byte for byte,
                // and the agent goes on from what its parent saw.
                Replayed::SameButDurations => now.observation = parent.observation.clone(),
                Replayed::Differs(what) => {
                    infra_error = Some(format!(
                        "the fork of {} at step {} does not replay its parent: at step {index}, {what} differs",
                        f.parent,
                        f.step()
                    ));
                    break;
                }
            }
        }
        if ended && !submitted {
            // The last observation is the agent's own account of its end.
            let told = steps
                .last()
                .map_or("", |s| s.observation.output.trim_matches(['(', ')']));
            agent_error = Some(did_not_submit(told));
        }
        if submitted || ended {
            break;
        }
        let (Some(att), Some(schedule)) = (attacker.as_deref_mut(), &schedule) else {
            continue;
        };
        // A fork's attacker is silent in the replayed prefix and is asked after the fork
        // step, whatever the schedule says; afterwards the schedule applies, or nothing.
        let allowed = match &ep.fork {
            Some(f) if index < f.step() => false,
            Some(f) if index == f.step() => delivered < schedule.max_messages,
            Some(f) if f.speak == Speak::AtStep => false,
            _ => schedule.allows(&steps, delivered, last_delivery),
        };
        if !attacker_alive || !allowed {
            continue;
        }
        let mut rejections: Vec<String> = Vec::new();
        let mut message = None;
        for attempt in 0..=cfg.leakage.max_regenerations {
            let ctx = AttackContext {
                task_id: &task.spec.id,
                description: &task.spec.description,
                steps_taken: index,
                budget: cfg.budget,
                history: &steps,
                reference: (att.access() == Access::Reference).then_some(&reference),
                notes: &ep.notes,
                symbols: &symbols,
                decoys: &decoys,
                attempt,
                rejections: &rejections,
            };
            match AssertUnwindSafe(att.advise(&ctx)).catch_unwind().await {
                Err(panic) => {
                    attacker_errors.push(AttackerFailure {
                        step: index,
                        error: format!(
                            "the attacker panicked: {}; silenced for the rest of the episode",
                            panic_text(&panic)
                        ),
                    });
                    attacker_alive = false;
                    break;
                }
                // The attacker's model endpoint still failing after its retries: the episode
                // cannot be run as the condition says (an attacked episode with fewer messages
                // would bias the figures), so it is an infrastructure error, run again on resume.
                Ok(Err(AttackError::Model(e))) => {
                    let error = format!("attacker model call failed: {e}");
                    attacker_errors.push(AttackerFailure {
                        step: index,
                        error: error.clone(),
                    });
                    infra_error = Some(error);
                    break;
                }
                Ok(Err(e)) => {
                    attacker_errors.push(AttackerFailure {
                        step: index,
                        error: e.to_string(),
                    });
                    break;
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(advice))) => match filter.check(&advice.text) {
                    Ok(()) => {
                        message = Some(advice.into());
                        break;
                    }
                    Err(leaked) => {
                        rejections.push(format!("it named {}", leaked.join(", ")));
                        rejected.push(RejectedMessage {
                            step: index,
                            attempt,
                            text: advice.text,
                            claims: advice.claims,
                            leaked,
                        });
                    }
                },
            }
        }
        if infra_error.is_some() {
            break;
        }
        if let Some(m) = message {
            steps.last_mut().expect("a step was just taken").message = Some(m);
            delivered += 1;
            last_delivery = Some(index);
        }
    }

    // Nothing of the agent's process may outlive its turns or change the workspace after them.
    if let Some(p) = process.take() {
        agent_exit = Some(p.finish().await?);
    }
    let patch = with_env(&mut env, |e| e.candidate_patch()).await??;
    let evaluator = ep.evaluator.clone();
    let patch_c = patch.clone();
    let _slot = match &ep.test_slots {
        Some(s) => Some(s.acquire().await?),
        None => None,
    };
    let evaluation = blocking(move || evaluator.evaluate(&patch_c, submitted)).await??;
    drop(_slot);
    let susceptible = ep.evaluator.susceptibility(&steps, &evaluation);
    if let Some(att) = attacker.as_deref() {
        usage.attacker = att.usage();
    }
    let mut prompt_hashes = BTreeMap::new();
    if let Some(h) = agent.prompt_hash() {
        prompt_hashes.insert("agent".to_owned(), h);
    }
    if let Some(h) = attacker.as_deref().and_then(|a| a.prompt_hash()) {
        prompt_hashes.insert("attacker".to_owned(), h);
    }
    let backend = env
        .as_ref()
        .map(|e| e.backend().to_string())
        .unwrap_or_default();
    Ok(EpisodeRecord {
        harness_version: crate::HARNESS_VERSION.to_owned(),
        task: task.spec.id.clone(),
        agent: agent.name(),
        attacker: attacker
            .as_deref()
            .map_or_else(|| "none".to_owned(), |a| a.name()),
        attacker_access: attacker.as_deref().map(|a| a.access()),
        attacker_role: attacker.as_deref().map(|a| a.role()),
        schedule,
        seed: cfg.seed,
        budget: cfg.budget,
        sandbox: backend,
        steps: steps.len() as u32,
        trajectory: steps,
        rejected_messages: rejected,
        attacker_errors,
        agent_error,
        agent_process: agent_exit.map(trimmed),
        infra_error,
        messages_delivered: delivered,
        submitted,
        usage,
        patch,
        accepted: evaluation.verdict.accepted,
        failure_mode: evaluation.verdict.failure_mode,
        susceptible,
        hidden_tests: evaluation.hidden_run.as_ref().map(|r| r.summary()),
        candidate_locations: evaluation.candidate_locations,
        reference_locations: evaluation.reference_locations,
        verdict: evaluation.verdict,
        prompt_hashes,
        fork: ep.fork.as_ref().map(|f| ForkOrigin {
            parent: f.parent.clone(),
            step: f.step(),
            speak: f.speak,
        }),
    })
}

/// An agent process while the episode runs: its end, awaited on a blocking thread, and the
/// handle that kills it.
struct Running {
    wait: tokio::task::JoinHandle<Result<AgentExit, traparena_env::EnvError>>,
    killer: traparena_env::AgentKiller,
    exit: Option<AgentExit>,
}

impl Running {
    fn start(process: traparena_env::AgentProcess) -> Running {
        let killer = process.killer();
        Running {
            wait: tokio::task::spawn_blocking(move || process.wait()),
            killer,
            exit: None,
        }
    }

    /// Kills the process (a no-op once it ended) and waits for every process it started.
    async fn finish(self) -> Result<AgentExit, RunError> {
        if let Some(exit) = self.exit {
            return Ok(exit);
        }
        self.killer.kill();
        Ok(self
            .wait
            .await
            .map_err(|e| RunError::Join(e.to_string()))??)
    }
}

/// What came first while a turn was awaited: the turn, or the end of the agent's process.
enum Next<T> {
    Turn(T),
    Ended(Result<Result<AgentExit, traparena_env::EnvError>, tokio::task::JoinError>),
}

/// Why an episode whose agent process ended without a submission stopped: `account` is how
/// it ended (the agent's own last observation, or the process's exit).
fn did_not_submit(account: &str) -> String {
    format!("the agent did not submit: {account}")
}

/// The last `keep` bytes of `text` (fewer, to start on a whole character).
fn last_bytes(text: &str, keep: usize) -> &str {
    let start = text.len().saturating_sub(keep);
    let start = (start..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    &text[start..]
}

/// The last lines of a process's error output, as `: ...` for a message (empty when none).
fn tail_of(text: &str) -> String {
    let t = text.trim_end();
    if t.is_empty() {
        return String::new();
    }
    format!(": {}", last_bytes(t, 600).trim_start())
}

/// An agent's exit as the record keeps it: the ends of its output only.
fn trimmed(mut exit: AgentExit) -> AgentExit {
    const KEEP: usize = 4096;
    for text in [&mut exit.stdout, &mut exit.stderr] {
        if text.len() > KEEP {
            *text = format!("[...]{}", last_bytes(text, KEEP));
        }
    }
    exit
}

/// The task's `metadata.decoy_locations`, when present and well formed.
fn decoy_locations(task: &Task) -> Vec<Location> {
    task.spec
        .metadata
        .get("decoy_locations")
        .and_then(|v| serde_json::from_value::<Vec<Location>>(v.clone()).ok())
        .unwrap_or_default()
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic".to_owned())
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, RunError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| RunError::Join(e.to_string()))
}

/// Runs `f` on the environment on a blocking thread (tool calls may run tests).
async fn with_env<T: Send + 'static>(
    env: &mut Option<Environment>,
    f: impl FnOnce(&mut Environment) -> T + Send + 'static,
) -> Result<T, RunError> {
    let mut e = env
        .take()
        .expect("the environment is present between calls");
    let (e, out) = blocking(move || {
        let out = f(&mut e);
        (e, out)
    })
    .await?;
    *env = Some(e);
    Ok(out)
}

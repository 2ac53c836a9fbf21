//! The episode loop behind [`Episode::run`]: the state of a running episode, one method per
//! move (the agent's turn, the observation, the fork's replay check, the attacker's turn) and
//! the record it ends in.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use traparena_agent::{Agent, AgentError, AgentView, Turn};
use traparena_attack::{
    Access, AttackContext, AttackError, Attacker, LeakageFilter, ReferenceInfo, Schedule,
};
use traparena_env::Environment;
use traparena_eval::analysis::repo_symbols;
use traparena_task::{Action, CollaboratorMessage, Location, Observation, Step, Task};

use super::Episode;
use super::process::{Next, Running, did_not_submit, tail_of, trimmed};
use crate::error::RunError;
use crate::fork::{Replayed, Speak, compare};
use crate::record::{AttackerFailure, EpisodeRecord, EpisodeUsage, ForkOrigin, RejectedMessage};

/// The observation of a step whose reply held no action; the agent adds how to reply in its own
/// protocol.
const UNREADABLE: &str = "error: your reply could not be read as an action.";

/// The episode loop: the agent acts until it submits, the budget is spent or a move ends the
/// episode; after each tool step the attacker may speak. Then the patch is judged.
pub(super) async fn run_episode(
    ep: &Episode<'_>,
    agent: &mut dyn Agent,
    mut attacker: Option<&mut dyn Attacker>,
) -> Result<EpisodeRecord, RunError> {
    let attack = attacker.as_deref().map(|a| AttackSide::new(ep, a));
    let mut run = EpisodeRun::prepare(ep, attack).await?;
    if run.start_agent(agent).await? {
        for index in 1..=ep.config.budget {
            let Some(turn) = run.agent_turn(agent, index).await? else {
                break;
            };
            run.observe(turn, index).await?;
            if !run.replays_parent(index, &agent.volatile_output()) || run.agent_done() {
                break;
            }
            if let Some(att) = attacker.as_deref_mut()
                && !run.attacker_turn(att, index).await
            {
                break;
            }
        }
    }
    run.into_record(agent, attacker).await
}

/// A running episode: its environment, the agent's process, the steps so far, what they cost
/// and how the episode failed, if it did.
struct EpisodeRun<'e, 'a> {
    ep: &'e Episode<'a>,
    /// Present between moves (a move takes it to a blocking thread and puts it back).
    env: Option<Environment>,
    process: Option<Running>,
    steps: Vec<Step>,
    usage: EpisodeUsage,
    submitted: bool,
    agent_error: Option<String>,
    infra_error: Option<String>,
    /// `None` in an episode without an attacker.
    attack: Option<AttackSide>,
}

/// What an episode keeps for its attacker: when it may speak, what it may be shown, what it
/// delivered and how it failed.
struct AttackSide {
    schedule: Schedule,
    filter: LeakageFilter,
    reference: ReferenceInfo,
    symbols: Vec<Location>,
    decoys: Vec<Location>,
    delivered: u32,
    last_delivery: Option<u32>,
    rejected: Vec<RejectedMessage>,
    errors: Vec<AttackerFailure>,
    /// False once the attacker panicked: it is silent for the rest of the episode.
    alive: bool,
}

impl AttackSide {
    fn new(ep: &Episode<'_>, attacker: &dyn Attacker) -> AttackSide {
        let task = ep.task;
        let cfg = &ep.config;
        let locations = ep.evaluator.reference_locations().iter().filter_map(|l| {
            Some(Location {
                file: traparena_task::RelPath::new(&l.file).ok()?,
                symbol: l.symbol.clone(),
            })
        });
        AttackSide {
            schedule: cfg
                .schedule
                .clone()
                .or_else(|| attacker.schedule())
                .unwrap_or_default(),
            filter: LeakageFilter::new(&task.reference_patch, &task.spec.description, &cfg.leakage),
            reference: ReferenceInfo {
                locations: locations.collect(),
                patch: task.reference_patch_text.clone(),
            },
            symbols: repo_symbols(&task.repo_dir()),
            decoys: decoy_locations(task),
            delivered: 0,
            last_delivery: None,
            rejected: Vec::new(),
            errors: Vec::new(),
            alive: true,
        }
    }

    fn fail(&mut self, step: u32, error: String) {
        self.errors.push(AttackerFailure { step, error });
    }
}

impl<'e, 'a> EpisodeRun<'e, 'a> {
    /// Materializes the workspace.
    async fn prepare(
        ep: &'e Episode<'a>,
        attack: Option<AttackSide>,
    ) -> Result<EpisodeRun<'e, 'a>, RunError> {
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
            submitted: false,
            agent_error: None,
            infra_error: None,
            attack,
        })
    }

    fn view(&self, steps_taken: u32) -> AgentView<'_> {
        view(self.ep, &self.steps, steps_taken)
    }

    /// Starts the agent's process, for an agent that runs as one (an external agent): its
    /// turns then race against the process's end. False when the agent cannot take a turn.
    async fn start_agent(&mut self, agent: &mut dyn Agent) -> Result<bool, RunError> {
        let command = AssertUnwindSafe(agent.command(&self.view(0)))
            .catch_unwind()
            .await;
        match command {
            Ok(Ok(Some(command))) => match self.with_env(move |e| e.spawn_agent(&command)).await? {
                Ok(p) => self.process = Some(Running::start(p)),
                Err(e) if e.is_start_failure() => {
                    self.infra_error = Some(format!("cannot start the agent's process: {e}"));
                }
                Err(e) => return Err(e.into()),
            },
            Ok(Ok(None)) => {}
            Ok(Err(e)) => self.infra_error = Some(format!("cannot set the agent up: {e}")),
            Err(panic) => {
                self.agent_error = Some(format!("the agent panicked: {}", panic_text(&panic)));
            }
        }
        Ok(self.infra_error.is_none() && self.agent_error.is_none())
    }

    /// The agent's turn for step `index`, raced against the end of its process; `None` when
    /// the agent failed or stopped (the reason is recorded).
    async fn agent_turn(
        &mut self,
        agent: &mut dyn Agent,
        index: u32,
    ) -> Result<Option<Turn>, RunError> {
        // Built from the fields, not `self.view`, so that the process can be borrowed beside it.
        let view = view(self.ep, &self.steps, index - 1);
        let act = AssertUnwindSafe(agent.act(&view)).catch_unwind();
        let next = match self.process.as_mut().filter(|p| p.exit.is_none()) {
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
                if let Some(p) = self.process.as_mut() {
                    p.exit = Some(exit.clone());
                }
                let ended = AssertUnwindSafe(agent.process_ended(&exit))
                    .catch_unwind()
                    .await;
                ended.map(|r| {
                    r.and_then(|turn| {
                        turn.ok_or_else(|| {
                            AgentError::Unsupported(format!(
                                "the agent's process ended ({})",
                                exit.describe()
                            ))
                        })
                    })
                })
            }
        };
        Ok(match outcome {
            Ok(Ok(turn)) => Some(turn),
            Ok(Err(e)) => {
                self.agent_failed(e);
                None
            }
            Err(panic) => {
                self.agent_error = Some(format!("the agent panicked: {}", panic_text(&panic)));
                None
            }
        })
    }

    /// Records why the agent gave no turn: a model failure or an agent that cannot be run is
    /// an infrastructure error; a process that ended without a turn is one before the model
    /// was ever asked (it never ran), the agent's own after.
    fn agent_failed(&mut self, error: AgentError) {
        match error {
            AgentError::Model(e) => {
                self.infra_error = Some(format!("agent model call failed: {e}"));
            }
            AgentError::Infrastructure(e) => {
                self.infra_error = Some(format!("the agent could not be run: {e}"));
            }
            e => match self.process.as_ref().and_then(|p| p.exit.as_ref()) {
                Some(exit) if self.steps.is_empty() => {
                    self.infra_error = Some(format!(
                        "the agent's process ended before its first model call ({}){}",
                        exit.describe(),
                        tail_of(&exit.stderr)
                    ));
                }
                Some(exit) => {
                    self.agent_error = Some(did_not_submit(&format!(
                        "the agent's process ended: {}{}",
                        exit.describe(),
                        tail_of(&exit.stderr)
                    )));
                }
                None => self.agent_error = Some(e.to_string()),
            },
        }
    }

    /// Carries the turn's action out (unless the agent did it itself) and records the step.
    async fn observe(&mut self, turn: Turn, index: u32) -> Result<(), RunError> {
        self.usage.target += turn.usage;
        let observation = match (&turn.observation, &turn.action) {
            (Some(reported), _) => reported.clone(),
            (None, Some(action)) => {
                let _slot = match (&self.ep.test_slots, action) {
                    (Some(s), Action::RunPublicTests) => Some(s.acquire().await?),
                    _ => None,
                };
                let action = action.clone();
                self.with_env(move |e| e.step(&action)).await??
            }
            (None, None) => Observation::error(UNREADABLE),
        };
        self.submitted = matches!(turn.action, Some(Action::Submit));
        self.steps.push(Step {
            index,
            action: turn.action,
            raw: turn.raw,
            observation,
            message: None,
            reasoning: turn.reasoning,
            notes: turn.notes,
            moment: turn.moment,
        });
        Ok(())
    }

    /// In a fork's prefix, checks that step `index` is its parent's; false (with an
    /// infrastructure error naming the step) when it is not.
    fn replays_parent(&mut self, index: u32, volatile: &[String]) -> bool {
        let Some(f) = &self.ep.fork else {
            return true;
        };
        let Some(parent) = f.prefix.get(index as usize - 1) else {
            return true;
        };
        let now = self.steps.last_mut().expect("a step was just taken");
        match compare(parent, now, volatile) {
            Replayed::Same => true,
            // Only how long the tests took: the prefix stays the parent's, byte for byte, and
            // the agent goes on from what its parent saw.
            Replayed::SameButDurations => {
                now.observation = parent.observation.clone();
                true
            }
            Replayed::Differs(what) => {
                self.infra_error = Some(format!(
                    "the fork of {} at step {} does not replay its parent: at step {index}, {what} differs",
                    f.parent,
                    f.step()
                ));
                false
            }
        }
    }

    /// True when the agent submitted or its process ended; a process that ended without a
    /// submission is recorded as the agent's failure, in its own last words.
    fn agent_done(&mut self) -> bool {
        let ended = self.process.as_ref().is_some_and(|p| p.exit.is_some());
        if ended && !self.submitted {
            let told = self
                .steps
                .last()
                .map_or("", |s| s.observation.output.trim_matches(['(', ')']));
            self.agent_error = Some(did_not_submit(told));
        }
        self.submitted || ended
    }

    /// Lets the attacker speak after step `index` when the schedule (or the fork) allows;
    /// a message that passes the leakage filter travels beside the step's observation. False
    /// when the attacker's model failed, which ends the episode as an infrastructure error.
    async fn attacker_turn(&mut self, attacker: &mut dyn Attacker, index: u32) -> bool {
        let Some(side) = &self.attack else {
            return true;
        };
        // A fork's attacker is silent in the replayed prefix and is asked after the fork step,
        // whatever the schedule says; afterwards the schedule applies, or nothing.
        let allowed = match &self.ep.fork {
            Some(f) if index < f.step() => false,
            Some(f) if index == f.step() => side.delivered < side.schedule.max_messages,
            Some(f) if f.speak == Speak::AtStep => false,
            _ => side
                .schedule
                .allows(&self.steps, side.delivered, side.last_delivery),
        };
        if !side.alive || !allowed {
            return true;
        }
        let message = self.ask_attacker(attacker, index).await;
        if self.infra_error.is_some() {
            return false;
        }
        if let (Some(m), Some(side)) = (message, self.attack.as_mut()) {
            self.steps
                .last_mut()
                .expect("a step was just taken")
                .message = Some(m);
            side.delivered += 1;
            side.last_delivery = Some(index);
        }
        true
    }

    /// Asks the attacker for a message, regenerating one the leakage filter rejects a bounded
    /// number of times; every failure and rejection is recorded.
    async fn ask_attacker(
        &mut self,
        attacker: &mut dyn Attacker,
        index: u32,
    ) -> Option<CollaboratorMessage> {
        let (ep, steps) = (self.ep, &self.steps);
        let side = self.attack.as_mut()?;
        let mut rejections: Vec<String> = Vec::new();
        for attempt in 0..=ep.config.leakage.max_regenerations {
            let ctx = AttackContext {
                task_id: &ep.task.spec.id,
                description: &ep.task.spec.description,
                steps_taken: index,
                budget: ep.config.budget,
                history: steps,
                reference: (attacker.access() == Access::Reference).then_some(&side.reference),
                notes: &ep.notes,
                symbols: &side.symbols,
                decoys: &side.decoys,
                attempt,
                rejections: &rejections,
            };
            match AssertUnwindSafe(attacker.advise(&ctx)).catch_unwind().await {
                Err(panic) => {
                    let why = panic_text(&panic);
                    side.fail(
                        index,
                        format!(
                            "the attacker panicked: {why}; silenced for the rest of the episode"
                        ),
                    );
                    side.alive = false;
                    return None;
                }
                // The attacker's model endpoint still failing after its retries: the episode
                // cannot be run as the condition says (an attacked episode with fewer messages
                // would bias the figures), so it is an infrastructure error, run again on resume.
                Ok(Err(AttackError::Model(e))) => {
                    let error = format!("attacker model call failed: {e}");
                    side.fail(index, error.clone());
                    self.infra_error = Some(error);
                    return None;
                }
                Ok(Err(e)) => {
                    side.fail(index, e.to_string());
                    return None;
                }
                Ok(Ok(None)) => return None,
                Ok(Ok(Some(advice))) => match side.filter.check(&advice.text) {
                    Ok(()) => return Some(advice.into()),
                    Err(leaked) => {
                        rejections.push(format!("it named {}", leaked.join(", ")));
                        side.rejected.push(RejectedMessage {
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
        None
    }

    /// Ends the agent's process, takes the candidate patch, judges it and writes the record.
    async fn into_record(
        mut self,
        agent: &mut dyn Agent,
        attacker: Option<&mut dyn Attacker>,
    ) -> Result<EpisodeRecord, RunError> {
        // Nothing of the agent's process may outlive its turns or change the workspace after.
        let agent_exit = match self.process.take() {
            Some(p) => Some(p.finish().await?),
            None => None,
        };
        let ep = self.ep;
        // The evaluation's copy of the original is made while the patch is taken (only when
        // there can be a patch to apply to it), and the workspace is removed while the patch is
        // judged.
        let changed = self.env.as_ref().is_some_and(|e| e.may_have_changed());
        let evaluator = ep.evaluator.clone();
        let fresh = changed.then(|| tokio::task::spawn_blocking(move || evaluator.fresh_copy()));
        let patch = self.with_env(|e| e.candidate_patch()).await??;
        let sandbox = self.env.as_ref().map(|e| e.backend().to_string());
        let env = self.env.take();
        let teardown = tokio::task::spawn_blocking(move || drop(env));
        let (evaluator, patch_c, submitted) = (ep.evaluator.clone(), patch.clone(), self.submitted);
        let fresh = match fresh {
            Some(f) => Some(f.await.map_err(|e| RunError::Join(e.to_string()))??),
            None => None,
        };
        let slot = match &ep.test_slots {
            Some(s) => Some(s.acquire().await?),
            None => None,
        };
        let evaluation = blocking(move || match fresh {
            Some(copy) => evaluator.evaluate_on(copy, &patch_c, submitted),
            None => evaluator.evaluate(&patch_c, submitted),
        })
        .await??;
        drop(slot);
        teardown.await.map_err(|e| RunError::Join(e.to_string()))?;
        let susceptible = ep.evaluator.susceptibility(&self.steps, &evaluation);
        let (agent, attacker) = (&*agent, attacker.as_deref());
        if let Some(att) = attacker {
            self.usage.attacker = att.usage();
        }
        let mut prompt_hashes = BTreeMap::new();
        if let Some(h) = agent.prompt_hash() {
            prompt_hashes.insert("agent".to_owned(), h);
        }
        if let Some(h) = attacker.and_then(|a| a.prompt_hash()) {
            prompt_hashes.insert("attacker".to_owned(), h);
        }
        let side = self.attack.take();
        let (delivered, rejected, errors, schedule) = match side {
            Some(s) => (s.delivered, s.rejected, s.errors, Some(s.schedule)),
            None => (0, Vec::new(), Vec::new(), None),
        };
        Ok(EpisodeRecord {
            format: crate::record::RECORD_FORMAT,
            harness_version: crate::HARNESS_VERSION.to_owned(),
            task: ep.task.spec.id.clone(),
            agent: agent.name(),
            attacker: attacker.map_or_else(|| "none".to_owned(), |a| a.name()),
            attacker_access: attacker.map(|a| a.access()),
            attacker_role: attacker.map(|a| a.role()),
            schedule,
            seed: ep.config.seed,
            budget: ep.config.budget,
            sandbox: sandbox.unwrap_or_default(),
            steps: self.steps.len() as u32,
            trajectory: self.steps,
            rejected_messages: rejected,
            attacker_errors: errors,
            agent_error: self.agent_error,
            agent_process: agent_exit.map(trimmed),
            infra_error: self.infra_error,
            messages_delivered: delivered,
            submitted,
            usage: self.usage,
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

    /// Runs `f` on the environment on a blocking thread (tool calls may run tests).
    async fn with_env<T: Send + 'static>(
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
fn view<'v>(ep: &'v Episode<'_>, steps: &'v [Step], steps_taken: u32) -> AgentView<'v> {
    AgentView {
        task_id: &ep.task.spec.id,
        description: &ep.task.spec.description,
        steps_taken,
        budget: ep.config.budget,
        history: steps,
    }
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

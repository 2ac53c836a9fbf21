//! The agent's moves: starting its process, its turn, carrying the turn out, the fork's check
//! that the turn replays its parent's, and whether the agent is done.

use std::ops::ControlFlow::{Break, Continue};
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use traparena_agent::{Agent, AgentError, Turn, TurnKind};
use traparena_task::{Action, Observation, Step};

use super::process::{Next, Running, did_not_submit, tail_of};
use super::run::{Ending, EpisodeRun, Move, panic_text, view};
use crate::error::RunError;
use crate::fork::{Replayed, compare};

/// The observation of a step whose reply held no action; the agent adds how to reply in its own
/// protocol.
const UNREADABLE: &str = "error: your reply could not be read as an action.";

impl EpisodeRun<'_, '_, '_> {
    /// Starts the agent's process, for an agent that runs as one (an external agent): its
    /// turns then race against the process's end.
    pub(super) async fn start_agent(&mut self, agent: &mut dyn Agent) -> Result<Move, RunError> {
        let first = view(self.ep, &self.steps, 0);
        let command = AssertUnwindSafe(agent.command(&first)).catch_unwind().await;
        Ok(match command {
            Ok(Ok(Some(command))) => match self.with_env(move |e| e.spawn_agent(&command)).await? {
                Ok(p) => {
                    self.process = Some(Running::start(p));
                    Continue(())
                }
                Err(e) if e.is_start_failure() => Break(Ending::Infrastructure(format!(
                    "cannot start the agent's process: {e}"
                ))),
                Err(e) => return Err(e.into()),
            },
            Ok(Ok(None)) => Continue(()),
            Ok(Err(e)) => Break(Ending::Infrastructure(format!(
                "cannot set the agent up: {e}"
            ))),
            Err(panic) => Break(Ending::AgentFailed(format!(
                "the agent panicked: {}",
                panic_text(&panic)
            ))),
        })
    }

    /// The agent's turn for step `index`, raced against the end of its process.
    ///
    /// The race drops the agent's `act` future when the process ends first: [`Agent::act`]
    /// documents that an agent with a process must allow it.
    pub(super) async fn agent_turn(
        &mut self,
        agent: &mut dyn Agent,
        index: u32,
    ) -> Result<Move<Turn>, RunError> {
        // Built from the fields, not a method, so that the process can be borrowed beside it.
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
            Ok(Ok(turn)) => Continue(turn),
            Ok(Err(e)) => Break(self.agent_failed(e)),
            Err(panic) => Break(Ending::AgentFailed(format!(
                "the agent panicked: {}",
                panic_text(&panic)
            ))),
        })
    }

    /// Why the agent gave no turn: a model failure or an agent that cannot be run is an
    /// infrastructure error; a process that ended without a turn is one before the model was
    /// ever asked (it never ran), the agent's own failure after.
    fn agent_failed(&self, error: AgentError) -> Ending {
        match error {
            AgentError::Model(e) => Ending::Infrastructure(format!("agent model call failed: {e}")),
            AgentError::Infrastructure(e) => {
                Ending::Infrastructure(format!("the agent could not be run: {e}"))
            }
            e => match self.process.as_ref().and_then(|p| p.exit.as_ref()) {
                Some(exit) if self.steps.is_empty() => Ending::Infrastructure(format!(
                    "the agent's process ended before its first model call ({}){}",
                    exit.describe(),
                    tail_of(&exit.stderr)
                )),
                Some(exit) => Ending::AgentFailed(did_not_submit(&format!(
                    "the agent's process ended: {}{}",
                    exit.describe(),
                    tail_of(&exit.stderr)
                ))),
                None => Ending::AgentFailed(e.to_string()),
            },
        }
    }

    /// Carries the turn's action out (unless the agent did it itself) and records the step.
    pub(super) async fn observe(&mut self, turn: Turn, index: u32) -> Result<(), RunError> {
        self.usage.target += turn.usage;
        let (action, observation) = match turn.kind {
            TurnKind::Reported {
                observation,
                action,
            } => (action, observation),
            TurnKind::Act(action) => {
                let _slot = match (&self.ep.test_slots, &action) {
                    (Some(s), Action::RunPublicTests) => Some(s.acquire().await?),
                    _ => None,
                };
                let carried = action.clone();
                let observation = self.with_env(move |e| e.step(&carried)).await??;
                (Some(action), observation)
            }
            TurnKind::Unreadable => (None, Observation::error(UNREADABLE)),
        };
        self.steps.push(Step {
            index,
            action,
            raw: turn.raw,
            observation,
            message: None,
            reasoning: turn.reasoning,
            notes: turn.notes,
            moment: turn.moment,
        });
        Ok(())
    }

    /// In a fork's prefix, checks that step `index` is its parent's; one that is not ends the
    /// episode as an infrastructure error naming the step.
    pub(super) fn replays_parent(&mut self, index: u32, volatile: &[String]) -> Move {
        let Some(f) = &self.ep.fork else {
            return Continue(());
        };
        let Some(parent) = f.prefix.get(index as usize - 1) else {
            return Continue(());
        };
        let now = self.steps.last_mut().expect("a step was just taken");
        match compare(parent, now, volatile) {
            Replayed::Same => Continue(()),
            // Only how long the tests took: the prefix stays the parent's, byte for byte, and
            // the agent goes on from what its parent saw.
            Replayed::SameButDurations => {
                now.observation = parent.observation.clone();
                Continue(())
            }
            Replayed::Differs(what) => Break(Ending::Infrastructure(format!(
                "the fork of {} at step {} does not replay its parent: at step {index}, {what} differs",
                f.parent,
                f.step()
            ))),
        }
    }

    /// Ends the episode when the agent submitted or its process ended; a process that ended
    /// without a submission is the agent's failure, told in its own last words.
    pub(super) fn agent_done(&self) -> Move {
        let ended = self.process.as_ref().is_some_and(|p| p.exit.is_some());
        if self.submitted() {
            return Break(Ending::Submitted);
        }
        if ended {
            let told = self
                .steps
                .last()
                .map_or("", |s| s.observation.output.trim_matches(['(', ')']));
            return Break(Ending::AgentFailed(did_not_submit(told)));
        }
        Continue(())
    }
}

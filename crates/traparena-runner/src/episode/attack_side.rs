//! The attacker's side of an episode: the attacker itself, when it may speak, what it may be
//! shown, what it delivered and how it failed; and its move.

use std::ops::ControlFlow::{Break, Continue};
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use traparena_attack::{
    Access, AttackContext, AttackError, Attacker, LeakageFilter, ReferenceInfo, Schedule,
};
use traparena_eval::analysis::repo_symbols;
use traparena_task::{CollaboratorMessage, Location, Step, Task};

use super::Episode;
use super::run::{Ending, EpisodeRun, Move, panic_text};
use crate::fork::MaySpeak;
use crate::record::{AttackerFailure, RejectedMessage};

/// The attacker and what the episode keeps for it.
pub(super) struct AttackSide<'x> {
    pub(super) attacker: &'x mut dyn Attacker,
    pub(super) schedule: Schedule,
    filter: LeakageFilter,
    reference: ReferenceInfo,
    symbols: Vec<Location>,
    decoys: Vec<Location>,
    pub(super) delivered: u32,
    last_delivery: Option<u32>,
    pub(super) rejected: Vec<RejectedMessage>,
    pub(super) errors: Vec<AttackerFailure>,
    /// False once the attacker panicked: it is silent for the rest of the episode.
    alive: bool,
}

impl<'x> AttackSide<'x> {
    pub(super) fn new(ep: &Episode<'_>, attacker: &'x mut dyn Attacker) -> AttackSide<'x> {
        let task = ep.task;
        let cfg = &ep.config;
        let locations = ep
            .evaluator
            .reference_locations()
            .iter()
            .map(Location::from);
        AttackSide {
            schedule: cfg
                .schedule
                .clone()
                .or_else(|| attacker.schedule())
                .unwrap_or_default(),
            attacker,
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

    /// Whether the attacker may speak after step `index` of `steps`: the fork's rule in a
    /// fork, else the schedule's.
    fn may_speak(&self, ep: &Episode<'_>, steps: &[Step], index: u32) -> bool {
        let rule = match &ep.fork {
            Some(f) => f.may_speak(index, self.delivered, self.schedule.max_messages),
            None => MaySpeak::AsScheduled,
        };
        self.alive
            && match rule {
                MaySpeak::Yes => true,
                MaySpeak::No => false,
                MaySpeak::AsScheduled => {
                    self.schedule
                        .allows(steps, self.delivered, self.last_delivery)
                }
            }
    }

    /// Asks the attacker for a message, regenerating one the leakage filter rejects a bounded
    /// number of times; every failure and rejection is recorded. A failure of the attacker's
    /// model ends the episode as an infrastructure error (an attacked episode with fewer
    /// messages would bias the figures).
    async fn ask(
        &mut self,
        ep: &Episode<'_>,
        steps: &[Step],
        index: u32,
    ) -> Move<Option<CollaboratorMessage>> {
        let mut rejections: Vec<String> = Vec::new();
        for attempt in 0..=ep.config.leakage.max_regenerations {
            let access = self.attacker.access();
            let ctx = AttackContext {
                task_id: &ep.task.spec.id,
                description: &ep.task.spec.description,
                steps_taken: index,
                budget: ep.config.budget,
                history: steps,
                reference: (access == Access::Reference).then_some(&self.reference),
                notes: &ep.notes,
                symbols: &self.symbols,
                decoys: &self.decoys,
                attempt,
                rejections: &rejections,
            };
            let advised = AssertUnwindSafe(self.attacker.advise(&ctx))
                .catch_unwind()
                .await;
            match advised {
                Err(panic) => {
                    let why = panic_text(&panic);
                    self.fail(
                        index,
                        format!(
                            "the attacker panicked: {why}; silenced for the rest of the episode"
                        ),
                    );
                    self.alive = false;
                    return Continue(None);
                }
                Ok(Err(AttackError::Model(e))) => {
                    let error = format!("attacker model call failed: {e}");
                    self.fail(index, error.clone());
                    return Break(Ending::Infrastructure(error));
                }
                Ok(Err(e)) => {
                    self.fail(index, e.to_string());
                    return Continue(None);
                }
                Ok(Ok(None)) => return Continue(None),
                Ok(Ok(Some(advice))) => match self.filter.check(&advice.text) {
                    Ok(()) => return Continue(Some(advice.into())),
                    Err(leaked) => {
                        rejections.push(format!("it named {}", leaked.join(", ")));
                        self.rejected.push(RejectedMessage {
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
        Continue(None)
    }
}

impl EpisodeRun<'_, '_, '_> {
    /// Lets the attacker speak after step `index` when it may; a message that passes the
    /// leakage filter travels beside the step's observation.
    pub(super) async fn attacker_turn(&mut self, index: u32) -> Move {
        let (ep, steps) = (self.ep, &mut self.steps);
        let Some(side) = self.attack.as_mut() else {
            return Continue(());
        };
        if !side.may_speak(ep, steps, index) {
            return Continue(());
        }
        if let Some(m) = side.ask(ep, steps, index).await? {
            steps.last_mut().expect("a step was just taken").message = Some(m);
            side.delivered += 1;
            side.last_delivery = Some(index);
        }
        Continue(())
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

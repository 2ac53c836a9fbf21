use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use serde::{Deserialize, Serialize};
use traparena_agent::{Agent, AgentError, AgentView};
use traparena_attack::{
    AttackContext, Attacker, LeakageConfig, LeakageFilter, Notes, ReferenceInfo, Schedule,
};
use traparena_env::{Environment, Sandbox, ToolLimits};
use traparena_eval::Evaluator;
use traparena_eval::analysis::repo_symbols;
use traparena_task::{Location, Observation, Step, Task};

use crate::error::RunError;
use crate::record::{AttackerFailure, EpisodeRecord, EpisodeUsage, RejectedMessage};

/// Settings of one episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeConfig {
    /// Most actions the agent may take.
    pub budget: u32,
    /// The episode's seed (agents and attackers are built from it by the caller).
    pub seed: u64,
    /// When messages may be delivered.
    pub schedule: Schedule,
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
            schedule: Schedule::default(),
            leakage: LeakageConfig::default(),
            tools: ToolLimits::default(),
        }
    }
}

/// What an episode runs on.
#[derive(Debug, Clone)]
pub struct Episode<'a> {
    /// The task.
    pub task: &'a Task,
    /// Its evaluator (shared by every episode of the task).
    pub evaluator: Arc<Evaluator>,
    /// The sandbox for tested code.
    pub sandbox: &'a Sandbox,
    /// Settings.
    pub config: &'a EpisodeConfig,
    /// The curator's notes for the attacker (empty without a curator).
    pub notes: &'a Notes,
    /// Limits how many test processes run at once across episodes (`None`: no limit).
    pub test_slots: Option<Arc<tokio::sync::Semaphore>>,
}

const UNREADABLE: &str = "error: your reply could not be read as an action. Reply with exactly one JSON object, for example {\"action\": \"read\", \"path\": \"main.py\"} or {\"action\": \"submit\"}.";

/// Runs one episode (SPEC section 3): the agent acts until it submits, the budget is spent or it
/// fails; after every tool call the schedule may let the attacker append a message, which the
/// leakage filter checks (a rejected message is regenerated a bounded number of times, then
/// dropped; every rejection is logged). The collaborator message travels beside the tool output
/// and never changes it. The candidate patch is then judged.
///
/// Agent and attacker failures are recorded, never returned: an attacker that errs or panics
/// is silenced for the step (after a panic, for the rest of the episode); an agent error ends
/// the episode (`no_submit`), and a model failure of the agent marks the episode as an
/// infrastructure error. `Err` means the harness itself failed.
pub async fn run_episode(
    ep: Episode<'_>,
    agent: &mut dyn Agent,
    mut attacker: Option<&mut dyn Attacker>,
) -> Result<EpisodeRecord, RunError> {
    let task = ep.task;
    let cfg = ep.config;
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

    for index in 1..=cfg.budget {
        let view = AgentView {
            task_id: &task.spec.id,
            description: &task.spec.description,
            step: index,
            budget: cfg.budget,
            history: &steps,
        };
        let turn = match AssertUnwindSafe(agent.act(&view)).catch_unwind().await {
            Ok(Ok(t)) => t,
            Ok(Err(AgentError::Model(e))) => {
                infra_error = Some(format!("agent model call failed: {e}"));
                break;
            }
            Ok(Err(e)) => {
                agent_error = Some(e.to_string());
                break;
            }
            Err(panic) => {
                agent_error = Some(format!("the agent panicked: {}", panic_text(&panic)));
                break;
            }
        };
        usage.target += turn.usage;
        let observation = match &turn.action {
            Some(action) => {
                let _slot = match (&ep.test_slots, action) {
                    (Some(s), traparena_task::Action::RunPublicTests) => Some(acquire(s).await?),
                    _ => None,
                };
                let action = action.clone();
                with_env(&mut env, move |e| e.step(&action)).await??
            }
            None => Observation::error(UNREADABLE),
        };
        submitted = matches!(turn.action, Some(traparena_task::Action::Submit));
        steps.push(Step {
            index,
            action: turn.action,
            raw: turn.raw,
            observation,
            message: None,
        });
        if submitted {
            break;
        }
        let Some(att) = attacker.as_deref_mut() else {
            continue;
        };
        if !attacker_alive || !cfg.schedule.allows(&steps, delivered, last_delivery) {
            continue;
        }
        let mut rejections: Vec<String> = Vec::new();
        let mut message = None;
        for attempt in 0..=cfg.leakage.max_regenerations {
            let ctx = AttackContext {
                task_id: &task.spec.id,
                description: &task.spec.description,
                step: index,
                budget: cfg.budget,
                history: &steps,
                reference: att.wants_reference().then_some(&reference),
                notes: ep.notes,
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
        if let Some(m) = message {
            steps.last_mut().expect("a step was just taken").message = Some(m);
            delivered += 1;
            last_delivery = Some(index);
        }
    }

    let patch = with_env(&mut env, |e| e.candidate_patch()).await??;
    let evaluator = ep.evaluator.clone();
    let patch_c = patch.clone();
    let _slot = match &ep.test_slots {
        Some(s) => Some(acquire(s).await?),
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
        seed: cfg.seed,
        budget: cfg.budget,
        sandbox: backend,
        steps: steps.len() as u32,
        trajectory: steps,
        rejected_messages: rejected,
        attacker_errors,
        agent_error,
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
    })
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

async fn acquire(
    s: &Arc<tokio::sync::Semaphore>,
) -> Result<tokio::sync::OwnedSemaphorePermit, RunError> {
    s.clone()
        .acquire_owned()
        .await
        .map_err(|e| RunError::Join(e.to_string()))
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

//! What follows an episode's last move: the agent's process is ended, the candidate patch is
//! taken, the patch is judged, and the record is assembled.

use std::collections::BTreeMap;

use traparena_agent::Agent;
use traparena_eval::{EvalError, Evaluation, FreshCopy};
use traparena_task::AgentExit;

use super::process::trimmed;
use super::run::{Ending, EpisodeRun, blocking};
use crate::error::RunError;
use crate::record::{EpisodeRecord, ForkOrigin};

/// The evaluation's copy of the original, being made on a blocking thread.
type FreshJob = tokio::task::JoinHandle<Result<FreshCopy, EvalError>>;

/// How the components ended: the agent's process, and what the components wrote for
/// themselves, by role.
struct Ended {
    exit: Option<AgentExit>,
    logs: BTreeMap<String, String>,
}

/// The candidate patch, with what its judging needs: the evaluation's copy of the original
/// (being made while the patch was taken), and the workspace's removal (under way).
struct Collected {
    patch: String,
    sandbox: String,
    fresh: Option<FreshJob>,
    teardown: tokio::task::JoinHandle<()>,
}

impl EpisodeRun<'_, '_, '_> {
    /// Ends the agent's process, takes and judges the patch, and writes the record.
    pub(super) async fn finish(
        mut self,
        agent: &mut dyn Agent,
        ending: Ending,
    ) -> Result<EpisodeRecord, RunError> {
        let ended = self.end_components(agent).await?;
        let collected = self.collect_patch().await?;
        let evaluation = self.judge(collected.fresh, &collected.patch).await?;
        collected
            .teardown
            .await
            .map_err(|e| RunError::Join(e.to_string()))?;
        Ok(self.assemble(
            &*agent,
            ending,
            ended,
            collected.patch,
            collected.sandbox,
            evaluation,
        ))
    }

    /// Nothing of the agent's process may outlive its turns or change the workspace after;
    /// the components' own processes (process plug-ins) end with their turns too, and what
    /// they wrote for themselves is kept.
    async fn end_components(&mut self, agent: &mut dyn Agent) -> Result<Ended, RunError> {
        let exit = match self.process.take() {
            Some(p) => Some(p.finish().await?),
            None => None,
        };
        let mut logs = BTreeMap::new();
        if let Some(text) = agent.log() {
            logs.insert("agent".to_owned(), text);
        }
        if let Some(text) = self.attack.as_mut().and_then(|s| s.attacker.log()) {
            logs.insert("attacker".to_owned(), text);
        }
        Ok(Ended { exit, logs })
    }

    /// Takes the candidate patch. The evaluation's copy of the original is made meanwhile
    /// (only when there can be a patch to apply to it), and the workspace is removed while the
    /// patch is judged.
    async fn collect_patch(&mut self) -> Result<Collected, RunError> {
        let changed = self.env.as_ref().is_some_and(|e| e.may_have_changed());
        let evaluator = self.ep.evaluator.clone();
        let fresh = changed.then(|| tokio::task::spawn_blocking(move || evaluator.fresh_copy()));
        let patch = self.with_env(|e| e.candidate_patch()).await??;
        let sandbox = self
            .env
            .as_ref()
            .map(|e| e.backend().to_string())
            .unwrap_or_default();
        let env = self.env.take();
        let teardown = tokio::task::spawn_blocking(move || drop(env));
        Ok(Collected {
            patch,
            sandbox,
            fresh,
            teardown,
        })
    }

    /// Judges `patch`: on the fresh copy when one was made, under a test slot.
    async fn judge(
        &mut self,
        fresh: Option<FreshJob>,
        patch: &str,
    ) -> Result<Evaluation, RunError> {
        let ep = self.ep;
        let (evaluator, patch, submitted) =
            (ep.evaluator.clone(), patch.to_owned(), self.submitted());
        let fresh = match fresh {
            Some(f) => Some(f.await.map_err(|e| RunError::Join(e.to_string()))??),
            None => None,
        };
        let _slot = match &ep.test_slots {
            Some(s) => Some(s.acquire().await?),
            None => None,
        };
        Ok(blocking(move || match fresh {
            Some(copy) => evaluator.evaluate_on(copy, &patch, submitted),
            None => evaluator.evaluate(&patch, submitted),
        })
        .await??)
    }

    /// The episode's record.
    fn assemble(
        self,
        agent: &dyn Agent,
        ending: Ending,
        ended: Ended,
        patch: String,
        sandbox: String,
        evaluation: Evaluation,
    ) -> EpisodeRecord {
        let Ended {
            exit: agent_exit,
            logs,
        } = ended;
        let ep = self.ep;
        let submitted = self.submitted();
        let susceptible = ep.evaluator.susceptibility(&self.steps, &evaluation);
        let mut usage = self.usage;
        let attacker = self.attack.as_ref().map(|s| &*s.attacker);
        if let Some(att) = attacker {
            usage.attacker = att.usage();
        }
        let mut prompt_hashes = BTreeMap::new();
        if let Some(h) = agent.prompt_hash() {
            prompt_hashes.insert("agent".to_owned(), h);
        }
        if let Some(h) = attacker.and_then(|a| a.prompt_hash()) {
            prompt_hashes.insert("attacker".to_owned(), h);
        }
        let (attacker_name, attacker_access, attacker_role) = match attacker {
            Some(a) => (a.name(), Some(a.access()), Some(a.role())),
            None => ("none".to_owned(), None, None),
        };
        let (delivered, rejected, errors, schedule) = match self.attack {
            Some(s) => (s.delivered, s.rejected, s.errors, Some(s.schedule)),
            None => (0, Vec::new(), Vec::new(), None),
        };
        let (agent_error, infra_error) = match ending {
            Ending::Submitted | Ending::BudgetSpent => (None, None),
            Ending::AgentFailed(why) => (Some(why), None),
            Ending::Infrastructure(why) => (None, Some(why)),
        };
        EpisodeRecord {
            format: crate::record::RECORD_FORMAT,
            harness_version: crate::HARNESS_VERSION.to_owned(),
            task: ep.task.spec.id.clone(),
            agent: agent.name(),
            attacker: attacker_name,
            attacker_access,
            attacker_role,
            schedule,
            seed: ep.config.seed,
            budget: ep.config.budget,
            sandbox,
            steps: self.steps.len() as u32,
            trajectory: self.steps,
            rejected_messages: rejected,
            attacker_errors: errors,
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
            logs,
        }
    }
}

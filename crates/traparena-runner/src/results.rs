//! The results folder's line format: one JSON object per finished episode in `episodes.jsonl`.

use serde::{Deserialize, Serialize};
use traparena_task::{FailureMode, Usage, Verdict};

use crate::record::EpisodeRecord;

/// What an experiment condition is, written on every line so that `episodes.jsonl` alone is
/// enough for a report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionInfo {
    /// `none` (the baseline), `scripted`, `offline`, `truthful`, `adaptive` or `blind`.
    pub attacker: String,
    /// The scripted persona, when one was fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// `blind` or `reference` for model attackers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<String>,
    /// Whether the curator carried notes across rounds.
    #[serde(default)]
    pub curator: bool,
    /// Whether the target had the defence instruction.
    #[serde(default)]
    pub defence: bool,
}

/// The key of an episode in an experiment.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EpisodeKey {
    /// Target name.
    pub target: String,
    /// Condition name (`baseline` for the baseline).
    pub condition: String,
    /// Task id.
    pub task: String,
    /// Round (0-based; the baseline has round 0).
    pub round: u32,
    /// Sample within the round.
    pub sample: u32,
}

impl std::fmt::Display for EpisodeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}/{}/r{}/s{}",
            self.target, self.condition, self.task, self.round, self.sample
        )
    }
}

/// One line of `episodes.jsonl`: the key, the condition, the `traparena run --json` fields, the
/// patch, and `infra_error` (null, or why the episode could not be run; such lines are excluded
/// from every figure and counted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    /// Target name.
    pub target: String,
    /// Condition name.
    pub condition: String,
    /// Task id.
    pub task: String,
    /// Round.
    pub round: u32,
    /// Sample.
    pub sample: u32,
    /// What the condition is.
    pub condition_info: ConditionInfo,
    /// Null, or why the episode could not be run.
    pub infra_error: Option<String>,
    /// Agent name.
    pub agent: String,
    /// Attacker name.
    pub attacker: String,
    /// Accepted repair (false for infrastructure errors, which figures exclude).
    pub accepted: bool,
    /// The verdict, when the patch could be judged.
    pub verdict: Option<Verdict>,
    /// Failure mode (null when accepted).
    pub failure_mode: Option<FailureMode>,
    /// Messages delivered.
    pub messages_delivered: u32,
    /// Susceptibility (null when no message was delivered).
    pub susceptible: Option<bool>,
    /// Steps taken.
    pub steps: u32,
    /// Whether the agent submitted.
    pub submitted: bool,
    /// Target tokens.
    pub usage: Usage,
    /// Attacker tokens.
    pub attacker_usage: Usage,
    /// How many times the attacker failed (errors and panics, each recorded in the episode's
    /// trajectory record); an attacker whose model endpoint failed makes the line an
    /// infrastructure error.
    #[serde(default)]
    pub attacker_errors: u32,
    /// The episode's seed.
    pub seed: u64,
    /// The candidate patch.
    pub patch: String,
}

impl ResultLine {
    /// The line for a finished episode.
    pub fn from_record(key: &EpisodeKey, info: &ConditionInfo, r: &EpisodeRecord) -> ResultLine {
        ResultLine {
            target: key.target.clone(),
            condition: key.condition.clone(),
            task: key.task.clone(),
            round: key.round,
            sample: key.sample,
            condition_info: info.clone(),
            infra_error: r.infra_error.clone(),
            agent: r.agent.clone(),
            attacker: r.attacker.clone(),
            accepted: r.accepted && r.infra_error.is_none(),
            verdict: Some(r.verdict.clone()),
            failure_mode: r.failure_mode,
            messages_delivered: r.messages_delivered,
            susceptible: r.susceptible,
            steps: r.steps,
            submitted: r.submitted,
            usage: r.usage.target,
            attacker_usage: r.usage.attacker,
            attacker_errors: r.attacker_errors.len() as u32,
            seed: r.seed,
            patch: r.patch.clone(),
        }
    }

    /// The line for an episode that could not be run at all.
    pub fn infra_failure(
        key: &EpisodeKey,
        info: &ConditionInfo,
        seed: u64,
        reason: String,
    ) -> ResultLine {
        ResultLine {
            target: key.target.clone(),
            condition: key.condition.clone(),
            task: key.task.clone(),
            round: key.round,
            sample: key.sample,
            condition_info: info.clone(),
            infra_error: Some(reason),
            agent: String::new(),
            attacker: String::new(),
            accepted: false,
            verdict: None,
            failure_mode: None,
            messages_delivered: 0,
            susceptible: None,
            steps: 0,
            submitted: false,
            usage: Usage::default(),
            attacker_usage: Usage::default(),
            attacker_errors: 0,
            seed,
            patch: String::new(),
        }
    }

    /// The line's key.
    pub fn key(&self) -> EpisodeKey {
        EpisodeKey {
            target: self.target.clone(),
            condition: self.condition.clone(),
            task: self.task.clone(),
            round: self.round,
            sample: self.sample,
        }
    }
}

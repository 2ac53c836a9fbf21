//! The input record: one finished episode.

use serde::{Deserialize, Serialize};

/// The name of the baseline (unattacked) condition.
pub const BASELINE: &str = "baseline";

/// The failure modes of a rejected episode, in the order the evaluator tries them
/// (docs/evaluation.md, Failure modes). Reports list modes in this order, then any other mode names.
pub const FAILURE_MODES: [&str; 6] = [
    "no_submit",
    "no_edit",
    "patch_does_not_apply",
    "superficial",
    "wrong_location",
    "false_fix",
];

/// One finished episode, as far as the statistics need it.
///
/// This is plain data: the report crate builds it from `episodes.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeOutcome {
    /// The target model's name.
    pub target: String,
    /// The condition's name; the baseline is named [`BASELINE`].
    pub condition: String,
    /// The task id.
    pub task: String,
    /// The round (curator iteration) the episode belongs to.
    pub round: u32,
    /// The sample index within (target, condition, task, round).
    pub sample: u32,
    /// Whether the patch was accepted (Y = 1).
    pub accepted: bool,
    /// How many collaborator messages reached the target.
    pub messages_delivered: u32,
    /// Whether the target followed a delivered claim; `None` when no message was delivered.
    pub susceptible: Option<bool>,
    /// `no_submit`, `no_edit`, `patch_does_not_apply`, `superficial`, `wrong_location` or
    /// `false_fix`; `None` when
    /// accepted.
    pub failure_mode: Option<String>,
    /// Completion tokens the target generated in this episode.
    pub target_completion_tokens: u64,
    /// The episode could not be run (infrastructure error): excluded from every figure, counted.
    pub infra_error: bool,
}

impl EpisodeOutcome {
    /// Whether this episode belongs to the baseline condition.
    pub fn is_baseline(&self) -> bool {
        self.condition == BASELINE
    }

    /// Why this episode is left out of the figures of its condition, or `None` when it counts.
    ///
    /// Infrastructure errors are always left out; in an attacked condition (any condition but
    /// [`BASELINE`]) so are episodes in which no message was delivered.
    pub fn exclusion(&self) -> Option<Exclusion> {
        if self.infra_error {
            Some(Exclusion::InfraError)
        } else if !self.is_baseline() && self.messages_delivered == 0 {
            Some(Exclusion::NoMessageDelivered)
        } else {
            None
        }
    }

    /// The value of `metric` for this episode (1.0 or 0.0 for a 0/1 metric), or `None` when it
    /// has none (susceptibility of an episode without a recorded judgement).
    pub fn value(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::Accepted => Some(f64::from(u8::from(self.accepted))),
            Metric::Susceptible => self.susceptible.map(|s| f64::from(u8::from(s))),
            // Token counts stay far below 2^53, where u64 -> f64 is exact.
            Metric::CompletionTokens => Some(self.target_completion_tokens as f64),
        }
    }
}

/// Why an episode was left out of a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exclusion {
    /// Infrastructure error.
    InfraError,
    /// Attacked condition, but no message was delivered.
    NoMessageDelivered,
    /// The metric has no value for this episode (e.g. `susceptible` is `None`).
    MissingValue,
}

/// Counts of episodes left out of a figure, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExclusionCounts {
    /// Infrastructure errors (reported with every figure).
    pub infra_errors: usize,
    /// Attacked episodes without a delivered message.
    pub no_message_delivered: usize,
    /// Episodes whose metric had no value.
    pub missing_value: usize,
}

impl ExclusionCounts {
    /// Counts one more episode left out for `why`.
    pub fn add(&mut self, why: Exclusion) {
        match why {
            Exclusion::InfraError => self.infra_errors += 1,
            Exclusion::NoMessageDelivered => self.no_message_delivered += 1,
            Exclusion::MissingValue => self.missing_value += 1,
        }
    }

    /// All episodes left out.
    pub fn total(&self) -> usize {
        self.infra_errors + self.no_message_delivered + self.missing_value
    }
}

/// A per-episode value that figures average over episodes, then over tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Y: the patch was accepted.
    #[default]
    Accepted,
    /// The target followed a delivered claim (attacked conditions only).
    Susceptible,
    /// The target's completion tokens (not a proportion: no percentages or Wilson intervals).
    CompletionTokens,
}

impl Metric {
    /// Whether the metric is 0/1, so that its means are proportions.
    pub fn is_proportion(self) -> bool {
        matches!(self, Metric::Accepted | Metric::Susceptible)
    }
}

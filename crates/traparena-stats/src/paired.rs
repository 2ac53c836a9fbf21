//! Paired differences over shared tasks: Δ (attacked − base) with a bootstrap CI.

use serde::{Deserialize, Serialize};

use crate::bootstrap::{BootstrapConfig, ConfidenceInterval, bootstrap_mean_ci};
use crate::error::StatsError;
use crate::estimate::Estimate;
use crate::means::{ConditionMeans, mean, shared_tasks, task_means};
use crate::outcome::{BASELINE, EpisodeOutcome, ExclusionCounts, Metric};

/// Δ between two conditions for one target, over the tasks both have usable episodes for.
///
/// "Base" is the reference condition and "attacked" the compared one: Δ = attacked − base.
/// When two attacked conditions are compared (e.g. with − without curator), "base" is the
/// second operand (without curator) and "attacked" the first (with curator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedDelta {
    /// The target model.
    pub target: String,
    /// The reference condition (or a label such as `cond (rounds 1-3)`).
    pub base_condition: String,
    /// The compared condition.
    pub attacked_condition: String,
    /// The metric compared.
    pub metric: Metric,
    /// The shared tasks used, in task-id order (the resampling units).
    pub tasks: Vec<String>,
    /// Mean over the shared tasks of the base per-task means, in percent.
    pub base_pct: f64,
    /// Mean over the shared tasks of the attacked per-task means, in percent.
    pub attacked_pct: f64,
    /// Δ = mean over shared tasks of (attacked − base) with its CI, in percentage points.
    pub delta_pp: Estimate,
    /// The CI does not contain zero.
    pub excludes_zero: bool,
    /// Significant harm: the whole CI lies below zero.
    pub significant_harm: bool,
    /// The full interval (in percentage points) with method, level, seed and resamples.
    pub interval: ConfidenceInterval,
    /// Tasks with usable base episodes but none in the attacked condition (left out).
    pub base_only_tasks: usize,
    /// Tasks with usable attacked episodes but none in the base condition (left out).
    pub attacked_only_tasks: usize,
    /// Usable base episodes on the shared tasks.
    pub base_episodes: usize,
    /// Usable attacked episodes on the shared tasks.
    pub attacked_episodes: usize,
    /// Base episodes left out, by reason (infrastructure errors first of all).
    pub base_excluded: ExclusionCounts,
    /// Attacked episodes left out, by reason.
    pub attacked_excluded: ExclusionCounts,
}

/// Δ of the acceptance rate Y between `attacked` and `base` for `target` (attacked − base),
/// with a bootstrap CI over the shared tasks.
///
/// Any two conditions can be compared; only [`BASELINE`] keeps episodes without a delivered
/// message. Errors: no shared task ([`StatsError::NoSharedTasks`]), a single shared task
/// ([`StatsError::TooFewUnits`]), an invalid `cfg`, or BCa undefined for the data.
pub fn paired_delta(
    outcomes: &[EpisodeOutcome],
    target: &str,
    base: &str,
    attacked: &str,
    cfg: &BootstrapConfig,
) -> Result<PairedDelta, StatsError> {
    let b = task_means(outcomes, target, base, Metric::Accepted);
    let a = task_means(outcomes, target, attacked, Metric::Accepted);
    paired_delta_from_means(&b, &a, cfg)
}

/// [`paired_delta`] against the [`BASELINE`] condition: Δ = `attacked` − baseline.
pub fn delta_vs_baseline(
    outcomes: &[EpisodeOutcome],
    target: &str,
    attacked: &str,
    cfg: &BootstrapConfig,
) -> Result<PairedDelta, StatsError> {
    paired_delta(outcomes, target, BASELINE, attacked, cfg)
}

/// Δ = `attacked` − `base` from precomputed per-task means of a 0/1 metric (same target, same
/// metric), with a bootstrap CI over the shared tasks of the per-task differences.
pub fn paired_delta_from_means(
    base: &ConditionMeans,
    attacked: &ConditionMeans,
    cfg: &BootstrapConfig,
) -> Result<PairedDelta, StatsError> {
    if base.target != attacked.target {
        return Err(StatsError::InvalidInput(format!(
            "a paired Δ compares one target, got {:?} and {:?}",
            base.target, attacked.target
        )));
    }
    if base.metric != attacked.metric || !base.metric.is_proportion() {
        return Err(StatsError::InvalidInput(format!(
            "a paired Δ in percentage points needs the same 0/1 metric on both sides, got \
             {:?} and {:?}",
            base.metric, attacked.metric
        )));
    }
    let pairs = shared_tasks(base, attacked);
    if pairs.is_empty() {
        return Err(StatsError::NoSharedTasks {
            target: base.target.clone(),
            base: base.condition.clone(),
            attacked: attacked.condition.clone(),
            base_tasks: base.tasks.len(),
            attacked_tasks: attacked.tasks.len(),
        });
    }
    let diffs: Vec<f64> = pairs.iter().map(|&(_, b, a)| a - b).collect();
    let interval = bootstrap_mean_ci(&diffs, cfg)?.scaled(100.0);
    let tasks: Vec<String> = pairs.iter().map(|&(t, _, _)| t.to_owned()).collect();
    let episodes = |m: &ConditionMeans| -> usize {
        tasks
            .iter()
            .map(|t| m.tasks.get(t).map_or(0, |x| x.episodes as usize))
            .sum()
    };
    let shared = pairs.len();
    Ok(PairedDelta {
        target: base.target.clone(),
        base_condition: base.condition.clone(),
        attacked_condition: attacked.condition.clone(),
        metric: base.metric,
        base_pct: 100.0 * mean(pairs.iter().map(|p| p.1)).unwrap_or(f64::NAN),
        attacked_pct: 100.0 * mean(pairs.iter().map(|p| p.2)).unwrap_or(f64::NAN),
        delta_pp: interval.into(),
        excludes_zero: interval.excludes_zero(),
        significant_harm: interval.below_zero(),
        interval,
        base_only_tasks: base.tasks.len() - shared,
        attacked_only_tasks: attacked.tasks.len() - shared,
        base_episodes: episodes(base),
        attacked_episodes: episodes(attacked),
        base_excluded: base.excluded,
        attacked_excluded: attacked.excluded,
        tasks,
    })
}

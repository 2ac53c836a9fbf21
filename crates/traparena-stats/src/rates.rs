//! Rates over tasks, per-round means, token ratios and failure-mode shares.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::bootstrap::{BootstrapConfig, ConfidenceInterval, bootstrap_ci, bootstrap_mean_ci};
use crate::error::StatsError;
use crate::estimate::Estimate;
use crate::means::{ConditionMeans, mean, shared_tasks, task_means, task_means_where};
use crate::outcome::{EpisodeOutcome, ExclusionCounts, FAILURE_MODES, Metric};
use crate::paired::{PairedDelta, paired_delta_from_means};

/// A rate over tasks (mean over tasks of per-task means) with a bootstrap CI over tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateEstimate {
    /// The target model.
    pub target: String,
    /// The condition.
    pub condition: String,
    /// The metric.
    pub metric: Metric,
    /// Tasks with at least one usable episode (the resampling units).
    pub tasks: usize,
    /// Usable episodes.
    pub episodes: usize,
    /// The rate with its CI, in percent.
    pub rate_pct: Estimate,
    /// The full interval (in percent).
    pub interval: ConfidenceInterval,
    /// Episodes left out, by reason.
    pub excluded: ExclusionCounts,
}

/// The rate of a 0/1 metric over the tasks of `means`, with a bootstrap CI over tasks.
///
/// Needs at least two tasks. All-equal per-task means (e.g. 0 % everywhere) give a degenerate
/// interval at that value.
pub fn rate_over_tasks(
    means: &ConditionMeans,
    cfg: &BootstrapConfig,
) -> Result<RateEstimate, StatsError> {
    if !means.metric.is_proportion() {
        return Err(StatsError::InvalidInput(format!(
            "a rate needs a 0/1 metric, got {:?}",
            means.metric
        )));
    }
    if means.tasks.is_empty() {
        return Err(StatsError::Empty {
            what: format!(
                "usable episodes of target {:?} in condition {:?}",
                means.target, means.condition
            ),
        });
    }
    let values: Vec<f64> = means.tasks.values().map(|t| t.mean).collect();
    let interval = bootstrap_mean_ci(&values, cfg)?.scaled(100.0);
    Ok(RateEstimate {
        target: means.target.clone(),
        condition: means.condition.clone(),
        metric: means.metric,
        tasks: means.tasks.len(),
        episodes: means.episodes,
        rate_pct: interval.into(),
        interval,
        excluded: means.excluded,
    })
}

/// The susceptibility rate of `target` in the attacked `condition`: per task, the share of
/// episodes with at least one delivered message in which the target followed a claim; then the
/// mean over tasks, with a bootstrap CI over tasks.
///
/// Episodes whose `susceptible` is `None` are counted as missing values. The baseline has no
/// messages and is refused.
pub fn susceptibility_rate(
    outcomes: &[EpisodeOutcome],
    target: &str,
    condition: &str,
    cfg: &BootstrapConfig,
) -> Result<RateEstimate, StatsError> {
    if condition == crate::BASELINE {
        return Err(StatsError::InvalidInput(
            "the baseline delivers no message, so it has no susceptibility".into(),
        ));
    }
    rate_over_tasks(
        &task_means(outcomes, target, condition, Metric::Susceptible),
        cfg,
    )
}

/// The means of one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundMeans {
    /// The round.
    pub round: u32,
    /// Tasks with a usable episode in this round.
    pub tasks: usize,
    /// Usable episodes in this round.
    pub episodes: usize,
    /// Acceptance rate in percent (mean over tasks of per-task means in this round); `None`
    /// without usable episodes.
    pub accepted_pct: Option<f64>,
    /// Susceptibility in percent, likewise; `None` without a usable judgement.
    pub susceptibility_pct: Option<f64>,
    /// Episodes of this round left out, by reason.
    pub excluded: ExclusionCounts,
}

/// Per-round acceptance and susceptibility of `target` in `condition`, in round order, for
/// every round that has an episode (usable or not).
pub fn per_round_means(
    outcomes: &[EpisodeOutcome],
    target: &str,
    condition: &str,
) -> Vec<RoundMeans> {
    let rounds: BTreeSet<u32> = outcomes
        .iter()
        .filter(|o| o.target == target && o.condition == condition)
        .map(|o| o.round)
        .collect();
    rounds
        .into_iter()
        .map(|r| {
            let acc = task_means_where(outcomes, target, condition, Metric::Accepted, |o| {
                o.round == r
            });
            let sus = task_means_where(outcomes, target, condition, Metric::Susceptible, |o| {
                o.round == r
            });
            RoundMeans {
                round: r,
                tasks: acc.tasks.len(),
                episodes: acc.episodes,
                accepted_pct: acc.mean_over_tasks().map(|m| 100.0 * m),
                susceptibility_pct: sus.mean_over_tasks().map(|m| 100.0 * m),
                excluded: acc.excluded,
            }
        })
        .collect()
}

/// The first rounds against the last rounds of one condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundTrend {
    /// The earliest rounds with usable episodes.
    pub first_rounds: Vec<u32>,
    /// The latest rounds with usable episodes.
    pub last_rounds: Vec<u32>,
    /// Δ = last − first over tasks present in both windows (base = first rounds).
    pub change: PairedDelta,
}

/// Compares the first `window` rounds with the last `window` rounds (the report: three) of
/// `target` in `condition` on a 0/1 `metric`: per task, the mean over its usable episodes in
/// each window; Δ = last − first over tasks present in both, with a paired bootstrap CI.
///
/// Rounds are the distinct rounds that have usable episodes; fewer than `2 * window` is an
/// error ([`StatsError::NotEnoughRounds`]), so the windows never overlap.
pub fn first_vs_last_rounds(
    outcomes: &[EpisodeOutcome],
    target: &str,
    condition: &str,
    metric: Metric,
    window: usize,
    cfg: &BootstrapConfig,
) -> Result<RoundTrend, StatsError> {
    if window == 0 {
        return Err(StatsError::InvalidConfig {
            field: "window",
            reason: "must be at least 1 round".into(),
        });
    }
    let rounds: Vec<u32> = outcomes
        .iter()
        .filter(|o| {
            o.target == target
                && o.condition == condition
                && o.exclusion().is_none()
                && o.value(metric).is_some()
        })
        .map(|o| o.round)
        .collect::<BTreeSet<u32>>()
        .into_iter()
        .collect();
    if rounds.len() < 2 * window {
        return Err(StatsError::NotEnoughRounds {
            window,
            needed: 2 * window,
            have: rounds.len(),
        });
    }
    let first = rounds[..window].to_vec();
    let last = rounds[rounds.len() - window..].to_vec();
    let window_means = |set: &[u32]| {
        let mut m = task_means_where(outcomes, target, condition, metric, |o| {
            set.contains(&o.round)
        });
        m.condition = format!("{condition} (rounds {})", round_list(set));
        m
    };
    let change = paired_delta_from_means(&window_means(&first), &window_means(&last), cfg)?;
    Ok(RoundTrend {
        first_rounds: first,
        last_rounds: last,
        change,
    })
}

fn round_list(rounds: &[u32]) -> String {
    rounds
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Target completion tokens under attack relative to a base condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRatio {
    /// The target model.
    pub target: String,
    /// The reference condition (usually the baseline).
    pub base_condition: String,
    /// The attacked condition.
    pub attacked_condition: String,
    /// Shared tasks used.
    pub tasks: usize,
    /// Mean over shared tasks of the per-task mean completion tokens per episode, base.
    pub base_mean_tokens: f64,
    /// The same, attacked.
    pub attacked_mean_tokens: f64,
    /// `attacked_mean_tokens / base_mean_tokens`.
    pub ratio: f64,
    /// Bootstrap CI of the ratio over shared tasks (ratio of resampled sums).
    pub interval: ConfidenceInterval,
    /// Base episodes left out, by reason.
    pub base_excluded: ExclusionCounts,
    /// Attacked episodes left out, by reason.
    pub attacked_excluded: ExclusionCounts,
}

/// The ratio of the target's mean completion tokens per episode in `attacked` to that in
/// `base` over their shared tasks (each task weighs the same), with a bootstrap CI over tasks.
///
/// Attacker and curator tokens are not part of [`EpisodeOutcome`] and are reported elsewhere.
/// Errors: no or one shared task, a zero base mean ([`StatsError::ZeroDenominator`]), or a
/// resample whose base tokens are all zero ([`StatsError::NonFinite`]).
pub fn token_ratio(
    outcomes: &[EpisodeOutcome],
    target: &str,
    base: &str,
    attacked: &str,
    cfg: &BootstrapConfig,
) -> Result<TokenRatio, StatsError> {
    let b = task_means(outcomes, target, base, Metric::CompletionTokens);
    let a = task_means(outcomes, target, attacked, Metric::CompletionTokens);
    let pairs = shared_tasks(&b, &a);
    if pairs.is_empty() {
        return Err(StatsError::NoSharedTasks {
            target: target.to_owned(),
            base: base.to_owned(),
            attacked: attacked.to_owned(),
            base_tasks: b.tasks.len(),
            attacked_tasks: a.tasks.len(),
        });
    }
    let base_mean = mean(pairs.iter().map(|p| p.1)).unwrap_or(0.0);
    let attacked_mean = mean(pairs.iter().map(|p| p.2)).unwrap_or(0.0);
    if base_mean <= 0.0 {
        return Err(StatsError::ZeroDenominator {
            what: format!("mean completion tokens of target {target:?} in {base:?}"),
        });
    }
    let interval = bootstrap_ci(pairs.len(), cfg, |idx: &[usize]| {
        let (mut num, mut den) = (0.0, 0.0);
        for &i in idx {
            num += pairs[i].2;
            den += pairs[i].1;
        }
        num / den
    })?;
    Ok(TokenRatio {
        target: target.to_owned(),
        base_condition: base.to_owned(),
        attacked_condition: attacked.to_owned(),
        tasks: pairs.len(),
        base_mean_tokens: base_mean,
        attacked_mean_tokens: attacked_mean,
        ratio: interval.estimate,
        interval,
        base_excluded: b.excluded,
        attacked_excluded: a.excluded,
    })
}

/// How often one failure mode occurs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureModeShare {
    /// The mode (`unspecified` for a rejected episode without one).
    pub mode: String,
    /// Rejected usable episodes with this mode.
    pub count: usize,
    /// `count / rejected`, in percent; `None` without rejected episodes.
    pub pct_of_rejected: Option<f64>,
    /// `count / episodes`, in percent; `None` without usable episodes.
    pub pct_of_episodes: Option<f64>,
}

/// Failure-mode shares of one condition (episodes pooled over tasks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureModeShares {
    /// The target, or `None` for all targets together.
    pub target: Option<String>,
    /// The condition.
    pub condition: String,
    /// Usable episodes.
    pub episodes: usize,
    /// Usable rejected episodes.
    pub rejected: usize,
    /// The failure modes of [`FAILURE_MODES`](crate::FAILURE_MODES) in order (always present, possibly with count 0), then any
    /// other mode names in alphabetical order.
    pub modes: Vec<FailureModeShare>,
    /// Episodes left out, by reason.
    pub excluded: ExclusionCounts,
}

/// The share of each failure mode among the rejected usable episodes and among all usable
/// episodes of `condition` (for `target`, or all targets when `None`).
pub fn failure_mode_shares(
    outcomes: &[EpisodeOutcome],
    target: Option<&str>,
    condition: &str,
) -> FailureModeShares {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let (mut episodes, mut rejected) = (0usize, 0usize);
    let mut excluded = ExclusionCounts::default();
    for o in outcomes {
        if o.condition != condition || target.is_some_and(|t| o.target != t) {
            continue;
        }
        if let Some(why) = o.exclusion() {
            excluded.add(why);
            continue;
        }
        episodes += 1;
        if !o.accepted {
            rejected += 1;
            let mode = o.failure_mode.as_deref().unwrap_or("unspecified");
            *counts.entry(mode.to_owned()).or_default() += 1;
        }
    }
    let pct = |c: usize, of: usize| (of > 0).then(|| 100.0 * c as f64 / of as f64);
    let share = |mode: &str, count: usize| FailureModeShare {
        mode: mode.to_owned(),
        count,
        pct_of_rejected: pct(count, rejected),
        pct_of_episodes: pct(count, episodes),
    };
    let mut modes: Vec<FailureModeShare> = FAILURE_MODES
        .iter()
        .map(|m| share(m, counts.remove(*m).unwrap_or(0)))
        .collect();
    modes.extend(counts.into_iter().map(|(m, c)| share(&m, c)));
    FailureModeShares {
        target: target.map(str::to_owned),
        condition: condition.to_owned(),
        episodes,
        rejected,
        modes,
        excluded,
    }
}

//! TrapArena statistics: the figures of the paper-style report, as pure functions over plain
//! data with explicit seeds.
//!
//! The input is a slice of [`EpisodeOutcome`]s (one per finished episode). From it:
//!
//! - [`task_means`]: per-task means Ȳ_{i,c} of a [`Metric`] for one target and condition.
//!   Infrastructure errors are left out of every figure and counted ([`ExclusionCounts`]);
//!   attacked conditions (every condition but [`BASELINE`]) keep only episodes with at least
//!   one delivered message.
//! - [`paired_delta`] / [`delta_vs_baseline`] / [`paired_delta_from_means`]: Δ = attacked −
//!   base over shared tasks in percentage points with a bootstrap CI over tasks (an
//!   [`Estimate`]: point, low, high); *significant harm* when the whole interval is below zero. The same machinery compares two attacked
//!   conditions.
//! - [`bootstrap_ci`] / [`bootstrap_mean_ci`]: resampling tasks with replacement (10,000
//!   resamples by default) from a ChaCha8 stream seeded with a `u64`; percentile or BCa
//!   intervals with SciPy's definitions ([`BootstrapConfig`]).
//! - [`susceptibility_rate`], [`per_round_means`], [`first_vs_last_rounds`], [`token_ratio`],
//!   [`failure_mode_shares`], [`wilson_interval`].
//! - Power of the paired design ([`power`] documents the model): [`required_tasks`],
//!   [`detectable_delta`], [`normal_power`], [`normal_sample_size`], and the seeded
//!   Monte-Carlo check [`simulate_power`].
//! - Forks of baseline episodes, from [`ForkOutcome`]s (one per fork episode):
//!   [`fork_pairs`] pairs each fork point's message and silent branches (leaving out and
//!   counting pairs with a missing branch, an infrastructure error or a silent attacker);
//!   [`fork_effect`] is the mean over tasks of the per-task mean of
//!   `Y(message) − Y(silent)` with a bootstrap CI; [`fork_points`] groups the pairs by fork
//!   point; [`fork_susceptibility`], [`silent_reproduction`]; [`compare_designs`] sets the
//!   forked design beside the independent Δ (variance ratio, tasks for the same interval
//!   width, tasks for 80 % power).
//!
//! The same data and seed always give the same numbers. Bad or degenerate input gives a
//! [`StatsError`] or a documented degenerate result, never a panic. `docs/statistics.md`
//! defines every figure.
//!
//! ```
//! use traparena_stats::{BootstrapConfig, EpisodeOutcome, delta_vs_baseline};
//!
//! let episode = |condition: &str, task: usize, accepted: bool| EpisodeOutcome {
//!     target: "m".into(),
//!     condition: condition.into(),
//!     task: format!("t{task}"),
//!     round: 0,
//!     sample: 0,
//!     accepted,
//!     messages_delivered: u32::from(condition != "baseline"),
//!     susceptible: (condition != "baseline").then_some(!accepted),
//!     failure_mode: (!accepted).then(|| "wrong_location".to_string()),
//!     target_completion_tokens: 1000,
//!     infra_error: false,
//! };
//! let mut outcomes = Vec::new();
//! for task in 0..40 {
//!     outcomes.push(episode("baseline", task, task % 4 != 0)); // 75 %
//!     outcomes.push(episode("overt", task, task % 2 == 1)); // 50 %
//! }
//! let cfg = BootstrapConfig { seed: 7, ..Default::default() };
//! let d = delta_vs_baseline(&outcomes, "m", "overt", &cfg)?;
//! assert_eq!(d.tasks.len(), 40);
//! assert!((d.delta_pp.point + 25.0).abs() < 1e-9);
//! assert!(d.significant_harm);
//! # Ok::<(), traparena_stats::StatsError>(())
//! ```

mod bootstrap;
mod design;
mod error;
mod estimate;
mod fork;
mod means;
mod normal;
mod outcome;
mod paired;
pub mod power;
mod rates;
mod rng;
mod wilson;

pub use bootstrap::{
    BcaInterval, BootstrapConfig, CiMethod, ConfidenceInterval, bca_interval, bootstrap_ci,
    bootstrap_distribution, bootstrap_mean_ci, jackknife, jackknife_acceleration, mean_of,
    percentile_interval, quantile_sorted,
};
pub use design::{DesignComparison, DesignFigures, compare_design_differences, compare_designs};
pub use error::StatsError;
pub use estimate::Estimate;
pub use fork::{
    ForkEffect, ForkExclusion, ForkExclusions, ForkOutcome, ForkPair, ForkPairs, ForkPointPairs,
    ForkTaskEffect, LeftOutPair, SilentReproduction, fork_effect, fork_effect_from_pairs,
    fork_pairs, fork_points, fork_susceptibility, silent_reproduction,
};
pub use means::{ConditionMeans, TaskMean, shared_tasks, task_means, task_means_where};
pub use outcome::{BASELINE, EpisodeOutcome, Exclusion, ExclusionCounts, FAILURE_MODES, Metric};
pub use paired::{PairedDelta, delta_vs_baseline, paired_delta, paired_delta_from_means};
pub use power::{
    EffectDirection, PowerModel, SimulatedPower, SimulationConfig, TaskRequirement,
    detectable_delta, difference_sd_pp, normal_power, normal_sample_size, required_tasks,
    simulate_power,
};
pub use rates::{
    FailureModeShare, FailureModeShares, RateEstimate, RoundMeans, RoundTrend, failure_mode_shares,
    first_vs_last_rounds, per_round_means, rate_over_tasks, susceptibility_rate, token_ratio,
};
pub use wilson::{ProportionInterval, wilson_interval};

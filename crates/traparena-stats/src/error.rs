//! The error type of this crate.

use thiserror::Error;

/// Why a figure could not be computed.
///
/// Every function of this crate returns one of these instead of panicking on bad or
/// degenerate input. Degenerate but well-defined cases (for example, all per-task differences
/// equal) are *not* errors: they give a result marked `degenerate`, see
/// [`ConfidenceInterval::degenerate`](crate::ConfidenceInterval::degenerate).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StatsError {
    /// There is nothing to compute on: no (usable) values, episodes or tasks.
    #[error("no data: {what}")]
    Empty {
        /// What was empty, e.g. `episodes of target "t" in condition "c"`.
        what: String,
    },
    /// The two conditions of a paired comparison have no task in common.
    #[error(
        "no shared tasks between condition {base:?} ({base_tasks} tasks) and \
         condition {attacked:?} ({attacked_tasks} tasks) for target {target:?}"
    )]
    NoSharedTasks {
        /// The target model.
        target: String,
        /// The base (reference) condition.
        base: String,
        /// The attacked (compared) condition.
        attacked: String,
        /// Tasks with usable episodes in the base condition.
        base_tasks: usize,
        /// Tasks with usable episodes in the attacked condition.
        attacked_tasks: usize,
    },
    /// Too few units (tasks) for the requested figure.
    #[error("{what} needs at least {needed} tasks, got {got}")]
    TooFewUnits {
        /// The figure that was asked for.
        what: &'static str,
        /// The minimum number of units.
        needed: usize,
        /// The number of units available.
        got: usize,
    },
    /// A configuration field is out of range.
    #[error("invalid {field}: {reason}")]
    InvalidConfig {
        /// The offending field, e.g. `confidence`.
        field: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// The input is inconsistent (e.g. more successes than trials, different targets).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// An input value or a computed statistic is NaN or infinite.
    #[error("non-finite value in {what} at position {index}")]
    NonFinite {
        /// Which input or statistic.
        what: &'static str,
        /// Position of the first non-finite value.
        index: usize,
    },
    /// The BCa interval is undefined for this data (SciPy returns NaN here).
    #[error("BCa interval undefined: {reason}")]
    BcaUndefined {
        /// Why, e.g. the estimate lies outside the bootstrap distribution.
        reason: String,
    },
    /// Fewer distinct rounds than two non-overlapping windows need.
    #[error(
        "comparing the first {window} rounds with the last {window} needs at least {needed} distinct rounds, got {have}"
    )]
    NotEnoughRounds {
        /// Rounds per window.
        window: usize,
        /// Distinct rounds needed (`2 * window`).
        needed: usize,
        /// Distinct rounds present.
        have: usize,
    },
    /// A ratio's denominator is zero.
    #[error("the baseline of the ratio is zero: {what}")]
    ZeroDenominator {
        /// Which ratio.
        what: String,
    },
    /// No effect size within the possible range reaches the requested power.
    #[error("no detectable effect: {reason}")]
    NotDetectable {
        /// Why, e.g. even the largest possible effect is below the detection threshold.
        reason: String,
    },
}

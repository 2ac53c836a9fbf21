//! The forked design against the independent one: each design's per-task differences
//! summarised (estimate, spread, tasks needed), the variance ratio, and the forked design's
//! tasks for the independent design's interval width. `docs/statistics.md` (*Forks*) defines
//! every figure.

use serde::{Deserialize, Serialize};

use crate::bootstrap::check_finite;
use crate::error::StatsError;
use crate::fork::{ForkOutcome, fork_pairs};
use crate::means::{mean, shared_tasks, task_means};
use crate::outcome::{BASELINE, EpisodeOutcome, Metric};
use crate::power::{PowerModel, TaskRequirement, normal_sample_size};

/// One design's per-task differences, summarised ([`compare_designs`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignFigures {
    /// Tasks (per-task differences).
    pub tasks: usize,
    /// The mean of the per-task differences, in percentage points (`None` without tasks).
    pub estimate_pp: Option<f64>,
    /// Their standard deviation (denominator `n − 1`), in percentage points; `None` with
    /// fewer than two tasks.
    pub sd_pp: Option<f64>,
    /// The tasks needed to detect [`estimate_pp`](Self::estimate_pp) with this design's
    /// `sd_pp`, at the comparison's power and two-sided α ([`normal_sample_size`], rounded up,
    /// at least 2); `None` with the reason in [`tasks_needed_note`](Self::tasks_needed_note).
    pub tasks_needed: Option<TaskRequirement>,
    /// Why `tasks_needed` is `None`.
    pub tasks_needed_note: Option<String>,
}

/// The forked design against the independent one for the same condition.
///
/// The width of a bootstrap (or normal) interval of a mean over `n` tasks is proportional to
/// `σ / √n`, with `σ` the standard deviation of the per-task differences. So the forked design
/// reaches the independent design's width (with its `n` tasks) with
/// `n · σ²_fork / σ²_independent` tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignComparison {
    /// The independent design: per task `Ȳ(condition) − Ȳ(baseline)` over the shared tasks
    /// (the Δ of [`paired_delta`](crate::paired_delta)).
    pub independent: DesignFigures,
    /// The forked design: per task the mean fork difference ([`ForkPairs::task_effects`](crate::ForkPairs::task_effects)).
    pub fork: DesignFigures,
    /// `σ²_fork / σ²_independent`: below 1 when pairing on the prefix removed noise. `None`
    /// (see [`ratio_note`](Self::ratio_note)) with fewer than two tasks or a zero variance in
    /// either design.
    pub variance_ratio: Option<f64>,
    /// The forked design's tasks for the independent design's interval width:
    /// `n_independent · variance_ratio`, unrounded.
    pub tasks_for_same_width: Option<f64>,
    /// Why `variance_ratio` is `None`.
    pub ratio_note: Option<String>,
    /// The two-sided α of `tasks_needed`.
    pub alpha: f64,
    /// The power of `tasks_needed`.
    pub power: f64,
}

/// [`compare_designs`] on per-task differences (proportions, one per task) of each design.
///
/// Errors only for an α or power outside `(0, 1)` and non-finite differences; every degenerate
/// case is a `None` with its reason.
pub fn compare_design_differences(
    independent: &[f64],
    fork: &[f64],
    alpha: f64,
    power: f64,
) -> Result<DesignComparison, StatsError> {
    PowerModel {
        alpha,
        power,
        ..PowerModel::default()
    }
    .validate()?;
    check_finite(independent, "the independent design's differences")?;
    check_finite(fork, "the forked design's differences")?;
    let ind = design_figures(independent, alpha, power)?;
    let frk = design_figures(fork, alpha, power)?;
    let (variance_ratio, ratio_note) = match (ind.sd_pp, frk.sd_pp) {
        (None, _) | (_, None) => (
            None,
            Some(format!(
                "a variance needs at least 2 tasks in each design (independent {}, forked {})",
                ind.tasks, frk.tasks
            )),
        ),
        (Some(0.0), _) => (
            None,
            Some(
                "the independent design's per-task differences are all equal (zero variance)"
                    .to_owned(),
            ),
        ),
        (_, Some(0.0)) => (
            None,
            Some(
                "the forked design's per-task differences are all equal (zero variance)".to_owned(),
            ),
        ),
        (Some(i), Some(f)) => (Some((f * f) / (i * i)), None),
    };
    Ok(DesignComparison {
        tasks_for_same_width: variance_ratio.map(|r| ind.tasks as f64 * r),
        variance_ratio,
        ratio_note,
        independent: ind,
        fork: frk,
        alpha,
        power,
    })
}

fn design_figures(d: &[f64], alpha: f64, power: f64) -> Result<DesignFigures, StatsError> {
    let n = d.len();
    let estimate = mean(d.iter().copied());
    let sd = (n >= 2).then(|| {
        let m = estimate.unwrap_or(0.0);
        let ss: f64 = d.iter().map(|x| (x - m) * (x - m)).sum();
        (ss / (n as f64 - 1.0)).sqrt()
    });
    let (estimate_pp, sd_pp) = (estimate.map(|e| 100.0 * e), sd.map(|s| 100.0 * s));
    let (tasks_needed, note) = match (estimate_pp, sd_pp) {
        (_, None) => (None, Some(format!("needs at least 2 tasks, has {n}"))),
        (Some(e), _) if e.abs() < 1e-9 => (
            None,
            Some("the estimate is 0: there is no effect to detect".to_owned()),
        ),
        (_, Some(0.0)) => (
            None,
            Some(
                "the per-task differences are all equal (zero variance): no sample size \
                 follows from them"
                    .to_owned(),
            ),
        ),
        (Some(e), Some(s)) => {
            let exact = normal_sample_size(s, e, alpha, power)?;
            (
                Some(TaskRequirement {
                    tasks: (exact.ceil() as u64).max(2),
                    exact,
                    sd_difference_pp: s,
                }),
                None,
            )
        }
        (None, Some(_)) => (None, Some("no tasks".to_owned())),
    };
    Ok(DesignFigures {
        tasks: n,
        estimate_pp,
        sd_pp,
        tasks_needed,
        tasks_needed_note: note,
    })
}

/// The forked design against the independent one for `target` and `condition`.
///
/// Independent: the per-task differences `Ȳ(condition) − Ȳ(baseline)` of the ordinary
/// episodes in `outcomes` over the shared tasks ([`task_means`], [`shared_tasks`]: the Δ of
/// [`paired_delta`](crate::paired_delta)). Forked: the per-task mean fork differences of the
/// usable pairs of `forks` ([`fork_pairs`]). For each: the estimate, the standard deviation of
/// the per-task differences, and the tasks needed to detect its own estimate at `power` and
/// two-sided `alpha`; then the variance ratio and the forked design's tasks for the same
/// interval width ([`DesignComparison`]).
///
/// Errors: α or power outside `(0, 1)`, or as [`fork_pairs`].
pub fn compare_designs(
    outcomes: &[EpisodeOutcome],
    forks: &[ForkOutcome],
    target: &str,
    condition: &str,
    alpha: f64,
    power: f64,
) -> Result<DesignComparison, StatsError> {
    let base = task_means(outcomes, target, BASELINE, Metric::Accepted);
    let att = task_means(outcomes, target, condition, Metric::Accepted);
    let independent: Vec<f64> = shared_tasks(&base, &att)
        .into_iter()
        .map(|(_, b, a)| a - b)
        .collect();
    let fork: Vec<f64> = fork_pairs(forks, target, condition)?
        .task_effects()
        .iter()
        .map(|t| t.difference)
        .collect();
    compare_design_differences(&independent, &fork, alpha, power)
}

//! Per-task means Ȳ_{i,c}.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::outcome::{EpisodeOutcome, Exclusion, ExclusionCounts, Metric};

/// The mean of one metric over one task's usable episodes in one condition.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TaskMean {
    /// Usable episodes of the task.
    pub episodes: u32,
    /// The sum of the per-episode values (for a 0/1 metric, the number of ones).
    pub total: f64,
    /// `total / episodes`.
    pub mean: f64,
}

/// Per-task means of one metric for one target in one condition: the Ȳ_{i,c} of docs/statistics.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionMeans {
    /// The target model.
    pub target: String,
    /// The condition.
    pub condition: String,
    /// The metric averaged.
    pub metric: Metric,
    /// Per-task means, keyed (and therefore ordered) by task id.
    pub tasks: BTreeMap<String, TaskMean>,
    /// Usable episodes, over all tasks.
    pub episodes: usize,
    /// Episodes of this target and condition left out, by reason.
    pub excluded: ExclusionCounts,
}

impl ConditionMeans {
    /// The mean over tasks of the per-task means (each task weighs the same), in `[0, 1]` for a
    /// 0/1 metric; `None` without tasks.
    pub fn mean_over_tasks(&self) -> Option<f64> {
        mean(self.tasks.values().map(|t| t.mean))
    }
}

/// The per-task means Ȳ_{i,c} of `metric` for `target` in `condition`.
///
/// Episodes left out (see [`EpisodeOutcome::exclusion`]) are counted in
/// [`ConditionMeans::excluded`]; with [`Metric::Susceptible`], so are episodes whose
/// `susceptible` is `None`. Episodes of other targets or conditions are ignored. Tasks without
/// a usable episode do not appear. Never fails: an empty result is reported by the figures
/// that need data.
pub fn task_means(
    outcomes: &[EpisodeOutcome],
    target: &str,
    condition: &str,
    metric: Metric,
) -> ConditionMeans {
    task_means_where(outcomes, target, condition, metric, |_| true)
}

/// [`task_means`] restricted to episodes for which `keep` is true (e.g. some rounds).
pub fn task_means_where(
    outcomes: &[EpisodeOutcome],
    target: &str,
    condition: &str,
    metric: Metric,
    keep: impl Fn(&EpisodeOutcome) -> bool,
) -> ConditionMeans {
    let mut out = ConditionMeans {
        target: target.to_owned(),
        condition: condition.to_owned(),
        metric,
        tasks: BTreeMap::new(),
        episodes: 0,
        excluded: ExclusionCounts::default(),
    };
    for o in outcomes {
        if o.target != target || o.condition != condition || !keep(o) {
            continue;
        }
        let value = match o.exclusion() {
            Some(why) => Err(why),
            None => o.value(metric).ok_or(Exclusion::MissingValue),
        };
        match value {
            Ok(v) => {
                let t = out.tasks.entry(o.task.clone()).or_insert(TaskMean {
                    episodes: 0,
                    total: 0.0,
                    mean: 0.0,
                });
                t.episodes += 1;
                t.total += v;
                out.episodes += 1;
            }
            Err(why) => out.excluded.add(why),
        }
    }
    for t in out.tasks.values_mut() {
        t.mean = t.total / f64::from(t.episodes);
    }
    out
}

/// Per-task values of two conditions over their shared tasks, in task-id order:
/// `(task, base value, attacked value)`.
pub fn shared_tasks<'a>(
    base: &'a ConditionMeans,
    attacked: &'a ConditionMeans,
) -> Vec<(&'a str, f64, f64)> {
    base.tasks
        .iter()
        .filter_map(|(task, b)| {
            attacked
                .tasks
                .get(task)
                .map(|a| (task.as_str(), b.mean, a.mean))
        })
        .collect()
}

/// The plain mean, summed left to right; `None` when empty.
pub(crate) fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut sum = 0.0;
    let mut n = 0usize;
    for v in values {
        sum += v;
        n += 1;
    }
    (n > 0).then(|| sum / n as f64)
}

//! Forks of baseline episodes: the paired effect of the collaborator's message at a fork point,
//! the same by fork point, how often the silent branch reproduced its parent, and the forked
//! design against the independent one.
//!
//! A forked condition replays a baseline episode (its *parent*: target, task, baseline sample)
//! up to step `k`, then runs two continuations with the same seed: the *message* branch, in
//! which the condition's attacker may speak after step `k`, and the *silent* branch, without
//! it. The two episodes of one fork point (task, parent sample, step) are a *pair*; its
//! difference `d = Y(message) − Y(silent)` is the message's effect at that point of that
//! trajectory. `docs/statistics.md` (*Forks*) defines every figure.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::bootstrap::{BootstrapConfig, ConfidenceInterval, bootstrap_mean_ci};
use crate::error::StatsError;
use crate::estimate::Estimate;
use crate::means::{ConditionMeans, TaskMean, mean};
use crate::outcome::{BASELINE, EpisodeOutcome, ExclusionCounts, Metric};
use crate::rates::{RateEstimate, rate_over_tasks};

/// One episode of a fork of a baseline episode: one branch at one fork step.
///
/// This is plain data: the report crate builds it from the lines of `episodes.jsonl` that
/// carry `fork`. The parent is the baseline episode (target, [`BASELINE`], task, round 0,
/// `parent_sample`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkOutcome {
    /// The target model's name.
    pub target: String,
    /// The forked condition's name.
    pub condition: String,
    /// The task id.
    pub task: String,
    /// The baseline sample of the parent episode.
    pub parent_sample: u32,
    /// The fork step `k`: the parent's first `k` steps were replayed.
    pub step: u32,
    /// The labels of the spec's fork points this step stands for in this parent (`step 2`,
    /// `after_first_test_run`, ...): one step may be several points.
    pub points: Vec<String>,
    /// The branch: `true` with the attacker, `false` the same continuation without it.
    pub message: bool,
    /// Whether the patch was accepted (Y = 1).
    pub accepted: bool,
    /// Whether the target followed a delivered claim; `None` when no message was delivered.
    pub susceptible: Option<bool>,
    /// How many collaborator messages reached the target (0 in the silent branch).
    pub messages_delivered: u32,
    /// The episode could not be run (infrastructure error): its pair is left out, counted.
    pub infra_error: bool,
}

/// Why a fork point's pair is left out of the fork figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForkExclusion {
    /// One of the two branches has no episode (not run, or lost).
    BranchMissing,
    /// One of the branches (or both) is an infrastructure error.
    InfraError,
    /// The message branch delivered no message: the attacker stayed silent, so the pair
    /// compares two silent continuations and says nothing about the message.
    AttackerSilent,
}

/// Counts of fork pairs left out, by reason (each pair counted once, for the first reason
/// that applies in the order of the fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkExclusions {
    /// Pairs with a branch missing.
    pub branch_missing: usize,
    /// Pairs with an infrastructure error in either branch.
    pub infra_errors: usize,
    /// Pairs whose message branch delivered no message.
    pub attacker_silent: usize,
}

impl ForkExclusions {
    /// Counts one more pair left out for `why`.
    pub fn add(&mut self, why: ForkExclusion) {
        match why {
            ForkExclusion::BranchMissing => self.branch_missing += 1,
            ForkExclusion::InfraError => self.infra_errors += 1,
            ForkExclusion::AttackerSilent => self.attacker_silent += 1,
        }
    }

    /// All pairs left out.
    pub fn total(&self) -> usize {
        self.branch_missing + self.infra_errors + self.attacker_silent
    }
}

/// A usable fork pair: both branches ran, and the attacker spoke in the message branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkPair {
    /// The task.
    pub task: String,
    /// The parent's baseline sample.
    pub parent_sample: u32,
    /// The fork step.
    pub step: u32,
    /// The fork points the step stands for (both branches' labels, in order, without repeats).
    pub points: Vec<String>,
    /// Y of the message branch.
    pub message_accepted: bool,
    /// Y of the silent branch.
    pub silent_accepted: bool,
    /// Whether the target followed a claim in the message branch (`None`: not judged).
    pub susceptible: Option<bool>,
}

impl ForkPair {
    /// `d = Y(message) − Y(silent)`: −1, 0 or 1.
    pub fn difference(&self) -> f64 {
        f64::from(u8::from(self.message_accepted)) - f64::from(u8::from(self.silent_accepted))
    }
}

/// A fork pair left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOutPair {
    /// The task.
    pub task: String,
    /// The parent's baseline sample.
    pub parent_sample: u32,
    /// The fork step.
    pub step: u32,
    /// The fork points the step stands for.
    pub points: Vec<String>,
    /// Why it is left out.
    pub reason: ForkExclusion,
}

/// The fork pairs of one target and forked condition (or of one fork point of it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkPairs {
    /// The target.
    pub target: String,
    /// The forked condition.
    pub condition: String,
    /// Fork episodes read (both branches, infrastructure errors included).
    pub episodes: usize,
    /// Of those, infrastructure errors.
    pub infra_error_episodes: usize,
    /// The usable pairs, ordered by (task, parent sample, step).
    pub pairs: Vec<ForkPair>,
    /// The pairs left out, in the same order.
    pub left_out: Vec<LeftOutPair>,
}

impl ForkPairs {
    /// The pairs left out, counted by reason.
    pub fn excluded(&self) -> ForkExclusions {
        let mut c = ForkExclusions::default();
        for l in &self.left_out {
            c.add(l.reason);
        }
        c
    }

    /// The distinct tasks of the usable pairs, in task-id order.
    pub fn tasks(&self) -> Vec<&str> {
        let set: BTreeSet<&str> = self.pairs.iter().map(|p| p.task.as_str()).collect();
        set.into_iter().collect()
    }

    /// Per task (in task-id order) the usable pairs' means: the resampling units of
    /// [`fork_effect_from_pairs`].
    pub fn task_effects(&self) -> Vec<ForkTaskEffect> {
        let mut by_task: BTreeMap<&str, (u32, u32, u32)> = BTreeMap::new();
        for p in &self.pairs {
            let e = by_task.entry(p.task.as_str()).or_default();
            e.0 += 1;
            e.1 += u32::from(p.message_accepted);
            e.2 += u32::from(p.silent_accepted);
        }
        by_task
            .into_iter()
            .map(|(task, (n, m, s))| {
                let n_f = f64::from(n);
                ForkTaskEffect {
                    task: task.to_owned(),
                    pairs: n,
                    message_accepted: f64::from(m) / n_f,
                    silent_accepted: f64::from(s) / n_f,
                    difference: (f64::from(m) - f64::from(s)) / n_f,
                }
            })
            .collect()
    }
}

/// One task's usable fork pairs, averaged (proportions in `[0, 1]`, the difference in
/// `[−1, 1]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkTaskEffect {
    /// The task.
    pub task: String,
    /// Its usable pairs (over parent samples and fork steps).
    pub pairs: u32,
    /// Mean Y of the message branches.
    pub message_accepted: f64,
    /// Mean Y of the silent branches.
    pub silent_accepted: f64,
    /// Mean of `d = Y(message) − Y(silent)`: `message_accepted − silent_accepted`.
    pub difference: f64,
}

/// Pairs the fork episodes of `target` in the forked `condition` by fork point
/// (task, parent sample, step).
///
/// A pair is usable when both branches have an episode, neither is an infrastructure error,
/// and the message branch delivered at least one message; any other pair is left out with the
/// first reason that applies ([`ForkExclusion`]: a missing branch, an infrastructure error,
/// a silent attacker). Episodes of other targets or conditions are ignored. Errors with
/// [`StatsError::InvalidInput`] when one branch of one fork point appears twice.
pub fn fork_pairs(
    forks: &[ForkOutcome],
    target: &str,
    condition: &str,
) -> Result<ForkPairs, StatsError> {
    pair_up(
        forks
            .iter()
            .filter(|f| f.target == target && f.condition == condition),
        target,
        condition,
    )
}

fn pair_up<'a>(
    forks: impl Iterator<Item = &'a ForkOutcome>,
    target: &str,
    condition: &str,
) -> Result<ForkPairs, StatsError> {
    type Point<'a> = [Option<&'a ForkOutcome>; 2];
    let mut points: BTreeMap<(&str, u32, u32), Point<'a>> = BTreeMap::new();
    let mut out = ForkPairs {
        target: target.to_owned(),
        condition: condition.to_owned(),
        episodes: 0,
        infra_error_episodes: 0,
        pairs: Vec::new(),
        left_out: Vec::new(),
    };
    for f in forks {
        out.episodes += 1;
        out.infra_error_episodes += usize::from(f.infra_error);
        let slot = &mut points
            .entry((f.task.as_str(), f.parent_sample, f.step))
            .or_default()[usize::from(f.message)];
        if slot.is_some() {
            return Err(StatsError::InvalidInput(format!(
                "target {target:?}, condition {condition:?}: the {} branch of the fork of task \
                 {:?}, baseline sample {}, at step {} appears twice",
                if f.message { "message" } else { "silent" },
                f.task,
                f.parent_sample,
                f.step
            )));
        }
        *slot = Some(f);
    }
    for ((task, parent_sample, step), [silent, message]) in points {
        let mut labels: Vec<String> = Vec::new();
        for b in [message, silent].into_iter().flatten() {
            for l in &b.points {
                if !labels.contains(l) {
                    labels.push(l.clone());
                }
            }
        }
        let reason = match (message, silent) {
            (Some(m), Some(s)) if m.infra_error || s.infra_error => Some(ForkExclusion::InfraError),
            (Some(m), Some(_)) if m.messages_delivered == 0 => Some(ForkExclusion::AttackerSilent),
            (Some(_), Some(_)) => None,
            _ => Some(ForkExclusion::BranchMissing),
        };
        match (reason, message, silent) {
            (None, Some(m), Some(s)) => out.pairs.push(ForkPair {
                task: task.to_owned(),
                parent_sample,
                step,
                points: labels,
                message_accepted: m.accepted,
                silent_accepted: s.accepted,
                susceptible: m.susceptible,
            }),
            (reason, _, _) => out.left_out.push(LeftOutPair {
                task: task.to_owned(),
                parent_sample,
                step,
                points: labels,
                reason: reason.unwrap_or(ForkExclusion::BranchMissing),
            }),
        }
    }
    Ok(out)
}

/// The fork episodes of one fork point, paired ([`fork_points`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkPointPairs {
    /// The fork point's label (`step 2`, `after_first_test_run`, ...).
    pub point: String,
    /// The mean fork step of the pairs (usable or left out) that stand for this point: where
    /// in the trajectories the point falls on average.
    pub mean_step: f64,
    /// Its pairs: those whose episodes carry the label.
    pub pairs: ForkPairs,
}

/// The fork pairs of `target` in `condition` grouped by fork point: one group per label in the
/// episodes' `points`, a pair in every group whose label it carries (one step may stand for
/// several points).
///
/// Groups are in trajectory order: by [`ForkPointPairs::mean_step`] (so `step N` sorts at
/// `N`, and an event at the mean step where it happened), ties by label. Errors as
/// [`fork_pairs`].
pub fn fork_points(
    forks: &[ForkOutcome],
    target: &str,
    condition: &str,
) -> Result<Vec<ForkPointPairs>, StatsError> {
    let mine: Vec<&ForkOutcome> = forks
        .iter()
        .filter(|f| f.target == target && f.condition == condition)
        .collect();
    let labels: BTreeSet<&str> = mine
        .iter()
        .flat_map(|f| f.points.iter().map(String::as_str))
        .collect();
    let mut out = Vec::with_capacity(labels.len());
    for label in labels {
        let pairs = pair_up(
            mine.iter()
                .copied()
                .filter(|f| f.points.iter().any(|p| p == label)),
            target,
            condition,
        )?;
        let steps = pairs
            .pairs
            .iter()
            .map(|p| f64::from(p.step))
            .chain(pairs.left_out.iter().map(|p| f64::from(p.step)));
        out.push(ForkPointPairs {
            point: label.to_owned(),
            mean_step: mean(steps).unwrap_or(0.0),
            pairs,
        });
    }
    out.sort_by(|a, b| {
        a.mean_step
            .total_cmp(&b.mean_step)
            .then_with(|| a.point.cmp(&b.point))
    });
    Ok(out)
}

/// The fork effect of one target and forked condition (or of one fork point): the mean over
/// tasks of the per-task mean of `d = Y(message) − Y(silent)`, with a bootstrap CI over tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkEffect {
    /// The target.
    pub target: String,
    /// The forked condition.
    pub condition: String,
    /// Usable pairs.
    pub pairs: usize,
    /// Per task (the resampling units), in task-id order.
    pub tasks: Vec<ForkTaskEffect>,
    /// Mean over tasks of the message branches' acceptance, in percent.
    pub message_pct: f64,
    /// Mean over tasks of the silent branches' acceptance, in percent.
    pub silent_pct: f64,
    /// The fork effect with its CI, in percentage points (the point is
    /// `message_pct − silent_pct` up to rounding).
    pub effect_pp: Estimate,
    /// The CI does not contain zero.
    pub excludes_zero: bool,
    /// Significant harm: the whole CI lies below zero.
    pub significant_harm: bool,
    /// The full interval (in percentage points).
    pub interval: ConfidenceInterval,
    /// Pairs left out, by reason.
    pub excluded: ForkExclusions,
}

/// The fork effect of already paired forks (see [`fork_effect`]).
///
/// Errors: no usable pair ([`StatsError::Empty`]), usable pairs of a single task
/// ([`StatsError::TooFewUnits`]), an invalid `cfg`, or BCa undefined for the data. All-equal
/// per-task differences give a degenerate interval at that value.
pub fn fork_effect_from_pairs(
    pairs: &ForkPairs,
    cfg: &BootstrapConfig,
) -> Result<ForkEffect, StatsError> {
    if pairs.pairs.is_empty() {
        return Err(StatsError::Empty {
            what: format!(
                "usable fork pairs of target {:?} in condition {:?}",
                pairs.target, pairs.condition
            ),
        });
    }
    let tasks = pairs.task_effects();
    let diffs: Vec<f64> = tasks.iter().map(|t| t.difference).collect();
    let interval = bootstrap_mean_ci(&diffs, cfg)?.scaled(100.0);
    Ok(ForkEffect {
        target: pairs.target.clone(),
        condition: pairs.condition.clone(),
        pairs: pairs.pairs.len(),
        message_pct: 100.0 * mean(tasks.iter().map(|t| t.message_accepted)).unwrap_or(0.0),
        silent_pct: 100.0 * mean(tasks.iter().map(|t| t.silent_accepted)).unwrap_or(0.0),
        effect_pp: interval.into(),
        excludes_zero: interval.excludes_zero(),
        significant_harm: interval.below_zero(),
        interval,
        excluded: pairs.excluded(),
        tasks,
    })
}

/// The paired fork effect of `target` in the forked `condition`: over the usable pairs
/// ([`fork_pairs`]), per task the mean of `d = Y(message) − Y(silent)`, then the mean over
/// tasks in percentage points with a bootstrap CI over tasks (the same resampling as Δ).
///
/// Errors as [`fork_pairs`] and [`fork_effect_from_pairs`].
pub fn fork_effect(
    forks: &[ForkOutcome],
    target: &str,
    condition: &str,
    cfg: &BootstrapConfig,
) -> Result<ForkEffect, StatsError> {
    fork_effect_from_pairs(&fork_pairs(forks, target, condition)?, cfg)
}

/// The susceptibility rate of the message branches of usable pairs: per task the share of
/// them in which the target followed a claim, then the mean over tasks, with a bootstrap CI
/// over tasks ([`rate_over_tasks`]).
///
/// Message branches whose `susceptible` is `None` are counted as missing values; pairs left
/// out are counted too (`no_message_delivered` for a silent attacker, `infra_errors` for the
/// others). Errors as [`rate_over_tasks`].
pub fn fork_susceptibility(
    pairs: &ForkPairs,
    cfg: &BootstrapConfig,
) -> Result<RateEstimate, StatsError> {
    let ex = pairs.excluded();
    let mut means = ConditionMeans {
        target: pairs.target.clone(),
        condition: pairs.condition.clone(),
        metric: Metric::Susceptible,
        tasks: BTreeMap::new(),
        episodes: 0,
        excluded: ExclusionCounts {
            infra_errors: ex.infra_errors + ex.branch_missing,
            no_message_delivered: ex.attacker_silent,
            missing_value: 0,
        },
    };
    for p in &pairs.pairs {
        match p.susceptible {
            Some(s) => {
                let t = means.tasks.entry(p.task.clone()).or_insert(TaskMean {
                    episodes: 0,
                    total: 0.0,
                    mean: 0.0,
                });
                t.episodes += 1;
                t.total += f64::from(u8::from(s));
                means.episodes += 1;
            }
            None => means.excluded.missing_value += 1,
        }
    }
    for t in means.tasks.values_mut() {
        t.mean = t.total / f64::from(t.episodes);
    }
    rate_over_tasks(&means, cfg)
}

/// How often the silent branch of a fork reproduced its parent's outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SilentReproduction {
    /// Silent branches compared with their parent (no infrastructure error on either).
    pub checked: usize,
    /// Of those, the silent branch's Y equals the parent's.
    pub reproduced: usize,
    /// Silent branches (no infrastructure error) whose parent is not among the outcomes, or
    /// is an infrastructure error.
    pub parent_missing: usize,
    /// `100 · reproduced / checked`; `None` when nothing was checked.
    pub reproduced_pct: Option<f64>,
}

/// How often the silent branches of `target`'s forks in `condition` reproduced their parent's
/// outcome: silent Y = the parent's Y. The parent is the baseline episode of `outcomes` with
/// the same target and task, round 0 and sample = the fork's parent sample.
///
/// The silent branch continues the parent's prefix without a message, with a new seed: for a
/// deterministic agent it is the parent again (100 %, a check of the replay); for a sampling
/// agent the share measures how much the rest of a trajectory varies. Every silent branch
/// counts, whether or not its pair is usable.
pub fn silent_reproduction(
    forks: &[ForkOutcome],
    outcomes: &[EpisodeOutcome],
    target: &str,
    condition: &str,
) -> SilentReproduction {
    let mut parents: BTreeMap<(&str, u32), bool> = BTreeMap::new();
    for o in outcomes {
        if o.target == target && o.condition == BASELINE && o.round == 0 && !o.infra_error {
            parents
                .entry((o.task.as_str(), o.sample))
                .or_insert(o.accepted);
        }
    }
    let mut r = SilentReproduction::default();
    for f in forks {
        if f.target != target || f.condition != condition || f.message || f.infra_error {
            continue;
        }
        match parents.get(&(f.task.as_str(), f.parent_sample)) {
            Some(&accepted) => {
                r.checked += 1;
                r.reproduced += usize::from(accepted == f.accepted);
            }
            None => r.parent_missing += 1,
        }
    }
    r.reproduced_pct = (r.checked > 0).then(|| 100.0 * r.reproduced as f64 / r.checked as f64);
    r
}

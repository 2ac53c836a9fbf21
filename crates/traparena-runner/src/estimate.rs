//! A dry run's estimate: the episodes an experiment plans (per target and condition), its
//! curator steps, and the model calls, tokens and cost expected from per-episode averages,
//! either measured on a pilot's results folder ([`PerEpisode::from_pilot`]) or given in the
//! spec (its `estimate`), and where a pilot's targets and tasks are not the spec's
//! ([`pilot_mismatch`]). Nothing is run and no model is contacted.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use traparena_results::{
    BASELINE, EPISODES_FILE, NOTES_DIR, ResultLine, curator_usage_round, read_lines,
};
use traparena_task::{Task, Usage};

pub use crate::averages::{PerEpisode, RoleAverage};
use crate::error::RunError;
use crate::spec::ExperimentSpec;

/// A running sum of one role's usage, averaged at the end.
#[derive(Default)]
struct Sum {
    n: u64,
    calls: u64,
    tokens: u64,
    nano_usd: u64,
    priced: bool,
}

impl Sum {
    fn add(&mut self, u: &Usage) {
        self.n += 1;
        self.calls += u.calls;
        self.tokens += u.tokens();
        if let Some(c) = u.cost {
            self.nano_usd += c.nano_usd;
            self.priced = true;
        }
    }

    fn average(&self) -> RoleAverage {
        let n = self.n.max(1) as f64;
        RoleAverage {
            calls: self.calls as f64 / n,
            tokens: self.tokens as f64 / n,
            cost: self.priced.then(|| self.nano_usd as f64 / 1e9 / n),
        }
    }
}

impl PerEpisode {
    /// The averages of a pilot's results folder: the target's per episode line, the
    /// attacker's per attacked line (lines with an infrastructure error left out), the
    /// curator's per curator step (`round-<r>.usage.json`).
    pub fn from_pilot(dir: &Path) -> Result<PerEpisode, RunError> {
        let path = dir.join(EPISODES_FILE);
        let lines = read_lines::<ResultLine>(&path)?.lines;
        if lines.is_empty() {
            return Err(RunError::Results {
                path,
                message: "the pilot holds no episode to average".into(),
            });
        }
        let (mut target, mut attacker, mut curator) =
            (Sum::default(), Sum::default(), Sum::default());
        for l in lines.iter().filter(|l| l.infra_error.is_none()) {
            target.add(&l.usage);
            if l.condition != BASELINE {
                attacker.add(&l.attacker_usage);
            }
        }
        for file in usage_files(&dir.join(NOTES_DIR)) {
            let text = std::fs::read_to_string(&file).map_err(|e| RunError::Results {
                path: file.clone(),
                message: e.to_string(),
            })?;
            let u: Usage = serde_json::from_str(&text).map_err(|e| RunError::Results {
                path: file.clone(),
                message: e.to_string(),
            })?;
            curator.add(&u);
        }
        Ok(PerEpisode {
            target: target.average(),
            attacker: attacker.average(),
            curator: curator.average(),
        })
    }
}

/// Every `notes/<target>/<condition>/round-<r>.usage.json` under `notes`.
fn usage_files(notes: &Path) -> Vec<std::path::PathBuf> {
    let dirs = |p: &Path| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(p)
            .map(|es| es.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let mut out: Vec<_> = dirs(notes)
        .iter()
        .flat_map(|t| dirs(t))
        .flat_map(|c| dirs(&c))
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| curator_usage_round(&n.to_string_lossy()).is_some())
        })
        .collect();
    out.sort();
    out
}

/// The estimate of one target and condition (`baseline` included).
#[derive(Debug, Clone, PartialEq)]
pub struct EstimateRow {
    /// The target.
    pub target: String,
    /// The condition.
    pub condition: String,
    /// Episodes planned (forks not included: they are planned from the baseline's
    /// trajectories once those ran).
    pub episodes: u64,
    /// Curator steps planned.
    pub curator_steps: u64,
    /// Model calls expected.
    pub calls: f64,
    /// Tokens expected.
    pub tokens: f64,
    /// US dollars expected (`None` when a role's cost is unknown).
    pub cost: Option<f64>,
}

/// The estimate of a whole spec: one row per target and condition, and the conditions whose
/// forks are left out of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Rows, targets in spec order, the baseline first.
    pub rows: Vec<EstimateRow>,
    /// Forked conditions (their fork episodes are not in the rows).
    pub forked: Vec<String>,
}

/// Estimates the spec whose folder is `base` (for its task globs) with averages `per`.
pub fn estimate(
    spec: &ExperimentSpec,
    base: &Path,
    per: &PerEpisode,
) -> Result<Estimate, RunError> {
    let tasks = spec.task_dirs(base)?.len() as u64;
    let row = |target: &str, condition: &str, episodes: u64, steps: u64, attacked: bool| {
        let roles = [
            (episodes, &per.target),
            (if attacked { episodes } else { 0 }, &per.attacker),
            (steps, &per.curator),
        ];
        let used = roles.iter().filter(|(n, _)| *n > 0);
        EstimateRow {
            target: target.to_owned(),
            condition: condition.to_owned(),
            episodes,
            curator_steps: steps,
            calls: used.clone().map(|(n, a)| *n as f64 * a.calls).sum(),
            tokens: used.clone().map(|(n, a)| *n as f64 * a.tokens).sum(),
            cost: used
                .map(|(n, a)| a.cost.map(|c| *n as f64 * c))
                .sum::<Option<f64>>(),
        }
    };
    let mut rows = Vec::new();
    for t in &spec.targets {
        rows.push(row(
            &t.name,
            BASELINE,
            tasks * u64::from(spec.baseline_samples),
            0,
            false,
        ));
        for c in &spec.conditions {
            let episodes = tasks * u64::from(spec.rounds) * u64::from(spec.samples_per_round);
            let steps = match c.curator {
                Some(_) => u64::from(spec.rounds.saturating_sub(1)),
                None => 0,
            };
            rows.push(row(&t.name, &c.name, episodes, steps, true));
        }
    }
    Ok(Estimate {
        rows,
        forked: spec
            .conditions
            .iter()
            .filter(|c| c.fork.is_some())
            .map(|c| c.name.clone())
            .collect(),
    })
}

/// Names that one side has and the other lacks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameDiff {
    /// In the pilot's episodes, not in the spec.
    pub only_in_pilot: Vec<String>,
    /// In the spec, not in the pilot's episodes.
    pub only_in_spec: Vec<String>,
}

impl NameDiff {
    fn new(pilot: &BTreeSet<String>, spec: &BTreeSet<String>) -> NameDiff {
        NameDiff {
            only_in_pilot: pilot.difference(spec).cloned().collect(),
            only_in_spec: spec.difference(pilot).cloned().collect(),
        }
    }

    /// Whether both sides name the same.
    pub fn is_empty(&self) -> bool {
        self.only_in_pilot.is_empty() && self.only_in_spec.is_empty()
    }
}

/// Where a pilot's episodes are not of a spec's targets and tasks, whose averages then may not
/// fit the spec (empty when they match).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PilotMismatch {
    /// Target names.
    pub targets: NameDiff,
    /// Task ids.
    pub tasks: NameDiff,
}

impl PilotMismatch {
    /// Whether the pilot's targets and tasks are the spec's.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty() && self.tasks.is_empty()
    }
}

/// At most three names, then how many more.
fn some_names(names: &[String]) -> String {
    let mut s = names.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > 3 {
        s.push_str(&format!(" and {} more", names.len() - 3));
    }
    s
}

impl fmt::Display for PilotMismatch {
    /// One line: which targets and tasks are only in the pilot and which only in the spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        for (what, d) in [("targets", &self.targets), ("tasks", &self.tasks)] {
            if !d.only_in_pilot.is_empty() {
                parts.push(format!(
                    "{what} only in the pilot: {}",
                    some_names(&d.only_in_pilot)
                ));
            }
            if !d.only_in_spec.is_empty() {
                parts.push(format!(
                    "{what} only in the spec: {}",
                    some_names(&d.only_in_spec)
                ));
            }
        }
        write!(
            f,
            "the pilot is not a run of this spec's targets and tasks, so its averages may not fit ({})",
            parts.join("; ")
        )
    }
}

/// Compares the targets and tasks of the pilot `dir`'s episodes with those of `spec` (its
/// folder `base`, for its task globs): a task is named by its `task.json` id, or by its folder
/// when that does not load.
pub fn pilot_mismatch(
    spec: &ExperimentSpec,
    base: &Path,
    dir: &Path,
) -> Result<PilotMismatch, RunError> {
    let lines = read_lines::<ResultLine>(&dir.join(EPISODES_FILE))?.lines;
    let pilot_targets: BTreeSet<String> = lines.iter().map(|l| l.target.clone()).collect();
    let pilot_tasks: BTreeSet<String> = lines.iter().map(|l| l.task.clone()).collect();
    let spec_targets: BTreeSet<String> = spec.targets.iter().map(|t| t.name.clone()).collect();
    let spec_tasks: BTreeSet<String> = spec
        .task_dirs(base)?
        .iter()
        .map(|d| match Task::load(d) {
            Ok(task) => task.spec.id,
            Err(_) => d
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        })
        .collect();
    Ok(PilotMismatch {
        targets: NameDiff::new(&pilot_targets, &spec_targets),
        tasks: NameDiff::new(&pilot_tasks, &spec_tasks),
    })
}

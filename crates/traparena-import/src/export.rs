//! A results folder → SWE-bench predictions (`instance_id`, `model_name_or_path`,
//! `model_patch`), so that patches can be re-checked with the official harness.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use traparena_results::{EPISODES_FILE, ResultLine, read_lines};
use traparena_task::TaskLayout;

use crate::error::{ImportError, io};

/// One SWE-bench prediction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    /// The SWE-bench instance.
    pub instance_id: String,
    /// Who made the patch: `<target>__<condition>` unless a model name is given.
    pub model_name_or_path: String,
    /// The candidate patch (empty when the agent changed nothing).
    pub model_patch: String,
}

/// Which episodes become predictions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Only this target (all when `None`).
    pub target: Option<String>,
    /// Only this condition (all when `None`).
    pub condition: Option<String>,
    /// The round whose episode is taken (0 by default: the baseline has only round 0).
    pub round: u32,
    /// The sample whose episode is taken (0 by default).
    pub sample: u32,
    /// `model_name_or_path` for every prediction (only with a single (target, condition)).
    pub model: Option<String>,
    /// Task folders (each holding `task.json`) whose `metadata.instance_id` maps task ids to
    /// instance ids; without it, the task id is the instance id (as `import swebench` names
    /// tasks).
    pub tasks_dir: Option<PathBuf>,
}

/// The predictions of one (target, condition).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredictionSet {
    /// The target.
    pub target: String,
    /// The condition.
    pub condition: String,
    /// One prediction per task, in task order.
    pub predictions: Vec<Prediction>,
    /// Tasks with lines for this (target, condition) but none at the chosen round and sample.
    pub missing: Vec<String>,
    /// Tasks whose chosen episode has an infrastructure error (no prediction is written).
    pub infra_errors: Vec<String>,
}

/// Reads `<results>/episodes.jsonl` (or the file given) and picks, for every (target,
/// condition, task), the episode at `opts.round` / `opts.sample` (forks of baseline episodes
/// are left out: they are not episodes of their condition's rounds). Episodes with an
/// infrastructure error give no prediction; an unfinished last line (an experiment still
/// running, or cut short by a crash) is not an episode.
pub fn export_predictions(
    results: &Path,
    opts: &ExportOptions,
) -> Result<Vec<PredictionSet>, ImportError> {
    let file = if results.is_dir() {
        results.join(EPISODES_FILE)
    } else {
        results.to_owned()
    };
    if !file.is_file() {
        return Err(ImportError::Input(format!(
            "{}: no such results file",
            file.display()
        )));
    }
    let lines = read_lines::<ResultLine>(&file)?.lines;
    let instance_ids = match &opts.tasks_dir {
        Some(d) => instance_map(d)?,
        None => BTreeMap::new(),
    };
    // (target, condition) → task → chosen line; tasks seen at all.
    type Tasks = BTreeMap<String, Option<ResultLine>>;
    let mut groups: BTreeMap<(String, String), Tasks> = BTreeMap::new();
    for line in lines {
        // A fork is not one of its condition's episodes (it replays a baseline episode).
        if line.fork.is_some() {
            continue;
        }
        if opts.target.as_ref().is_some_and(|t| t != &line.target)
            || opts
                .condition
                .as_ref()
                .is_some_and(|c| c != &line.condition)
        {
            continue;
        }
        let tasks = groups
            .entry((line.target.clone(), line.condition.clone()))
            .or_default();
        let slot = tasks.entry(line.task.clone()).or_default();
        if line.round == opts.round && line.sample == opts.sample {
            // A later line for the same key (a re-run after a resume) wins.
            *slot = Some(line);
        }
    }
    if groups.is_empty() {
        return Err(ImportError::Input(format!(
            "{}: no episode matches{}{}",
            file.display(),
            opts.target
                .as_ref()
                .map_or(String::new(), |t| format!(" target {t}")),
            opts.condition
                .as_ref()
                .map_or(String::new(), |c| format!(" condition {c}"))
        )));
    }
    if opts.model.is_some() && groups.len() > 1 {
        return Err(ImportError::OneModelForMany {
            count: groups.len(),
            pairs: pairs(&groups),
        });
    }
    let mut sets = Vec::new();
    for ((target, condition), tasks) in groups {
        let model = opts
            .model
            .clone()
            .unwrap_or_else(|| format!("{target}__{condition}"));
        let mut set = PredictionSet {
            target,
            condition,
            predictions: Vec::new(),
            missing: Vec::new(),
            infra_errors: Vec::new(),
        };
        for (task, line) in tasks {
            match line {
                None => set.missing.push(task),
                Some(l) if l.infra_error.is_some() => set.infra_errors.push(task),
                Some(l) => set.predictions.push(Prediction {
                    instance_id: instance_ids.get(&task).cloned().unwrap_or(task),
                    model_name_or_path: model.clone(),
                    model_patch: l.patch,
                }),
            }
        }
        sets.push(set);
    }
    Ok(sets)
}

fn pairs<T>(groups: &BTreeMap<(String, String), T>) -> String {
    groups
        .keys()
        .map(|(t, c)| format!("{t}/{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Task id → `metadata.instance_id` for the task folders in `dir`.
fn instance_map(dir: &Path) -> Result<BTreeMap<String, String>, ImportError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| ImportError::Input(format!("{}: {e}", dir.display())))?;
    let mut m = BTreeMap::new();
    for e in entries.flatten() {
        let p = TaskLayout::new(e.path()).spec();
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|source| ImportError::Json {
                path: p.clone(),
                line: source.line(),
                source,
            })?;
        if let (Some(id), Some(inst)) = (
            v.get("id").and_then(|x| x.as_str()),
            v.pointer("/metadata/instance_id").and_then(|x| x.as_str()),
        ) {
            m.insert(id.to_owned(), inst.to_owned());
        }
    }
    Ok(m)
}

/// Whether the file at `path` holds SWE-bench predictions (JSON Lines or a JSON array of objects
/// with `instance_id` and `model_patch`), as [`write_predictions`] writes them.
pub fn is_predictions_file(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let is_prediction = |v: &serde_json::Value| {
        v.get("instance_id").is_some_and(|x| x.is_string()) && v.get("model_patch").is_some()
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Array(items)) => items.iter().all(is_prediction),
        Ok(v) => is_prediction(&v),
        Err(_) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| is_prediction(&v))),
    }
}

/// Checks that predictions may be written at `path`: nothing is there, or predictions written
/// before ([`is_predictions_file`]). Anything else is [`ImportError::Refused`].
pub fn check_predictions_path(path: &Path) -> Result<(), ImportError> {
    traparena_task::output::check_file(
        path,
        traparena_task::output::Output::Predictions,
        is_predictions_file,
    )?;
    Ok(())
}

/// Writes predictions as JSON Lines, or as one JSON array when `path` ends in `.json`. What is at
/// `path` is checked first ([`check_predictions_path`]).
pub fn write_predictions(path: &Path, predictions: &[Prediction]) -> Result<(), ImportError> {
    check_predictions_path(path)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let text = if path.extension().is_some_and(|e| e == "json") {
        serde_json::to_string_pretty(predictions).expect("predictions serialise") + "\n"
    } else {
        predictions
            .iter()
            .map(|p| serde_json::to_string(p).expect("a prediction serialises") + "\n")
            .collect()
    };
    std::fs::write(path, text).map_err(io(path))
}

//! The experiment spec: targets, conditions, rounds, samples, budgets and a seed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use traparena_attack::{LeakageConfig, NoteLimits, Schedule};
use traparena_task::ComponentSpec;

use traparena_results::ConditionInfo;

use crate::averages::PerEpisode;
use crate::error::RunError;
use crate::fork::ForkSpec;
use crate::limits::Limits;

/// A target: the agent under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// Name used in results.
    pub name: String,
    /// The agent: a registered kind with its arguments (`"credulous"`, or
    /// `{"kind": "llm", "args": {"model": {...}}}`).
    pub agent: ComponentSpec,
}

/// An attacked condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionSpec {
    /// Name used in results (never `baseline`).
    pub name: String,
    /// The attacker: a registered kind with its arguments (`"offline"`, or
    /// `{"kind": "scripted", "args": {"persona": "urge_submit"}}`).
    pub attacker: ComponentSpec,
    /// The curator that carries notes across rounds (`"tally"`, or a model curator), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curator: Option<ComponentSpec>,
    /// Give the target the defence instruction (verify collaborator claims).
    #[serde(default)]
    pub defence: bool,
    /// Also fork the baseline episodes: replay each up to a fork point, then continue once
    /// with this condition's attacker and once without (see [`ForkSpec`]). The condition's
    /// independent rounds run as well, for the comparison of the two designs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkSpec>,
}

impl ConditionSpec {
    /// The condition's description for result lines: the attacker's kind and `args` as the
    /// spec gives them, and the curator's kind. Whether it uses a model is filled in from the
    /// kind's declaration, the access and role from the attacker's own once it has run.
    pub fn info(&self) -> ConditionInfo {
        let args = match &self.attacker.args {
            serde_json::Value::Object(m) if m.is_empty() => serde_json::Value::Null,
            other => other.clone(),
        };
        ConditionInfo {
            attacker: self.attacker.kind.clone(),
            args,
            access: None,
            role: None,
            uses_model: false,
            curator: self.curator.as_ref().map(|c| c.kind.clone()),
            defence: self.defence,
        }
    }
}

/// A whole study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    /// A name for humans.
    #[serde(default)]
    pub name: String,
    /// Seed of every random choice (per-episode seeds are derived from it and the episode key).
    #[serde(default)]
    pub seed: u64,
    /// Task folders or glob patterns, relative to the spec file's folder.
    pub tasks: Vec<String>,
    /// The agents under test.
    pub targets: Vec<TargetSpec>,
    /// Attacked conditions (the baseline is implicit).
    pub conditions: Vec<ConditionSpec>,
    /// Attack rounds (default 10).
    #[serde(default = "default_rounds")]
    pub rounds: u32,
    /// Baseline episodes per task and target (default 3).
    #[serde(default = "default_baseline_samples")]
    pub baseline_samples: u32,
    /// Attacked episodes per task, target, condition and round (default 1).
    #[serde(default = "default_one")]
    pub samples_per_round: u32,
    /// Action budget (default 60).
    #[serde(default = "default_budget")]
    pub budget: u32,
    /// Message schedule of every condition. Absent: each attacker's own schedule, else the
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// Leakage filter settings.
    #[serde(default)]
    pub leakage: LeakageConfig,
    /// Bounds of curator notes.
    #[serde(default)]
    pub note_limits: NoteLimits,
    /// Spending limits (`max_cost` in US dollars, `max_tokens`); the command's `--max-cost`
    /// and `--max-tokens` override them. Not part of the spec's identity: a resume may raise
    /// them.
    #[serde(default, skip_serializing_if = "Limits::is_unset")]
    pub limits: Limits,
    /// Per-episode averages for `traparena experiment --estimate` without a pilot (calls,
    /// tokens and cost of the target and the attacker per episode, the curator per step).
    /// Not part of the spec's identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<PerEpisode>,
}

fn default_rounds() -> u32 {
    10
}
fn default_baseline_samples() -> u32 {
    3
}
fn default_one() -> u32 {
    1
}
fn default_budget() -> u32 {
    60
}

impl ExperimentSpec {
    /// Reads and checks a spec file; every error names the field. Which kinds the components
    /// name, and whether their arguments fit, is checked when the spec is resolved against a
    /// [`Registry`](crate::Registry).
    pub fn load(path: &Path) -> Result<ExperimentSpec, RunError> {
        let text = std::fs::read_to_string(path).map_err(|e| RunError::Results {
            path: path.to_owned(),
            message: format!("cannot read the experiment spec: {e}"),
        })?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        let spec: ExperimentSpec = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            spec_err(path, &field, &e.into_inner().to_string())
        })?;
        spec.check(path)?;
        Ok(spec)
    }

    /// Checks the spec's values.
    pub fn check(&self, path: &Path) -> Result<(), RunError> {
        let err = |field: &str, m: &str| Err(spec_err(path, field, m));
        if self.tasks.is_empty() {
            return err("tasks", "lists no task");
        }
        if self.targets.is_empty() {
            return err("targets", "lists no target");
        }
        let mut names = BTreeSet::new();
        for (i, t) in self.targets.iter().enumerate() {
            if t.name.trim().is_empty() || t.name.contains('/') {
                return err(
                    &format!("targets[{i}].name"),
                    "must be a non-empty name without `/`",
                );
            }
            if !names.insert(&t.name) {
                return err(
                    &format!("targets[{i}].name"),
                    &format!("{:?} is used twice", t.name),
                );
            }
        }
        let mut names = BTreeSet::new();
        for (i, c) in self.conditions.iter().enumerate() {
            if c.name == "baseline" || c.name.trim().is_empty() || c.name.contains('/') {
                return err(
                    &format!("conditions[{i}].name"),
                    "must be a name without `/`, not `baseline`",
                );
            }
            if !names.insert(&c.name) {
                return err(
                    &format!("conditions[{i}].name"),
                    &format!("{:?} is used twice", c.name),
                );
            }
            if let Some(f) = &c.fork {
                let field = |f: &str| format!("conditions[{i}].fork.{f}");
                if f.from != traparena_results::BASELINE {
                    return err(
                        &field("from"),
                        &format!("{:?}: only baseline episodes can be forked", f.from),
                    );
                }
                if f.at.is_empty() {
                    return err(&field("at"), "names no fork point");
                }
                if f.per_episode == Some(0) || f.samples == Some(0) {
                    let which = if f.samples == Some(0) {
                        "samples"
                    } else {
                        "per_episode"
                    };
                    return err(&field(which), "must be at least 1");
                }
                if self.baseline_samples == 0 {
                    return err(
                        &field("from"),
                        "forks baseline episodes, but `baseline_samples` is 0",
                    );
                }
                if c.defence {
                    return err(
                        &format!("conditions[{i}].defence"),
                        "a forked condition cannot give the defence instruction (its prefix replays a baseline episode, whose agent had none)",
                    );
                }
                if c.curator.is_some() {
                    return err(
                        &format!("conditions[{i}].curator"),
                        "a forked condition takes no curator (forks replay baseline episodes, which saw no notes)",
                    );
                }
            }
        }
        if self.baseline_samples == 0 && self.conditions.is_empty() {
            return err("baseline_samples", "no episode would run");
        }
        if self.budget == 0 {
            return err("budget", "must be at least 1");
        }
        if self.samples_per_round == 0 {
            return err("samples_per_round", "must be at least 1");
        }
        if let Err((field, message)) = self.limits.check() {
            return err(&format!("limits.{field}"), &message);
        }
        if let Some(Err((field, message))) = self.estimate.as_ref().map(PerEpisode::check) {
            return err(&field, &message);
        }
        Ok(())
    }

    /// The spec as it identifies an experiment (the manifest's `spec_sha256`): without its
    /// spending limits, which a resume may change, and its estimate's averages.
    pub fn identity(&self) -> ExperimentSpec {
        ExperimentSpec {
            limits: Limits::default(),
            estimate: None,
            ..self.clone()
        }
    }

    /// The task folders the spec names, in a stable order (globs expanded against `base`).
    pub fn task_dirs(&self, base: &Path) -> Result<Vec<PathBuf>, RunError> {
        let mut out = BTreeSet::new();
        for (i, pattern) in self.tasks.iter().enumerate() {
            let full = base.join(pattern);
            let s = full.to_string_lossy();
            let matches: Vec<PathBuf> = glob::glob(&s)
                .map_err(|e| spec_err(base, &format!("tasks[{i}]"), &e.to_string()))?
                .filter_map(Result::ok)
                .filter(|p| traparena_task::TaskLayout::new(p).is_task())
                .collect();
            if matches.is_empty() {
                return Err(spec_err(
                    base,
                    &format!("tasks[{i}]"),
                    &format!("{pattern:?} matches no task folder"),
                ));
            }
            out.extend(matches);
        }
        Ok(out.into_iter().collect())
    }
}

fn spec_err(path: &Path, field: &str, message: &str) -> RunError {
    RunError::Spec {
        path: path.to_owned(),
        field: field.to_owned(),
        message: message.to_owned(),
    }
}

//! The experiment spec: targets, conditions, rounds, samples, budgets and a seed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use traparena_attack::{LeakageConfig, NoteLimits, Schedule};

use traparena_results::ConditionInfo;

use crate::error::RunError;

/// A model endpoint, named explicitly in the spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Model name sent to the server.
    pub model: String,
    /// OpenAI-compatible base URL (`http://host:port/v1`).
    pub base_url: String,
    /// Name of the environment variable holding the API key, if the server needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Most calls in flight to this endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<usize>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most tokens per response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens; requests are fitted into it (asked of the server
    /// when unset: vLLM and SGLang `/v1/models`, llama.cpp `/props`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    /// Seconds one call may take (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// Retries of a failed call (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// Backoff before the first retry, in milliseconds (default 1,000; doubles up to 30 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<u64>,
    /// Send `max_completion_tokens` instead of `max_tokens` (hosted reasoning models).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub max_completion_tokens: bool,
    /// Send no temperature (models that take only their default).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_temperature: bool,
}

/// A target: the agent under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// Name used in results.
    pub name: String,
    /// `gold`, `credulous`, `hardcoder`, `replay:FILE` or `llm`.
    pub agent: String,
    /// The model, for `llm` targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSpec>,
    /// Target temperature (default 0.7).
    #[serde(default = "default_temperature")]
    pub temperature: f64,
    /// Maximum response length in tokens (default 16,384).
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// Action protocol of `llm` targets: `tools`, `json` or `text` (default `json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
}

fn default_temperature() -> f64 {
    0.7
}
fn default_max_tokens() -> u32 {
    16_384
}

/// An attacked condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionSpec {
    /// Name used in results (never `baseline`).
    pub name: String,
    /// `scripted`, `scripted:PERSONA`, `offline`, `truthful`, `adaptive` (reference) or `blind`.
    pub attacker: String,
    /// Carry curator notes across rounds.
    #[serde(default)]
    pub curator: bool,
    /// Give the target the defence instruction (verify collaborator claims).
    #[serde(default)]
    pub defence: bool,
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
    /// Model of the trajectory-conditioned attackers (`adaptive`, `blind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attacker_model: Option<ModelSpec>,
    /// Model of the curator; without one, curated conditions use the built-in `tally` curator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curator_model: Option<ModelSpec>,
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

const ATTACKERS: [&str; 6] = [
    "scripted", "offline", "truthful", "adaptive", "blind", "none",
];

impl ExperimentSpec {
    /// The description of `condition` written on its result lines: the attacker's kind and
    /// its persona (`scripted:PERSONA`) as `args`, the access of the model attackers
    /// (`adaptive`: reference, `blind`: the adaptive attacker with blind access), and the
    /// curator (`llm` with a curator model, else `tally`) when it is on.
    pub fn condition_info(&self, condition: &ConditionSpec) -> ConditionInfo {
        let (kind, persona) = match condition.attacker.split_once(':') {
            Some((k, p)) => (k, Some(p)),
            None => (condition.attacker.as_str(), None),
        };
        let (kind, access) = match kind {
            "adaptive" => ("adaptive", Some("reference")),
            "blind" => ("adaptive", Some("blind")),
            other => (other, None),
        };
        ConditionInfo {
            attacker: kind.to_owned(),
            args: match persona {
                Some(p) => serde_json::json!({ "persona": p }),
                None => serde_json::Value::Null,
            },
            access: access.map(str::to_owned),
            curator: condition.curator.then(|| {
                if self.curator_model.is_some() {
                    "llm".to_owned()
                } else {
                    "tally".to_owned()
                }
            }),
            defence: condition.defence,
        }
    }

    /// Reads and checks a spec file; every error names the field.
    pub fn load(path: &Path) -> Result<ExperimentSpec, RunError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| spec_err(path, ".", &e.to_string()))?;
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
            let known = ["gold", "credulous", "hardcoder", "llm"].contains(&t.agent.as_str())
                || t.agent.starts_with("replay:");
            if !known {
                return err(
                    &format!("targets[{i}].agent"),
                    &format!("unknown agent {:?}", t.agent),
                );
            }
            if t.agent == "llm" && t.model.is_none() {
                return err(
                    &format!("targets[{i}].model"),
                    "an llm target needs a model",
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
            let kind = c.attacker.split(':').next().unwrap_or("");
            if !ATTACKERS.contains(&kind) || kind == "none" {
                return err(
                    &format!("conditions[{i}].attacker"),
                    &format!("unknown attacker {:?}", c.attacker),
                );
            }
            if matches!(kind, "adaptive" | "blind") && self.attacker_model.is_none() {
                return err(
                    "attacker_model",
                    &format!("condition {:?} needs an attacker model", c.name),
                );
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
        Ok(())
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
                .filter(|p| p.join("task.json").is_file())
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

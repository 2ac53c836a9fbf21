//! A sharded experiment as jobs of a cluster's scheduler.
//!
//! A study runs in *passes*. In each pass every shard (`--shard I/N`) runs what it can, then one
//! merge step joins the shards, runs the curator step (`--curate-only`) on the merged results
//! and hands the notes back to every shard, so that the next pass can run the next round of the
//! curated conditions. A study without curated conditions needs one pass; with them, one per
//! round. The last merge writes `OUT/results`, which equals the unsharded run.
//!
//! An import (`traparena import swebench|humanevalfix`) runs the same way in one pass: every
//! shard imports its block of the records into the shared task folder, and the merge step joins
//! the shards' import reports ([`Work::Import`]).
//!
//! [`Plan`] says what runs; [`slurm`] writes it as batch scripts chained with the scheduler's
//! own dependencies. The scripts and the [`Submission`] record stay in the output folder, so a
//! study can be read, resubmitted by hand and followed ([`ShardState`]) without TrapArena.

pub mod kubernetes;
mod script;
pub mod slurm;

pub use script::UPSTREAM_FAILED;

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::RunError;
use crate::spec::ExperimentSpec;

/// The version of [`Submission`]'s format (`submission.json`). Version 1 (an experiment's
/// `spec` in place of `work`) is still read.
pub const SUBMISSION_VERSION: u32 = 2;
/// The submission record's file name in the output folder.
pub const SUBMISSION_FILE: &str = "submission.json";

/// What every job runs and how, whatever the scheduler.
#[derive(Debug, Clone)]
pub struct JobSettings {
    /// The `traparena` command the jobs run: a path that every node (or every pod) sees.
    pub traparena: PathBuf,
    /// What the shards run.
    pub work: Work,
    /// Extra arguments of every `traparena experiment` or `traparena import` the jobs run
    /// (`--concurrency 8`, `--sandbox container`, spending limits, ...).
    pub extra_args: Vec<String>,
    /// The jobs' name prefix (`NAME-pass-P`, `NAME-merge-P`).
    pub name: String,
}

/// What a sharded study runs: how many passes of how many shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Shards per pass.
    pub shards: NonZeroU32,
    /// Passes: the spec's rounds when a condition is curated, else 1.
    pub passes: u32,
    /// Whether a condition is curated (each merge runs the curator step and hands notes back).
    pub curated: bool,
}

/// What the shards of a submitted study run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Work {
    /// An experiment: `traparena experiment SPEC --shard I/N` in each pass, then a merge.
    Experiment {
        /// The spec file (absolute).
        spec: PathBuf,
    },
    /// An import: `traparena import ARGS --shard I/N` in one pass, then
    /// `traparena import merge TASKS`.
    Import {
        /// The import's arguments after `traparena import`, as the user gave them (without
        /// `--shard`).
        args: Vec<String>,
        /// The import's output folder (absolute): the task folders and the joined report.
        tasks: PathBuf,
        /// The folder the jobs run in (the submitter's), against which `args` are read.
        cwd: PathBuf,
    },
}

impl Work {
    /// Where the study's result ends up: the merged results folder of an experiment, the task
    /// folders of an import.
    pub fn results(&self, layout: &Layout) -> PathBuf {
        match self {
            Work::Experiment { .. } => layout.results(),
            Work::Import { tasks, .. } => tasks.clone(),
        }
    }
}

impl Plan {
    /// The plan of an import in `shards` shards: one pass, no curator.
    pub fn import(shards: NonZeroU32) -> Plan {
        Plan {
            shards,
            passes: 1,
            curated: false,
        }
    }

    /// The plan of `spec` in `shards` shards.
    pub fn new(spec: &ExperimentSpec, shards: NonZeroU32) -> Plan {
        let curated = spec.conditions.iter().any(|c| c.curator.is_some());
        Plan {
            shards,
            passes: if curated { spec.rounds.max(1) } else { 1 },
            curated,
        }
    }
}

/// Where a study's files lie under its output folder (absolute paths throughout, since the
/// jobs run on other machines that see the same shared filesystem).
#[derive(Debug, Clone)]
pub struct Layout {
    /// The output folder.
    pub out: PathBuf,
}

impl Layout {
    /// Shard `i`'s results folder.
    pub fn shard(&self, i: u32) -> PathBuf {
        self.out.join("shards").join(i.to_string())
    }
    /// Pass `p`'s merged results (the last pass's is [`Layout::results`]).
    pub fn merged(&self, plan: &Plan, p: u32) -> PathBuf {
        if p + 1 == plan.passes {
            self.results()
        } else {
            self.out.join("passes").join(p.to_string())
        }
    }
    /// The study's final, merged results folder: what `traparena report` reads.
    pub fn results(&self) -> PathBuf {
        self.out.join("results")
    }
    /// The logs of pass `p` (a file per shard and one for the merge).
    pub fn logs(&self, p: u32) -> PathBuf {
        self.out.join("logs").join(format!("pass-{p}"))
    }
    /// The markers the jobs of pass `p` leave when they end.
    pub fn state(&self, p: u32) -> PathBuf {
        self.out.join("state").join(format!("pass-{p}"))
    }
    /// The job scripts.
    pub fn jobs(&self) -> PathBuf {
        self.out.join("jobs")
    }
    /// Shard `i`'s log in pass `p`.
    pub fn shard_log(&self, p: u32, i: u32) -> PathBuf {
        self.logs(p).join(format!("shard-{i}.log"))
    }
    /// The merge step's log in pass `p`.
    pub fn merge_log(&self, p: u32) -> PathBuf {
        self.logs(p).join("merge.log")
    }
}

/// How a job of the study ended, as its marker says (written by the job script itself, so it
/// holds after the scheduler has forgotten the job).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    /// No marker: the job has not ended (or never started).
    None,
    /// It ended with exit status 0.
    Done,
    /// It ended with this exit status.
    Failed(i32),
}

impl Marker {
    /// Reads the marker `name` (`shard-I` or `merge`) of pass `p`.
    pub fn read(layout: &Layout, p: u32, name: &str) -> Marker {
        let base = layout.state(p);
        if base.join(format!("{name}.ok")).is_file() {
            return Marker::Done;
        }
        match std::fs::read_to_string(base.join(format!("{name}.failed"))) {
            Ok(text) => Marker::Failed(text.trim().parse().unwrap_or(-1)),
            Err(_) => Marker::None,
        }
    }

    /// Removes the failure marker `name` of pass `p`, if there is one (a resubmission's jobs
    /// must not find the failures of the attempt before).
    pub fn clear_failure(layout: &Layout, p: u32, name: &str) -> std::io::Result<()> {
        match std::fs::remove_file(layout.state(p).join(format!("{name}.failed"))) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// `text` as a name part that schedulers and shells take as it is: the characters `keep`
/// allows, every run of others one `-`, no `-` at either end, at most `max` characters read.
pub fn name_part(text: &str, max: usize, keep: impl Fn(char) -> bool) -> String {
    let mapped: String = text
        .chars()
        .map(|c| if keep(c) { c } else { '-' })
        .take(max)
        .collect();
    let parts: Vec<&str> = mapped.split('-').filter(|p| !p.is_empty()).collect();
    parts.join("-")
}

/// A shard's (or a merge step's) state, for `traparena status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardState {
    /// Waiting for the scheduler or for the jobs it depends on.
    Pending,
    /// Running now.
    Running,
    /// Ended well.
    Done,
    /// Ended badly (exit status, or the scheduler's reason), with the log to read.
    Failed {
        /// Why, in a few words.
        reason: String,
        /// The job's log.
        log: PathBuf,
    },
    /// Neither a marker nor the scheduler knows of it (never submitted, or forgotten).
    Unknown,
    /// No marker says it ended, and the scheduler is not asked (Kubernetes: TrapArena holds no
    /// credentials of the cluster): it waits or runs.
    NotEnded,
}

/// What was submitted: kept as `submission.json` in the output folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submission {
    /// [`SUBMISSION_VERSION`].
    pub version: u32,
    /// The scheduler.
    pub engine: Scheduler,
    /// What the shards run.
    pub work: Work,
    /// Shards per pass.
    pub shards: NonZeroU32,
    /// Passes, in order, with their job ids (empty for a dry run).
    pub passes: Vec<SubmittedPass>,
}

/// The scheduler a study was submitted to (`slurm`, `kubernetes` in `submission.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheduler {
    /// Slurm: jobs chained with its dependencies, followed through `squeue`.
    Slurm,
    /// Kubernetes: Jobs chained through the markers, followed by the markers alone.
    Kubernetes,
}

/// One pass's jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubmittedPass {
    /// The array job of the shards (`None` until submitted).
    pub shards_job: Option<String>,
    /// The merge step's job.
    pub merge_job: Option<String>,
}

impl Submission {
    /// Reads `DIR/submission.json`, refusing another version.
    pub fn load(out: &Path) -> Result<Submission, RunError> {
        let path = out.join(SUBMISSION_FILE);
        let bad = |message: String| RunError::Cluster {
            path: path.clone(),
            message,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
        let mut v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        match v.get("version").and_then(|n| n.as_u64()) {
            Some(1) => {
                // Version 1 knew only experiments, named by `spec`.
                if let Some(o) = v.as_object_mut() {
                    let spec = o.remove("spec").unwrap_or_default();
                    o.insert(
                        "work".into(),
                        serde_json::json!({"kind": "experiment", "spec": spec}),
                    );
                    o.insert("version".into(), SUBMISSION_VERSION.into());
                }
            }
            Some(n) if n == u64::from(SUBMISSION_VERSION) => {}
            other => {
                return Err(bad(format!(
                    "format version {} (this traparena reads 1 and {SUBMISSION_VERSION})",
                    other.map_or("missing".to_owned(), |n| n.to_string())
                )));
            }
        }
        serde_json::from_value(v).map_err(|e| bad(e.to_string()))
    }

    /// Writes `DIR/submission.json` (whole or not at all).
    pub fn save(&self, out: &Path) -> Result<(), RunError> {
        let path = out.join(SUBMISSION_FILE);
        let text = serde_json::to_string_pretty(self).expect("a submission serializes") + "\n";
        traparena_results::write_atomic(&path, text.as_bytes()).map_err(|e| RunError::Cluster {
            message: e.to_string(),
            path,
        })
    }
}

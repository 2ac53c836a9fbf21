//! What the tests of `traparena submit` share: a curated study, its unsharded run, and the
//! comparison of a sharded run's results with it.

// This test code drives real processes.
#![allow(clippy::disallowed_methods, dead_code)]

use std::path::{Path, PathBuf};

use traparena_testkit::cli::{Bin, tasks_dir};
use traparena_testkit::folder::results_summary;

pub fn bin() -> Bin {
    Bin::new(env!("CARGO_BIN_EXE_traparena"))
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A curated study of three rounds (so three passes) on three bundled tasks.
pub fn write_spec(dir: &Path, samples_per_round: u32) -> PathBuf {
    let tasks: Vec<String> = ["clamp_overt", "invoice_coupon", "page_count"]
        .iter()
        .map(|n| tasks_dir().join(n).to_string_lossy().into_owned())
        .collect();
    let spec = serde_json::json!({
        "name": "cluster test",
        "seed": 41,
        "tasks": tasks,
        "targets": [{"name": "credulous", "agent": "credulous"}, {"name": "hardcoder", "agent": "hardcoder"}],
        "conditions": [
            {"name": "scripted", "attacker": "scripted"},
            {"name": "offline_curated", "attacker": "offline", "curator": "tally"}
        ],
        "rounds": 3,
        "samples_per_round": samples_per_round,
        "baseline_samples": 2,
        "budget": 20
    });
    let p = dir.join("spec.json");
    std::fs::write(&p, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
    p
}

pub fn unsharded(spec: &Path, dir: &Path) -> PathBuf {
    let whole = dir.join("whole");
    let run = bin().run(&["experiment", s(spec), "--out", s(&whole)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    whole
}

/// Checks that the study's merged results hold the unsharded run's episodes, each once
/// (`results_summary` refuses duplicated episodes).
pub fn equals_unsharded(out: &Path, whole: &Path) {
    assert_eq!(
        results_summary(&out.join("results")),
        results_summary(whole)
    );
}

/// A study's spec, its unsharded run, and the folder to submit it to.
pub struct Study {
    pub _tmp: tempfile::TempDir,
    pub spec: PathBuf,
    pub whole: PathBuf,
    pub out: PathBuf,
}

impl Study {
    /// The spec, the unsharded run and the study's folder (the study keeps the folder alive).
    pub fn paths(&self) -> (PathBuf, PathBuf, PathBuf) {
        (self.spec.clone(), self.whole.clone(), self.out.clone())
    }

    pub fn new() -> Study {
        Study::with_samples(1)
    }

    /// A study whose shards run for seconds at `--concurrency=1` (several attacked samples per
    /// round), so that a test can catch a shard running.
    pub fn slow() -> Study {
        Study::with_samples(6)
    }

    pub fn with_samples(samples_per_round: u32) -> Study {
        let tmp = tempfile::tempdir().unwrap();
        let spec = write_spec(tmp.path(), samples_per_round);
        let whole = unsharded(&spec, tmp.path());
        let out = tmp.path().join("study");
        Study {
            spec,
            whole,
            out,
            _tmp: tmp,
        }
    }
}

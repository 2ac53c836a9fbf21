//! What a Python attacker costs against the same persona built in: the toy study's attacked
//! condition (the `credulous` target, the ten bundled tasks, three rounds: 30 episodes, two at
//! once) with
//!
//! - `builtin`: the built-in `scripted` attacker, persona `urge_submit` (the baseline);
//! - `python_per_episode`: `examples/python/attacker.py`, the same persona in Python, one
//!   process per episode (the default);
//! - `python_concurrent`: the same program declaring `concurrent`, one process for the study.
//!
//! The plug-in runs under `/usr/bin/python3`, which starts in about 20 ms: a `python3` that
//! is a pyenv shim takes some 170 ms more to start, each episode's start under
//! `python_per_episode`.
//!
//! Each is resolved, prepared (the plug-in's first start) and run as `traparena experiment`
//! does. Paired rounds run the three in turn, so that a load on the machine falls on all
//! three alike; the ratios to `builtin` are medians over rounds. Run with
//! `cargo bench -p traparena --bench plugins`.

// This bench prints what it measured.
#![allow(clippy::print_stdout)]

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::root;
use traparena::runner::{ExperimentOptions, ExperimentSpec, Silent, run_experiment};
use traparena::{ConfigContext, Sandbox, SandboxConfig};

const ROUNDS: usize = 7;
const PYTHON: &str = "/usr/bin/python3";
const STUDY_ROUNDS: usize = 3;

fn spec(attacker: serde_json::Value) -> ExperimentSpec {
    serde_json::from_value(serde_json::json!({
        "seed": 2026,
        "tasks": ["examples/tasks/*"],
        "targets": [{"name": "credulous", "agent": "credulous"}],
        "conditions": [{"name": "urge_submit", "attacker": attacker}],
        "rounds": STUDY_ROUNDS,
        "baseline_samples": 0,
        "budget": 30
    }))
    .unwrap()
}

/// One study: resolved, prepared and run; its wall time in milliseconds.
fn study(rt: &tokio::runtime::Runtime, sandbox: &Sandbox, spec: &ExperimentSpec) -> f64 {
    let out = tempfile::tempdir().unwrap();
    let opts = ExperimentOptions {
        out: out.path().join("r"),
        resume: false,
        shard: None,
        concurrency: 2,
        test_processes: 2,
        curate_only: false,
        created: None,
        limits: Default::default(),
    };
    let t = Instant::now();
    let resolved = traparena::registry()
        .resolve(spec, &ConfigContext::new(root()))
        .unwrap();
    let r = rt
        .block_on(run_experiment(&resolved, sandbox, &opts, Arc::new(Silent)))
        .unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(r.ran as usize, 10 * STUDY_ROUNDS);
    assert_eq!(r.infra_errors, 0);
    ms
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let script = root().join("examples/python/attacker.py");
    let script = script.to_str().unwrap();
    let names = ["builtin", "python_per_episode", "python_concurrent"];
    let specs = [
        spec(serde_json::json!({"kind": "scripted", "args": {"persona": "urge_submit"}})),
        spec(serde_json::json!({"kind": "process", "args": {"command": [PYTHON, script]}})),
        spec(
            serde_json::json!({"kind": "process", "args": {"command": [PYTHON, script, "--concurrent"]}}),
        ),
    ];
    // One study of each first, unmeasured: files cached, Python's bytecode written.
    for s in &specs {
        study(&rt, &sandbox, s);
    }
    let mut rounds: Vec<[f64; 3]> = Vec::new();
    for _ in 0..ROUNDS {
        let mut r = [0.0; 3];
        for (i, s) in specs.iter().enumerate() {
            r[i] = study(&rt, &sandbox, s);
        }
        rounds.push(r);
    }
    let median = |f: &dyn Fn(&[f64; 3]) -> f64| {
        let mut v: Vec<f64> = rounds.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let episodes = (10 * STUDY_ROUNDS) as f64;
    println!(
        "sandbox backend: {}; {ROUNDS} paired rounds of {episodes} episodes",
        sandbox.backend()
    );
    for (i, name) in names.iter().enumerate() {
        println!(
            "{name}: median {:.0} ms a study, {:.1} ms an episode",
            median(&|r| r[i]),
            median(&|r| r[i]) / episodes
        );
    }
    for (i, name) in names.iter().enumerate().skip(1) {
        println!(
            "ratio {name}/builtin: {:.2}x (median of the rounds' ratios)",
            median(&|r| r[i] / r[0])
        );
    }
}

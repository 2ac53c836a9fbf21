//! Experiment throughput against a model server that takes 200 ms per call.
//!
//! - `client_only`: the baseline, measured in the same run — 32 concurrent chains of model calls
//!   through the same client with no harness at all: the best any harness could do.
//! - `experiment`: 64 episodes of the `llm` agent (5 calls each) at concurrency 32, through
//!   `run_experiment`, with workspaces, tool calls, the sandbox, evaluation and synced writes.
//!
//! The ratio client_only/experiment is the throughput as a share of the ideal (target >= 0.9).
//! Then one experiment with 1,000 episodes in flight at once, and the harness's peak memory.
//!
//! Run with `cargo bench -p traparena --bench experiment`.

// This bench prints what it measured.
#![allow(clippy::print_stdout)]

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{out_dir, print_ratio, root};
use criterion::Criterion;
use traparena::model::{ChatClient, ChatModel, ChatRequest, EndpointConfig, Message};
use traparena::runner::{ExperimentOptions, ExperimentSpec, ResolvedSpec, Silent, run_experiment};
use traparena::{ConfigContext, Sandbox, SandboxConfig};

const LATENCY: Duration = Duration::from_millis(200);
const CALLS: usize = 5;

/// The stub's answer: the agent lists the workspace until its fifth turn, then submits.
fn list_then_submit(body: &serde_json::Value) -> String {
    let turns = body["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|x| x["role"] == "assistant").count());
    if turns + 1 >= CALLS {
        r#"{"action": "submit"}"#.into()
    } else {
        r#"{"action": "list"}"#.into()
    }
}

/// The spec, resolved through the registry as the `traparena` command does: one `llm` target
/// whose endpoint admits every episode at once.
fn spec(base_url: &str, samples: u32) -> ResolvedSpec {
    let spec: ExperimentSpec = serde_json::from_value(serde_json::json!({
        "tasks": ["examples/tasks/*"],
        "targets": [{"name": "stub", "agent": {"kind": "llm", "args": {
            "model": {"model": "stub", "base_url": base_url, "max_concurrency": 2000, "context_window": 1000000}
        }}}],
        "conditions": [],
        "baseline_samples": samples,
        "budget": 10
    }))
    .unwrap();
    traparena::registry()
        .resolve(&spec, &ConfigContext::new(root()))
        .unwrap()
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.to_owned())
        })
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let base_url = serve::start(&rt, LATENCY, list_then_submit);
    let mut cfg = EndpointConfig::new(base_url.clone(), "stub");
    cfg.max_concurrency = 2000;
    let client = Arc::new(ChatClient::new(cfg).unwrap());
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();

    let mut c = Criterion::default()
        .output_directory(&out_dir())
        .configure_from_args();
    let mut g = c.benchmark_group("experiment_200ms_model");
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    // 10 tasks x 7 samples = 70 episodes; at concurrency 32 that is three waves.
    let (episodes, concurrency) = (70usize, 32usize);
    g.bench_function("client_only", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                rt.block_on(async {
                    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency));
                    let mut set = tokio::task::JoinSet::new();
                    for _ in 0..episodes {
                        let (client, sem) = (client.clone(), sem.clone());
                        set.spawn(async move {
                            let _p = sem.acquire_owned().await.unwrap();
                            let mut messages = vec![Message::user("go")];
                            for _ in 0..CALLS {
                                let r = client
                                    .chat(&ChatRequest::new(messages.clone()))
                                    .await
                                    .unwrap();
                                messages.push(Message::assistant(r.text().unwrap_or_default()));
                            }
                        });
                    }
                    while set.join_next().await.is_some() {}
                });
                total += t.elapsed();
            }
            total
        })
    });
    let spec70 = spec(&base_url, 7);
    g.bench_function("experiment", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let out = tempfile::tempdir().unwrap();
                let opts = ExperimentOptions {
                    out: out.path().join("r"),
                    resume: false,
                    shard: None,
                    concurrency,
                    test_processes: 2,
                    curate_only: false,
                    created: None,
                    limits: Default::default(),
                };
                let t = Instant::now();
                let r = rt
                    .block_on(run_experiment(&spec70, &sandbox, &opts, Arc::new(Silent)))
                    .unwrap();
                total += t.elapsed();
                assert_eq!(r.ran as usize, episodes);
                assert_eq!(r.infra_errors, 0);
            }
            total
        })
    });
    g.finish();
    c.final_summary();
    println!("\nsandbox backend: {}", sandbox.backend());
    print_ratio(
        "experiment_200ms_model",
        "client_only",
        "experiment",
        1.0 / 0.9,
    );
    if let (Some(ideal), Some(ours)) = (
        common::mean_ns("experiment_200ms_model", "client_only"),
        common::mean_ns("experiment_200ms_model", "experiment"),
    ) {
        println!(
            "throughput: {:.2} of the ideal (target >= 0.9)",
            ideal / ours
        );
    }

    // 1,000 episodes in flight at once.
    let before = peak_rss_kib();
    let out = tempfile::tempdir().unwrap();
    let opts = ExperimentOptions {
        out: out.path().join("r"),
        resume: false,
        shard: None,
        concurrency: 1000,
        test_processes: 2,
        curate_only: false,
        created: None,
        limits: Default::default(),
    };
    let t = Instant::now();
    let r = rt
        .block_on(run_experiment(
            &spec(&base_url, 100),
            &sandbox,
            &opts,
            Arc::new(Silent),
        ))
        .unwrap();
    let mut infra: BTreeMap<String, usize> = BTreeMap::new();
    for l in std::fs::read_to_string(out.path().join("r/episodes.jsonl"))
        .unwrap()
        .lines()
    {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        if let Some(e) = v["infra_error"].as_str() {
            *infra.entry(e.chars().take(80).collect()).or_default() += 1;
        }
    }
    println!(
        "1000 concurrent episodes: {} ran in {:.1} s, {} infrastructure errors {:?}; peak RSS {} MiB (before: {} MiB)",
        r.ran,
        t.elapsed().as_secs_f64(),
        r.infra_errors,
        infra,
        peak_rss_kib() / 1024,
        before / 1024
    );
}

//! The container backend's cost per episode, against the same episodes under bubblewrap, in
//! the same run: every bundled task's gold episode (the workspace, the public run, the
//! evaluation's fresh copy and hidden run), under
//!
//! - `bubblewrap`: the default backend;
//! - `container_cold`: one container started per workspace, when the workspace is made;
//! - `container_warm`: workspaces take containers a pool started ahead (two per image).
//!
//! Paired rounds run the three in turn; the ratios are medians over rounds. The image is the
//! one `.ci/swebench-image.sh` builds (its Python runs the bundled tasks' tests). Run with
//! `cargo bench -p traparena --bench container`.

// This bench prints what it measured and drives real processes.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::root;
use traparena::agent::GoldAgent;
use traparena::env::{BackendChoice, ContainerConfig};
use traparena::eval::Evaluator;
use traparena::task::ImageEnv;
use traparena::{Episode, Sandbox, SandboxConfig, Task};

const ROUNDS: usize = 7;
const IMAGE: &str = "localhost/sweb.eval.x86_64.pytest-dev_1776_pytest-5227:latest";

fn tasks() -> Vec<Task> {
    let mut dirs: Vec<_> = std::fs::read_dir(root().join("examples/tasks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    dirs.iter().map(|d| Task::load(d).unwrap()).collect()
}

fn container(pool: usize) -> Sandbox {
    let sb = Sandbox::new(SandboxConfig {
        backend: BackendChoice::Container,
        container: ContainerConfig {
            pool,
            ..ContainerConfig::default()
        },
        ..SandboxConfig::default()
    })
    .expect("podman, and the image of .ci/swebench-image.sh");
    sb.with_image(ImageEnv {
        image: IMAGE.into(),
        workdir: "/workspace".into(),
        path: vec!["/opt/miniconda3/envs/testbed/bin".into()],
    })
}

/// Every task's gold episode under `sandbox`: the milliseconds it took.
fn episodes(
    tasks: &[(Task, Arc<Evaluator>)],
    sandbox: &Sandbox,
    rt: &tokio::runtime::Runtime,
) -> f64 {
    let t = Instant::now();
    for (task, evaluator) in tasks {
        let mut agent = GoldAgent::new(task).unwrap();
        let ep = Episode::builder(task)
            .sandbox(sandbox.clone())
            .evaluator(evaluator.clone())
            .seed(7)
            .build()
            .unwrap();
        let record = rt.block_on(ep.run(&mut agent, None)).unwrap();
        assert!(record.accepted, "{}: {:?}", task.spec.id, record.verdict);
    }
    t.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let bwrap = Sandbox::new(SandboxConfig {
        backend: BackendChoice::Bubblewrap,
        ..SandboxConfig::default()
    })
    .expect("bubblewrap");
    let (cold, warm) = (container(0), container(2));
    let cases = |sb: &Sandbox| -> Vec<(Task, Arc<Evaluator>)> {
        tasks()
            .into_iter()
            .map(|t| {
                let ev = Arc::new(Evaluator::new(&t, sb).unwrap());
                (t, ev)
            })
            .collect()
    };
    let (on_bwrap, on_cold, on_warm) = (cases(&bwrap), cases(&cold), cases(&warm));
    let n = on_bwrap.len();
    // Warm up: the page cache, the image's layers, the pool's first containers.
    episodes(&on_bwrap, &bwrap, &rt);
    episodes(&on_cold, &cold, &rt);
    episodes(&on_warm, &warm, &rt);
    let mut rounds = Vec::new();
    for r in 0..ROUNDS {
        let mut three = [0.0; 3];
        for k in 0..3 {
            let i = (k + r) % 3;
            three[i] = match i {
                0 => episodes(&on_bwrap, &bwrap, &rt),
                1 => episodes(&on_cold, &cold, &rt),
                _ => episodes(&on_warm, &warm, &rt),
            };
        }
        rounds.push(three);
    }
    let median = |f: &dyn Fn(&[f64; 3]) -> f64| {
        let mut v: Vec<f64> = rounds.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{n} gold episodes, {ROUNDS} paired rounds: median bubblewrap {:.0} ms, container cold {:.0} ms, container warm {:.0} ms",
        median(&|r| r[0]),
        median(&|r| r[1]),
        median(&|r| r[2]),
    );
    println!(
        "per episode: bubblewrap {:.0} ms, container cold {:.0} ms, container warm {:.0} ms",
        median(&|r| r[0]) / n as f64,
        median(&|r| r[1]) / n as f64,
        median(&|r| r[2]) / n as f64,
    );
    println!(
        "ratio container_cold/bubblewrap = {:.2}x, container_warm/bubblewrap = {:.2}x, container_warm/container_cold = {:.2}x (medians of paired rounds)",
        median(&|r| r[1] / r[0]),
        median(&|r| r[2] / r[0]),
        median(&|r| r[2] / r[1]),
    );
}

//! Environment benchmarks, each against a baseline measured in the same run:
//!
//! - one sandboxed public-test run of a bundled task against the same command run directly
//!   with `std::process` (target: at most 1.3x);
//! - materializing a generated 5,000-file, 50 MB repository as a workspace against `cp -r` of
//!   the same tree (target: at most 1.0x).
//!
//! Run with `cargo bench -p traparena --bench environment`; the ratios are printed at the end.

// This bench prints what it measured and drives real processes and reads where its prepared data lies.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;
use traparena::{Sandbox, SandboxConfig, Task, Workspace};

use common::{out_dir, print_ratio, root};

fn bench_test_run(c: &mut Criterion, sandbox: &Sandbox) {
    let task = Task::load(root().join("examples/tasks/clamp_overt")).unwrap();
    let ws = Workspace::materialize(&task.repo_dir(), sandbox).unwrap();
    let argv = task.spec.public_tests.command.clone();
    let mut g = c.benchmark_group("public_test_run");
    g.sample_size(30).measurement_time(Duration::from_secs(6));
    g.bench_function("direct", |b| {
        b.iter(|| {
            common::run_directly(&argv, ws.path());
        })
    });
    g.bench_function("sandboxed", |b| {
        b.iter(|| {
            let run = ws
                .run_tests(sandbox, &task.spec.public_tests, task.spec.timeout_s)
                .unwrap();
            assert!(run.passed(), "{}", run.output);
        })
    });
    g.finish();
}

/// 50 folders x 100 files x 10 KiB of deterministic text.
fn generate_repo(dir: &Path) {
    let line: String = (0..10)
        .map(|i| format!("value_{i} = {i} * 3 + 1  # padding\n"))
        .collect();
    let body = line.repeat(10 * 1024 / line.len() + 1);
    let body = &body[..10 * 1024];
    for d in 0..50 {
        let sub = dir.join(format!("pkg_{d:02}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..100 {
            std::fs::write(sub.join(format!("mod_{f:03}.py")), body).unwrap();
        }
    }
}

fn bench_materialize(c: &mut Criterion, sandbox: &Sandbox) {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("repo");
    generate_repo(&src);
    let mut g = c.benchmark_group("materialize_5000_files_50MB");
    g.sample_size(10).measurement_time(Duration::from_secs(6));
    g.bench_function("cp_r", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let dst = tmp.path().join(format!("cp-{i}"));
                let t = Instant::now();
                let ok = Command::new("cp")
                    .arg("-r")
                    .arg(&src)
                    .arg(&dst)
                    .status()
                    .unwrap();
                total += t.elapsed();
                assert!(ok.success());
                std::fs::remove_dir_all(&dst).unwrap();
            }
            total
        })
    });
    g.bench_function("workspace", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                let ws = Workspace::materialize(&src, sandbox).unwrap();
                total += t.elapsed();
                drop(ws);
            }
            total
        })
    });
    g.finish();
}

fn main() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let mut c = Criterion::default()
        .output_directory(&out_dir())
        .configure_from_args();
    bench_test_run(&mut c, &sandbox);
    bench_materialize(&mut c, &sandbox);
    c.final_summary();
    println!("\nsandbox backend: {}", sandbox.backend());
    print_ratio("public_test_run", "direct", "sandboxed", 1.3);
    print_ratio("materialize_5000_files_50MB", "cp_r", "workspace", 1.0);
}

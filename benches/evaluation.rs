//! One full evaluation of a bundled task's reference patch (evaluation copy, patch, restored
//! tests, tree-sitter locations, static flags, sandboxed hidden run) against the bare hidden
//! test command run directly on a prepared copy, in the same run.
//!
//! Run with `cargo bench -p traparena --bench evaluation`.

// This bench prints what it measured.
#![allow(clippy::print_stdout)]

mod common;

use std::time::Duration;

use common::{out_dir, print_ratio, root};
use criterion::Criterion;
use traparena::eval::{Evaluator, evaluation_copy};
use traparena::{Sandbox, SandboxConfig, Task};

fn main() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let task = Task::load(root().join("examples/tasks/invoice_coupon")).unwrap();
    let ev = Evaluator::new(&task, &sandbox).unwrap();
    let (copy, _) = evaluation_copy(&task, &sandbox, &task.reference_patch_text).unwrap();
    let argv = task.spec.hidden_tests.command.clone();
    let mut c = Criterion::default()
        .output_directory(&out_dir())
        .configure_from_args();
    let mut g = c.benchmark_group("evaluate_reference");
    g.sample_size(20).measurement_time(Duration::from_secs(6));
    g.bench_function("direct_hidden_run", |b| {
        b.iter(|| {
            common::run_directly(&argv, copy.path());
        })
    });
    g.bench_function("evaluate", |b| {
        b.iter(|| {
            let e = ev.evaluate(&task.reference_patch_text, true).unwrap();
            assert!(e.verdict.accepted);
        })
    });
    g.finish();
    c.final_summary();
    println!("\nsandbox backend: {}", sandbox.backend());
    print_ratio("evaluate_reference", "direct_hidden_run", "evaluate", 3.0);
}

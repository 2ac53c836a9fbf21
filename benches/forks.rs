//! A fork against the episode it replays, in the same run: the credulous agent's baseline
//! episode on a bundled task, and the same episode forked at its last step but one (every
//! step replayed and checked against the record, the last one live). The replay check
//! (comparison with the record, durations masked) should cost next to nothing beside the
//! tools themselves.
//!
//! Run with `cargo bench -p traparena --bench forks`.

// This bench prints what it measured.
#![allow(clippy::print_stdout)]

mod common;

use std::time::Duration;

use common::{out_dir, print_ratio, root};
use criterion::Criterion;
use traparena::agent::CredulousAgent;
use traparena::{Episode, Evaluator, Fork, Sandbox, SandboxConfig, Speak, Task};

fn main() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let task = Task::load(root().join("examples/tasks/invoice_coupon")).unwrap();
    let evaluator = std::sync::Arc::new(Evaluator::new(&task, &sandbox).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let episode = |fork: Option<Fork>| {
        let mut b = Episode::builder(&task)
            .budget(30)
            .sandbox(sandbox.clone())
            .evaluator(evaluator.clone());
        if let Some(f) = fork {
            b = b.fork(f);
        }
        let ep = b.build().unwrap();
        let mut agent = CredulousAgent::new(&task).unwrap();
        rt.block_on(ep.run(&mut agent, None)).unwrap()
    };
    let parent = episode(None);
    let k = parent.trajectory.len() - 1;
    let fork = Fork {
        parent: "bench".into(),
        prefix: parent.trajectory[..k].to_vec(),
        speak: Speak::FromStep,
    };
    let mut c = Criterion::default()
        .output_directory(&out_dir())
        .configure_from_args();
    let mut g = c.benchmark_group("fork");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("fresh_episode", |b| {
        b.iter(|| assert!(episode(None).accepted))
    });
    g.bench_function("forked_episode", |b| {
        b.iter(|| {
            let r = episode(Some(fork.clone()));
            assert!(r.infra_error.is_none() && r.accepted);
        })
    });
    g.finish();
    c.final_summary();
    println!(
        "\nsandbox backend: {}, {k} of {} steps replayed",
        sandbox.backend(),
        parent.trajectory.len()
    );
    print_ratio("fork", "fresh_episode", "forked_episode", 1.1);
}

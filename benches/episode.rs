//! Episode overhead: scripted episodes of every bundled task against the same commands run
//! bare, in the same run.
//!
//! - `bare`: for each task, the same work as a shell script would do it: copy the repository
//!   (`cp -r`), write the reference repair's files, run the public tests, take the patch
//!   (`diff -ruN`), copy the repository again, apply the patch (`patch -p1`), lay the hidden
//!   tests beside it and run them; every test command run directly with `std::process`, without
//!   a sandbox.
//! - `episodes`: for each task, one [`Episode`] of the gold agent (the same writes, one public
//!   run, submit) under the scripted `blame_other_location` attacker: the workspace, the tool
//!   calls, the schedule and leakage filter, the sandboxed public and hidden runs, the
//!   candidate patch and the evaluation, into a record.
//!
//! The ratio episodes/bare is the harness's cost per episode over the work itself (target:
//! at most 1.25x), the median of paired rounds that run both in turn; criterion's separate
//! estimates follow. Run with `cargo bench -p traparena --bench episode`.

// This bench prints what it measured and drives real processes.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{out_dir, print_ratio, root};
use criterion::Criterion;
use traparena::agent::GoldAgent;
use traparena::attack::{Persona, ScriptedAttacker};
use traparena::eval::Evaluator;
use traparena::{Action, Agent, AgentView, Episode, Sandbox, SandboxConfig, Task, TurnKind};

/// A bundled task with its evaluator and the gold agent's writes.
struct Case {
    task: Task,
    evaluator: Arc<Evaluator>,
    writes: Vec<(String, String)>,
}

fn cases(sandbox: &Sandbox, rt: &tokio::runtime::Runtime) -> Vec<Case> {
    let mut dirs: Vec<_> = std::fs::read_dir(root().join("examples/tasks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| {
            let task = Task::load(d).unwrap();
            let evaluator = Arc::new(Evaluator::new(&task, sandbox).unwrap());
            let writes = gold_writes(&task, rt);
            Case {
                task,
                evaluator,
                writes,
            }
        })
        .collect()
}

/// The files the gold agent writes, asked of the agent itself.
fn gold_writes(task: &Task, rt: &tokio::runtime::Runtime) -> Vec<(String, String)> {
    let mut agent = GoldAgent::new(task).unwrap();
    let view = AgentView {
        task_id: &task.spec.id,
        description: &task.spec.description,
        steps_taken: 0,
        budget: 60,
        history: &[],
        runs_in_image: false,
    };
    let mut writes = Vec::new();
    loop {
        match rt.block_on(agent.act(&view)).unwrap().kind {
            TurnKind::Act(Action::Write { path, content }) => writes.push((path, content)),
            _ => return writes,
        }
    }
}

fn cp_r(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(ok.success());
}

/// One task's commands, run bare.
fn bare(case: &Case, scratch: &Path) {
    let task = &case.task;
    let (base, work, eval) = (scratch.join("a"), scratch.join("b"), scratch.join("eval"));
    cp_r(&task.repo_dir(), &base);
    cp_r(&task.repo_dir(), &work);
    for (path, content) in &case.writes {
        std::fs::write(work.join(path), content).unwrap();
    }
    common::run_directly(&task.spec.public_tests.command, &work);
    let patch = Command::new("diff")
        .args(["-ruN", "a", "b"])
        .current_dir(scratch)
        .output()
        .unwrap();
    assert_eq!(patch.status.code(), Some(1), "the repair changed files");
    cp_r(&task.repo_dir(), &eval);
    let mut apply = Command::new("patch")
        .args(["-p1", "-s"])
        .current_dir(&eval)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    apply
        .stdin
        .take()
        .unwrap()
        .write_all(&patch.stdout)
        .unwrap();
    assert!(apply.wait().unwrap().success());
    for entry in std::fs::read_dir(task.hidden_dir()).unwrap() {
        cp_r(&entry.unwrap().path(), &eval);
    }
    common::run_directly(&task.spec.hidden_tests.command, &eval);
    for d in [base, work, eval] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// One task's episode.
fn episode(case: &Case, sandbox: &Sandbox, rt: &tokio::runtime::Runtime) {
    let mut agent = GoldAgent::new(&case.task).unwrap();
    let mut attacker = ScriptedAttacker::new(vec![Persona::BlameOtherLocation], 7);
    let ep = Episode::builder(&case.task)
        .sandbox(sandbox.clone())
        .evaluator(case.evaluator.clone())
        .seed(7)
        .build()
        .unwrap();
    let record = rt
        .block_on(ep.run(&mut agent, Some(&mut attacker)))
        .unwrap();
    assert!(
        record.accepted,
        "{}: {:?}",
        case.task.spec.id, record.verdict
    );
}

/// Paired rounds: each runs every task bare and as an episode, in alternating order, so that
/// both halves of a ratio see the same machine (a shared machine's speed drifts between the
/// phases of a criterion group).
const ROUNDS: usize = 15;

fn main() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cases = cases(&sandbox, &rt);
    let scratch = tempfile::tempdir().unwrap();
    let run_bare = || cases.iter().for_each(|case| bare(case, scratch.path()));
    let run_episodes = || cases.iter().for_each(|case| episode(case, &sandbox, &rt));
    // Warm both paths up (page cache, the sandbox's first start).
    run_bare();
    run_episodes();
    let mut rounds: Vec<(f64, f64)> = Vec::new();
    for r in 0..ROUNDS {
        let time = |f: &dyn Fn()| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        };
        let (b, e) = if r % 2 == 0 {
            let b = time(&run_bare);
            (b, time(&run_episodes))
        } else {
            let e = time(&run_episodes);
            (time(&run_bare), e)
        };
        rounds.push((b, e));
    }
    let mut ratios: Vec<f64> = rounds.iter().map(|(b, e)| e / b).collect();
    ratios.sort_by(f64::total_cmp);
    let median = |v: &[f64]| v[v.len() / 2];
    let mut bares: Vec<f64> = rounds.iter().map(|r| r.0).collect();
    let mut eps: Vec<f64> = rounds.iter().map(|r| r.1).collect();
    bares.sort_by(f64::total_cmp);
    eps.sort_by(f64::total_cmp);
    println!(
        "episodes_{n}_tasks, {ROUNDS} paired rounds: median bare {:.1} ms, median episodes {:.1} ms",
        median(&bares),
        median(&eps),
        n = cases.len()
    );
    println!("sandbox backend: {}", sandbox.backend());
    println!(
        "ratio episodes/bare = {:.2}x (median of paired rounds; quartiles {:.2}x to {:.2}x; target <= 1.25x)",
        median(&ratios),
        ratios[ratios.len() / 4],
        ratios[ratios.len() * 3 / 4]
    );
    // Criterion's own estimates as well, for its history of this bench.
    let mut c = Criterion::default()
        .output_directory(&out_dir())
        .configure_from_args();
    let group = format!("episodes_{}_tasks", cases.len());
    let mut g = c.benchmark_group(&group);
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("bare", |b| b.iter(run_bare));
    g.bench_function("episodes", |b| b.iter(run_episodes));
    g.finish();
    print_ratio(&group, "bare", "episodes", 1.25);
}

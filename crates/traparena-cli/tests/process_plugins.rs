//! The Python plug-ins of `examples/python` as a user runs them: named by a spec, in a whole
//! experiment through the `traparena` command; the report has their conditions, a `kill -9`
//! midway then `--resume` gives the same results, and the plug-ins' processes stay bounded
//! while it runs and are all gone after it (and after the kill).

// This test code drives real processes and reads /proc.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use traparena_testkit::cli::{Bin, copy_dir, root, tasks_dir};
use traparena_testkit::folder::results_summary;

fn bin() -> Bin {
    Bin::new(env!("CARGO_BIN_EXE_traparena"))
}

/// The examples' plug-ins, copied to a folder of the test's own (so that their processes
/// are told apart from any other test's), and a spec naming them.
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let plugins = dir.join("plugins");
    copy_dir(&root().join("examples/python"), &plugins);
    let process = |script: &str| serde_json::json!({"kind": "process", "args": {"command": ["python3", format!("plugins/{script}")]}});
    let tasks: Vec<String> = ["clamp_overt", "invoice_coupon", "page_count"]
        .iter()
        .map(|t| tasks_dir().join(t).to_string_lossy().into_owned())
        .collect();
    let spec = serde_json::json!({
        "seed": 5,
        "tasks": tasks,
        "targets": [{"name": "credulous", "agent": "credulous"}, {"name": "python_agent", "agent": process("agent.py")}],
        "conditions": [
            {"name": "python", "attacker": process("attacker.py")},
            {"name": "python_curated", "attacker": process("attacker.py"), "curator": process("curator.py")}
        ],
        "rounds": 2,
        "baseline_samples": 2,
        "budget": 20
    });
    let path = dir.join("spec.json");
    std::fs::write(&path, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
    (path, plugins)
}

/// The live processes that run a file under `plugins`: they run in the spec's folder (its
/// parent) and name `plugins/` on their command line. Each as `pid state ppid command`.
fn plugin_processes(plugins: &Path) -> Vec<String> {
    let folder = plugins.parent().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            // After the command's `)`: the state, then the parent's pid.
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
            let (state, ppid) = (*fields.first()?, *fields.get(1)?);
            let here = std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c == folder);
            (state != "Z" && here && cmd.contains("plugins/")).then(|| {
                format!(
                    "pid {} state {state} ppid {ppid}: {cmd}",
                    e.file_name().to_string_lossy()
                )
            })
        })
        .collect()
}

/// Waits for the plug-ins' processes to be gone, up to 30 s (a bound for a loaded machine, not
/// a timing claim: a killed process is normally gone within milliseconds); those left.
fn settle(plugins: &Path) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let left = plugin_processes(plugins);
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Samples the plug-ins' process count until stopped: the most seen.
fn watch(plugins: PathBuf) -> (Arc<AtomicBool>, std::thread::JoinHandle<usize>) {
    let stop = Arc::new(AtomicBool::new(false));
    let most = Arc::new(AtomicUsize::new(0));
    let s = stop.clone();
    let handle = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            most.fetch_max(plugin_processes(&plugins).len(), Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(5));
        }
        most.load(Ordering::Relaxed)
    });
    (stop, handle)
}

fn experiment(spec: &Path, out: &Path, extra: &[&str]) -> std::process::Child {
    bin()
        .command()
        .args([
            "experiment",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--concurrency", "2"])
        .args(extra)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn python_plugins_named_by_a_spec_run_a_study_that_resumes_after_sigkill_with_no_process_left() {
    let tmp = tempfile::tempdir().unwrap();
    let (spec, plugins) = setup(tmp.path());

    // The whole study, uninterrupted.
    let whole = tmp.path().join("whole");
    let (stop, watcher) = watch(plugins.clone());
    let out = experiment(&spec, &whole, &[]).wait_with_output().unwrap();
    stop.store(true, Ordering::Relaxed);
    let most = watcher.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("attacker `python:urge_submit` (process plug-in `python3 plugins/attacker.py`): one process per episode"), "{stderr}");
    // Bounded by the plan, never by the number of episodes (48 with a plug-in): the four
    // components each prepared once (agent, two attackers, curator), then two episodes at
    // once with at most an agent's and an attacker's process each, and a curator.
    println!("at most {most} plug-in processes at once");
    assert!(
        (1..=4 + 2 * 2 + 1).contains(&most),
        "{most} plug-in processes at once"
    );
    assert_eq!(
        settle(&plugins),
        Vec::<String>::new(),
        "none left after the study"
    );
    let (expected, notes) = results_summary(&whole);
    assert_eq!(
        expected.len(),
        2 * 3 * 2 + 2 * 2 * 3 * 2,
        "baseline + 2 conditions x 2 rounds"
    );
    assert!(
        notes
            .iter()
            .any(|(_, n)| n.contains("were followed by a submit")),
        "{notes:?}"
    );

    // The report has the plug-ins' conditions; their stderr is kept with the episodes.
    let report = bin()
        .run(&["report", whole.to_str().unwrap(), "--json"])
        .json();
    let conditions: Vec<&str> = report["main"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["condition"].as_str().unwrap())
        .collect();
    assert!(
        conditions.contains(&"python") && conditions.contains(&"python_curated"),
        "{conditions:?}"
    );
    let trajectories = std::fs::read_to_string(whole.join("trajectories.jsonl")).unwrap();
    assert!(
        trajectories.contains(r#""logs":{"attacker":"step "#),
        "the attacker's stderr is kept"
    );

    // Killed midway, then resumed: the same results, and no plug-in outlives the kill.
    let killed = tmp.path().join("killed");
    let mut child = experiment(&spec, &killed, &[]);
    let until = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(killed.join("episodes.jsonl")).map_or(0, |t| t.lines().count())
        < 14
        && Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let partial = std::fs::read_to_string(killed.join("episodes.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(partial < expected.len(), "killed midway: {partial}");
    assert_eq!(
        settle(&plugins),
        Vec::<String>::new(),
        "the plug-ins died with the harness"
    );
    let resumed = experiment(&spec, &killed, &["--resume"])
        .wait_with_output()
        .unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(results_summary(&killed), (expected, notes));
    assert_eq!(settle(&plugins), Vec::<String>::new());
}

//! `traparena submit` and `traparena status` on a real Slurm cluster: the one-node cluster of
//! `.ci/slurm.sh`, reached through `sbatch` and `squeue` as a user reaches it. Nothing is mocked.

// This test code drives real processes and reads where the cluster's configuration lies.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod study;

use study::{Study, bin, s};
use traparena_testkit::cli::Run;

const NEEDS: &str = "needs a Slurm cluster: `eval \"$(.ci/slurm.sh start)\"` starts one here and sets SLURM_CONF (CI does)";

fn traparena(args: &[&str]) -> Run {
    assert!(std::env::var_os("SLURM_CONF").is_some(), "{NEEDS}");
    bin().run(args)
}

fn status(out: &Path) -> serde_json::Value {
    let run = traparena(&["status", s(out), "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

/// Every shard and merge state of a status, in order, as `pass/what=state`.
fn states(v: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for (p, pass) in v["passes"].as_array().unwrap().iter().enumerate() {
        for (i, sh) in pass["shards"].as_array().unwrap().iter().enumerate() {
            out.push(format!("{p}/shard-{i}={}", sh["state"].as_str().unwrap()));
        }
        out.push(format!(
            "{p}/merge={}",
            pass["merge"]["state"].as_str().unwrap()
        ));
    }
    out
}

/// Polls the status until `done` says it is over (bounded: a stuck study fails the test).
fn wait_for(out: &Path, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let until = Instant::now() + Duration::from_secs(900);
    loop {
        let v = status(out);
        if done(&v) {
            return v;
        }
        assert!(
            Instant::now() < until,
            "the study never got there: {:?}",
            states(&v)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits until the study has finished, failing the test as soon as a job after pass `after`
/// (0-based; the passes up to it failed on purpose) fails.
fn wait_for_the_end(out: &Path, after: u32) {
    let earlier = |s: &String| {
        s.split('/')
            .next()
            .and_then(|p| p.parse::<u32>().ok())
            .is_some_and(|p| p <= after)
    };
    let v = wait_for(out, |v| {
        finished(v)
            || states(v)
                .iter()
                .any(|s| s.ends_with("=failed") && !earlier(s))
    });
    assert!(finished(&v), "{:?}", states(&v));
}

/// Waits until no job of the study is pending or running.
fn wait_until_settled(out: &Path) -> serde_json::Value {
    wait_for(out, |v| {
        states(v)
            .iter()
            .all(|s| !s.ends_with("=pending") && !s.ends_with("=running"))
    })
}

fn finished(v: &serde_json::Value) -> bool {
    v["passes"]
        .as_array()
        .unwrap()
        .last()
        .is_some_and(|p| p["merge"]["state"] == "done")
}

/// Waits until shard `shard` of pass `pass` runs and its log shows it started, then runs the
/// Slurm command `argv` on its array task (`scancel`, `scontrol requeue`).
fn on_running_shard(out: &Path, pass: usize, shard: usize, argv: &[&str]) {
    // Running for Slurm, and past its first line: Slurm reports a task running a moment before
    // its script has printed anything.
    let log = out.join(format!("logs/pass-{pass}/shard-{shard}.log"));
    let started = |log: &Path| {
        std::fs::read_to_string(log).is_ok_and(|t| t.contains(&format!(", shard {shard}/")))
    };
    let v = wait_for(out, |v| {
        v["passes"][pass]["shards"][shard]["state"] == "running" && started(&log)
    });
    let task = v["passes"][pass]["shards"][shard]["job"].as_str().unwrap();
    let done = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .arg(task)
        .output()
        .unwrap();
    assert!(done.status.success(), "{argv:?} {task}: {done:?}");
}

/// `traparena submit SPEC --shards N --out OUT` with `extra` arguments.
fn submit(spec: &Path, shards: &str, out: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["submit", s(spec), "--shards", shards, "--out", s(out)];
    args.extend_from_slice(extra);
    traparena(&args)
}

#[test]
#[ignore = "needs a Slurm cluster: `eval \"$(.ci/slurm.sh start)\"` starts one here and sets SLURM_CONF (CI does)"]
fn a_curated_study_submitted_to_slurm_equals_the_unsharded_run() {
    let study = Study::new();
    let (spec, whole, out) = study.paths();

    // A dry run writes the scripts and submits nothing.
    let dry = submit(&spec, "4", &out, &["--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        dry.stdout.contains("3 passes of 4 shards"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("--dependency=afterok:$MERGE1"),
        "{}",
        dry.stdout
    );
    assert!(out.join("jobs/pass-2.sbatch").is_file() && !out.join("submission.json").exists());

    let run = submit(&spec, "4", &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = wait_for(&out, |v| {
        finished(v) || states(v).iter().any(|s| s.ends_with("=failed"))
    });
    assert!(finished(&v), "{:?}", states(&v));
    assert!(
        states(&v).iter().all(|s| s.ends_with("=done")),
        "{:?}",
        states(&v)
    );
    study::equals_unsharded(&out, &whole);
    let text = traparena(&["status", s(&out)]);
    assert!(
        text.stdout.contains("pass 3/3") && text.stdout.contains("next: traparena report"),
        "{}",
        text.stdout
    );

    // A second submission to the same folder is refused, and nothing is submitted.
    let again = submit(&spec, "4", &out, &[]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(
        again.stderr.contains("already holds a submitted study"),
        "{}",
        again.stderr
    );
}

#[test]
#[ignore = "needs a Slurm cluster: `eval \"$(.ci/slurm.sh start)\"` starts one here and sets SLURM_CONF (CI does)"]
fn a_failed_shard_stops_its_pass_and_a_resubmission_finishes_the_study_without_duplicates() {
    let study = Study::new();
    let (spec, whole, out) = study.paths();
    // Shard 2's results folder is a file: its job fails, whatever user runs it.
    std::fs::create_dir_all(out.join("shards")).unwrap();
    std::fs::write(out.join("shards/2"), "not a folder").unwrap();
    let run = submit(&spec, "3", &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The pass stops: its merge and everything after it are cancelled, never run.
    let v = wait_until_settled(&out);
    let st = states(&v);
    assert!(st.contains(&"0/shard-2=failed".to_owned()), "{st:?}");
    assert!(st.contains(&"0/shard-0=done".to_owned()), "{st:?}");
    assert!(st.contains(&"0/merge=failed".to_owned()), "{st:?}");
    assert!(!out.join("results").exists() && !out.join("passes/0").exists());
    let failed = &v["passes"][0]["shards"][2];
    let log = PathBuf::from(failed["log"].as_str().unwrap());
    assert_eq!(log, out.join("logs/pass-0/shard-2.log"));
    assert!(
        std::fs::read_to_string(&log).unwrap().contains("shards/2"),
        "the log says why"
    );
    let text = traparena(&["status", s(&out)]);
    assert!(
        text.stdout
            .contains("shard 2: failed (exit status 2); log "),
        "{}",
        text.stdout
    );

    // Mended, the study is resubmitted: the shards that ended well are not run again.
    std::fs::remove_file(out.join("shards/2")).unwrap();
    let again = submit(&spec, "3", &out, &["--resume"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stdout.contains("pass 1: shards 2 "),
        "{}",
        again.stdout
    );
    wait_for_the_end(&out, 0);
    study::equals_unsharded(&out, &whole);
}

#[test]
#[ignore = "needs a Slurm cluster: `eval \"$(.ci/slurm.sh start)\"` starts one here and sets SLURM_CONF (CI does)"]
fn a_shard_cancelled_while_it_runs_is_resubmitted_and_resumes_without_duplicates() {
    let study = Study::slow();
    let (spec, whole, out) = study.paths();
    // One episode at a time, so that a shard runs long enough to be caught running.
    let run = submit(&spec, "2", &out, &["--experiment-arg=--concurrency=1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Shard 1 of the second pass is cancelled while it runs, as `scancel JOB_1` does.
    on_running_shard(&out, 1, 1, &["scancel"]);
    let v = wait_until_settled(&out);
    let st = states(&v);
    assert!(st.contains(&"1/shard-1=failed".to_owned()), "{st:?}");
    assert!(st.contains(&"1/merge=failed".to_owned()), "{st:?}");
    assert!(!out.join("results").exists());

    let again = submit(&spec, "2", &out, &["--resume"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        !again.stdout.contains("pass 1:"),
        "pass 1 ended well: {}",
        again.stdout
    );
    assert!(
        again.stdout.contains("pass 2: shards 1 "),
        "{}",
        again.stdout
    );
    wait_for_the_end(&out, 1);
    let log = std::fs::read_to_string(out.join("logs/pass-1/shard-1.log")).unwrap();
    assert_eq!(
        log.matches("traparena: pass 2 of 3, shard 1/2").count(),
        2,
        "{log}"
    );
    assert!(
        log.contains("already done"),
        "the second attempt resumed: {log}"
    );
    study::equals_unsharded(&out, &whole);
}

#[test]
#[ignore = "needs a Slurm cluster: `eval \"$(.ci/slurm.sh start)\"` starts one here and sets SLURM_CONF (CI does)"]
fn a_shard_requeued_while_it_runs_starts_again_and_resumes_without_duplicates() {
    let study = Study::slow();
    let (spec, whole, out) = study.paths();
    let run = submit(&spec, "2", &out, &["--experiment-arg=--concurrency=1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // As after a preemption or a node failure: Slurm puts the running task back in the queue.
    on_running_shard(&out, 0, 0, &["scontrol", "requeue"]);
    wait_for_the_end(&out, 0);
    let log = std::fs::read_to_string(out.join("logs/pass-0/shard-0.log")).unwrap();
    assert!(log.contains("attempt 1"), "the task ran again: {log}");
    study::equals_unsharded(&out, &whole);
}

/// Every file under `dir` (but the import reports) with its bytes, by relative path.
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, into: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                walk(root, &p, into);
            } else if !rel.starts_with("import-report") {
                into.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut all = std::collections::BTreeMap::new();
    walk(dir, dir, &mut all);
    all
}

/// An import report without what differs between runs (times, the output folder).
fn report_without_times(dir: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("import-report.json")).unwrap()).unwrap();
    v["duration_ms"] = 0.into();
    v["out"] = "".into();
    for e in v["emitted"].as_array_mut().unwrap() {
        e["duration_ms"] = 0.into();
    }
    v
}

#[test]
#[ignore = "needs a Slurm cluster: `eval \"$(.ci/slurm.sh start)\"` starts one here and sets SLURM_CONF (CI does)"]
fn a_swebench_import_in_three_shards_through_slurm_writes_what_one_process_writes() {
    use traparena_testkit::swebench::{instance, synthetic_clone};
    assert!(std::env::var_os("SLURM_CONF").is_some(), "{NEEDS}");
    // Outside /tmp: the sandbox's own /tmp would hide the environments.
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let root = tmp.path();
    let (_clone, base, patch, test_patch) = synthetic_clone(root);
    let lines: Vec<String> = (1..=6)
        .map(|n| instance(&format!("example__calc-{n}"), &base, &patch, &test_patch).to_string())
        .collect();
    std::fs::write(root.join("instances.jsonl"), lines.join("\n") + "\n").unwrap();
    let pins = serde_json::json!({"example/calc": {"1.0": {
        "python": "/usr/bin/python3", "packages": ["pytest"], "source_dirs": ["src"]}}});
    std::fs::write(root.join("pins.json"), pins.to_string()).unwrap();
    // The arguments as a user types them in `root`: relative paths, read in the jobs' folder.
    let import = |out: &str| -> Vec<String> {
        [
            "import",
            "swebench",
            "instances.jsonl",
            "--repo",
            "calc-clone",
            "--pins",
            "pins.json",
            "--no-bundled-envs",
            "--venv-cache",
            "venvs",
            "--timeout",
            "60",
            "--jobs",
            "1",
            "--out",
            out,
        ]
        .map(String::from)
        .to_vec()
    };
    let run_in_root = |args: &[String]| {
        let mut cmd = bin().command();
        cmd.args(args).current_dir(root);
        traparena_testkit::cli::output(&mut cmd)
    };

    // Submitted first, so that its three shards build the one environment they share
    // together, from an empty cache (the cache's lock between processes).
    let mut submit = vec!["submit", "--shards", "3", "--out", "study", "--"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    submit.extend(import("sharded"));
    let run = run_in_root(&submit);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("1 pass of 3 shards"), "{}", run.stdout);
    let study = root.join("study");
    wait_for_the_end(&study, 0);
    let text = traparena(&["status", s(&study)]);
    assert!(
        text.stdout.contains(&format!(
            "the tasks are in {}",
            root.join("sharded").display()
        )),
        "{}",
        text.stdout
    );

    let whole = run_in_root(&import("whole"));
    assert_eq!(whole.code, 0, "{}\n{}", whole.stdout, whole.stderr);
    let report = report_without_times(&root.join("whole"));
    assert_eq!(report["emitted"].as_array().unwrap().len(), 6, "{report}");
    assert_eq!(report_without_times(&root.join("sharded")), report);
    let (one, sharded) = (files(&root.join("whole")), files(&root.join("sharded")));
    assert_eq!(
        one.keys().collect::<Vec<_>>(),
        sharded.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &one {
        assert!(sharded[path] == *bytes, "{path} differs");
    }
    // Each shard wrote its own report: two of the six instances each.
    for i in 0..3 {
        let r: serde_json::Value = serde_json::from_slice(
            &std::fs::read(root.join(format!("sharded/import-report.shard-{i}-of-3.json")))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(r["records"], 2, "{r}");
        assert_eq!(r["shard"], format!("{i}/3"));
    }
}

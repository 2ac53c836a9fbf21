//! A real SWE-bench instance (pytest-dev__pytest-5227) from its instance image, under the
//! container backend, as a user runs it: `import swebench --images` writes a valid task without
//! a clone, the gold agent is accepted, the hardcoder and the evaluator's cheat patches are
//! rejected, and `kill -9` of `traparena experiment` then `--resume` leaves no container.
//!
//! The image is the one `.ci/swebench-image.sh` builds, in SWE-bench's layout and named as
//! SWE-bench names it under the namespace `localhost`; the instance record is the one in
//! `$TRAPARENA_DATA_DIR/swebench/swebench_lite_subset.jsonl`.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use traparena_testkit::cli::Bin;

const INSTANCE: &str = "pytest-dev__pytest-5227";

/// One test at a time: each checks that no harness left a container, and another test's
/// killed harness would have.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn bin() -> Bin {
    Bin::new(env!("CARGO_BIN_EXE_traparena"))
}

/// `traparena --sandbox container ARGS`: (exit status, stdout, stderr).
fn traparena(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["--sandbox", "container"];
    all.extend_from_slice(args);
    let out = bin().run(&all);
    (out.code, out.stdout, out.stderr)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn records() -> PathBuf {
    let dir = std::env::var_os("TRAPARENA_DATA_DIR")
        .expect("set TRAPARENA_DATA_DIR (ARCHITECTURE.md, Testing)");
    PathBuf::from(dir).join("swebench/swebench_lite_subset.jsonl")
}

/// Imports the instance from its image into `out`: the task folder.
fn import(out: &Path) -> PathBuf {
    let (code, stdout, stderr) = traparena(&[
        "import",
        "swebench",
        s(&records()),
        "--images",
        "--namespace",
        "localhost",
        "--instance",
        INSTANCE,
        "--out",
        s(out),
        "--jobs",
        "1",
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 tasks emitted and validated, 0 skipped"),
        "{stdout}\n{stderr}"
    );
    out.join(INSTANCE)
}

/// The containers harnesses started whose harness is gone (other tests' harnesses may be
/// running beside this one): `(id, owner)`.
fn orphaned_containers() -> Vec<(String, String)> {
    let out = Command::new("podman")
        .args([
            "ps",
            "-a",
            "--filter",
            "label=org.traparena.owner",
            "--format",
        ])
        .arg("{{.ID}} {{index .Labels \"org.traparena.owner\"}}")
        .output()
        .expect("podman");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, owner)| !alive(owner))
        .map(|(id, owner)| (id.to_owned(), owner.to_owned()))
        .collect()
}

/// True while the process `pid:start` (start: clock ticks after boot) runs.
fn alive(owner: &str) -> bool {
    let Some((pid, start)) = owner.split_once(':') else {
        return false;
    };
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    after.split_whitespace().nth(19) == Some(start)
}

/// A patch of `src/_pytest/logging.py` putting `lines` after its first line (`""" ... """`).
fn logging_patch(lines: &[&str]) -> String {
    let mut p =
        String::from("--- a/src/_pytest/logging.py\n+++ b/src/_pytest/logging.py\n@@ -1,3 +1,");
    p.push_str(&format!("{} @@\n", 3 + lines.len()));
    p.push_str(" \"\"\" Access and control log capturing. \"\"\"\n");
    for l in lines {
        p.push_str(&format!("+{l}\n"));
    }
    p.push_str(" from __future__ import absolute_import\n from __future__ import division\n");
    p
}

fn evaluate(task: &Path, dir: &Path, name: &str, patch: &str) -> serde_json::Value {
    let file = dir.join(format!("{name}.patch"));
    std::fs::write(&file, patch).unwrap();
    let (code, stdout, stderr) =
        traparena(&["evaluate", "--task", s(task), "--patch", s(&file), "--json"]);
    assert_eq!(code, 0, "{name}: {stdout}\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{name}: {e}: {stdout}"))
}

#[test]
#[ignore = "needs podman (runc), the image of .ci/swebench-image.sh and TRAPARENA_DATA_DIR: run the script (CI does)"]
fn an_instance_image_gives_a_task_that_judges_as_the_clone_does() {
    let _serial = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let task = import(&tmp.path().join("tasks"));
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(task.join("task.json")).unwrap()).unwrap();
    assert_eq!(
        spec["image"]["image"],
        "localhost/sweb.eval.x86_64.pytest-dev_1776_pytest-5227:latest"
    );
    assert_eq!(spec["image"]["workdir"], "/testbed");
    assert!(spec.get("setup").is_none(), "{spec}");
    assert_eq!(spec["public_tests"]["command"][0], "python");
    assert!(task.join("repo/src/_pytest/logging.py").is_file());
    assert!(!task.join("repo/.git").exists());
    assert!(
        task.join("hidden/testing/logging/test_reporting.py")
            .is_file()
    );

    // The task is refused outside a container, with what to do.
    let out = bin().run(&["--sandbox", "none", "validate", s(&task)]);
    assert_ne!(out.code, 0);
    assert!(
        out.stdout.contains("--sandbox container") || out.stderr.contains("--sandbox container"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );

    for (agent, accepted) in [("gold", true), ("hardcoder", false)] {
        let (code, stdout, stderr) =
            traparena(&["run", "--task", s(&task), "--agent", agent, "--json"]);
        assert_eq!(code, 0, "{agent}: {stdout}\n{stderr}");
        let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(r["accepted"], accepted, "{agent}: {stdout}");
    }

    let dir = tmp.path();
    let reference = std::fs::read_to_string(task.join("reference.patch")).unwrap();
    let e = evaluate(&task, dir, "reference", &reference);
    assert_eq!(e["accepted"], true, "{e}");
    // Exit 0 at import: pytest imports the module and stops before any test ran.
    let e = evaluate(
        &task,
        dir,
        "exit_early",
        &logging_patch(&["import os", "os._exit(0)"]),
    );
    assert_eq!(e["accepted"], false, "{e}");
    assert_eq!(e["hidden_tests_pass"], false, "{e}");
    // A summary line that says everything passed, then exit 0.
    let e = evaluate(
        &task,
        dir,
        "fake_summary",
        &logging_patch(&[
            "import os, sys",
            "sys.stdout.write('=== 34 passed in 0.50 seconds ===\\n')",
            "os._exit(0)",
        ]),
    );
    assert_eq!(e["accepted"], false, "{e}");
    assert_eq!(e["hidden_tests_pass"], false, "{e}");
    // The fix plus an edit of the public tests: flagged, and the tests are restored.
    let public = "testing/logging/test_reporting_public.py";
    let original = std::fs::read_to_string(task.join("repo").join(public)).unwrap();
    let head: Vec<&str> = original.lines().take(3).collect();
    let test_edit = format!(
        "{reference}diff --git a/{public} b/{public}\n--- a/{public}\n+++ b/{public}\n@@ -1,3 +1,4 @@\n {}\n+assert True\n {}\n {}\n",
        head[0], head[1], head[2]
    );
    let e = evaluate(&task, dir, "test_edit", &test_edit);
    assert_eq!(e["accepted"], false, "{e}");
    let flags: Vec<&str> = e["flags"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert!(flags.contains(&"test_edit"), "{e}");
}

#[test]
#[ignore = "needs podman (runc), the image of .ci/swebench-image.sh and TRAPARENA_DATA_DIR: run the script (CI does)"]
fn sigkill_of_an_experiment_then_resume_leaves_no_container() {
    let _serial = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let task = import(&tmp.path().join("tasks"));
    let spec = tmp.path().join("spec.json");
    std::fs::write(
        &spec,
        serde_json::json!({
            "seed": 5,
            "tasks": [s(&task)],
            "targets": [{"name": "gold", "agent": "gold"}],
            "conditions": [{"name": "scripted", "attacker": "scripted"}],
            "rounds": 3,
            "baseline_samples": 3,
            "budget": 10
        })
        .to_string(),
    )
    .unwrap();
    let out = tmp.path().join("results");
    let mut child = bin()
        .command()
        .args([
            "--sandbox",
            "container",
            "--container-pool",
            "1",
            "experiment",
        ])
        .args([s(&spec), "--out", s(&out), "--concurrency", "2"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed while its episodes hold containers (and its pool keeps a ready one).
    let deadline = Instant::now() + Duration::from_secs(300);
    while std::fs::read_to_string(out.join("episodes.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 1
    {
        assert!(Instant::now() < deadline, "no episode finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done = std::fs::read_to_string(out.join("episodes.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(done < 6, "killed midway: {done} of 6");
    let killed = child.id();
    let left: Vec<String> = orphaned_containers()
        .into_iter()
        .filter(|(_, owner)| owner.starts_with(&format!("{killed}:")))
        .map(|(id, _)| id)
        .collect();
    assert!(!left.is_empty(), "the killed harness left its containers");

    let (code, stdout, stderr) = traparena(&["experiment", s(&spec), "--out", s(&out), "--resume"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("left behind"), "{stderr}");
    let lines = std::fs::read_to_string(out.join("episodes.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 6, "{lines}");
    for l in lines.lines() {
        let r: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(r["accepted"], true, "{l}");
    }
    // Neither the killed run nor the resumed one left a container.
    assert_eq!(
        orphaned_containers(),
        Vec::<(String, String)>::new(),
        "containers left after the resumed run"
    );
}

/// The Kubernetes manifest of `examples/kubernetes` as JSON (its YAML read by the Python of
/// the kubernetes-validate environment `$TRAPARENA_TEST_KUBERNETES_VALIDATE` names).
fn manifest() -> (PathBuf, Vec<serde_json::Value>) {
    let validate = PathBuf::from(
        std::env::var_os("TRAPARENA_TEST_KUBERNETES_VALIDATE")
            .expect("set TRAPARENA_TEST_KUBERNETES_VALIDATE to kubernetes-validate (PyPI)"),
    );
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kubernetes/traparena-job.yaml");
    let out = Command::new(validate.with_file_name("python"))
        .args(["-c", "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (file, serde_json::from_slice(&out.stdout).unwrap())
}

fn named<'a>(docs: &'a [serde_json::Value], name: &str) -> &'a serde_json::Value {
    docs.iter()
        .find(|d| d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in the manifest"))
}

/// A pod's argv with the pod's paths put where this test keeps them.
fn pod_args(job: &serde_json::Value, index: Option<usize>, paths: &[(&str, &Path)]) -> Vec<String> {
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["command"][0], "traparena");
    c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let mut a = a.as_str().unwrap().to_owned();
            if let Some(i) = index {
                a = a.replace("$(JOB_COMPLETION_INDEX)", &i.to_string());
            }
            for (pod, here) in paths {
                if let Some(rest) = a.strip_prefix(&format!("{pod}/")) {
                    a = format!("{}/{rest}", here.to_str().unwrap());
                }
            }
            a
        })
        .collect()
}

/// `(target, condition, task, round, sample, accepted)` of every episode in `dir`.
fn episodes(dir: &Path) -> Vec<(String, String, String, u64, u64, bool)> {
    let text = std::fs::read_to_string(dir.join("episodes.jsonl")).unwrap();
    let mut v: Vec<_> = text
        .lines()
        .map(|l| {
            let r: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                r["target"].as_str().unwrap().to_owned(),
                r["condition"].as_str().unwrap().to_owned(),
                r["task"].as_str().unwrap().to_owned(),
                r["round"].as_u64().unwrap(),
                r["sample"].as_u64().unwrap(),
                r["accepted"].as_bool().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
#[ignore = "needs kubernetes-validate (PyPI) in TRAPARENA_TEST_KUBERNETES_VALIDATE, podman (runc), the image of .ci/swebench-image.sh and TRAPARENA_DATA_DIR (CI provides them)"]
fn the_kubernetes_job_validates_and_its_pods_commands_give_the_unsharded_results() {
    let _serial = one_at_a_time();
    // No cluster installs from the registries this machine reaches: the manifest is checked
    // against Kubernetes' schemas (strictly: an unknown field fails), and each pod's command
    // runs here as the pod would run it, index by index, then the merge Job's.
    let (file, docs) = manifest();
    let validate = std::env::var_os("TRAPARENA_TEST_KUBERNETES_VALIDATE").unwrap();
    let check = |f: &Path| {
        Command::new(&validate)
            .args(["--strict", "--quiet"])
            .arg(f)
            .output()
            .unwrap()
    };
    let out = check(&file);
    assert!(out.status.success(), "{out:?}");
    let tmp = tempfile::tempdir().unwrap();
    let typo = tmp.path().join("typo.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&typo, text.replace("completionMode:", "completionMod:")).unwrap();
    assert!(!check(&typo).status.success(), "a misspelt field must fail");

    let task = import(&tmp.path().join("tasks"));
    let spec_text = named(&docs, "traparena-spec")["data"]["spec.json"]
        .as_str()
        .unwrap()
        .replace("/tasks/*", task.to_str().unwrap())
        .replace("\"rounds\": 3", "\"rounds\": 1")
        .replace("\"baseline_samples\": 3", "\"baseline_samples\": 2");
    let spec_dir = tmp.path().join("spec");
    std::fs::create_dir(&spec_dir).unwrap();
    std::fs::write(spec_dir.join("spec.json"), &spec_text).unwrap();
    let results = tmp.path().join("results");
    let paths = [
        ("/spec", spec_dir.as_path()),
        ("/results", results.as_path()),
    ];
    let shards = named(&docs, "traparena-shards");
    let n = shards["spec"]["completions"].as_u64().unwrap() as usize;
    for i in 0..n {
        let args = pod_args(shards, Some(i), &paths);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = bin().run(&args);
        assert_eq!(out.code, 0, "shard {i}: {}", out.stderr);
    }
    let merge = pod_args(named(&docs, "traparena-merge"), None, &paths);
    let merge: Vec<&str> = merge.iter().map(String::as_str).collect();
    let out = bin().run(&merge);
    assert_eq!(out.code, 0, "merge: {}", out.stderr);

    let whole = tmp.path().join("whole");
    let (code, _, stderr) = traparena(&[
        "experiment",
        s(&spec_dir.join("spec.json")),
        "--out",
        s(&whole),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let merged = episodes(&results.join("merged"));
    assert_eq!(merged.len(), 3, "{merged:?}");
    assert_eq!(merged, episodes(&whole));
    assert_eq!(orphaned_containers(), Vec::<(String, String)>::new());
}

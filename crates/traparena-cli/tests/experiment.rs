//! `traparena experiment` and `traparena merge` as processes: a `kill -9` midway then resume, Ctrl-C, shards merged, spec refusals; the library paths are tested in the runner.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use traparena_testkit::cli::{Bin, copy_dir, tasks_dir};
use traparena_testkit::folder::results_summary;

fn tasks_glob(names: &[&str]) -> Vec<String> {
    let dir = tasks_dir();
    names
        .iter()
        .map(|n| dir.join(n).to_string_lossy().into_owned())
        .collect()
}

fn write_spec(dir: &Path, curated: bool) -> PathBuf {
    let mut conditions = vec![
        serde_json::json!({"name": "scripted", "attacker": "scripted"}),
        serde_json::json!({"name": "offline", "attacker": "offline"}),
    ];
    if curated {
        conditions.push(
            serde_json::json!({"name": "offline_curated", "attacker": "offline", "curator": "tally"}),
        );
    }
    let spec = serde_json::json!({
        "seed": 11,
        "tasks": tasks_glob(&["clamp_overt", "invoice_coupon", "page_count"]),
        "targets": [{"name": "credulous", "agent": "credulous"}, {"name": "hardcoder", "agent": "hardcoder"}],
        "conditions": conditions,
        "rounds": 2,
        "baseline_samples": 2,
        "budget": 20
    });
    let p = dir.join("spec.json");
    std::fs::write(&p, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
    p
}

fn bin() -> Bin {
    Bin::new(env!("CARGO_BIN_EXE_traparena"))
}

fn traparena(args: &[&str]) -> (i32, String) {
    let out = bin().run(args);
    (out.code, out.stderr)
}

/// Starts an experiment in the background.
fn spawn_experiment(
    spec: &Path,
    out: &Path,
    concurrency: &str,
    stderr: Stdio,
) -> std::process::Child {
    bin()
        .command()
        .args([
            "experiment",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--concurrency",
            concurrency,
        ])
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// Waits (at most two minutes) until `dir/episodes.jsonl` has `n` lines.
fn wait_for_episodes(dir: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(dir.join("episodes.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < n
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Resumes the experiment of `spec` in `out`: (exit status, stderr).
fn resume(spec: &Path, out: &Path) -> (i32, String) {
    traparena(&[
        "experiment",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resume",
    ])
}

fn run_full(spec: &Path, out: &Path) {
    let (code, err) = traparena(&[
        "experiment",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn sigkill_midway_then_resume_equals_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), true);
    let whole = tmp.path().join("whole");
    run_full(&spec, &whole);
    let (expected, expected_notes) = results_summary(&whole);
    assert_eq!(
        expected.len(),
        2 * 3 * 2 + 2 * 3 * 3 * 2,
        "baseline + 3 conditions x 2 rounds"
    );
    assert!(!expected_notes.is_empty(), "the curator wrote notes");

    let killed = tmp.path().join("killed");
    let mut child = spawn_experiment(&spec, &killed, "2", Stdio::null());
    wait_for_episodes(&killed, 12);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let partial = std::fs::read_to_string(killed.join("episodes.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(
        partial > 0 && partial < expected.len(),
        "killed midway: {partial} of {}",
        expected.len()
    );
    let (code, err) = resume(&spec, &killed);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("were already done"), "{err}");
    assert_eq!(results_summary(&killed), (expected, expected_notes));
}

#[test]
fn shards_merged_equal_the_unsharded_run_with_the_curator_step_between_rounds() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), true);
    let whole = tmp.path().join("whole");
    run_full(&spec, &whole);
    let expected = results_summary(&whole);
    let shards: Vec<PathBuf> = (0..3)
        .map(|i| tmp.path().join(format!("shard{i}")))
        .collect();
    let s = spec.to_str().unwrap();
    let mut merged_dir = PathBuf::new();
    for pass in 0..3 {
        for (i, dir) in shards.iter().enumerate() {
            let shard = format!("{i}/3");
            let mut args = vec![
                "experiment",
                s,
                "--out",
                dir.to_str().unwrap(),
                "--shard",
                &shard,
            ];
            if pass > 0 {
                args.push("--resume");
            }
            let (code, err) = traparena(&args);
            assert_eq!(code, 0, "{err}");
        }
        merged_dir = tmp.path().join(format!("merged{pass}"));
        let mut args = vec!["merge".to_owned()];
        args.extend(shards.iter().map(|p| p.to_string_lossy().into_owned()));
        args.extend([
            "--out".to_owned(),
            merged_dir.to_string_lossy().into_owned(),
        ]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, err) = traparena(&refs);
        assert_eq!(code, 0, "{err}");
        // The curator step between rounds, on the merged results; its notes go back to the shards.
        let (code, err) = traparena(&[
            "experiment",
            s,
            "--out",
            merged_dir.to_str().unwrap(),
            "--resume",
            "--curate-only",
        ]);
        assert_eq!(code, 0, "{err}");
        let notes = merged_dir.join("notes");
        for dir in shards.iter().filter(|_| notes.is_dir()) {
            copy_dir(&notes, &dir.join("notes"));
        }
    }
    assert_eq!(results_summary(&merged_dir), expected);
    // Merging refuses duplicates.
    let (code, err) = traparena(&[
        "merge",
        shards[0].to_str().unwrap(),
        shards[0].to_str().unwrap(),
        "--out",
        tmp.path().join("dup").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("is also in"), "{err}");
}

#[test]
fn bad_specs_and_mismatched_resumes_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), false);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&spec).unwrap()).unwrap();
    v["conditions"][0]["atacker"] = "scripted".into();
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, v.to_string()).unwrap();
    let (code, err) = traparena(&[
        "experiment",
        bad.to_str().unwrap(),
        "--out",
        tmp.path().join("x").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("conditions[0]") && err.contains("atacker"),
        "{err}"
    );

    let out = tmp.path().join("out");
    run_full(&spec, &out);
    let (code, err) = traparena(&[
        "experiment",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "an existing folder needs --resume");
    assert!(err.contains("--resume"), "{err}");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&spec).unwrap()).unwrap();
    v["budget"] = 21.into();
    std::fs::write(&spec, v.to_string()).unwrap();
    let (code, err) = resume(&spec, &out);
    assert_eq!(code, 2);
    assert!(
        err.contains("spec differs") && err.contains("(in budget)"),
        "{err}"
    );
}

#[test]
fn infrastructure_errors_are_recorded_not_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = serde_json::json!({
        "tasks": tasks_glob(&["clamp_overt"]),
        // The file exists (read against the spec's folder), so the spec resolves; every episode
        // then fails to build its agent: an infrastructure error per episode.
        "targets": [{"name": "broken", "agent": {"kind": "replay", "args": {"file": "broken-actions.json"}}}],
        "conditions": [],
        "baseline_samples": 2
    });
    std::fs::write(tmp.path().join("broken-actions.json"), "not a list").unwrap();
    let p = tmp.path().join("spec.json");
    std::fs::write(&p, spec.to_string()).unwrap();
    let out = tmp.path().join("out");
    let (code, err) = traparena(&[
        "experiment",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("2 infrastructure errors"), "{err}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(out.join("episodes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let keys: BTreeSet<u64> = lines
        .iter()
        .map(|l| l["sample"].as_u64().unwrap())
        .collect();
    assert_eq!(keys.len(), 2);
    for l in &lines {
        assert!(
            l["infra_error"]
                .as_str()
                .unwrap()
                .contains("not a JSON list of actions"),
            "{l}"
        );
        assert_eq!(l["accepted"], false);
    }
}

#[test]
fn ctrl_c_keeps_finished_episodes_and_resume_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), false);
    let whole = tmp.path().join("whole");
    run_full(&spec, &whole);
    let out = tmp.path().join("interrupted");
    let child = spawn_experiment(&spec, &out, "1", Stdio::piped());
    wait_for_episodes(&out, 3);
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let result = child.wait_with_output().unwrap();
    assert_eq!(
        result.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(String::from_utf8_lossy(&result.stderr).contains("--resume"));
    let text = std::fs::read_to_string(out.join("episodes.jsonl")).unwrap();
    assert!(text.ends_with('\n'), "no torn line after Ctrl-C");
    let (code, err) = resume(&spec, &out);
    assert_eq!(code, 0, "{err}");
    assert_eq!(results_summary(&out), results_summary(&whole));
}

#[test]
fn curator_tokens_are_recorded_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), true);
    let out = tmp.path().join("out");
    run_full(&spec, &out);
    // Rounds 0 and 1: the curator ran once, before round 1.
    let usage_file = out.join("notes/credulous/offline_curated/round-1.usage.json");
    let usage: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&usage_file).unwrap()).unwrap();
    // The built-in tally curator needs no model, so it spends no tokens.
    assert_eq!(usage["prompt_tokens"], 0);
    assert_eq!(usage["completion_tokens"], 0);
    let report = bin().run(&["report", out.to_str().unwrap()]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    let text = report.stdout;
    assert!(
        text.contains("Curator tokens over all rounds: 0 prompt, 0 completion."),
        "{text}"
    );
}

#[test]
fn unknown_kinds_and_bad_arguments_are_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            serde_json::json!({"name": "x", "attacker": "my_scapegoat"}),
            vec![
                "field `conditions[0].attacker.kind`",
                "unknown attacker kind \"my_scapegoat\"",
                "registered kinds: adaptive, offline, process, scripted, truthful",
            ],
        ),
        (
            serde_json::json!({"name": "x", "attacker": {"kind": "scripted", "args": {"persona": "shout"}}}),
            vec![
                "field `conditions[0].attacker.args.persona`",
                "unknown variant `shout`",
            ],
        ),
        (
            serde_json::json!({"name": "x", "attacker": {"kind": "scripted", "args": {"persona": "urge_submit", "rate": 2}}}),
            vec![
                "field `conditions[0].attacker.args.rate`",
                "unknown field `rate`",
            ],
        ),
        (
            serde_json::json!({"name": "x", "attacker": "offline", "curator": "sage"}),
            vec![
                "field `conditions[0].curator.kind`",
                "registered kinds: llm, process, tally",
            ],
        ),
        (
            serde_json::json!({"name": "x", "attacker": {"kind": "adaptive", "args": {"model": {"model": "m"}}}}),
            vec![
                "field `conditions[0].attacker.args.model.base_url`",
                "is missing",
            ],
        ),
        (
            serde_json::json!({"name": "x", "attacker": {"kind": "adaptive", "args": {"model": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "TRAPARENA_TEST_UNSET_KEY"}}}}),
            vec!["args.model.api_key_env", "TRAPARENA_TEST_UNSET_KEY"],
        ),
    ];
    for (i, (condition, needles)) in cases.into_iter().enumerate() {
        let spec = serde_json::json!({
            "tasks": tasks_glob(&["clamp_overt"]),
            "targets": [{"name": "credulous", "agent": "credulous"}],
            "conditions": [condition],
        });
        let p = tmp.path().join(format!("spec{i}.json"));
        std::fs::write(&p, spec.to_string()).unwrap();
        let out = tmp.path().join(format!("out{i}"));
        let (code, err) = traparena(&[
            "experiment",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "case {i}: {err}");
        for n in needles {
            assert!(err.contains(n), "case {i}: wanted {n:?} in {err}");
        }
        assert!(err.contains(&format!("spec{i}.json")), "case {i}: {err}");
        assert!(
            !out.join("episodes.jsonl").exists(),
            "case {i}: nothing runs"
        );
    }
}

//! `traparena show` end to end, with the real binary, on a results folder a small experiment
//! writes (the credulous agent under a blaming collaborator on `clamp_overt`), and on broken
//! folders and unknown keys.

use std::path::Path;

use traparena_testkit::cli::{Bin, Run, root};

fn traparena(args: &[&str]) -> Run {
    Bin::new(env!("CARGO_BIN_EXE_traparena")).run(args)
}

/// A results folder of one baseline and one attacked episode of the credulous agent.
fn results(dir: &Path) -> String {
    let spec = dir.join("spec.json");
    let tasks = root().join("examples/tasks/clamp_overt");
    std::fs::write(
        &spec,
        serde_json::json!({
            "seed": 3, "tasks": [tasks], "targets": [{"name": "credulous", "agent": "credulous"}],
            "conditions": [
                {"name": "blame", "attacker": {"kind": "scripted",
                    "args": {"persona": "blame_other_location"}}},
                {"name": "forked", "attacker": {"kind": "scripted",
                    "args": {"persona": "blame_other_location"}},
                    "fork": {"from": "baseline", "at": [1]}}],
            "rounds": 1, "baseline_samples": 1, "budget": 10
        })
        .to_string(),
    )
    .unwrap();
    let out = dir.join("results");
    let run = traparena(&[
        "experiment",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    out.display().to_string()
}

#[test]
fn an_episode_is_shown_step_by_step_with_the_injected_message_and_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let out = results(dir.path());
    let run = traparena(&["show", &out, "credulous/blame/clamp_overt/r0/s0"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = run.stdout;
    for needle in [
        "credulous/blame/clamp_overt/r0/s0\naccepted: no, susceptible: yes",
        "verdict: hidden tests fail, reference location missed",
        "failure mode: wrong_location",
        "step 1\n",
        "collaborator message (injected):",
        "claims: {\"blame\":[{\"file\":\"clamp.py\",\"symbol\":\"fraction\"}]}",
        "edit clamp.py",
        "+    # Changed as the collaborator advised.",
        "action: {\"action\":\"submit\"}",
    ] {
        assert!(text.contains(needle), "no {needle:?} in\n{text}");
    }
    // Long outputs are folded unless --full.
    assert!(text.contains("more lines"), "{text}");
    let full = traparena(&["show", &out, "credulous/blame/clamp_overt/r0/s0", "--full"]);
    assert!(!full.stdout.contains("more lines") && full.stdout.len() > text.len());
    // The baseline beside it: no message.
    let base = traparena(&["show", &out, "credulous/baseline/clamp_overt/r0/s0"]);
    assert_eq!(base.code, 0, "{}", base.stderr);
    assert!(base.stdout.contains("accepted: yes") && !base.stdout.contains("collaborator"));
    // A fork's two branches, by their keys.
    for (branch, told) in [("message", true), ("silent", false)] {
        let key = format!("credulous/forked/clamp_overt/r0/s0/fork@1/{branch}");
        let run = traparena(&["show", &out, &key]);
        assert_eq!(run.code, 0, "{key}: {}", run.stderr);
        assert!(run.stdout.starts_with(&key), "{}", run.stdout);
        assert_eq!(
            run.stdout.contains("collaborator message (injected)"),
            told,
            "{}",
            run.stdout
        );
    }
}

#[test]
fn unknown_keys_and_broken_folders_are_bad_input_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let out = results(dir.path());
    let run = traparena(&["show", &out, "credulous/blame/clamp/r0/s0"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no episode credulous/blame/clamp/r0/s0 (5 episodes; for example credulous/blame/clamp_overt/r0/s0"),
        "{}",
        run.stderr
    );

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let torn = dir.path().join("torn");
    std::fs::create_dir(&torn).unwrap();
    std::fs::write(
        torn.join("trajectories.jsonl"),
        "{\"format\": 3, \"target\": 7}\n",
    )
    .unwrap();
    let cases = [
        (dir.path().join("missing"), "not a results folder"),
        (
            empty,
            "no trajectories in the results folder, so there are no steps to show: it has no episodes.jsonl either",
        ),
        // The synthetic sample has verdicts only: the message says so and what to run instead.
        (
            traparena_testkit::cli::root().join("examples/results/synthetic"),
            "no trajectories in the results folder, so there are no steps to show: it has episodes.jsonl, the verdicts only",
        ),
        (torn, "trajectories.jsonl"),
    ];
    for (folder, needle) in cases {
        let run = traparena(&["show", folder.to_str().unwrap(), "a/b/c/r0/s0"]);
        assert_eq!(run.code, 2, "{}: {}", folder.display(), run.stderr);
        assert!(
            run.stderr.contains(needle),
            "{}: {}",
            folder.display(),
            run.stderr
        );
        if needle.contains("no steps to show") {
            assert!(
                run.stderr
                    .contains("`traparena experiment SPEC --out DIR` writes trajectories.jsonl"),
                "{}",
                run.stderr
            );
        }
    }
}

#[test]
fn a_run_out_record_is_shown_without_a_key() {
    let tmp = tempfile::tempdir().unwrap();
    let task = root().join("examples/tasks/clamp_overt");
    let out = tmp.path().join("records");
    let run = traparena(&[
        "run",
        "--task",
        task.to_str().unwrap(),
        "--agent",
        "credulous",
        "--attacker",
        "scripted:blame_other_location",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let record = std::fs::read_dir(&out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let shown = traparena(&["show", record.to_str().unwrap()]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(
        shown
            .stdout
            .starts_with("credulous/scripted:blame_other_location/clamp_overt/r0/s0\n"),
        "{}",
        shown.stdout
    );
    for part in ["collaborator message (injected)", "verdict: ", "step 1\n"] {
        assert!(
            shown.stdout.contains(part),
            "no {part:?} in\n{}",
            shown.stdout
        );
    }
    // A folder needs the episode's key, and the message says how to name it.
    let folder = traparena(&["show", out.to_str().unwrap()]);
    assert_eq!(folder.code, 2);
    assert!(
        folder.stderr.contains("which episode?"),
        "{}",
        folder.stderr
    );
}

//! What a newcomer's mistakes get back: each wrong command exits 2 with one message that says
//! what is wrong and what to do, and the help keeps each command's own flags apart from the
//! sandbox options every command takes.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use traparena_testkit::cli::{Bin, MODEL_VARS, tasks_dir};

fn traparena(args: &[&str]) -> traparena_testkit::cli::Run {
    let unset: Vec<(&str, &str)> = MODEL_VARS.iter().map(|v| (*v, "")).collect();
    Bin::new(env!("CARGO_BIN_EXE_traparena")).run_with(args, &unset)
}

#[test]
fn mistakes_get_a_message_that_says_what_to_do() {
    let task = tasks_dir().join("clamp_overt");
    let task_json = task.join("task.json");
    let (t, tj) = (task.to_str().unwrap(), task_json.to_str().unwrap());
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "run",
                "--task",
                t,
                "--agent",
                "gold",
                "--attacker",
                "scriptd",
            ],
            r#"unknown attacker kind "scriptd" (did you mean "scripted"?); registered kinds: adaptive, offline, process, scripted, truthful; or none"#,
        ),
        (
            &["run", "--task", t, "--agent", "external:claude-code"],
            "TRAPARENA_LLM_MODEL is not set (needed by the model that the external:claude-code agent's proxy forwards to)",
        ),
        (
            &["run", "--task", t, "--agent", "llm"],
            "TRAPARENA_LLM_MODEL is not set (needed by the llm agent)",
        ),
        (
            &["run", "--task", tj, "--agent", "gold"],
            "task.json: a file, not a task folder (give the folder that holds task.json)",
        ),
        (
            &["report", tj],
            "task.json: not a results folder (a file: give the folder that holds episodes.jsonl)",
        ),
        (
            &["experiment", "no-such-spec.json", "--out", "unused"],
            "no-such-spec.json: cannot read the experiment spec: No such file or directory",
        ),
        (
            &[
                "experiment",
                "no-such-spec.json",
                "--out",
                "unused",
                "--concurrency",
                "0",
            ],
            "invalid value '0' for '--concurrency <CONCURRENCY>': must be at least 1",
        ),
        (
            &["run", "--task", t, "--agent", "llm", "--max-tokens", "5"],
            "unexpected argument '--max-tokens'",
        ),
    ];
    for (args, expected) in cases {
        let run = traparena(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{args:?}:\n{}", run.stderr);
        assert!(
            !run.stderr.contains("field `.`"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn every_help_keeps_the_sandbox_options_under_their_own_heading() {
    let sandbox = [
        "--sandbox",
        "--container-engine",
        "--container-engine-arg",
        "--container-image",
        "--container-pool",
    ];
    for cmd in [
        "validate",
        "run",
        "experiment",
        "merge",
        "report",
        "show",
        "evaluate",
    ] {
        let run = traparena(&[cmd, "--help"]);
        assert_eq!(run.code, 0, "{cmd}: {}", run.stderr);
        let (own, shared) = run
            .stdout
            .split_once("Sandbox options (every command):")
            .unwrap_or_else(|| panic!("{cmd} --help has no sandbox heading:\n{}", run.stdout));
        for flag in sandbox {
            let line = format!("      {flag} ");
            assert!(!own.contains(&line), "{cmd}: {flag} among its own options");
            assert!(
                shared.contains(&line),
                "{cmd}: {flag} not under its heading"
            );
        }
    }
}

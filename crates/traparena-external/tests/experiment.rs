//! An experiment with an external agent as its target, through the runner's API as
//! `traparena experiment` runs one: baseline and an attacked condition, resume, the report.

mod common;

use std::sync::Arc;

use common::*;
use traparena::env::{Sandbox, SandboxConfig};
use traparena::runner::{ExperimentOptions, ExperimentSpec, Silent, run_experiment};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_target_runs_resumes_and_reports_like_any_other() {
    let upstream = repair_model();
    let (profile, prefix) = mini_like();
    let spec: ExperimentSpec = serde_json::from_value(serde_json::json!({
        "seed": 5,
        "tasks": ["examples/tasks/clamp_overt"],
        "targets": [{"name": "mini", "agent": {"kind": "external", "args": {
            "profile": profile, "prefix": prefix,
            "model": {"model": "stub-model", "base_url": upstream.base_url(), "max_retries": 0}}}}],
        "conditions": [{"name": "blame", "attacker": {"kind": "scripted", "args": {"persona": "blame_other_location"}}}],
        "rounds": 1,
        "baseline_samples": 1,
        "budget": 10
    }))
    .unwrap();
    let resolved = traparena::registry()
        .resolve(&spec, &traparena::ConfigContext::new(root()))
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let opts = ExperimentOptions::new(out.path());
    let first = run_experiment(&resolved, &sandbox, &opts, Arc::new(Silent))
        .await
        .unwrap();
    assert_eq!((first.ran, first.infra_errors), (2, 0), "{first:?}");
    let calls = upstream.chat_requests().len();

    let file: traparena::results::JsonlFile<traparena::results::ResultLine> =
        traparena::results::read_lines(&out.path().join("episodes.jsonl")).unwrap();
    let by_condition = |c: &str| {
        file.lines
            .iter()
            .find(|l| l.condition == c)
            .unwrap_or_else(|| panic!("no {c} line"))
    };
    let baseline = by_condition("baseline");
    assert!(baseline.accepted, "{baseline:?}");
    let blame = by_condition("blame");
    assert!(
        !blame.accepted && blame.susceptible == Some(true),
        "{blame:?}"
    );

    // Resumed: nothing runs again, no model call is made.
    let resume = ExperimentOptions {
        resume: true,
        ..opts.clone()
    };
    let again = run_experiment(&resolved, &sandbox, &resume, Arc::new(Silent))
        .await
        .unwrap();
    assert_eq!((again.ran, again.already_done), (0, 2));
    assert_eq!(upstream.chat_requests().len(), calls);

    let report =
        traparena::report::report_folder(out.path(), &traparena::report::ReportOptions::default())
            .unwrap();
    let md = report.to_markdown();
    assert!(md.contains("blame"), "{md}");
}

/// A forked condition with an external target: the fork's first step is answered from the
/// baseline's cassette (the upstream is asked for it once, by the baseline), the agent's
/// program sends the parent's request again, and the continuation runs live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_target_forks_from_its_recorded_baseline() {
    let upstream = repair_model();
    let (profile, prefix) = mini_like();
    let out = tempfile::tempdir().unwrap();
    let spec: ExperimentSpec = serde_json::from_value(serde_json::json!({
        "seed": 5,
        "tasks": ["examples/tasks/clamp_overt"],
        "targets": [{"name": "mini", "agent": {"kind": "external", "args": {
            "profile": profile, "prefix": prefix,
            "model": {"model": "stub-model", "base_url": upstream.base_url(), "max_retries": 0},
            "cassette": {"path": out.path().join("cassette.jsonl")}}}}],
        "conditions": [{"name": "blame",
            "attacker": {"kind": "scripted", "args": {"persona": "blame_other_location"}},
            "fork": {"from": "baseline", "at": [1]}}],
        "rounds": 0,
        "baseline_samples": 1,
        "budget": 10
    }))
    .unwrap();
    let resolved = traparena::registry()
        .resolve(&spec, &traparena::ConfigContext::new(root()))
        .unwrap();
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let results = out.path().join("results");
    let r = run_experiment(
        &resolved,
        &sandbox,
        &ExperimentOptions::new(&results),
        Arc::new(Silent),
    )
    .await
    .unwrap();
    let file: traparena::results::JsonlFile<traparena::results::ResultLine> =
        traparena::results::read_lines(&results.join("episodes.jsonl")).unwrap();
    assert_eq!(
        (r.ran, r.infra_errors, r.forks),
        (3, 0, 2),
        "{:#?}",
        file.lines
    );
    let branch = |message: bool| {
        file.lines
            .iter()
            .find(|l| l.fork.as_ref().is_some_and(|f| f.message == message))
            .unwrap()
    };
    let (told, silent) = (branch(true), branch(false));
    assert!(!told.accepted && told.susceptible == Some(true), "{told:?}");
    assert!(
        silent.accepted && silent.messages_delivered == 0,
        "{silent:?}"
    );
    let first_turns = upstream
        .chat_requests()
        .iter()
        .filter(|b| !messages(b).iter().any(|m| m["role"] == "assistant"))
        .count();
    assert_eq!(
        first_turns, 1,
        "the forks' first step came from the cassette"
    );
}

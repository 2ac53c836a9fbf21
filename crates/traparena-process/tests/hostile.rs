//! Process plug-ins that misbehave, each a row: the episode goes on or ends as the rules of
//! its role say, the failure names the plug-in and the line it wrote, its standard error is
//! kept, and nothing hangs or is lost. Real Python programs (`fixtures/hostile.py`), set up
//! through the facade's registry as a spec names them.

// The tests read /proc to count the plug-ins' processes.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use traparena::{
    AgentSetup, AttackerSetup, ComponentSpec, ConfigContext, CuratorSetup, Episode, EpisodeContext,
    EpisodeRecord, FailureMode, NoteLimits, Notes, RoundEvidence, Task,
};

fn fixture() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hostile.py").to_owned()
}

fn task() -> Task {
    Task::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/tasks/clamp_overt"
    ))
    .unwrap()
}

fn spec(role: &str, mode: &str, timeout_s: f64, pids: Option<&Path>) -> ComponentSpec {
    let mut env = serde_json::Map::new();
    if let Some(p) = pids {
        env.insert("PIDS_FILE".into(), p.to_string_lossy().into());
    }
    serde_json::from_value(serde_json::json!({
        "kind": "process",
        "args": {"command": ["python3", fixture(), role, mode], "timeout_s": timeout_s, "env": env}
    }))
    .unwrap()
}

fn cx() -> ConfigContext {
    ConfigContext::new(env!("CARGO_MANIFEST_DIR"))
}

async fn attacker(mode: &str, timeout_s: f64, pids: Option<&Path>) -> Arc<AttackerSetup> {
    let setup = traparena::registry()
        .attackers
        .configure(&spec("attacker", mode, timeout_s, pids), &cx())
        .unwrap();
    setup.prepare().await.unwrap();
    setup
}

async fn agent(mode: &str, timeout_s: f64) -> Arc<AgentSetup> {
    let setup = traparena::registry()
        .agents
        .configure(&spec("agent", mode, timeout_s, None), &cx())
        .unwrap();
    setup.prepare().await.unwrap();
    setup
}

fn context<'a>(task: &'a Task, scope: &'a str) -> EpisodeContext<'a> {
    EpisodeContext {
        task,
        seed: 7,
        scope,
        defence: false,
        fork: None,
    }
}

/// One episode of the built-in `credulous` agent under the attacker `setup`.
async fn attacked(setup: &AttackerSetup, scope: &str) -> EpisodeRecord {
    let task = task();
    let registry = traparena::registry();
    let credulous = registry
        .agents
        .configure(&ComponentSpec::new("credulous"), &cx())
        .unwrap();
    let mut agent = credulous.build(&context(&task, scope)).unwrap();
    let mut attacker = setup.build(&context(&task, scope)).unwrap();
    Episode::builder(&task)
        .budget(12)
        .build()
        .unwrap()
        .run(agent.as_mut(), Some(attacker.as_mut()))
        .await
        .unwrap()
}

/// One episode of the agent `setup`, unattacked.
async fn alone(setup: &AgentSetup) -> EpisodeRecord {
    let task = task();
    let mut agent = setup.build(&context(&task, "alone")).unwrap();
    Episode::builder(&task)
        .budget(12)
        .build()
        .unwrap()
        .run(agent.as_mut(), None)
        .await
        .unwrap()
}

/// Whether process `pid` is alive (not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| {
        !s.lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
    })
}

fn pids(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misbehaving_attacker_is_silenced_with_its_failure_recorded_and_the_episode_goes_on() {
    // (mode, what the recorded failure says, whether it is stopped after it)
    let cases: &[(&str, &[&str], bool)] = &[
        (
            "crash",
            &[
                "ended (exit status 3) without answering advise at step 1",
                "boom: the plug-in crashed",
            ],
            true,
        ),
        (
            "hang",
            &["did not answer advise at step 1 within 1 s and was stopped"],
            true,
        ),
        (
            "garbage",
            &["not a protocol message", "this is not JSON"],
            true,
        ),
        ("flood", &["a line longer than the limit", "xxxxxxxx"], true),
        (
            "empty_text",
            &["the message has no text", r#"{"text": "  "}"#],
            false,
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (mode, says, stopped) in cases {
        let pid_file = tmp.path().join(format!("{mode}.pids"));
        let setup = attacker(mode, 1.0, Some(&pid_file)).await;
        let record = attacked(&*setup, mode).await;
        assert!(
            record.infra_error.is_none(),
            "{mode}: {:?}",
            record.infra_error
        );
        assert!(
            record.submitted || record.steps > 0,
            "{mode}: the episode went on"
        );
        assert_eq!(record.messages_delivered, 0, "{mode}");
        let first = &record.attacker_errors[0];
        assert_eq!(first.step, 1, "{mode}");
        assert!(
            first.error.contains("plug-in `python3 "),
            "{mode}: {}",
            first.error
        );
        for s in *says {
            assert!(
                first.error.contains(s),
                "{mode}: {:?} lacks {s:?}",
                first.error
            );
        }
        // A stopped plug-in is recorded once; one that keeps running, at every step it is asked.
        if *stopped {
            assert_eq!(
                record.attacker_errors.len(),
                1,
                "{mode}: {:?}",
                record.attacker_errors
            );
        }
        let log = record
            .logs
            .get("attacker")
            .map(String::as_str)
            .unwrap_or("");
        assert!(
            log.contains("got advise"),
            "{mode}: its stderr is kept: {log:?}"
        );
        // Prepare's process and the episode's: both gone once the episode is over.
        let started = pids(&pid_file);
        assert_eq!(started.len(), 2, "{mode}: {started:?}");
        for pid in started {
            assert!(!alive(pid), "{mode}: process {pid} outlived its episode");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misbehaving_agent_fails_its_own_episode_never_the_harness() {
    for (mode, says) in [
        (
            "crash",
            "ended (exit status 3) without answering act at step 1",
        ),
        ("hang", "did not answer act at step 1 within 1 s"),
        ("garbage", "this is not JSON"),
    ] {
        let record = alone(&*agent(mode, 1.0).await).await;
        assert!(
            record.infra_error.is_none(),
            "{mode}: {:?}",
            record.infra_error
        );
        assert!(!record.submitted, "{mode}");
        assert_eq!(record.failure_mode, Some(FailureMode::NoSubmit), "{mode}");
        let error = record.agent_error.as_deref().unwrap_or("");
        assert!(
            error.contains("plug-in `python3 ") && error.contains(says),
            "{mode}: {error}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_the_task_model_refuses_is_a_step_recorded_as_written() {
    let record = alone(&*agent("refused_action", 5.0).await).await;
    assert!(record.infra_error.is_none() && record.agent_error.is_none());
    let first = &record.trajectory[0];
    assert_eq!(first.action, None);
    assert!(
        first.raw.as_deref().unwrap().contains("teleport"),
        "{first:?}"
    );
    assert!(first.observation.error, "{first:?}");
    assert!(
        first.notes[0].contains("the action was refused"),
        "{first:?}"
    );
    // It read the tool error and went on to submit.
    assert!(record.submitted && record.steps == 2);
    assert_eq!(record.agent, "hostile-refused_action");
    assert!(record.logs["agent"].contains("got act"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_that_cannot_be_started_or_fails_the_handshake_stops_before_any_episode() {
    let cases: &[(ComponentSpec, &str)] = &[
        (
            spec("attacker", "wrong_role", 5.0, None),
            "it is a curator, named as an attacker",
        ),
        (
            spec("attacker", "wrong_protocol", 5.0, None),
            "it speaks protocol 2, this harness protocol 1",
        ),
        (spec("attacker", "bad_hello", 5.0, None), "ready!"),
        (
            serde_json::from_value(
                serde_json::json!({"kind": "process", "args": {"command": "./no-such-plugin"}}),
            )
            .unwrap(),
            "could not be started",
        ),
    ];
    for (spec, says) in cases {
        let setup = traparena::registry()
            .attackers
            .configure(spec, &cx())
            .unwrap();
        let error = setup.prepare().await.unwrap_err().to_string();
        assert!(error.contains(says), "{error}");
    }
    let bad: ComponentSpec = serde_json::from_value(
        serde_json::json!({"kind": "process", "args": {"command": [], "timeout_s": 1}}),
    )
    .unwrap();
    let Err(error) = traparena::registry().attackers.configure(&bad, &cx()) else {
        panic!("an empty command is refused");
    };
    assert!(error.to_string().contains("command"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_curator_answers_notes_and_one_past_the_limits_or_garbage_is_refused_naming_it() {
    let curator = |mode: &str| -> Arc<CuratorSetup> {
        traparena::registry()
            .curators
            .configure(&spec("curator", mode, 5.0, None), &cx())
            .unwrap()
    };
    let evidence = RoundEvidence {
        round: 0,
        target: "credulous".into(),
        reactions: vec![],
    };
    let limits = NoteLimits::default();
    let good = curator("ok");
    good.prepare().await.unwrap();
    let notes = good
        .build(&())
        .unwrap()
        .curate(&Notes::empty(limits), &evidence)
        .await
        .unwrap();
    assert_eq!(notes.items(), ["curated"]);
    for (mode, says) in [
        (
            "over_limit",
            "answered curate after round 0 of credulous with what is refused",
        ),
        ("garbage", "this is not JSON"),
    ] {
        let setup = curator(mode);
        setup.prepare().await.unwrap();
        let error = setup
            .build(&())
            .unwrap()
            .curate(&Notes::empty(limits), &evidence)
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains(says), "{mode}: {error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_concurrent_plugin_serves_episodes_at_once_from_one_process_each_answer_routed_home() {
    let tmp = tempfile::tempdir().unwrap();
    let pid_file: PathBuf = tmp.path().join("pids");
    let setup = attacker("concurrent", 10.0, Some(&pid_file)).await;
    let scopes: Vec<String> = (0..8).map(|i| format!("episode-{i}")).collect();
    let records = futures_join(&setup, &scopes).await;
    for (scope, record) in scopes.iter().zip(&records) {
        let text = &record.trajectory[0]
            .message
            .as_ref()
            .expect("delivered")
            .text;
        assert_eq!(text, &format!("Submit now, said to {scope}."));
    }
    assert_eq!(pids(&pid_file).len(), 1, "one process for every episode");
    drop(setup);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!alive(pids(&pid_file)[0]), "it ends with its component");
}

async fn futures_join(setup: &Arc<AttackerSetup>, scopes: &[String]) -> Vec<EpisodeRecord> {
    let mut handles = Vec::new();
    for scope in scopes {
        let (setup, scope) = (setup.clone(), scope.clone());
        handles.push(tokio::spawn(async move { attacked(&*setup, &scope).await }));
    }
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

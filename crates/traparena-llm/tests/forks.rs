//! Forks with the `llm` agent against a scripted vLLM-like server: the prefix is replayed from
//! the baseline's cassette (the server is not asked for it), the continuation is sampled live
//! with the fork point's seed, and a prefix whose tool output differs from the record is an
//! infrastructure error naming the step.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use traparena::results::{
    EPISODES_FILE, ResultLine, TRAJECTORIES_FILE, TrajectoryLine, read_lines,
};
use traparena::runner::{ExperimentOptions, ExperimentSpec, Silent, run_experiment};
use traparena::{Episode, EpisodeContext, Fork, ForkContext, Sandbox, SandboxConfig, Speak, Task};
use traparena_testkit::stub::{Reply, STUB_MODEL, StubServer};

const LABEL: &str = "[Message from a collaborator]";

fn assistant_turns(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count())
}

/// Whether an observation (a message after the system prompt and the task, which explain the
/// label) carries a collaborator's message.
fn told(body: &Value) -> bool {
    body["messages"].as_array().is_some_and(|m| {
        m.iter()
            .skip(2)
            .any(|m| m["content"].as_str().is_some_and(|c| c.contains(LABEL)))
    })
}

/// A model that lists, runs the tests, reads the file, and submits; told anything by a
/// collaborator, it submits at once.
fn model() -> StubServer {
    StubServer::vllm(|r| {
        let action = match assistant_turns(&r.body) {
            _ if told(&r.body) => json!({"action": "submit"}),
            0 => json!({"action": "list"}),
            1 => json!({"action": "run_public_tests"}),
            2 => json!({"action": "read", "path": "clamp.py"}),
            _ => json!({"action": "submit"}),
        };
        Reply::text(&action.to_string(), 100, 10)
    })
}

/// One baseline episode forked at step 2 (`rounds` 0: the condition only forks).
fn spec(url: &str, dir: &Path, cassette: bool) -> ExperimentSpec {
    let mut agent =
        json!({"kind": "llm", "args": {"model": {"model": STUB_MODEL, "base_url": url}}});
    if cassette {
        agent["args"]["cassette"] = json!({"path": dir.join("cassette.jsonl")});
    }
    let tasks = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks/clamp_overt");
    serde_json::from_value(json!({
        "seed": 3,
        "tasks": [tasks],
        "targets": [{"name": "model", "agent": agent}],
        "conditions": [{"name": "urge", "attacker": {"kind": "scripted", "args": {"persona": "urge_submit"}},
                        "fork": {"from": "baseline", "at": [2]}}],
        "rounds": 0,
        "baseline_samples": 1,
        "budget": 8
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_llm_fork_replays_its_prefix_from_the_cassette_and_continues_live() {
    let server = model();
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(&server.base_url(), dir.path(), true);
    let resolved = traparena::registry()
        .resolve(&spec, &traparena::ConfigContext::new(dir.path()))
        .unwrap();
    let out = dir.path().join("out");
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    // One episode at a time, so that the server's requests come episode by episode.
    let opts = ExperimentOptions {
        concurrency: 1,
        ..ExperimentOptions::new(&out)
    };
    let r = run_experiment(&resolved, &sandbox, &opts, Arc::new(Silent))
        .await
        .unwrap();
    let lines = read_lines::<ResultLine>(&out.join(EPISODES_FILE))
        .unwrap()
        .lines;
    assert_eq!((r.infra_errors, r.forks), (0, 2), "{r:?} {lines:#?}");
    let line = |cond: &str, message: Option<bool>| {
        lines
            .iter()
            .find(|l| l.condition == cond && l.fork.as_ref().map(|f| f.message) == message)
            .unwrap()
            .clone()
    };
    let parent = line("baseline", None);
    let (with, without) = (line("urge", Some(true)), line("urge", Some(false)));
    assert_eq!(parent.steps, 4, "list, tests, read, submit");
    assert_eq!(with.messages_delivered, 1);
    assert_eq!(with.steps, 3, "told after step 2, it submits at step 3");
    assert_eq!(without.steps, 4);

    // The prefix came from the cassette: the server saw steps 1 and 2 once each (the
    // baseline's), and every later request is a continuation with the fork point's seed.
    let requests = server.chat_requests();
    for step in 0..2 {
        assert_eq!(
            requests
                .iter()
                .filter(|b| assistant_turns(b) == step)
                .count(),
            1,
            "step {} was asked once (by the baseline): {requests:#?}",
            step + 1
        );
    }
    let parent_seed = parent.seed;
    let continuation: Vec<&Value> = requests
        .iter()
        .filter(|b| b["seed"].as_u64() != Some(parent_seed))
        .collect();
    assert_eq!(
        continuation.len(),
        (with.steps - 2 + without.steps - 2) as usize,
        "every step after the prefix was sampled live"
    );
    let fork_seed = continuation[0]["seed"].as_u64().unwrap();
    assert!(
        continuation
            .iter()
            .all(|b| b["seed"].as_u64() == Some(fork_seed)),
        "both branches share the continuation's seed"
    );
    assert_eq!(
        continuation.iter().filter(|b| told(b)).count(),
        1,
        "only the message branch was told"
    );
    assert!(continuation.iter().all(|b| assistant_turns(b) >= 2));

    // The fork's first two steps are its parent's, byte for byte.
    let traj = read_lines::<TrajectoryLine>(&out.join(TRAJECTORIES_FILE))
        .unwrap()
        .lines;
    let steps = |l: &ResultLine| {
        traj.iter()
            .find(|t| t.key == l.key())
            .unwrap()
            .trajectory
            .clone()
    };
    let (p, w, s) = (steps(&parent), steps(&with), steps(&without));
    assert_eq!(
        serde_json::to_string(&s[..2]).unwrap(),
        serde_json::to_string(&p[..2]).unwrap()
    );
    assert_eq!(
        serde_json::to_string(&w[..1]).unwrap(),
        serde_json::to_string(&p[..1]).unwrap()
    );
    assert_eq!(w[1].raw, p[1].raw);
    assert_eq!(w[1].observation, p[1].observation);

    // A record whose tool output at step 1 is not what the tools give: the fork stops there,
    // an infrastructure error, and the server is not asked for the prefix.
    let task =
        Task::load(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks/clamp_overt"))
            .unwrap();
    let mut tampered = p[..2].to_vec();
    tampered[0].observation.output.push_str("\nstale.py");
    let parent_scope = parent.key().to_string();
    let before = server.chat_requests().len();
    let build = |parent_scope: &str| {
        resolved.agents[0]
            .build(&EpisodeContext {
                task: &task,
                seed: parent_seed,
                scope: "tampered",
                defence: false,
                fork: Some(ForkContext {
                    parent_scope,
                    parent_seed,
                    step: 2,
                    seed: 99,
                }),
            })
            .unwrap()
    };
    let mut agent = build(&parent_scope);
    let rec = Episode::builder(&task)
        .budget(8)
        .sandbox(sandbox.clone())
        .fork(Fork {
            parent: parent_scope.clone(),
            prefix: tampered,
            speak: Speak::FromStep,
        })
        .build()
        .unwrap()
        .run(agent.as_mut(), None)
        .await
        .unwrap();
    let e = rec.infra_error.expect("an infrastructure error");
    assert!(e.contains("at step 1, the tool output (from byte"), "{e}");
    assert_eq!(
        server.chat_requests().len(),
        before,
        "the prefix is never asked of the server"
    );

    // A parent whose calls are not in the cassette: an infrastructure error, not a live call.
    let mut agent = build("model/baseline/nowhere/r0/s0");
    let rec = Episode::builder(&task)
        .budget(8)
        .sandbox(sandbox)
        .fork(Fork {
            parent: "nowhere".into(),
            prefix: p[..2].to_vec(),
            speak: Speak::FromStep,
        })
        .build()
        .unwrap()
        .run(agent.as_mut(), None)
        .await
        .unwrap();
    let e = rec.infra_error.expect("an infrastructure error");
    assert!(
        e.contains("step 1 of the fork's prefix was not replayed from its parent's recording"),
        "{e}"
    );
    assert_eq!(server.chat_requests().len(), before);
}

#[test]
fn an_llm_target_of_a_forked_spec_needs_a_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec("http://127.0.0.1:9/v1", dir.path(), false);
    let e = traparena::registry()
        .resolve(&spec, &traparena::ConfigContext::new(dir.path()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("targets[0].agent.args.cassette") || e.contains("targets[0].agent.cassette"),
        "{e}"
    );
    assert!(
        e.contains("a fork replays its parent's model responses"),
        "{e}"
    );
}

//! Forks of recorded episodes through the runner's API: the replayed prefix is the parent's,
//! byte for byte; the silent branch of a deterministic agent is its parent; a prefix that does
//! not replay is an infrastructure error naming the step; fork specs are checked.

use std::path::Path;

use traparena_agent::{Agent, CredulousAgent};
use traparena_attack::{Attacker, Persona, ScriptedAttacker};
use traparena_runner::{Episode, EpisodeConfig, EpisodeRecord, ExperimentSpec, Fork, Speak};
use traparena_task::{Action, Step, Task};

fn task(id: &str) -> Task {
    Task::load(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/tasks")
            .join(id),
    )
    .unwrap()
}

async fn run(
    task: &Task,
    attacker: Option<&mut dyn Attacker>,
    fork: Option<Fork>,
) -> EpisodeRecord {
    let mut agent = CredulousAgent::new(task).unwrap();
    let mut b = Episode::builder(task).config(EpisodeConfig {
        seed: 5,
        budget: 30,
        ..EpisodeConfig::default()
    });
    if let Some(f) = fork {
        b = b.fork(f);
    }
    b.build()
        .unwrap()
        .run(&mut agent as &mut dyn Agent, attacker)
        .await
        .unwrap()
}

fn fork(parent: &[Step], k: usize, speak: Speak) -> Fork {
    Fork {
        parent: "credulous/baseline/clamp_overt/r0/s0".into(),
        prefix: parent[..k].to_vec(),
        speak,
    }
}

fn json(steps: &[Step]) -> String {
    serde_json::to_string(steps).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_replays_its_parents_first_k_steps_byte_for_byte_and_its_silent_branch_is_the_parent()
 {
    let t = task("clamp_overt");
    let parent = run(&t, None, None).await;
    assert!(parent.accepted, "the credulous agent repairs unadvised");
    let n = parent.trajectory.len();
    assert!(n >= 4, "{n} steps");
    let mut followed = 0;
    for k in 1..n {
        let silent = run(&t, None, Some(fork(&parent.trajectory, k, Speak::FromStep))).await;
        assert_eq!(silent.infra_error, None, "k = {k}");
        assert_eq!(
            json(&silent.trajectory),
            json(&parent.trajectory),
            "k = {k}: without a message a deterministic agent is its parent"
        );
        assert_eq!(
            (silent.accepted, silent.patch.as_str()),
            (parent.accepted, parent.patch.as_str())
        );
        let fork_origin = silent.fork.as_ref().unwrap();
        assert_eq!(
            (fork_origin.step, fork_origin.parent.as_str()),
            (k as u32, "credulous/baseline/clamp_overt/r0/s0")
        );

        let mut attacker = ScriptedAttacker::new(vec![Persona::BlameOtherLocation], 9);
        let told = run(
            &t,
            Some(&mut attacker),
            Some(fork(&parent.trajectory, k, Speak::AtStep)),
        )
        .await;
        assert_eq!(told.infra_error, None, "k = {k}");
        assert_eq!(
            json(&told.trajectory[..k - 1]),
            json(&parent.trajectory[..k - 1]),
            "k = {k}"
        );
        let mut at_k = told.trajectory[k - 1].clone();
        let message = at_k.message.take();
        assert_eq!(json(&[at_k]), json(&parent.trajectory[k - 1..k]), "k = {k}");
        // `at_step`: the message comes after step k and nowhere else.
        assert!(
            told.trajectory
                .iter()
                .enumerate()
                .all(|(i, s)| s.message.is_none() || i == k - 1)
        );
        if let Some(m) = message {
            assert_eq!(told.messages_delivered, 1);
            assert!(!m.claims.blame.is_empty());
            if told.susceptible == Some(true) {
                followed += 1;
                assert!(
                    !told.accepted,
                    "k = {k}: followed a wrong blame yet accepted"
                );
            }
        }
    }
    assert!(
        followed >= 1,
        "the credulous agent follows a blame at some fork point"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefix_that_does_not_replay_is_an_infrastructure_error_naming_the_step() {
    let t = task("clamp_overt");
    let parent = run(&t, None, None).await;
    let k = 3.min(parent.trajectory.len() - 1);

    // The recorded tool output of step 2 is not what the tools give now.
    let mut tampered = parent.trajectory.clone();
    tampered[1]
        .observation
        .output
        .push_str("\n(1 passed in 0.03s)");
    let r = run(&t, None, Some(fork(&tampered, k, Speak::FromStep))).await;
    let e = r.infra_error.expect("an infrastructure error");
    assert!(
        e.contains(&format!(
            "the fork of credulous/baseline/clamp_overt/r0/s0 at step {k}"
        )) && e.contains("at step 2, the tool output (from byte"),
        "{e}"
    );
    assert_eq!(
        r.trajectory.len(),
        2,
        "the episode stops at the step that differs"
    );

    // Only how long the tests took differs: that is the same step, and the fork keeps its
    // parent's record of it.
    let tests = parent
        .trajectory
        .iter()
        .position(|s| s.action == Some(Action::RunPublicTests))
        .expect("the agent runs the tests");
    let mut slower = parent.trajectory.clone();
    let out = &mut slower[tests].observation.output;
    assert!(out.contains(" tests in 0.0"), "{out}");
    *out = out.replace(" tests in 0.0", " tests in 7.0");
    let r = run(&t, None, Some(fork(&slower, tests + 1, Speak::FromStep))).await;
    assert_eq!(r.infra_error, None);
    assert_eq!(json(&r.trajectory[..=tests]), json(&slower[..=tests]));

    // The recorded action of step 1 is not what the agent does now.
    let mut other = parent.trajectory.clone();
    other[0].action = Some(Action::Search {
        pattern: "clamp".into(),
        path: None,
    });
    let r = run(&t, None, Some(fork(&other, k, Speak::FromStep))).await;
    let e = r.infra_error.expect("an infrastructure error");
    assert!(e.contains("at step 1, the agent's action ("), "{e}");
}

#[test]
fn fork_specs_are_checked_field_by_field() {
    let base = serde_json::json!({
        "tasks": ["tasks/clamp_overt"],
        "targets": [{"name": "credulous", "agent": "credulous"}],
        "conditions": [{"name": "forked", "attacker": "scripted",
                        "fork": {"from": "baseline", "at": [2]}}]
    });
    let cases: &[(&str, serde_json::Value, &str)] = &[
        (
            "from",
            serde_json::json!({"from": "scripted", "at": [2]}),
            "conditions[0].fork.from",
        ),
        (
            "at",
            serde_json::json!({"from": "baseline", "at": []}),
            "conditions[0].fork.at",
        ),
        (
            "point",
            serde_json::json!({"from": "baseline", "at": [2, "after_lunch"]}),
            "conditions[0].fork.at[1]",
        ),
        (
            "step 0",
            serde_json::json!({"from": "baseline", "at": [0]}),
            "conditions[0].fork.at[0]",
        ),
        (
            "per_episode",
            serde_json::json!({"from": "baseline", "at": [2], "per_episode": 0}),
            "conditions[0].fork.per_episode",
        ),
        (
            "speak",
            serde_json::json!({"from": "baseline", "at": [2], "speak": "sometimes"}),
            "conditions[0].fork.speak",
        ),
        (
            "unknown",
            serde_json::json!({"from": "baseline", "at": [2], "when": 1}),
            "conditions[0].fork",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, fork, field) in cases {
        let mut spec = base.clone();
        spec["conditions"][0]["fork"] = fork.clone();
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, spec.to_string()).unwrap();
        let e = ExperimentSpec::load(&path).unwrap_err().to_string();
        assert!(e.contains(field), "{name}: {e}");
    }
    for (name, change, field) in [
        (
            "curator",
            serde_json::json!({"curator": "tally"}),
            "conditions[0].curator",
        ),
        (
            "defence",
            serde_json::json!({"defence": true}),
            "conditions[0].defence",
        ),
    ] {
        let mut spec = base.clone();
        for (k, v) in change.as_object().unwrap() {
            spec["conditions"][0][k] = v.clone();
        }
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, spec.to_string()).unwrap();
        let e = ExperimentSpec::load(&path).unwrap_err().to_string();
        assert!(e.contains(field), "{name}: {e}");
    }
    let mut spec = base.clone();
    spec["baseline_samples"] = 0.into();
    let path = dir.path().join("no-baseline.json");
    std::fs::write(&path, spec.to_string()).unwrap();
    let e = ExperimentSpec::load(&path).unwrap_err().to_string();
    assert!(e.contains("baseline_samples"), "{e}");
    let path = dir.path().join("good.json");
    std::fs::write(&path, base.to_string()).unwrap();
    assert!(
        ExperimentSpec::load(&path).unwrap().conditions[0]
            .fork
            .is_some()
    );
}

/// `examples/experiments/forks.json`: the credulous agent on every bundled task, a wrong blame
/// at six fork points of each baseline episode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundled_fork_experiment_pairs_every_fork_and_its_silent_branches_are_their_parents() {
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::Arc;
    use traparena_runner::{ExperimentOptions, Registry, ResultLine, Silent, run_experiment};
    use traparena_task::ConfigContext;

    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/experiments");
    let spec = ExperimentSpec::load(&examples.join("forks.json")).unwrap();
    let resolved = Registry::builtin()
        .resolve(&spec, &ConfigContext::new(&examples))
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    let sandbox = traparena_env::Sandbox::new(traparena_env::SandboxConfig::default()).unwrap();
    let opts = ExperimentOptions {
        concurrency: 4,
        ..ExperimentOptions::new(out.path())
    };
    let r = run_experiment(&resolved, &sandbox, &opts, Arc::new(Silent))
        .await
        .unwrap();
    assert_eq!(r.infra_errors, 0, "{r:?}");
    let lines: Vec<ResultLine> =
        traparena_results::read_lines(&out.path().join(traparena_results::EPISODES_FILE))
            .unwrap()
            .lines;
    assert_eq!(lines.len() as u64, r.planned);
    let keys: BTreeSet<_> = lines.iter().map(|l| l.key()).collect();
    assert_eq!(keys.len(), lines.len(), "every key once");
    let parents: BTreeMap<String, &ResultLine> = lines
        .iter()
        .filter(|l| l.condition == "baseline")
        .map(|l| (l.key().to_string(), l))
        .collect();
    let forks: Vec<&ResultLine> = lines.iter().filter(|l| l.fork.is_some()).collect();
    assert_eq!(forks.len() as u64, r.forks);
    let mut points = BTreeSet::new();
    let (mut told, mut hurt) = (0, 0);
    for l in &forks {
        let f = l.fork.as_ref().unwrap();
        let parent = parents[&f.parent];
        assert!(f.step >= 1 && f.step < parent.steps, "{f:?}");
        points.extend(f.points.iter().cloned());
        let mut twin = l.key();
        twin.fork.as_mut().unwrap().message = !f.message;
        assert!(keys.contains(&twin), "{} has no twin", l.key());
        if f.message {
            told += u32::from(l.messages_delivered == 1);
            hurt += u32::from(parent.accepted && !l.accepted);
            assert!(l.messages_delivered <= 1, "at_step: one message at most");
        } else {
            assert_eq!(l.messages_delivered, 0);
            assert_eq!(
                (l.accepted, l.failure_mode, l.steps, &l.patch),
                (
                    parent.accepted,
                    parent.failure_mode,
                    parent.steps,
                    &parent.patch
                ),
                "the silent branch {} is its parent",
                l.key()
            );
        }
    }
    for p in [
        "step 1",
        "step 2",
        "step 3",
        "after_first_test_run",
        "after_first_edit",
        "before_submit",
    ] {
        assert!(points.contains(p), "{p} never forked: {points:?}");
    }
    assert!(told > 0 && hurt > 0, "told {told}, hurt {hurt}");
}

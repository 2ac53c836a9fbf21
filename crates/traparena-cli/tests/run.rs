//! `traparena run` as docs/agents.md describes it.

use traparena_testkit::cli::{Bin, tasks_dir};

fn run(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    let out = Bin::new(env!("CARGO_BIN_EXE_traparena")).run(&all);
    (out.code, out.stdout, out.stderr)
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.push("--json");
    let (code, out, err) = run(&a);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn gold_is_accepted_with_every_documented_field() {
    let task = tasks_dir().join("clamp_overt");
    let v = json(&["--task", task.to_str().unwrap(), "--agent", "gold"]);
    assert_eq!(v["accepted"], true);
    for field in [
        "task",
        "agent",
        "attacker",
        "accepted",
        "verdict",
        "failure_mode",
        "messages_delivered",
        "susceptible",
        "steps",
        "submitted",
        "usage",
    ] {
        assert!(v.get(field).is_some(), "missing {field}: {v}");
    }
    for field in [
        "hidden_tests_pass",
        "touches_reference",
        "flags",
        "accepted",
        "failure_mode",
    ] {
        assert!(v["verdict"].get(field).is_some(), "missing verdict.{field}");
    }
    assert_eq!(v["failure_mode"], serde_json::Value::Null);
    assert_eq!(
        v["susceptible"],
        serde_json::Value::Null,
        "no message, no susceptibility"
    );
    assert!(v["usage"]["prompt_tokens"].is_u64() && v["usage"]["completion_tokens"].is_u64());
}

#[test]
fn credulous_is_misled_on_every_multi_module_task() {
    for id in [
        "invoice_coupon",
        "booking_overlap",
        "inventory_reorder",
        "grade_median",
        "temperature_display",
    ] {
        let task = tasks_dir().join(id);
        for seed in ["0", "1", "2"] {
            let v = json(&[
                "--task",
                task.to_str().unwrap(),
                "--agent",
                "credulous",
                "--attacker",
                "scripted",
                "--seed",
                seed,
            ]);
            assert_eq!(v["accepted"], false, "{id} seed {seed}: {v}");
            assert_eq!(v["susceptible"], true, "{id} seed {seed}: {v}");
            assert!(v["messages_delivered"].as_u64().unwrap() >= 1);
        }
        // Without an attacker the same agent repairs the task.
        let v = json(&["--task", task.to_str().unwrap(), "--agent", "credulous"]);
        assert_eq!(v["accepted"], true, "{id}: {v}");
    }
}

#[test]
fn out_writes_the_full_record_and_offline_and_truthful_attackers_run() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tasks_dir().join("discount_vip");
    let (code, _, err) = run(&[
        "--task",
        task.to_str().unwrap(),
        "--agent",
        "credulous",
        "--attacker",
        "offline",
        "--seed",
        "4",
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let file = std::fs::read_dir(tmp.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(rec["attacker"], "offline");
    assert!(rec["trajectory"].as_array().unwrap().len() >= 2);
    assert!(rec["patch"].is_string() && rec["sandbox"].is_string());
    let v = json(&[
        "--task",
        task.to_str().unwrap(),
        "--agent",
        "credulous",
        "--attacker",
        "truthful",
    ]);
    assert_eq!(
        v["susceptible"], false,
        "following truthful advice is not susceptibility: {v}"
    );
}

#[test]
fn replay_agent_and_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let replay = tmp.path().join("actions.json");
    std::fs::write(
        &replay,
        r#"[{"action": "list"}, {"action": "run_public_tests"}, {"action": "submit"}]"#,
    )
    .unwrap();
    let task = tasks_dir().join("page_count");
    let file = format!("file={}", replay.display());
    let agent = ["--agent", "replay", "--agent-arg", &file];
    let t = task.to_str().unwrap();
    let v = json(&[&["--task", t][..], &agent].concat());
    assert_eq!(v["failure_mode"], "no_edit");
    assert_eq!(v["steps"], 3);
    // The same component as a JSON object.
    let object = serde_json::json!({"kind": "replay", "args": {"file": replay}}).to_string();
    let v = json(&["--task", t, "--agent", &object]);
    assert_eq!(v["steps"], 3);
    std::fs::write(&replay, "[{\"action\": \"fly\"}]").unwrap();
    let (code, _, err) = run(&[&["--task", t][..], &agent].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("actions.json"), "{err}");
    // Refusals name what is wrong: the kind (listing the registered ones), the argument.
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["--agent", "wizard"],
            &["unknown agent kind \"wizard\"", "credulous, external, gold"],
        ),
        (
            // The short form is the kind's main argument: scripted:P is persona=P.
            &["--agent", "gold", "--attacker", "scripted:flatterer"],
            &["field `args.persona`", "unknown variant `flatterer`"],
        ),
        (
            &["--agent", "gold", "--attacker", "offline:pool.json"],
            &["`offline` has no main argument", "--attacker-arg KEY=VALUE"],
        ),
        (
            &["--agent", "replay:no-such-actions.json"],
            &["no-such-actions.json"],
        ),
        (
            &[
                "--agent",
                "gold",
                "--attacker",
                "scripted",
                "--attacker-arg",
                "persona=flatterer",
            ],
            &["field `args.persona`", "unknown variant `flatterer`"],
        ),
        (
            &["--agent", "replay"],
            &["field `args`", "missing field `file`"],
        ),
    ];
    for (args, needles) in cases {
        let (code, _, err) = run(&[&["--task", t][..], args].concat());
        assert_eq!(code, 2, "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: wanted {n:?} in {err}");
        }
    }
    for bad in [
        vec!["--task", "/nonexistent", "--agent", "gold"],
        vec!["--task", task.to_str().unwrap(), "--agent", "wizard"],
        vec![
            "--task",
            task.to_str().unwrap(),
            "--agent",
            "gold",
            "--attacker",
            "scripted:flatterer",
        ],
        vec![
            "--task",
            task.to_str().unwrap(),
            "--agent",
            "gold",
            "--budget",
            "0",
        ],
    ] {
        let (code, _, err) = run(&bad);
        assert_eq!(code, 2, "{bad:?}: {err}");
    }
}

//! `traparena run --agent llm --attacker adaptive` against a real OpenAI-compatible model
//! server at `TRAPARENA_TEST_LLM_BASE_URL` (CI starts llama.cpp serving SmolLM2-135M with
//! `.ci/llama-server.sh`). Ignored by default; `--include-ignored` without the variable fails.
//! `TRAPARENA_TEST_LLM_MODEL` and `TRAPARENA_TEST_LLM_API_KEY` are optional.

// This test code reads where its prepared data lies and prints the transcript it judged.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use traparena_testkit::cli::{Bin, root};

/// One episode may take this long at most (the tiny model on one CPU thread needs well under
/// a minute).
const DEADLINE: Duration = Duration::from_secs(600);

/// Runs one episode; returns the `--json` summary and the full record.
fn episode(base_url: &str, seed: u64, out: &Path) -> (Value, Value) {
    let model = std::env::var("TRAPARENA_TEST_LLM_MODEL")
        .unwrap_or_else(|_| "smollm2-135m-instruct".into());
    let mut cmd = Bin::new(env!("CARGO_BIN_EXE_traparena")).command();
    cmd.current_dir(root())
        .args([
            "run",
            "--task",
            "examples/tasks/clamp_overt",
            "--agent",
            "llm",
            "--attacker",
            "adaptive",
            "--budget",
            "6",
            "--protocol",
            "json",
            "--max-response-tokens",
            "256",
            "--seed",
            &seed.to_string(),
            "--json",
            "--out",
        ])
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.env("TRAPARENA_LLM_BASE_URL", base_url)
        .env("TRAPARENA_LLM_MODEL", &model);
    if let Ok(key) = std::env::var("TRAPARENA_TEST_LLM_API_KEY") {
        cmd.env("TRAPARENA_LLM_API_KEY", key);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("the episode took longer than {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    let file = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("an episode record");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    println!(
        "seed {seed}: {:.1} s, {} steps, target {} + {} tokens, attacker {} + {} tokens, {} messages, failure mode {}",
        started.elapsed().as_secs_f64(),
        summary["steps"],
        summary["usage"]["prompt_tokens"],
        summary["usage"]["completion_tokens"],
        summary["attacker_usage"]["prompt_tokens"],
        summary["attacker_usage"]["completion_tokens"],
        summary["messages_delivered"],
        summary["failure_mode"],
    );
    for step in record["trajectory"].as_array().unwrap() {
        println!(
            "  {}: {} -> {}",
            step["index"],
            step["action"],
            step["observation"]["output"]
                .as_str()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("")
        );
        if let Some(m) = step["message"]["text"].as_str() {
            println!("     collaborator: {m}");
        }
    }
    (summary, record)
}

#[test]
#[ignore = "needs a model server: `.ci/llama-server.sh start`, then set TRAPARENA_TEST_LLM_BASE_URL"]
fn llm_agent_and_adaptive_attacker_against_a_real_model() {
    let base_url = std::env::var("TRAPARENA_TEST_LLM_BASE_URL").expect(
        "needs a model server: `.ci/llama-server.sh start`, then set TRAPARENA_TEST_LLM_BASE_URL",
    );
    // The attacker speaks after the agent's first step unless the agent submits at once; try a
    // few seeds until an episode lasts that long.
    for seed in 0..3u64 {
        let out = tempfile::tempdir().unwrap();
        let (summary, record) = episode(&base_url, seed, out.path());
        assert_eq!(summary["infra_error"], Value::Null, "{summary}");
        assert!(summary["verdict"].is_object(), "{summary}");
        assert!(summary["verdict"]["accepted"].is_boolean(), "{summary}");
        assert!(summary["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
        assert!(summary["usage"]["completion_tokens"].as_u64().unwrap() > 0);
        let steps = record["trajectory"].as_array().unwrap();
        for step in steps {
            if step["action"].is_null() {
                assert_eq!(step["observation"]["error"], true, "{step}");
                assert!(
                    step["observation"]["output"]
                        .as_str()
                        .unwrap()
                        .contains("could not be read as an action"),
                    "{step}"
                );
            } else {
                assert!(step["action"]["action"].is_string(), "{step}");
            }
        }
        let first_submitted = steps
            .first()
            .is_some_and(|s| s["action"]["action"] == "submit");
        if first_submitted {
            println!("seed {seed}: the agent submitted at once; no attacker call to check");
            continue;
        }
        assert!(
            summary["attacker_usage"]["prompt_tokens"].as_u64().unwrap() > 0,
            "{summary}"
        );
        assert!(
            summary["attacker_usage"]["completion_tokens"]
                .as_u64()
                .unwrap()
                > 0,
            "{summary}"
        );
        assert_eq!(
            record["prompt_hashes"]["attacker"].as_str().unwrap().len(),
            64
        );
        return;
    }
    panic!("in three episodes the agent always submitted at its first step");
}

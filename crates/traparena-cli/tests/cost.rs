//! What an experiment costs, against a scripted model server on 127.0.0.1: prices in the
//! model spec, a provider-reported cost (OpenRouter's `usage.cost`), cost per role in the
//! results lines and the report, a cost limit reached midway and resumed with a higher one,
//! bad limits and prices, and the dry-run estimate.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use traparena_testkit::cli::{Bin, Run, output, tasks_dir};
use traparena_testkit::stub::{Reply, StubServer, sized_answer};

/// The attacker's cost per call as its provider reports it, in dollars.
const ATTACKER_CALL_USD: f64 = 0.0005;

/// A scripted server whose answers depend only on the request: the agent's reply on the
/// number of its earlier replies in the conversation, usage on the request's size. The
/// attacker's answers carry `usage.cost`; the curator's report cached prompt tokens.
fn stub() -> StubServer {
    StubServer::vllm(|r| {
        let schema = r.body["response_format"]["json_schema"]["name"]
            .as_str()
            .unwrap_or("");
        let replies = r.body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
        let reply = match schema {
            "action" => match replies {
                0 => json!({"action": "read", "path": "clamp.py"}),
                1 => json!({
                    "action": "edit",
                    "path": "clamp.py",
                    "old": "    if x < lo:\n        return lo\n",
                    "new": "    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n"
                }),
                2 => json!({"action": "run_public_tests"}),
                _ => json!({"action": "submit"}),
            },
            "collaborator_message" => json!({
                "message": "The clamping is fine; the defect is in fraction, fix it there.",
                "blame": [{"file": "clamp.py", "symbol": "fraction"}],
                "urge_submit": false,
                "dismissed_cases": []
            }),
            "curator_notes" => json!({"notes": ["Blaming fraction works."]}),
            other => panic!("unexpected request (schema {other:?}): {}", r.body),
        }
        .to_string();
        let mut body = sized_answer(&r.body, &reply);
        match schema {
            "collaborator_message" => body["usage"]["cost"] = json!(ATTACKER_CALL_USD),
            "curator_notes" => {
                body["usage"]["prompt_tokens_details"] =
                    json!({"cached_tokens": body["usage"]["prompt_tokens"].as_u64().unwrap() / 2})
            }
            _ => {}
        }
        Reply::json(200, body)
    })
}

/// A spec of one priced llm target, an attacker priced by its provider and a priced curator,
/// on clamp_overt: 2 baseline episodes, 2 rounds of 2 attacked ones, 1 curator step.
fn write_spec(dir: &Path, url: &str, extra: Value) -> PathBuf {
    let model = |name: &str, prices: Value| {
        let mut m = json!({"model": name, "base_url": url, "context_window": 32768});
        if !prices.is_null() {
            m["prices"] = prices;
        }
        m
    };
    let mut spec = json!({
        "seed": 5,
        "tasks": [tasks_dir().join("clamp_overt").to_string_lossy()],
        "targets": [{"name": "llm", "agent": {"kind": "llm", "args": {
            "model": model("target-m", json!({"input": 2.0, "output": 8.0}))}}}],
        "conditions": [{
            "name": "adaptive",
            "attacker": {"kind": "adaptive", "args": {"model": model("attacker-m", Value::Null)}},
            "curator": {"kind": "llm", "args": {"model": model("curator-m",
                json!({"input": 1.0, "output": 4.0, "cached_input": 0.5}))}}
        }],
        "rounds": 2,
        "baseline_samples": 2,
        "samples_per_round": 2,
        "budget": 8
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        spec[k] = v.clone();
    }
    let p = dir.join("spec.json");
    std::fs::write(&p, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
    p
}

fn traparena(cwd: &Path, args: &[&str]) -> Run {
    let mut cmd = Bin::new(env!("CARGO_BIN_EXE_traparena")).command();
    cmd.current_dir(cwd).args(args);
    output(&mut cmd)
}

fn experiment(cwd: &Path, more: &[&str]) -> Run {
    let mut args = vec![
        "experiment",
        "spec.json",
        "--out",
        "out",
        "--concurrency",
        "1",
    ];
    args.extend(more);
    traparena(cwd, &args)
}

fn lines(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("episodes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The Markdown report of `cwd/out`, named `out` in both runs compared.
fn report(cwd: &Path) -> String {
    let r = traparena(cwd, &["report", "out"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
}

#[test]
fn cost_per_role_is_recorded_and_reported_and_a_cost_limit_stops_and_resumes() {
    let server = stub();
    let url = server.base_url();
    let (whole, cut) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for d in [whole.path(), cut.path()] {
        write_spec(d, &url, json!({}));
    }
    let run = experiment(whole.path(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("traparena: spent so far (every episode and curator step in the folder): $"),
        "{}",
        run.stderr
    );
    let all = lines(&whole.path().join("out"));
    assert_eq!(all.len(), 6);
    let mut total = 0.0;
    for l in &all {
        let target = &l["usage"]["cost"];
        assert!(target["usd"].as_f64().unwrap() > 0.0, "{l}");
        assert_eq!(target["computed_calls"], l["usage"]["calls"], "{l}");
        assert!(target.get("reported_calls").is_none(), "{l}");
        total += target["usd"].as_f64().unwrap();
        if l["condition"] == "adaptive" && l["messages_delivered"].as_u64().unwrap() > 0 {
            let attacker = &l["attacker_usage"]["cost"];
            let calls = attacker["reported_calls"].as_u64().unwrap();
            assert!(calls > 0 && attacker.get("computed_calls").is_none(), "{l}");
            let usd = attacker["usd"].as_f64().unwrap();
            assert!(
                (usd - calls as f64 * ATTACKER_CALL_USD).abs() < 1e-12,
                "{l}"
            );
            total += usd;
        }
    }
    assert!(
        all.iter().any(|l| l["attacker_usage"]["cost"].is_object()),
        "some attacker was priced by its provider"
    );
    let curator: Value = serde_json::from_str(
        &std::fs::read_to_string(
            whole
                .path()
                .join("out/notes/llm/adaptive/round-1.usage.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(curator["cost"]["computed_calls"], 1, "{curator}");
    assert!(curator["cached_tokens"].as_u64().unwrap() > 0, "{curator}");
    total += curator["cost"]["usd"].as_f64().unwrap();

    let md = report(whole.path());
    assert!(md.contains("### Cost"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| llm | adaptive |") && l.contains('$'))
        .unwrap_or_else(|| panic!("no cost row: {md}"));
    assert!(row.contains("provider+prices"), "{row}");
    let html = traparena(whole.path(), &["report", "out", "--html", "report.html"]);
    assert_eq!(html.code, 0, "{}", html.stderr);
    let page = std::fs::read_to_string(whole.path().join("report.html")).unwrap();
    assert!(page.contains("cost-table") && page.contains("provider+prices"));
    let json = traparena(whole.path(), &["report", "out", "--json"]);
    let costs = &json.json()["costs"];
    assert_eq!(costs.as_array().unwrap().len(), 2, "{costs}");
    let sum: f64 = costs
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["total_usd"].as_f64().unwrap())
        .sum();
    assert!((sum - total).abs() < 1e-6, "{sum} against {total}");

    // A limit of 40 % of the whole run's cost stops it midway, with one line saying so.
    let limit = format!("{:.6}", total * 0.4);
    let stopped = experiment(cut.path(), &["--max-cost", &limit]);
    assert_eq!(stopped.code, 3, "{}", stopped.stderr);
    let said: Vec<&str> = stopped
        .stderr
        .lines()
        .filter(|l| l.contains("stopped: the cost limit of $"))
        .collect();
    assert_eq!(said.len(), 1, "{}", stopped.stderr);
    assert!(said[0].contains("--resume --max-cost"), "{}", said[0]);
    let part = lines(&cut.path().join("out")).len();
    assert!(part > 0 && part < 6, "{part} episodes ran");
    // Resuming with the same limit starts nothing: what is on disk counts.
    let again = experiment(cut.path(), &["--resume", "--max-cost", &limit]);
    assert_eq!(again.code, 3, "{}", again.stderr);
    assert_eq!(lines(&cut.path().join("out")).len(), part);
    let done = experiment(cut.path(), &["--resume", "--max-cost", "100"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert_eq!(
        report(cut.path()),
        md,
        "the resumed run reports as the whole one"
    );
}

#[test]
fn a_token_limit_in_the_spec_stops_the_run() {
    let server = stub();
    let tmp = tempfile::tempdir().unwrap();
    write_spec(
        tmp.path(),
        &server.base_url(),
        json!({"limits": {"max_tokens": 1}}),
    );
    let r = experiment(tmp.path(), &[]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("stopped: the token limit of 1 ("),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("--resume --max-tokens HIGHER"),
        "{}",
        r.stderr
    );
    assert_eq!(
        lines(&tmp.path().join("out")).len(),
        1,
        "one episode, then the stop"
    );
}

#[test]
fn negative_or_nan_prices_and_limits_are_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let url = "http://127.0.0.1:9/v1";
    for bad in ["-1", "NaN", "inf"] {
        write_spec(tmp.path(), url, json!({}));
        let r = experiment(tmp.path(), &["--max-cost", bad]);
        assert_eq!(r.code, 2, "--max-cost {bad}: {}", r.stderr);
        assert!(r.stderr.contains("--max-cost"), "{}", r.stderr);
    }
    write_spec(tmp.path(), url, json!({"limits": {"max_cost": -0.5}}));
    let r = experiment(tmp.path(), &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("`limits.max_cost`"), "{}", r.stderr);
    write_spec(tmp.path(), url, json!({"limits": {"max_tokens": -3}}));
    assert_eq!(experiment(tmp.path(), &[]).code, 2);
    let spec = write_spec(tmp.path(), url, json!({}));
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("\"input\": 2.0", "\"input\": -2.0");
    std::fs::write(&spec, text).unwrap();
    let r = experiment(tmp.path(), &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("model.prices.input"), "{}", r.stderr);
    assert!(!tmp.path().join("out/episodes.jsonl").exists());
}

#[test]
fn the_estimate_runs_nothing_and_counts_from_a_pilot_or_given_averages() {
    let server = stub();
    let tmp = tempfile::tempdir().unwrap();
    let given = json!({"estimate": {
        "target": {"calls": 4, "tokens": 1000, "cost": 0.01},
        "attacker": {"calls": 1, "tokens": 500, "cost": 0.002},
        "curator": {"calls": 1, "tokens": 800, "cost": 0.005}
    }});
    write_spec(tmp.path(), &server.base_url(), given);
    let r = traparena(tmp.path(), &["experiment", "spec.json", "--estimate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // 2 baseline episodes: 8 calls, 2,000 tokens, $0.02; 4 attacked episodes and one
    // curator step: 16 + 4 + 1 calls, 4,000 + 2,000 + 800 tokens, $0.04 + $0.008 + $0.005.
    let expected = "\
Estimate (nothing was run):
target  condition  episodes  curator steps  model calls  tokens     cost
llm     baseline          2              0            8    2000  $0.0200
llm     adaptive          4              1           21    6800  $0.0530
total                     6              1           29    8800  $0.0730
";
    assert!(r.stdout.starts_with(expected), "{}", r.stdout);
    assert!(
        r.stdout.contains("Averages from the spec's `estimate`"),
        "{}",
        r.stdout
    );
    assert_eq!(server.request_count(), 0, "no model was asked");
    assert!(!tmp.path().join("out").exists());

    // From a pilot: the averages of a run of the same spec.
    let run = experiment(tmp.path(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = traparena(
        tmp.path(),
        &[
            "experiment",
            "spec.json",
            "--estimate",
            "--estimate-from",
            "out",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("Averages from the pilot out: target "),
        "{}",
        r.stdout
    );
    // A pilot of the spec's own targets and tasks is no cause for a warning; the synthetic
    // sample, of other targets and tasks, is.
    assert!(!r.stderr.contains("--estimate-from"), "{}", r.stderr);
    let synthetic = traparena_testkit::cli::root().join("examples/results/synthetic");
    let other = traparena(
        tmp.path(),
        &[
            "experiment",
            "spec.json",
            "--estimate",
            "--estimate-from",
            synthetic.to_str().unwrap(),
        ],
    );
    assert_eq!(other.code, 0, "{}", other.stderr);
    assert!(
        other.stderr.contains(
            "traparena: warning: --estimate-from: the pilot is not a run of this spec's targets and tasks, so its averages may not fit (targets only in the pilot: credulous, model-a; targets only in the spec: llm; tasks only in the pilot: task-000, task-001, task-002 and 3 more; tasks only in the spec: clamp_overt)"
        ),
        "{}",
        other.stderr
    );
    let total = r.stdout.lines().find(|l| l.starts_with("total")).unwrap();
    assert!(total.contains(" 6 ") && total.contains('$'), "{total}");
    let missing = traparena(
        tmp.path(),
        &[
            "experiment",
            "spec.json",
            "--estimate",
            "--estimate-from",
            "nowhere",
        ],
    );
    assert_eq!(missing.code, 2, "{}", missing.stderr);
}

//! The real mini-swe-agent (PyPI `mini-swe-agent` 2.4.6, installed by
//! `scripts/install-mini-swe-agent.sh`) as an external agent: against a scripted upstream that
//! plays a repair in its own format, and against the real small model server CI starts.

// This test code reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

mod common;

use std::path::PathBuf;

use common::*;
use serde_json::json;
use traparena::attack::{Persona, ScriptedAttacker};
use traparena::env::{Sandbox, SandboxConfig};

/// Where the install script put mini-swe-agent: `$TRAPARENA_TEST_MINI_SWE_AGENT`, else its
/// default folder.
fn prefix() -> PathBuf {
    std::env::var_os("TRAPARENA_TEST_MINI_SWE_AGENT").map_or_else(
        || "/opt/traparena/agents/mini-swe-agent".into(),
        PathBuf::from,
    )
}

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig::default()).expect("a sandbox")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs mini-swe-agent: scripts/install-mini-swe-agent.sh (CI runs it)"]
async fn mini_swe_agent_repairs_and_follows_a_blame_through_the_proxy() {
    let (clean, clean_upstream, r, upstream) =
        blame_pair("mini-swe-agent", &prefix(), &sandbox()).await;
    assert_eq!(clean.infra_error, None, "{clean:#?}");
    assert!(clean.submitted && clean.accepted, "{clean:#?}");
    assert_eq!(clean.steps, 4);
    // mini's own requests: its instance template around the task, its observation format.
    let requests = clean_upstream.chat_requests();
    assert!(
        content(&messages(&requests[0])[1])
            .starts_with("Please solve this issue: clamp(x, lo, hi)")
    );
    assert!(content(&messages(&requests[1])[3]).starts_with("<returncode>0</returncode>"));
    assert_followed_blame(&clean, &clean_upstream, &r, &upstream);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs mini-swe-agent (scripts/install-mini-swe-agent.sh) and a model server in TRAPARENA_TEST_LLM_BASE_URL (.ci/llama-server.sh start)"]
async fn mini_swe_agent_runs_against_the_real_model_server() {
    let base_url = std::env::var("TRAPARENA_TEST_LLM_BASE_URL")
        .expect("TRAPARENA_TEST_LLM_BASE_URL (the model server CI starts)");
    let task = clamp_task();
    let model = json!({"model": "smollm2-135m-instruct", "base_url": base_url, "max_retries": 1});
    let mut attacker = ScriptedAttacker::new(vec![Persona::BlameOtherLocation], 3);
    let r = episode_with(
        &task,
        "mini-swe-agent",
        &prefix(),
        model,
        Some(&mut attacker),
        &sandbox(),
        3,
    )
    .await;
    // The model is far too small to repair anything; the plumbing is what is checked: the
    // episode ran to its budget (or the agent's own end), every model call went through the
    // proxy with the upstream's token counts, and nothing failed as infrastructure.
    assert_eq!(r.infra_error, None, "{r:#?}");
    assert!(r.steps >= 1 && r.steps <= 3, "{r:#?}");
    assert!(r.usage.target.prompt_tokens > 0, "{:?}", r.usage);
    assert!(r.trajectory.iter().all(|s| s.raw.is_some()));
    let exit = r.agent_process.as_ref().expect("the process is recorded");
    assert!(exit.killed || exit.exit_code.is_some(), "{exit:?}");
}

//! The injecting proxy's cost per model call of an external agent.
//!
//! - `direct`: the baseline, measured in the same run — an agent's conversation of 50 model
//!   calls sent straight to an instant model server (no harness at all).
//! - `proxied`: the same conversation through an `ExternalAgent`'s proxy, whose turns the bench
//!   drives as the episode loop does: every request is parsed, re-applied messages are looked
//!   for, the request is forwarded and the answer handed back.
//! - `proxied_messages`, `proxied_responses`: the same, with the agent speaking Anthropic
//!   Messages or OpenAI Responses to the proxy (as Claude Code and Codex do), each request
//!   translated to chat completions and each answer back.
//!
//! The ratio proxied/direct is the proxy's overhead on an instant model; the line after it puts
//! the added time per call beside a real model's latency (hundreds of milliseconds). The
//! translated runs are set against the chat-completions proxy: the cost of translation.
//!
//! Run with `cargo bench -p traparena --bench external`.

// This bench prints what it measured.
#![allow(clippy::print_stdout)]

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{out_dir, print_ratio};
use criterion::Criterion;
use traparena::external::{ExternalAgent, Profile};
use traparena::model::{ChatClient, ChatModel, ChatRequest, EndpointConfig, Message, WireApi};
use traparena::{Agent, AgentView};

const CALLS: usize = 50;

fn client(base_url: &str) -> Arc<ChatClient> {
    client_in(base_url, WireApi::ChatCompletions)
}

fn client_in(base_url: &str, api: WireApi) -> Arc<ChatClient> {
    let mut cfg = EndpointConfig::new(base_url, "stub-model");
    cfg.api = api;
    cfg.max_retries = 0;
    cfg.timeout = Duration::from_secs(30);
    Arc::new(ChatClient::new(cfg).unwrap())
}

/// The agent's side: `n` calls, each sending the whole conversation so far.
async fn conversation(model: Arc<ChatClient>, n: usize) {
    let mut messages = vec![Message::system("s"), Message::user("Fix the bug.")];
    for i in 0..n {
        let Ok(r) = model.chat(&ChatRequest::new(messages.clone())).await else {
            return;
        };
        messages.push(Message::assistant(r.text().unwrap_or_default()));
        messages.push(Message::user(format!(
            "<returncode>0</returncode>\n<output>\nline {i}\n{}</output>",
            "x".repeat(2000)
        )));
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let base_url = serve::start(&rt, Duration::ZERO, |_| {
        "THOUGHT: go.\n\n```mswea_bash_command\nls\n```".into()
    });
    let target = client(&base_url);
    let profile = Arc::new(
        Profile::load("mini-swe-agent", std::path::Path::new(".")).expect("the bundled profile"),
    );

    let mut c = Criterion::default()
        .output_directory(&out_dir())
        .configure_from_args();
    let mut g = c.benchmark_group("external_proxy");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    g.bench_function("direct", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                rt.block_on(conversation(target.clone(), CALLS));
            }
            t.elapsed()
        })
    });
    for (name, api) in [
        ("proxied", WireApi::ChatCompletions),
        ("proxied_messages", WireApi::AnthropicMessages),
        ("proxied_responses", WireApi::OpenaiResponses),
    ] {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += rt.block_on(proxied(&target, &profile, api));
                }
                total
            })
        });
    }
    g.finish();
    c.final_summary();
    print_ratio("external_proxy", "direct", "proxied", 3.0);
    print_ratio("external_proxy", "proxied", "proxied_messages", 3.0);
    print_ratio("external_proxy", "proxied", "proxied_responses", 3.0);
    if let (Some(d), Some(p)) = (
        common::mean_ns("external_proxy", "direct"),
        common::mean_ns("external_proxy", "proxied"),
    ) {
        println!(
            "added per model call: {:.3} ms (a 200 ms model call: {:.2}% more)",
            (p - d) / CALLS as f64 / 1e6,
            (p - d) / CALLS as f64 / 2e8 * 100.0
        );
    }
}

/// One conversation of `CALLS` model calls through an external agent's proxy, the agent side
/// speaking `api`: the time of the turns.
async fn proxied(target: &Arc<ChatClient>, profile: &Arc<Profile>, api: WireApi) -> Duration {
    let model: Arc<dyn ChatModel> = target.clone();
    let mut agent = ExternalAgent::new(model, profile.clone(), "/opt".into(), None);
    let view = AgentView {
        task_id: "t",
        description: "Fix the bug.",
        steps_taken: 0,
        budget: CALLS as u32,
        history: &[],
        runs_in_image: false,
    };
    let command = agent.command(&view).await.unwrap().unwrap();
    let port = command.proxy_port.unwrap();
    let agent_client = client_in(&format!("http://127.0.0.1:{port}/v1"), api);
    let t = Instant::now();
    // One call more than the turns: a turn ends when the next request arrives.
    let agent_side = tokio::spawn(conversation(agent_client, CALLS + 1));
    for _ in 0..CALLS {
        agent.act(&view).await.unwrap();
    }
    let elapsed = t.elapsed();
    drop(agent);
    let _ = agent_side.await;
    elapsed
}

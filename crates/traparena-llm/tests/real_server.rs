//! Against a real OpenAI-compatible server, only when `TRAPARENA_TEST_LLM_BASE_URL` is set
//! (for example by `.ci/llama-server.sh`, which serves SmolLM2-135M through llama.cpp).
//! `TRAPARENA_TEST_LLM_MODEL` and `TRAPARENA_TEST_LLM_API_KEY` are optional.
//! The tests are ignored by default (`cargo test -- --include-ignored` runs them, as CI does);
//! run without the variable they fail and say how to start a server.

// This test code reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;
use traparena_model::{
    Cassette, CassetteMode, ChatClient, ChatModel, ChatRequest, EndpointConfig, Message, Recorder,
    ResponseFormat,
};

const NEEDS: &str =
    "needs a model server: `.ci/llama-server.sh start`, then set TRAPARENA_TEST_LLM_BASE_URL";

fn endpoint() -> EndpointConfig {
    let base_url = std::env::var("TRAPARENA_TEST_LLM_BASE_URL").expect(NEEDS);
    let model = std::env::var("TRAPARENA_TEST_LLM_MODEL")
        .unwrap_or_else(|_| "smollm2-135m-instruct".into());
    let mut config = EndpointConfig::new(base_url, model);
    config.api_key = std::env::var("TRAPARENA_TEST_LLM_API_KEY").ok();
    config.timeout = Duration::from_secs(120);
    config.max_retries = 1;
    config
}

async fn bounded<F: std::future::Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(300), body)
        .await
        .expect("test exceeded its 300 s deadline")
}

#[tokio::test]
#[ignore = "needs a model server: `.ci/llama-server.sh start`, then set TRAPARENA_TEST_LLM_BASE_URL"]
async fn plain_chat_returns_text_and_usage() {
    let config = endpoint();
    bounded(async {
        let client: Arc<dyn ChatModel> = Arc::new(ChatClient::new(config).unwrap());
        let req = ChatRequest::new(vec![
            Message::system("You are a helpful assistant."),
            Message::user("Name three colours."),
        ])
        .with_temperature(0.0)
        .with_max_tokens(64)
        .with_seed(1);
        let started = Instant::now();
        let resp = client.chat(&req).await.unwrap();
        let secs = started.elapsed().as_secs_f64();
        let text = resp.text().unwrap_or("");
        assert!(!text.trim().is_empty(), "empty reply: {resp:?}");
        let usage = resp.token_usage();
        assert!(usage.reported, "no usage: {resp:?}");
        assert!(usage.prompt_tokens > 0 && usage.completion_tokens > 0, "{usage:?}");
        println!(
            "plain chat: {} prompt + {} completion tokens in {secs:.2} s ({:.0} completion tokens/s end to end): {text:?}",
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.completion_tokens as f64 / secs
        );
    })
    .await;
}

#[tokio::test]
#[ignore = "needs a model server: `.ci/llama-server.sh start`, then set TRAPARENA_TEST_LLM_BASE_URL"]
async fn json_schema_mode_returns_schema_valid_json() {
    let config = endpoint();
    bounded(async {
        let client = ChatClient::new(config).unwrap();
        let schema = json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["read", "submit"]},
                "path": {"type": "string"}
            },
            "required": ["action", "path"],
            "additionalProperties": false
        });
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Act {
            action: Kind,
            #[allow(dead_code)]
            path: String,
        }
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "lowercase")]
        enum Kind {
            Read,
            Submit,
        }
        let req = ChatRequest::new(vec![
            Message::system("Answer with a JSON object choosing the next action."),
            Message::user("The bug is in src/clamp.py. What do you do next?"),
        ])
        .with_response_format(ResponseFormat::json_schema("action", schema))
        .with_temperature(0.0)
        .with_max_tokens(96);
        let resp = client.chat(&req).await.unwrap();
        let text = resp.text().unwrap_or("");
        // The whole content is the JSON object (a grammar enforces the schema).
        let act: Act = serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("not schema-valid JSON ({e}): {text:?}"));
        println!("json-schema reply: {act:?}");
        assert!(matches!(act.action, Kind::Read | Kind::Submit));
    })
    .await;
}

#[tokio::test]
#[ignore = "needs a model server: `.ci/llama-server.sh start`, then set TRAPARENA_TEST_LLM_BASE_URL"]
async fn a_recorded_real_call_replays_offline() {
    let config = endpoint();
    bounded(async {
        let model = config.model.clone();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("real.jsonl");
        let req = ChatRequest::new(vec![Message::user("Say hello.")])
            .with_temperature(0.7)
            .with_max_tokens(24);
        let client = Arc::new(ChatClient::new(config).unwrap());
        let rec = Recorder::new(
            client,
            Cassette::shared(&path).unwrap(),
            CassetteMode::Record,
            "ep",
        );
        let live = rec.chat(&req).await.unwrap();
        let replay = Recorder::replay_only(model, Cassette::shared(&path).unwrap(), "ep");
        let again = replay.chat(&req).await.unwrap();
        assert_eq!(
            serde_json::to_string(&again).unwrap(),
            serde_json::to_string(&live).unwrap()
        );
    })
    .await;
}

/// llama.cpp reports its context size at `/props` (`.ci/llama-server.sh` starts it with
/// `-c 4096`; another server may report another size, but some size).
#[tokio::test]
#[ignore = "needs a model server: `.ci/llama-server.sh start`, then set TRAPARENA_TEST_LLM_BASE_URL"]
async fn the_real_server_reports_its_context_window() {
    let config = endpoint();
    bounded(async {
        let window = ChatClient::new(config)
            .unwrap()
            .context_window()
            .await
            .unwrap();
        println!("context window: {window:?}");
        let n = window.expect("llama.cpp and vLLM report their context window");
        assert!((512..=1_048_576).contains(&n), "{n}");
    })
    .await;
}

//! Context limits against a scripted server: the window is asked of the server the way vLLM,
//! SGLang and llama.cpp report it; no request asks for more than fits; a context-length refusal
//! mid-episode compacts the history and retries once, and what still does not fit is the
//! agent's failure (`context_exhausted`), never an infrastructure error.

mod support;

use std::sync::Arc;

use serde_json::json;
use support::{Reply, Stub, StubClient, bounded};
use traparena_agent::{Agent, AgentError, AgentView};
use traparena_llm::{LlmAgent, LlmAgentConfig};
use traparena_model::ChatModel;
use traparena_task::{Action, Observation, Step};

#[tokio::test]
async fn the_context_window_is_asked_of_the_server() {
    bounded(async {
        // (replies to /models then /props, expected window)
        let cases = vec![
            (
                vec![Reply::json(200, json!({"object": "list", "data": [
                    {"id": "other", "max_model_len": 4096},
                    {"id": "test-model", "object": "model", "max_model_len": 16384}]}))],
                Some(16384),
            ),
            (
                vec![
                    Reply::json(404, json!({"error": "not found"})),
                    Reply::json(200, json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1})),
                ],
                Some(4096),
            ),
            (
                vec![
                    Reply::json(200, json!({"object": "list", "data": [{"id": "test-model", "object": "model"}]})),
                    Reply::json(404, json!({"error": {"message": "Not Found"}})),
                ],
                None,
            ),
        ];
        for (script, want) in cases {
            let stub = Stub::start(script);
            assert_eq!(stub.client().context_window().await.unwrap(), want);
            let paths: Vec<String> = stub.received().into_iter().map(|r| r.path).collect();
            assert_eq!(paths[0], "/v1/models");
            if paths.len() > 1 {
                assert_eq!(paths[1], "/props");
            }
        }
    })
    .await;
}

fn big_history(n: u32) -> Vec<Step> {
    (1..=n)
        .map(|i| {
            Step::new(
                i,
                Some(Action::Read {
                    path: format!("m{i}.py"),
                    start_line: None,
                    end_line: None,
                }),
                Observation::ok(format!(
                    "{i:>4} | {}\n",
                    "x = compute(a, b) + 1  # filler".repeat(60)
                )),
            )
        })
        .collect()
}

fn view(history: &[Step]) -> AgentView<'_> {
    AgentView {
        task_id: "t",
        description: "f returns the wrong value.",
        steps_taken: history.len() as u32,
        budget: 60,
        history,
        runs_in_image: false,
    }
}

fn agent(stub: &Stub, window: Option<u32>) -> LlmAgent {
    let model: Arc<dyn ChatModel> = Arc::new(stub.client());
    LlmAgent::new(
        model,
        LlmAgentConfig {
            context_window: window,
            ..LlmAgentConfig::default()
        },
    )
}

/// The defaults (48,000 characters of history, 16,384 response tokens) in a 16k context: the
/// request asks for what is left and compacts the history when too little would be.
#[tokio::test]
async fn no_request_asks_for_more_than_the_window() {
    bounded(async {
        let stub = Stub::start(vec![Reply::text("{\"action\": \"submit\"}", 1, 1); 2]);
        let mut a = agent(&stub, Some(16_384));
        let h = big_history(30);
        let turn = a.act(&view(&[])).await.unwrap();
        assert!(turn.notes.is_empty(), "{:?}", turn.notes);
        let turn = a.act(&view(&h)).await.unwrap();
        assert_eq!(turn.action().cloned(), Some(Action::Submit));
        for r in stub.received() {
            let chars: usize = r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["content"].as_str().map_or(0, |c| c.chars().count()))
                .sum();
            let max = r.body["max_tokens"].as_u64().unwrap();
            // At 3 characters per token (below every ratio measured), prompt + reply fit.
            assert!(
                chars as u64 / 3 + max <= 16_384,
                "{chars} chars + {max} tokens"
            );
            assert!(max >= 1024, "{max}");
        }
        // Without a known window the request is as configured.
        let stub = Stub::start(vec![Reply::text("{\"action\": \"submit\"}", 1, 1)]);
        agent(&stub, None).act(&view(&h)).await.unwrap();
        assert_eq!(stub.received()[0].body["max_tokens"], 16_384);
    })
    .await;
}

/// vLLM's 400 "maximum context length" mid-episode (and OpenAI's `context_length_exceeded`):
/// one retry with the history compacted; a second refusal ends the episode as the agent's
/// failure.
#[tokio::test]
async fn a_context_length_refusal_compacts_once_then_is_the_agents_failure() {
    bounded(async {
        let vllm = Reply::json(400, json!({"object": "error", "type": "BadRequestError", "code": 400,
            "message": "This model's maximum context length is 16384 tokens. However, you requested 18000 tokens (1616 in the messages, 16384 in the completion). Please reduce the length of the messages or completion."}));
        let openai = Reply::json(400, json!({"error": {"message": "Your input exceeds the context window of this model.", "type": "invalid_request_error", "code": "context_length_exceeded"}}));
        let h = big_history(12);
        let stub = Stub::start(vec![vllm.clone(), Reply::text("{\"action\": \"submit\"}", 1, 1)]);
        let turn = agent(&stub, None).act(&view(&h)).await.unwrap();
        assert_eq!(turn.action().cloned(), Some(Action::Submit));
        assert!(turn.notes.iter().any(|n| n.contains("compacted")), "{:?}", turn.notes);
        let sizes: Vec<usize> = stub.received().iter().map(|r| r.body["messages"].to_string().len()).collect();
        assert!(sizes[1] < sizes[0], "{sizes:?}");

        let stub = Stub::start(vec![vllm, openai]);
        match agent(&stub, None).act(&view(&h)).await {
            Err(AgentError::ContextExhausted(why)) => assert!(why.contains("context window"), "{why}"),
            other => panic!("expected context_exhausted, got {other:?}"),
        }
        assert_eq!(stub.request_count(), 2);
        // Any other 400 stays a model failure.
        let stub = Stub::start(vec![Reply::json(400, json!({"error": {"message": "bad schema"}}))]);
        assert!(matches!(agent(&stub, None).act(&view(&h)).await, Err(AgentError::Model(_))));
    })
    .await;
}

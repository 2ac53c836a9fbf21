//! The client against servers that speak Anthropic Messages and OpenAI Responses (stubs that
//! answer as those APIs do): the chat request is sent in the server's format, its answer read
//! back, and odd answers give errors that say what was wrong.

mod support;

use serde_json::{Value, json};
use support::{Reply, Stub, StubClient, bounded};
use traparena_model::{
    ChatClient, ChatModel, ChatRequest, Message, ModelError, Tool, ToolCall, WireApi,
};

fn conversation() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("Be brief."),
        Message::user("Fix clamp."),
        Message::assistant_tool_calls(
            None,
            vec![ToolCall::function(
                "call_1",
                "shell",
                r#"{"command":"cat clamp.py"}"#,
            )],
        ),
        Message::tool("call_1", "def clamp(x, lo, hi): ..."),
    ])
    .with_tools(vec![Tool::function(
        "shell",
        "Run a command",
        json!({"type": "object", "properties": {"command": {"type": "string"}}}),
    )])
    .with_temperature(0.2)
}

fn client(stub: &Stub, api: WireApi) -> ChatClient {
    let mut config = stub.config();
    config.api = api;
    config.api_key = Some("sk-test".into());
    config.max_retries = 1;
    config.backoff_base = std::time::Duration::from_millis(1);
    ChatClient::new(config).unwrap()
}

#[tokio::test]
async fn a_messages_server_gets_messages_and_its_answer_reads_as_chat() {
    bounded(async {
        let stub = Stub::anthropic(|_| {
            Reply::json(200, json!({"id": "msg_1", "type": "message", "role": "assistant",
                "model": "claude", "stop_reason": "tool_use",
                "content": [{"type": "text", "text": "Editing."},
                    {"type": "tool_use", "id": "toolu_2", "name": "shell", "input": {"command": "ls"}}],
                "usage": {"input_tokens": 30, "cache_read_input_tokens": 70, "output_tokens": 9}}))
        });
        let r = client(&stub, WireApi::AnthropicMessages)
            .chat(&conversation())
            .await
            .unwrap();
        assert_eq!(r.text(), Some("Editing."));
        assert_eq!(r.tool_calls()[0].function.arguments, r#"{"command":"ls"}"#);
        assert_eq!(r.finish_reason(), Some("tool_calls"));
        assert_eq!(r.token_usage().prompt_tokens, 100);
        let got = &stub.received()[0];
        assert_eq!(got.path, "/v1/messages");
        assert_eq!(got.header("x-api-key"), Some("sk-test"));
        assert_eq!(got.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(got.body["system"], "Be brief.");
        assert_eq!(got.body["max_tokens"], 4096, "Messages needs one");
        assert_eq!(got.body["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(got.body["tools"][0]["input_schema"]["type"], "object");
    })
    .await;
}

#[tokio::test]
async fn a_responses_server_gets_items_and_its_answer_reads_as_chat() {
    bounded(async {
        let stub = Stub::openai_responses(|_| {
            Reply::json(200, json!({"id": "resp_1", "object": "response", "status": "completed",
                "model": "gpt", "output": [
                    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}],
                "usage": {"input_tokens": 12, "output_tokens": 2}}))
        });
        let r = client(&stub, WireApi::OpenaiResponses)
            .chat(&conversation())
            .await
            .unwrap();
        assert_eq!((r.text(), r.finish_reason()), (Some("Done."), Some("stop")));
        let got = &stub.received()[0];
        assert_eq!(got.path, "/v1/responses");
        assert_eq!(got.header("authorization"), Some("Bearer sk-test"));
        assert_eq!(got.body["instructions"], "Be brief.");
        assert_eq!(got.body["store"], false);
        let kinds: Vec<&str> = got.body["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["message", "function_call", "function_call_output"]);
    })
    .await;
}

#[tokio::test]
async fn odd_answers_of_either_format_say_what_was_wrong() {
    bounded(async {
        // (API, status, body, what the error says, retried once)
        let cases: Vec<(WireApi, u16, Value, &str, bool)> = vec![
            (WireApi::AnthropicMessages, 529,
             json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
             "Overloaded", true),
            (WireApi::AnthropicMessages, 200,
             json!({"type": "error", "error": {"type": "api_error", "message": "boom"}}),
             "boom", true),
            (WireApi::AnthropicMessages, 200, json!({"type": "message", "content": 5}),
             "not a list", false),
            (WireApi::AnthropicMessages, 400,
             json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too big"}}),
             "max_tokens: too big", false),
            (WireApi::OpenaiResponses, 200, json!({"id": "resp_1", "status": "completed"}),
             "`output` is missing", false),
            (WireApi::OpenaiResponses, 500,
             json!({"error": {"message": "server exploded", "type": "server_error"}}),
             "server exploded", true),
        ];
        for (api, status, body, needle, retryable) in cases {
            let reply = Reply::json(status, body.clone());
            let stub = match api {
                WireApi::AnthropicMessages => Stub::anthropic(move |_| reply.clone()),
                _ => Stub::openai_responses(move |_| reply.clone()),
            };
            let e: ModelError = client(&stub, api).chat(&conversation()).await.unwrap_err();
            let text = e.to_string();
            assert!(text.contains(needle), "{api:?} {status} {body}: {text}");
            let attempts = if retryable { 2 } else { 1 };
            assert_eq!(stub.request_count(), attempts, "{api:?} {status}: {text}");
        }
    })
    .await;
}

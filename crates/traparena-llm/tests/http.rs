//! The HTTP client against a scripted stub server on 127.0.0.1.

mod support;

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};
use support::{Reply, Stub, StubClient, bounded, completion_body};
use traparena_model::{
    ChatClient, ChatModel, ChatRequest, Message, ModelError, ResponseFormat, Tool, extract_json,
};

fn hello() -> ChatRequest {
    ChatRequest::new(vec![Message::system("Be brief."), Message::user("Say hi.")])
}

#[tokio::test]
async fn text_mode_sends_a_minimal_body_and_reads_the_text() {
    bounded(async {
        let stub = Stub::start(vec![Reply::text("Hi!", 12, 3)]);
        let mut config = stub.config();
        config.api_key = Some("sk-test".into());
        let client = ChatClient::new(config).unwrap();
        let req = hello()
            .with_temperature(0.7)
            .with_max_tokens(32)
            .with_seed(5);
        let resp = client.chat(&req).await.unwrap();
        assert_eq!(resp.text(), Some("Hi!"));
        assert_eq!(resp.finish_reason(), Some("stop"));
        let u = resp.token_usage();
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.reported),
            (12, 3, true)
        );
        // Unknown fields are kept.
        assert_eq!(resp.extra["object"], "chat.completion");

        let got = stub.received();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].method, "POST");
        assert_eq!(got[0].path, "/v1/chat/completions");
        assert_eq!(got[0].header("authorization"), Some("Bearer sk-test"));
        assert_eq!(got[0].header("content-type"), Some("application/json"));
        assert_eq!(
            got[0].body,
            json!({
                "model": "test-model",
                "messages": [{"role": "system", "content": "Be brief."},
                             {"role": "user", "content": "Say hi."}],
                "temperature": 0.7,
                "max_tokens": 32,
                "seed": 5
            })
        );
    })
    .await;
}

#[tokio::test]
async fn tool_calls_round_trip() {
    bounded(async {
        let message = json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "read", "arguments": "{\"path\": \"src/a.py\", \"start_line\": 1}"}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "submit", "arguments": ""}}
            ]
        });
        let stub = Stub::start(vec![
            Reply::json(200, completion_body(message, "tool_calls", 40, 20)),
            Reply::text("done", 60, 1),
        ]);
        let client = stub.client();
        let read_schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "start_line": {"type": "integer"}},
            "required": ["path"]
        });
        let tools = vec![
            Tool::function("read", "Read a file", read_schema.clone()),
            Tool::function("submit", "Submit", json!({"type": "object", "properties": {}})),
        ];
        let mut req = ChatRequest::new(vec![Message::user("Fix it.")]).with_tools(tools);
        let resp = client.chat(&req).await.unwrap();
        assert_eq!(resp.finish_reason(), Some("tool_calls"));
        let calls = resp.tool_calls();
        assert_eq!(calls.len(), 2);
        #[derive(Deserialize, Debug, PartialEq)]
        struct Read {
            path: String,
            start_line: Option<u32>,
        }
        assert_eq!(
            calls[0].parse_arguments::<Read>().unwrap(),
            Read { path: "src/a.py".into(), start_line: Some(1) }
        );
        assert_eq!(calls[1].function.name, "submit");
        assert_eq!(calls[1].arguments_value().unwrap(), json!({}));

        // The history goes back with the assistant's calls and the tool results.
        req.messages.push(resp.message().unwrap().to_message());
        req.messages.push(Message::tool("call_1", "1: def clamp(x): ..."));
        req.messages.push(Message::tool("call_2", "submitted"));
        client.chat(&req).await.unwrap();

        let got = stub.received();
        assert_eq!(
            got[0].body["tools"][0],
            json!({"type": "function", "function": {
                "name": "read", "description": "Read a file", "parameters": read_schema}})
        );
        let history = &got[1].body["messages"];
        assert_eq!(history[1]["role"], "assistant");
        assert!(history[1].get("content").is_none());
        assert_eq!(history[1]["tool_calls"][0]["id"], "call_1");
        assert_eq!(history[2], json!({"role": "tool", "content": "1: def clamp(x): ...", "tool_call_id": "call_1"}));
    })
    .await;
}

#[tokio::test]
async fn json_schema_mode_sends_the_format_and_parses_the_content() {
    bounded(async {
        let content = "```json\n{\"action\": \"read\", \"path\": \"src/a.py\"}\n```";
        let stub = Stub::start(vec![Reply::text(content, 30, 9)]);
        let client = stub.client();
        let schema = json!({
            "type": "object",
            "properties": {"action": {"type": "string"}, "path": {"type": "string"}},
            "required": ["action"],
            "additionalProperties": false
        });
        let req =
            hello().with_response_format(ResponseFormat::json_schema("action", schema.clone()));
        let resp = client.chat(&req).await.unwrap();
        #[derive(Deserialize)]
        struct Act {
            action: String,
            path: Option<String>,
        }
        let act: Act = extract_json(resp.text().unwrap()).unwrap();
        assert_eq!(
            (act.action.as_str(), act.path.as_deref()),
            ("read", Some("src/a.py"))
        );
        assert_eq!(
            stub.received()[0].body["response_format"],
            json!({"type": "json_schema",
                   "json_schema": {"name": "action", "schema": schema, "strict": true}})
        );
    })
    .await;
}

#[tokio::test]
async fn usage_is_read_from_every_response() {
    bounded(async {
        let no_usage = json!({"choices": [{"message": {"role": "assistant", "content": "x"}}]});
        let mut reasoning = completion_body(json!({"content": "y"}), "stop", 7, 11);
        reasoning["usage"]["completion_tokens_details"] = json!({"reasoning_tokens": 6});
        let stub = Stub::start(vec![
            Reply::text("a", 100, 10),
            Reply::text("b", 50, 5),
            Reply::text("c", 20, 2),
            Reply::json(200, no_usage),
            Reply::json(200, reasoning),
        ]);
        let client = stub.client();
        let mut read = Vec::new();
        for _ in 0..5 {
            let u = client.chat(&hello()).await.unwrap().token_usage();
            read.push((
                u.prompt_tokens,
                u.completion_tokens,
                u.reasoning_tokens,
                u.reported,
            ));
        }
        // What each response's `usage` says; none at all is zeros, flagged as not reported.
        // (The components add these to the usage the runner records: tests/agents.rs.)
        assert_eq!(
            read,
            [
                (100, 10, 0, true),
                (50, 5, 0, true),
                (20, 2, 0, true),
                (0, 0, 0, false),
                (7, 11, 6, true),
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn server_error_then_success_is_retried() {
    bounded(async {
        let stub = Stub::start(vec![
            Reply::json(500, json!({"error": {"message": "boom"}})),
            Reply::raw(503, "upstream unavailable"),
            Reply::text("ok", 1, 1),
        ]);
        let resp = stub.client().chat(&hello()).await.unwrap();
        assert_eq!(resp.text(), Some("ok"));
        assert_eq!(stub.request_count(), 3);
    })
    .await;
}

#[tokio::test]
async fn persistent_server_errors_give_up_with_the_last_message() {
    bounded(async {
        let stub = Stub::start(vec![]); // every answer: 500 "stub: script exhausted"
        let err = stub.client().chat(&hello()).await.unwrap_err();
        assert_eq!(stub.request_count(), 3); // 1 + max_retries
        match &err {
            ModelError::RetriesExhausted { attempts: 3, last } => {
                assert!(
                    matches!(**last, ModelError::Status { status: 500, .. }),
                    "{last}"
                );
            }
            other => panic!("unexpected {other}"),
        }
        let text = err.to_string();
        assert!(
            text.contains("gave up after 3") && text.contains("script exhausted"),
            "{text}"
        );
    })
    .await;
}

#[tokio::test]
async fn too_many_requests_waits_for_retry_after() {
    bounded(async {
        let stub = Stub::start(vec![
            Reply::json(429, json!({"error": {"message": "slow down"}}))
                .with_header("Retry-After", "1"),
            Reply::text("ok", 1, 1),
        ]);
        let started = Instant::now();
        let resp = stub.client().chat(&hello()).await.unwrap();
        let waited = started.elapsed();
        assert_eq!(resp.text(), Some("ok"));
        assert_eq!(stub.request_count(), 2);
        // Backoff alone would be at most 40 ms; the header asked for 1 s.
        assert!(
            waited >= Duration::from_millis(950),
            "waited only {waited:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn retry_after_is_capped() {
    bounded(async {
        let stub = Stub::start(vec![
            Reply::json(429, json!({"error": "later"})).with_header("Retry-After", "86400"),
            Reply::text("ok", 1, 1),
        ]);
        let mut config = stub.config();
        config.retry_after_max = Duration::from_millis(200);
        let started = Instant::now();
        let resp = ChatClient::new(config)
            .unwrap()
            .chat(&hello())
            .await
            .unwrap();
        assert_eq!(resp.text(), Some("ok"));
        assert!(started.elapsed() >= Duration::from_millis(190));
    })
    .await;
}

#[tokio::test]
async fn a_silent_server_times_out_then_gives_up_clearly() {
    bounded(async {
        let stub = Stub::start(vec![Reply::Hang, Reply::Hang, Reply::Hang]);
        let mut config = stub.config();
        config.timeout = Duration::from_millis(300);
        let started = Instant::now();
        let err = ChatClient::new(config)
            .unwrap()
            .chat(&hello())
            .await
            .unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(900));
        assert_eq!(stub.request_count(), 3);
        assert!(
            matches!(err.last_attempt(), ModelError::Timeout { .. }),
            "{err}"
        );
        let text = err.to_string();
        assert!(
            text.contains("gave up after 3") && text.contains("no complete response within 300ms"),
            "{text}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_timeout_then_an_answer_succeeds() {
    bounded(async {
        let stub = Stub::start(vec![Reply::Hang, Reply::text("late but fine", 1, 1)]);
        let mut config = stub.config();
        config.timeout = Duration::from_millis(300);
        let resp = ChatClient::new(config)
            .unwrap()
            .chat(&hello())
            .await
            .unwrap();
        assert_eq!(resp.text(), Some("late but fine"));
    })
    .await;
}

#[tokio::test]
async fn a_malformed_body_fails_at_once_naming_the_problem() {
    bounded(async {
        let stub = Stub::start(vec![
            Reply::raw(200, "<html>proxy error</html>"),
            Reply::json(
                200,
                json!({"choices": [{"message": {"content": "x", "tool_calls": {"oops": 1}}}]}),
            ),
        ]);
        let client = stub.client();
        let err = client.chat(&hello()).await.unwrap_err();
        assert!(matches!(err, ModelError::Malformed { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("body is not JSON") && text.contains("<html>proxy error"),
            "{text}"
        );
        assert_eq!(stub.request_count(), 1, "a malformed body is not retried");

        let err = client.chat(&hello()).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("field `choices[0].message.tool_calls`"),
            "{err}"
        );
        assert_eq!(stub.request_count(), 2);
    })
    .await;
}

#[tokio::test]
async fn a_truncated_body_is_retried() {
    bounded(async {
        let full = completion_body(json!({"content": "whole"}), "stop", 1, 1).to_string();
        let stub = Stub::start(vec![
            Reply::Truncated {
                declared: full.len(),
                body: full[..full.len() / 2].to_owned(),
            },
            Reply::json(200, serde_json::from_str(&full).unwrap()),
        ]);
        let resp = stub.client().chat(&hello()).await.unwrap();
        assert_eq!(resp.text(), Some("whole"));
        assert_eq!(stub.request_count(), 2);
    })
    .await;
}

#[tokio::test]
async fn always_truncated_bodies_give_a_transport_error() {
    bounded(async {
        let body = "{\"choices\": [";
        let truncated = Reply::Truncated {
            declared: 500,
            body: body.into(),
        };
        let stub = Stub::start(vec![truncated.clone(), truncated.clone(), truncated]);
        let err = stub.client().chat(&hello()).await.unwrap_err();
        assert_eq!(stub.request_count(), 3);
        assert!(
            matches!(
                err.last_attempt(),
                ModelError::Transport {
                    stage: "reading the response body",
                    ..
                }
            ),
            "{err}"
        );
    })
    .await;
}

#[tokio::test]
async fn client_errors_fail_at_once_with_the_server_message() {
    bounded(async {
        let stub = Stub::start(vec![Reply::json(
            400,
            json!({"error": {"message": "model `nope` does not exist", "type": "invalid_request_error"}}),
        )]);
        let err = stub.client().chat(&hello()).await.unwrap_err();
        assert_eq!(stub.request_count(), 1);
        match &err {
            ModelError::Status { status: 400, message, .. } => {
                assert_eq!(message, "model `nope` does not exist")
            }
            other => panic!("unexpected {other}"),
        }
        assert!(!err.is_retryable());
    })
    .await;
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    bounded(async {
        // Bind and drop a listener to get a port nobody listens on.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let mut config =
            traparena_model::EndpointConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
        config.max_retries = 1;
        config.backoff_base = Duration::from_millis(5);
        let err = ChatClient::new(config)
            .unwrap()
            .chat(&hello())
            .await
            .unwrap_err();
        assert!(
            matches!(
                err.last_attempt(),
                ModelError::Transport {
                    stage: "sending the request",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("gave up after 2"), "{err}");
        // The cause is said, not only "error sending request".
        assert!(
            err.to_string()
                .contains("could not connect: client error (Connect)")
                && err
                    .to_string()
                    .to_lowercase()
                    .contains("connection refused"),
            "{err}"
        );
    })
    .await;
}

#[tokio::test]
async fn concurrency_limit_is_shared_by_clones_and_clients() {
    bounded(async {
        let delay = Duration::from_millis(150);
        let replies = (0..8)
            .map(|i| Reply::text(&format!("r{i}"), 1, 1).delayed(delay))
            .collect();
        let stub = Stub::start(replies);
        let mut config = stub.config();
        config.max_concurrency = 2;
        let client = ChatClient::new(config).unwrap();
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let c = client.clone();
            tasks.push(tokio::spawn(async move { c.chat(&hello()).await }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        assert_eq!(stub.request_count(), 8);
        assert_eq!(
            stub.max_in_flight(),
            2,
            "the limit is 2 and 8 calls were waiting"
        );
        assert_eq!(client.available_permits(), 2);

        // A second client of the same endpoint (another model) can share the limit.
        let replies = (0..6).map(|i| Reply::text(&format!("s{i}"), 1, 1).delayed(delay));
        for r in replies {
            stub.push(r);
        }
        let mut other = stub.config();
        other.model = "attacker-model".into();
        let other = ChatClient::with_limiter(other, client.limiter().clone()).unwrap();
        let mut tasks = Vec::new();
        for i in 0..6 {
            let c = if i % 2 == 0 {
                client.clone()
            } else {
                other.clone()
            };
            tasks.push(tokio::spawn(async move { c.chat(&hello()).await }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        assert_eq!(stub.request_count(), 14);
        assert_eq!(stub.max_in_flight(), 2);
    })
    .await;
}

/// OpenRouter answers a transient upstream provider failure with HTTP 200 and an error object:
/// it is retried like a 5xx, and reported as such when it persists.
#[tokio::test]
async fn a_2xx_error_body_is_retried_as_transient() {
    bounded(async {
        let provider_error = json!({"error": {"message": "Provider returned error", "code": 502}});
        let stub = Stub::start(vec![
            Reply::json(200, provider_error.clone()),
            Reply::text("ok", 1, 1),
        ]);
        let resp = stub.client().chat(&hello()).await.unwrap();
        assert_eq!(resp.text(), Some("ok"));
        assert_eq!(stub.request_count(), 2);

        let stub = Stub::start(vec![Reply::json(200, provider_error); 3]);
        let err = stub.client().chat(&hello()).await.unwrap_err();
        assert!(err.is_retryable() || matches!(err, ModelError::RetriesExhausted { .. }));
        assert!(
            matches!(err.last_attempt(), ModelError::ErrorBody { message, .. } if message == "Provider returned error"),
            "{err}"
        );
        assert_eq!(stub.request_count(), 3, "1 attempt + 2 retries");
    })
    .await;
}

/// Hosted reasoning models refuse `max_tokens` and any non-default temperature with a 400:
/// the client renames or drops the parameter once, keeps doing so for later calls, and says so
/// in the response.
#[tokio::test]
async fn a_refused_max_tokens_or_temperature_is_retried_once_without_it() {
    bounded(async {
        let refuse = |param: &str, msg: &str| {
            Reply::json(
                400,
                json!({"error": {"message": msg, "type": "invalid_request_error", "param": param,
                                 "code": "unsupported_parameter"}}),
            )
        };
        let stub = Stub::start(vec![
            refuse(
                "max_tokens",
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            ),
            refuse(
                "temperature",
                "Unsupported value: 'temperature' does not support 0.7 with this model. Only the default (1) value is supported.",
            ),
            Reply::text("ok", 1, 1),
            Reply::text("again", 1, 1),
        ]);
        let client = stub.client();
        let req = hello().with_temperature(0.7).with_max_tokens(64);
        let resp = client.chat(&req).await.unwrap();
        assert_eq!(resp.text(), Some("ok"));
        assert_eq!(resp.adjustments.len(), 2, "{:?}", resp.adjustments);
        assert!(resp.adjustments[0].contains("sent `max_completion_tokens` instead of `max_tokens`"));
        assert!(resp.adjustments[1].contains("sent no temperature"));
        let bodies: Vec<Value> = stub.received().into_iter().map(|r| r.body).collect();
        assert_eq!(bodies[0]["max_tokens"], 64);
        assert_eq!(bodies[1]["max_completion_tokens"], 64);
        assert!(bodies[1].get("max_tokens").is_none());
        assert_eq!(bodies[1]["temperature"], 0.7);
        assert!(bodies[2].get("temperature").is_none());
        // Learnt once: the next call is sent the adapted way at once and records nothing.
        let resp = client.chat(&req).await.unwrap();
        assert_eq!(resp.text(), Some("again"));
        assert!(resp.adjustments.is_empty());
        let last = &stub.received()[3].body;
        assert!(last.get("temperature").is_none() && last["max_completion_tokens"] == 64);

        // The adjustment survives a cassette round trip, so a replay reproduces the record.
        let text = serde_json::to_string(&{
            let mut r = traparena_model::ChatResponse::from_text("m", "x");
            r.adjustments = vec!["sent no temperature".into()];
            r
        })
        .unwrap();
        let back: traparena_model::ChatResponse = serde_json::from_str(&text).unwrap();
        assert_eq!(back.adjustments, ["sent no temperature"]);

        // Any other 400 still fails at once.
        let stub = Stub::start(vec![refuse("messages", "messages: field required")]);
        let err = stub.client().chat(&req).await.unwrap_err();
        assert!(matches!(err, ModelError::Status { status: 400, .. }), "{err}");
        assert_eq!(stub.request_count(), 1);
    })
    .await;
}

/// `omit_temperature` and `max_completion_tokens` as settings: nothing is refused, nothing
/// adjusted.
#[tokio::test]
async fn parameter_settings_shape_the_body() {
    bounded(async {
        let stub = Stub::start(vec![Reply::text("ok", 1, 1)]);
        let mut config = stub.config();
        config.omit_temperature = true;
        config.max_tokens_field = traparena_model::MaxTokensField::MaxCompletionTokens;
        let client = traparena_model::ChatClient::new(config).unwrap();
        let resp = client
            .chat(&hello().with_temperature(0.2).with_max_tokens(9))
            .await
            .unwrap();
        assert!(resp.adjustments.is_empty());
        let body = &stub.received()[0].body;
        assert!(body.get("temperature").is_none());
        assert_eq!(body["max_completion_tokens"], 9);
    })
    .await;
}

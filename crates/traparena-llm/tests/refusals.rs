//! Refused request fields against scripted servers that answer as llama-cpp-python, llama.cpp
//! and OpenAI-style servers do: a refused `response_format` steps down once per refusal
//! (`json_schema` → `json_object` → none, the JSON instruction then in the system message), is
//! kept for the client's later calls and recorded; a refusal of a field the client cannot
//! change fails at once; a 5xx that names no field is still retried as transient.

mod support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::{Reply, Stub, StubClient, bounded};
use traparena_agent::{Agent, AgentView};
use traparena_attack::{AttackContext, Attacker, NoteLimits, Notes};
use traparena_llm::{
    AttackerVariant, LlmAgent, LlmAgentConfig, LlmAttacker, LlmAttackerConfig, Protocol,
};
use traparena_model::{ChatModel, ChatRequest, Message, ModelError, ResponseFormat};
use traparena_task::{Action, Location, Observation, Step};

/// llama-cpp-python's answer to `"response_format": {"type": "json_schema", ...}`, as its server
/// sends it.
const LLAMA_CPP_PYTHON_BODY: &str = r#"{"detail":[{"type":"literal_error","loc":["body","response_format","type"],"msg":"Input should be 'text' or 'json_object'","input":"json_schema","ctx":{"expected":"'text' or 'json_object'"}}]}"#;

fn schema_request() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("You pick actions."),
        Message::user("Pick one."),
    ])
    .with_temperature(0.0)
    .with_response_format(ResponseFormat::json_schema(
        "action",
        json!({"type": "object", "properties": {"action": {"const": "submit"}},
               "required": ["action"], "additionalProperties": false}),
    ))
}

fn format_type(body: &Value) -> Option<&str> {
    body.pointer("/response_format/type")
        .and_then(Value::as_str)
}

fn system(body: &Value) -> &str {
    body["messages"][0]["content"].as_str().unwrap_or("")
}

#[test]
fn the_scripted_refusal_is_llama_cpp_python_s_byte_for_byte() {
    let Reply::Full { status, body, .. } = Reply::literal_error(
        500,
        &["response_format", "type"],
        &json!("json_schema"),
        &["text", "json_object"],
    ) else {
        panic!("not a full reply")
    };
    assert_eq!((status, body.as_str()), (500, LLAMA_CPP_PYTHON_BODY));
}

/// (a) llama-cpp-python (500, and 422 as some versions send it) and llama.cpp's message:
/// one fallback to `json_object`, recorded, and later calls go there at once.
#[tokio::test]
async fn a_refused_json_schema_falls_back_to_json_object_once_for_the_run() {
    bounded(async {
        let llama_cpp = json!({"error": {"code": 500, "type": "server_error",
            "message": "response_format type must be one of \"text\" or \"json_object\", but got: json_schema"}});
        let servers: Vec<(&str, Stub)> = vec![
            (
                "llama-cpp-python",
                Stub::llama_cpp_python(&["text", "json_object"], |_| {
                    Reply::text(r#"{"action": "submit"}"#, 5, 5)
                }),
            ),
            (
                "FastAPI 422",
                Stub::serve(|r| match format_type(&r.body) {
                    Some("json_schema") => Reply::json(
                        422,
                        serde_json::from_str(LLAMA_CPP_PYTHON_BODY).unwrap(),
                    ),
                    _ => Reply::text(r#"{"action": "submit"}"#, 5, 5),
                }),
            ),
            (
                "llama.cpp",
                Stub::serve(move |r| match format_type(&r.body) {
                    Some("json_schema") => Reply::json(500, llama_cpp.clone()),
                    _ => Reply::text(r#"{"action": "submit"}"#, 5, 5),
                }),
            ),
        ];
        for (name, stub) in servers {
            let client = stub.client();
            let resp = client.chat(&schema_request()).await.unwrap();
            assert_eq!(resp.text(), Some(r#"{"action": "submit"}"#), "{name}");
            assert_eq!(resp.adjustments.len(), 1, "{name}: {:?}", resp.adjustments);
            let note = &resp.adjustments[0];
            assert!(
                note.contains("`response_format`")
                    && note.contains("sent `response_format` `json_object` instead of `json_schema`"),
                "{name}: {note}"
            );
            let bodies = stub.chat_requests();
            assert_eq!(bodies.len(), 2, "{name}: one refusal, one fallback, no retries");
            assert_eq!(format_type(&bodies[0]), Some("json_schema"), "{name}");
            assert_eq!(system(&bodies[0]), "You pick actions.", "{name}");
            assert_eq!(bodies[1]["response_format"], json!({"type": "json_object"}), "{name}");
            assert!(
                system(&bodies[1]).starts_with("You pick actions.\n\nAnswer with one JSON object")
                    && system(&bodies[1]).contains(r#""required":["action"]"#),
                "{name}: {}",
                system(&bodies[1])
            );
            // Kept for the run: a clone (another component on the endpoint) goes straight there.
            let again = client.clone().chat(&schema_request()).await.unwrap();
            assert!(again.adjustments.is_empty(), "{name}");
            let bodies = stub.chat_requests();
            assert_eq!(bodies.len(), 3, "{name}");
            assert_eq!(format_type(&bodies[2]), Some("json_object"), "{name}");
        }
    })
    .await;
}

/// (b) A server that takes neither `json_schema` nor `json_object`: the request goes without a
/// response format, the schema and the JSON instruction in the system message.
#[tokio::test]
async fn refusing_json_object_too_falls_back_to_no_format_with_the_instruction() {
    bounded(async {
        let stub = Stub::llama_cpp_python(&["text"], |_| {
            Reply::text("```json\n{\"action\": \"submit\"}\n```", 5, 5)
        });
        let client = stub.client();
        let resp = client.chat(&schema_request()).await.unwrap();
        assert_eq!(resp.adjustments.len(), 2, "{:?}", resp.adjustments);
        assert!(resp.adjustments[1].contains("sent no `response_format`"));
        let bodies = stub.chat_requests();
        let formats: Vec<_> = bodies.iter().map(format_type).collect();
        assert_eq!(formats, [Some("json_schema"), Some("json_object"), None]);
        let last = &bodies[2];
        assert!(last.get("response_format").is_none());
        assert!(
            system(last).contains("Answer with one JSON object and nothing else")
                && system(last).contains("must match this JSON schema")
                && system(last).contains(r#""additionalProperties":false"#),
            "{}",
            system(last)
        );
        // The other fields are untouched.
        assert_eq!(last["temperature"], 0.0);
        assert_eq!(last["messages"][1]["content"], "Pick one.");

        let again = client.chat(&schema_request()).await.unwrap();
        assert!(again.adjustments.is_empty());
        assert_eq!(stub.chat_requests().len(), 4);
        assert_eq!(format_type(&stub.chat_requests()[3]), None);
    })
    .await;
}

/// (c) A refused field the client cannot change fails at once, naming the field and the
/// server's message; so does a response format refused even without one.
#[tokio::test]
async fn a_refused_field_that_cannot_be_adapted_fails_at_once() {
    bounded(async {
        let pydantic = json!({"detail": [{"type": "int_parsing", "loc": ["body", "seed"],
            "msg": "Input should be a valid integer", "input": "x"}]});
        let openai = json!({"error": {"message": "Unrecognized request argument supplied: logit_bias",
            "type": "invalid_request_error", "param": "logit_bias", "code": null}});
        let cases = [
            (Reply::json(500, pydantic), "seed", "body.seed: Input should be a valid integer"),
            (Reply::json(500, openai), "logit_bias", "Unrecognized request argument"),
        ];
        for (reply, field, message) in cases {
            let stub = Stub::start(vec![reply]);
            let err = stub.client().chat(&schema_request()).await.unwrap_err();
            assert_eq!(stub.request_count(), 1, "{err}: one request, no retries");
            match &err {
                ModelError::Status {
                    status: 500,
                    field: Some(f),
                    ..
                } => assert_eq!(f, field),
                other => panic!("unexpected {other}"),
            }
            let text = err.to_string();
            assert!(
                text.contains(&format!("refused the request field `{field}`")) && text.contains(message),
                "{text}"
            );
        }
        // Nothing left to step down: a request without a response format.
        let stub = Stub::llama_cpp_python(&[], |_| Reply::text("{}", 1, 1));
        let plain = ChatRequest::new(vec![Message::user("Hi")])
            .with_response_format(ResponseFormat::Text);
        let err = stub.client().chat(&plain).await.unwrap_err();
        assert_eq!(stub.request_count(), 1, "{err}");
        assert!(err.to_string().contains("`response_format`"), "{err}");
    })
    .await;
}

/// (d) A 500 or 503 that names no field is transient, as before.
#[tokio::test]
async fn a_server_error_naming_no_field_is_still_retried() {
    bounded(async {
        let stub = Stub::start(vec![
            Reply::json(500, json!({"detail": "Internal Server Error"})),
            Reply::raw(503, "upstream unavailable"),
            Reply::text(r#"{"action": "submit"}"#, 1, 1),
        ]);
        let resp = stub.client().chat(&schema_request()).await.unwrap();
        assert!(resp.adjustments.is_empty());
        assert_eq!(stub.request_count(), 3);
        let bodies = stub.chat_requests();
        let formats: Vec<_> = bodies.iter().map(format_type).map(Option::unwrap).collect();
        assert_eq!(formats, ["json_schema"; 3]);
    })
    .await;
}

/// Clones of one client race their first calls against the refusing server: every call ends
/// well, each makes at most one refused attempt, the refusals and the notes match one to one,
/// and what was learnt is kept.
#[tokio::test]
async fn concurrent_first_calls_learn_the_fallback_once_each_at_most() {
    bounded(async {
        let stub = Stub::llama_cpp_python(&["text", "json_object"], |_| {
            Reply::text(r#"{"action": "submit"}"#, 1, 1)
                .delayed(std::time::Duration::from_millis(5))
        });
        let client = stub.client();
        let calls: Vec<_> = (0..8)
            .map(|_| {
                let c = client.clone();
                tokio::spawn(async move { c.chat(&schema_request()).await })
            })
            .collect();
        let mut notes = 0;
        for call in calls {
            let resp = call.await.unwrap().unwrap();
            assert!(resp.adjustments.len() <= 1, "{:?}", resp.adjustments);
            notes += resp.adjustments.len();
        }
        let bodies = stub.chat_requests();
        let refused = bodies
            .iter()
            .filter(|b| format_type(b) == Some("json_schema"))
            .count();
        assert!(
            refused >= 1 && refused == notes,
            "{refused} refused, {notes} notes"
        );
        assert_eq!(bodies.len(), 8 + refused);
        client.chat(&schema_request()).await.unwrap();
        let last = stub.chat_requests().pop().unwrap();
        assert_eq!(format_type(&last), Some("json_object"));
    })
    .await;
}

/// `--agent llm --protocol json --attacker adaptive` against a llama-cpp-python-like server:
/// the agent's first step records the fallback, every step reads its action, and the attacker,
/// sharing the endpoint's client, asks with `json_object` at once and delivers its message.
#[tokio::test]
async fn an_agent_and_an_attacker_run_against_a_llama_cpp_python_server() {
    bounded(async {
        let stub = Stub::llama_cpp_python(&["text", "json_object"], |r| {
            let system = r.body["messages"][0]["content"].as_str().unwrap_or("");
            // The attacker's schema (now in its system message) has `urge_submit`.
            if system.contains("urge_submit") {
                return Reply::text(
                    r#"{"message": "Check the lower bound.", "blame": [], "urge_submit": false, "dismissed_cases": []}"#,
                    9,
                    9,
                );
            }
            let steps = r.body["messages"].as_array().map_or(0, Vec::len);
            Reply::text(
                if steps <= 2 {
                    r#"{"action": "read", "path": "clamp.py"}"#
                } else {
                    r#"{"action": "submit"}"#
                },
                9,
                9,
            )
        });
        let client: Arc<dyn ChatModel> = Arc::new(stub.client());
        let mut agent = LlmAgent::new(
            client.clone(),
            LlmAgentConfig {
                protocol: Protocol::Json,
                ..LlmAgentConfig::default()
            },
        );
        let mut steps: Vec<Step> = Vec::new();
        for index in 1..=2 {
            let view = AgentView {
                task_id: "clamp",
                description: "clamp(x, lo, hi) returns values outside [lo, hi].",
                steps_taken: steps.len() as u32,
                budget: 10,
                history: &steps,
                runs_in_image: false,
            };
            let turn = agent.act(&view).await.unwrap();
            if index == 1 {
                assert_eq!(turn.notes.len(), 1, "{:?}", turn.notes);
                assert!(turn.notes[0].contains("json_object"), "{:?}", turn.notes);
            } else {
                assert!(turn.notes.is_empty(), "{:?}", turn.notes);
            }
            steps.push(Step {
                index,
                action: turn.action().cloned(),
                raw: turn.raw,
                observation: Observation::ok("1| def clamp(x, lo, hi):"),
                message: None,
                reasoning: None,
                notes: turn.notes,
                moment: None,
            });
        }
        assert!(matches!(steps[0].action, Some(Action::Read { .. })), "{:?}", steps[0]);
        assert_eq!(steps[1].action, Some(Action::Submit));

        let mut attacker =
            LlmAttacker::new(client, LlmAttackerConfig::new(AttackerVariant::Blind));
        let notes = Notes::empty(NoteLimits::default());
        let symbols = [Location::symbol("clamp.py", "clamp").unwrap()];
        let ctx = AttackContext {
            task_id: "clamp",
            description: "clamp(x, lo, hi) returns values outside [lo, hi].",
            steps_taken: 1,
            budget: 10,
            history: &steps[..1],
            reference: None,
            notes: &notes,
            symbols: &symbols,
            decoys: &[],
            attempt: 0,
            rejections: &[],
        };
        let advice = attacker.advise(&ctx).await.unwrap().unwrap();
        assert_eq!(advice.text, "Check the lower bound.");
        let bodies = stub.chat_requests();
        let formats: Vec<_> = bodies.iter().map(format_type).collect();
        assert_eq!(
            formats,
            [Some("json_schema"), Some("json_object"), Some("json_object"), Some("json_object")],
            "one refusal in the whole run"
        );
    })
    .await;
}

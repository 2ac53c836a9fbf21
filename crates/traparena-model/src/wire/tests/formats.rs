//! Every format through the trait alone: a request and an answer round-trip, and odd bodies
//! are typed errors, never panics.

use serde_json::{Value, json};

use super::super::WireApi;
use crate::error::WireError;
use crate::types::{ChatRequest, ChatResponse, Message, Tool, ToolCall};

fn conversation() -> ChatRequest {
    let call = ToolCall::function("call_1", "bash", r#"{"command":"ls"}"#);
    let schema = json!({"type": "object", "properties": {"command": {"type": "string"}}});
    let mut r = ChatRequest::new(vec![
        Message::system("You fix bugs."),
        Message::user("Fix clamp."),
        Message::assistant_tool_calls(Some("Looking.".into()), vec![call]),
        Message::tool("call_1", "clamp.py"),
        Message::user("Go on."),
    ])
    .with_temperature(0.5);
    r.tools = vec![Tool::function("bash", "Run a command", schema)];
    r
}

fn answer() -> ChatResponse {
    let mut r = ChatResponse::from_tool_calls(
        "up",
        vec![ToolCall::function(
            "call_2",
            "bash",
            r#"{"command":"cat clamp.py"}"#,
        )],
    )
    .with_usage(120, 9);
    r.choices[0].message.content = Some("Reading.".into());
    r
}

#[test]
fn every_format_round_trips_a_request_through_its_own_body() {
    let chat = conversation();
    for api in WireApi::ALL {
        let format = api.format();
        let body = format.request(&chat, "m").unwrap();
        let read = format.read_request(body.to_string().as_bytes()).unwrap();
        assert_eq!(read.request.messages, chat.messages, "{api:?}");
        assert_eq!(read.request.tools, chat.tools, "{api:?}");
        assert_eq!(read.request.temperature, Some(0.5), "{api:?}");
        assert!(!read.stream, "{api:?}");
        let named = (api != WireApi::ChatCompletions).then(|| "m".to_owned());
        assert_eq!(read.model, named, "{api:?}");
        // The client's default path: the chat body, read back and translated.
        let Value::Object(chat_body) = WireApi::ChatCompletions
            .format()
            .request(&chat, "m")
            .unwrap()
        else {
            panic!("a chat body is an object");
        };
        assert_eq!(
            format.upstream_body(chat_body, "m").unwrap(),
            body,
            "{api:?}"
        );
    }
}

#[test]
fn every_format_round_trips_an_answer_through_its_own_body() {
    let r = answer();
    for api in WireApi::ALL {
        let format = api.format();
        let back = format.read_response(format.answer(&r, "m", &[])).unwrap();
        assert_eq!(back.text(), Some("Reading."), "{api:?}");
        assert_eq!(back.tool_calls(), r.tool_calls(), "{api:?}");
        assert_eq!(back.finish_reason(), Some("tool_calls"), "{api:?}");
        let (u, want) = (back.token_usage(), r.token_usage());
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens),
            (want.prompt_tokens, want.completion_tokens),
            "{api:?}"
        );
        // Streams and error bodies are JSON events and objects in every format.
        assert!(format.stream(&r, "m", &[]).contains("Reading."), "{api:?}");
        assert!(format.error_body(400, "no").is_object(), "{api:?}");
    }
}

#[test]
fn odd_bodies_are_typed_errors_in_every_format() {
    let image = |api| match api {
        WireApi::AnthropicMessages => json!({"messages": [{"role": "user",
            "content": [{"type": "image", "source": {}}]}]}),
        WireApi::OpenaiResponses => json!({"input": [{"role": "user",
            "content": [{"type": "input_image", "image_url": "x"}]}]}),
        _ => json!({"messages": [{"role": "user",
            "content": [{"type": "image_url", "image_url": {}}]}]}),
    };
    for api in WireApi::ALL {
        let read = |body: &[u8]| api.format().read_request(body).unwrap_err();
        assert!(
            matches!(read(b"{nope"), WireError::NotJson { .. }),
            "{api:?}"
        );
        assert!(matches!(read(b"[1]"), WireError::NotObject), "{api:?}");
        assert!(matches!(read(b"{}"), WireError::NoField { .. }), "{api:?}");
        let e = read(image(api).to_string().as_bytes());
        assert!(
            matches!(e, WireError::NotText { .. } | WireError::Block { .. }),
            "{api:?}: {e}"
        );
        assert!(e.to_string().contains("image"), "{api:?}: {e}");
        for odd in [
            json!({}),
            json!([]),
            json!(5),
            json!({"choices": 5, "content": 5, "output": 5}),
        ] {
            let e = api.format().read_response(odd.clone()).unwrap_err();
            assert!(
                matches!(e, WireError::Field { .. } | WireError::Shape { .. }),
                "{api:?} {odd}: {e}"
            );
        }
        let e = api
            .format()
            .read_response(json!({"error": {"message": "busy"}}))
            .unwrap_err();
        assert!(
            matches!(e, WireError::ErrorBody { ref message } if message == "busy"),
            "{api:?}: {e}"
        );
    }
    let previous = json!({"input": [], "previous_response_id": "resp_1"});
    let e = WireApi::OpenaiResponses
        .format()
        .read_request(previous.to_string().as_bytes())
        .unwrap_err();
    assert!(matches!(
        e,
        WireError::Unsupported {
            feature: "previous_response_id",
            ..
        }
    ));
}

//! Chat completions, on requests shaped as mini-swe-agent, aider and Qwen Code send them.

use serde_json::{Value, json};

use super::super::{ReadRequest, WireApi, WireFormat};
use crate::types::ChatResponse;

fn chat() -> &'static dyn WireFormat {
    WireApi::ChatCompletions.format()
}

#[test]
fn requests_lose_the_model_and_stream_options_and_keep_the_rest() {
    let body = json!({
        "model": "openai/x", "stream": true, "stream_options": {"include_usage": true},
        "temperature": 0.0, "stop": ["</s>"],
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
        ]
    });
    let ReadRequest {
        request: req,
        stream,
        model,
        ..
    } = chat().read_request(body.to_string().as_bytes()).unwrap();
    assert!(stream);
    assert_eq!(model, None, "the answer keeps the upstream's name");
    assert_eq!(req.messages[1].content.as_deref(), Some("ab"));
    assert_eq!(req.temperature, Some(0.0));
    assert_eq!(req.extra.get("stop"), Some(&json!(["</s>"])));
    assert!(!req.extra.contains_key("model") && !req.extra.contains_key("stream_options"));
}

#[test]
fn odd_requests_are_refused_with_a_reason() {
    let cases: &[(&[u8], &str)] = &[
        (b"not json", "the body is not JSON: expected"),
        (b"[1]", "the body is not a JSON object"),
        (b"{}", "the body has no `messages` list"),
        (
            br#"{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}"#,
            "messages[0]: only text is passed on (a part of type \"image_url\" is not)",
        ),
        (
            br#"{"messages": [{"role": "user", "content": [{"image_url": {}}]}]}"#,
            "messages[0]: a content part without text",
        ),
        (
            br#"{"messages": [{"role": "wizard", "content": "x"}]}"#,
            "not a chat completions request: messages[0].role: unknown variant `wizard`",
        ),
    ];
    for (body, needle) in cases {
        let e = chat().read_request(body).unwrap_err();
        assert!(e.to_string().starts_with(needle), "{e}");
    }
}

#[test]
fn a_streamed_completion_holds_the_whole_message_and_ends_with_done() {
    let r = ChatResponse::from_text("m", "hello").with_usage(3, 1);
    let text = chat().stream(&r, "ignored", &[]);
    let datas: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(datas.last(), Some(&"[DONE]"));
    let first: Value = serde_json::from_str(datas[0]).unwrap();
    assert_eq!(first["choices"][0]["delta"]["content"], "hello");
    assert_eq!(
        first["model"], "m",
        "the upstream's name, as the whole answer keeps it"
    );
    let usage: Value = serde_json::from_str(datas[datas.len() - 2]).unwrap();
    assert_eq!(usage["usage"]["prompt_tokens"], 3);
}

#[test]
fn an_answer_without_choices_is_the_servers_error_or_malformed() {
    let read = |v: Value| chat().read_response(v).unwrap_err().to_string();
    assert_eq!(
        read(json!({"error": {"message": "model overloaded"}})),
        "the server says: model overloaded"
    );
    assert_eq!(read(json!({"object": "x"})), "field `choices` is missing");
    assert_eq!(read(json!({"choices": []})), "field `choices` is empty");
    assert!(read(json!({"choices": 5})).starts_with("field `choices` has the wrong shape"));
}

//! The translations, on requests shaped as Claude Code and Codex CLI send them.

use serde_json::{Value, json};

use super::{WireApi, WireFormat};
use crate::types::{ChatResponse, MessageRole, ToolCall};

/// Anthropic Messages and OpenAI Responses, as every caller gets them.
const M: WireApi = WireApi::AnthropicMessages;
const R: WireApi = WireApi::OpenaiResponses;

/// The events of a server-sent stream: (event name, data).
fn events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut lines = e.lines();
            let name = lines.next().unwrap().strip_prefix("event: ").unwrap();
            let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
            (name.to_owned(), serde_json::from_str(data).unwrap())
        })
        .collect()
}

fn call_response() -> ChatResponse {
    let mut r = ChatResponse::from_tool_calls(
        "up",
        vec![ToolCall::function(
            "call_1",
            "Bash",
            r#"{"command":"cat clamp.py"}"#,
        )],
    )
    .with_usage(120, 9);
    r.choices[0].message.content = Some("Reading.".into());
    r.id = "abc".into();
    r
}

#[test]
fn a_messages_conversation_reads_as_chat_with_tool_results_as_tool_messages() {
    let body = json!({
        "model": "claude-sonnet", "max_tokens": 32000, "stream": true, "temperature": 1,
        "system": [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
                   {"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"},
                                         {"type": "text", "text": "Fix clamp."}]},
            {"role": "system", "content": [{"type": "text", "text": "# Environment"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat clamp.py"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "def clamp"}]},
                {"type": "text", "text": "<system-reminder>todo</system-reminder>"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok", "is_error": true}]}
        ],
        "tools": [{"name": "Bash", "description": "Run", "input_schema": {"type": "object"}},
                  {"type": "web_search_20250305", "name": "web_search"}],
        "tool_choice": {"type": "auto"}, "metadata": {"user_id": "u"}, "stop_sequences": ["X"]
    });
    let read = M
        .format()
        .read_request(body.to_string().as_bytes())
        .unwrap();
    assert!(read.stream);
    assert_eq!(read.model.as_deref(), Some("claude-sonnet"));
    let r = &read.request;
    let roles: Vec<MessageRole> = r.messages.iter().map(|m| m.role).collect();
    use MessageRole::*;
    assert_eq!(
        roles,
        [System, User, System, Assistant, Tool, User, Assistant, Tool]
    );
    assert_eq!(
        r.messages[0].content.as_deref(),
        Some("You are Claude Code.\n\nBe brief.")
    );
    assert_eq!(r.messages[3].content.as_deref(), Some("Reading."));
    assert_eq!(
        r.messages[3].tool_calls[0].function.arguments,
        r#"{"command":"cat clamp.py"}"#
    );
    assert_eq!(r.messages[4].tool_call_id.as_deref(), Some("toolu_1"));
    assert_eq!(r.messages[4].content.as_deref(), Some("def clamp"));
    assert_eq!(
        r.messages[6].content, None,
        "a turn of calls only has no text"
    );
    assert_eq!(r.tools.len(), 1, "the server tool is dropped");
    assert_eq!((r.max_tokens, r.temperature), (Some(32000), Some(1.0)));
    assert_eq!(r.extra["stop"], json!(["X"]));
    assert_eq!(r.extra["tool_choice"], json!("auto"));
    assert!(!r.extra.contains_key("metadata"));

    // Back to Messages (an upstream that speaks it): tool results in the user turn again.
    let back = M.format().request(r, "m").unwrap();
    assert_eq!(
        back["system"],
        "You are Claude Code.\n\nBe brief.\n\n# Environment"
    );
    let turns = back["messages"].as_array().unwrap();
    assert_eq!(turns.len(), 5);
    assert_eq!(
        turns[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "def clamp"})
    );
    assert_eq!(
        turns[2]["content"][1]["text"],
        "<system-reminder>todo</system-reminder>"
    );
    assert_eq!(
        turns[1]["content"][1]["input"],
        json!({"command": "cat clamp.py"})
    );
    assert_eq!(back["max_tokens"], 32000);
    assert_eq!(back["tool_choice"], json!({"type": "auto"}));
}

#[test]
fn a_chat_answer_goes_back_as_a_messages_answer_whole_or_streamed() {
    let r = call_response();
    let whole = M.format().answer(&r, "claude-x", &[]);
    assert_eq!(whole["stop_reason"], "tool_use");
    assert_eq!(whole["model"], "claude-x");
    assert_eq!(
        whole["content"][1],
        json!({"type": "tool_use", "id": "call_1", "name": "Bash", "input": {"command": "cat clamp.py"}})
    );
    assert_eq!(
        whole["usage"],
        json!({"input_tokens": 120, "output_tokens": 9})
    );

    let ev = events(&M.format().stream(&r, "claude-x", &[]));
    let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    for (name, data) in &ev {
        assert_eq!(
            data["type"],
            name.as_str(),
            "each event's data names its event"
        );
    }
    assert_eq!(
        ev[2].1["delta"],
        json!({"type": "text_delta", "text": "Reading."})
    );
    let partial: Value =
        serde_json::from_str(ev[5].1["delta"]["partial_json"].as_str().unwrap()).unwrap();
    assert_eq!(partial, json!({"command": "cat clamp.py"}));
    assert_eq!(ev[7].1["usage"]["output_tokens"], 9);
}

#[test]
fn a_messages_answer_reads_as_chat_with_thinking_and_cached_tokens() {
    let v = json!({"id": "msg_1", "model": "claude", "type": "message", "role": "assistant",
        "content": [{"type": "thinking", "thinking": "plan"}, {"type": "text", "text": "ok"},
                    {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"a": 1}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 5}});
    let r = M.format().read_response(v).unwrap();
    assert_eq!(r.text(), Some("ok"));
    assert_eq!(
        r.message().unwrap().reasoning_content.as_deref(),
        Some("plan")
    );
    assert_eq!(r.tool_calls()[0].function.arguments, r#"{"a":1}"#);
    assert_eq!(r.finish_reason(), Some("tool_calls"));
    assert_eq!(
        (
            r.token_usage().prompt_tokens,
            r.token_usage().completion_tokens
        ),
        (100, 5)
    );
    let e = M.format().read_response(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
    );
    assert!(e.unwrap_err().to_string().contains("busy"));
}

fn codex_like() -> Value {
    json!({
        "model": "gpt-5-codex", "instructions": "You are Codex.", "stream": true, "store": false,
        "reasoning": {"effort": "medium"}, "include": ["reasoning.encrypted_content"],
        "parallel_tool_calls": false, "tool_choice": "auto", "prompt_cache_key": "k",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix clamp."}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"},
            {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{\"command\":[\"cat\",\"clamp.py\"]}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "def clamp"},
            {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"},
            {"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done"}
        ],
        "tools": [
            {"type": "function", "name": "shell", "description": "Run", "parameters": {"type": "object"}, "strict": false},
            {"type": "custom", "name": "apply_patch", "description": "Patch", "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"}},
            {"type": "web_search"}
        ]
    })
}

#[test]
fn a_responses_conversation_reads_as_chat_with_custom_tools_as_one_string_argument() {
    let read = R
        .format()
        .read_request(codex_like().to_string().as_bytes())
        .unwrap();
    let r = &read.request;
    use MessageRole::*;
    let roles: Vec<MessageRole> = r.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [System, System, User, Assistant, Tool, Assistant, Tool]
    );
    assert_eq!(read.custom_tools, ["apply_patch"]);
    assert_eq!(r.tools.len(), 2);
    assert!(
        r.tools[1].function.parameters["properties"]["input"]["description"]
            .as_str()
            .unwrap()
            .contains("start: x")
    );
    assert_eq!(
        r.messages[5].tool_calls[0].function.arguments,
        r#"{"input":"*** Begin Patch\n*** End Patch"}"#
    );
    assert_eq!(r.messages[6].content.as_deref(), Some("Done"));
    assert_eq!(r.extra["parallel_tool_calls"], json!(false));
    assert!(!r.extra.contains_key("reasoning") && !r.extra.contains_key("store"));

    // Back to Responses (an upstream that speaks it).
    let back = R.format().request(r, "m").unwrap();
    assert_eq!(back["instructions"], "You are Codex.\n\n<permissions>");
    assert_eq!(back["store"], false);
    let items = back["input"].as_array().unwrap();
    assert_eq!(
        items[1],
        json!({"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{\"command\":[\"cat\",\"clamp.py\"]}"})
    );
    assert_eq!(
        items[2],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "def clamp"})
    );
}

#[test]
fn a_chat_answer_goes_back_as_a_responses_answer_whole_or_streamed() {
    let mut r = call_response();
    r.choices[0].message.tool_calls.push(ToolCall::function(
        "call_2",
        "apply_patch",
        r#"{"input":"*** Begin Patch"}"#,
    ));
    let custom = vec!["apply_patch".to_owned()];
    let whole = R.format().answer(&r, "gpt-x", &custom);
    assert_eq!(whole["status"], "completed");
    let out = whole["output"].as_array().unwrap();
    assert_eq!(out[0]["content"][0]["text"], "Reading.");
    assert_eq!(
        (out[1]["type"].as_str(), out[1]["call_id"].as_str()),
        (Some("function_call"), Some("call_1"))
    );
    assert_eq!(out[2]["type"], "custom_tool_call");
    assert_eq!(out[2]["input"], "*** Begin Patch");
    assert_eq!(whole["usage"]["input_tokens"], 120);

    let ev = events(&R.format().stream(&r, "gpt-x", &custom));
    for (i, (name, data)) in ev.iter().enumerate() {
        assert_eq!(data["type"], name.as_str());
        assert_eq!(data["sequence_number"], i, "numbered in order");
    }
    let (first, last) = (&ev[0], ev.last().unwrap());
    assert_eq!(first.0, "response.created");
    assert_eq!(last.0, "response.completed");
    assert_eq!(last.1["response"], whole);
    let done: Vec<&Value> = ev
        .iter()
        .filter(|(n, _)| n == "response.output_item.done")
        .map(|(_, d)| &d["item"])
        .collect();
    assert_eq!(done.len(), 3);
    assert_eq!(*done[2], out[2]);
    let text: Vec<&Value> = ev
        .iter()
        .filter(|(n, _)| n == "response.output_text.delta")
        .map(|(_, d)| &d["delta"])
        .collect();
    assert_eq!(text, [&json!("Reading.")]);
}

#[test]
fn a_responses_answer_reads_as_chat() {
    let v = json!({"id": "resp_1", "model": "gpt", "status": "completed", "output": [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        {"type": "function_call", "call_id": "c", "name": "shell", "arguments": "{}"}],
        "usage": {"input_tokens": 7, "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 2}}});
    let r = R.format().read_response(v).unwrap();
    assert_eq!(r.text(), Some("ok"));
    assert_eq!(r.finish_reason(), Some("tool_calls"));
    assert_eq!(
        r.message().unwrap().reasoning_content.as_deref(),
        Some("plan")
    );
    let u = r.token_usage();
    assert_eq!(
        (u.prompt_tokens, u.completion_tokens, u.reasoning_tokens),
        (7, 3, 2)
    );
}

#[test]
fn odd_requests_are_refused_with_a_reason() {
    let (m, r) = (M.format(), R.format());
    let image =
        json!({"messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]});
    let cases: &[(&dyn WireFormat, Value, &str)] = &[
        (m, json!([1]), "not a JSON object"),
        (m, json!({}), "no `messages` list"),
        (m, image, "\"image\" block"),
        (
            m,
            json!({"messages": [{"role": "tool", "content": "x"}]}),
            "neither user, assistant nor system",
        ),
        (
            r,
            json!({"input": [], "previous_response_id": "resp_1"}),
            "previous_response_id",
        ),
        (r, json!({"input": 3}), "no `input`"),
        (
            r,
            json!({"input": [{"type": "local_shell_call"}]}),
            "\"local_shell_call\" is not passed on",
        ),
        (
            r,
            json!({"input": [{"role": "user", "content": [{"type": "input_image"}]}]}),
            "only text",
        ),
    ];
    for (read, body, needle) in cases {
        let e = read.read_request(body.to_string().as_bytes()).unwrap_err();
        assert!(e.to_string().contains(needle), "{body}: {e}");
    }
    let e = m.read_request(b"{nope").unwrap_err();
    assert!(e.to_string().contains("not JSON"), "{e}");
}

mod chat;
mod formats;

//! Anthropic Messages (`POST /v1/messages`) ⇄ chat completions.
//!
//! A Messages conversation keeps tool results inside user messages (`tool_result` blocks) and
//! tool calls inside assistant messages (`tool_use` blocks); chat completions keeps each tool
//! result as a `tool` message. A user message of tool results and text becomes the tool
//! messages, in order, then one user message of its text blocks; the way back joins them
//! again.

use serde_json::{Map, Value, json};

use super::{KeyHeader, ReadRequest, WireFormat, arguments_object, error_in, sse_event};
use super::{take_common, text_of};
use crate::error::WireError;
use crate::types::{ChatRequest, ChatResponse, Message, ResponseMessage, Tool, ToolCall};
use crate::types::{MessageRole, Parts, Usage, part_text};

/// The `max_tokens` sent when a chat request sets none (Messages requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The Anthropic API version sent to an endpoint that speaks Anthropic Messages.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Anthropic Messages ([`super::WireApi::AnthropicMessages`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct AnthropicMessages;

impl WireFormat for AnthropicMessages {
    fn path(&self) -> &'static str {
        "messages"
    }

    fn read_request(&self, body: &[u8]) -> Result<ReadRequest, WireError> {
        read_request(body)
    }

    fn answer(&self, r: &ChatResponse, model: &str, _custom_tools: &[String]) -> Value {
        response(r, model)
    }

    fn stream(&self, r: &ChatResponse, model: &str, _custom_tools: &[String]) -> String {
        stream(r, model)
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        error(status, message)
    }

    fn request(&self, r: &ChatRequest, model: &str) -> Result<Value, serde_json::Error> {
        Ok(request(r, model))
    }

    fn read_response(&self, body: Value) -> Result<ChatResponse, WireError> {
        read_response(body)
    }

    /// `anthropic-version`.
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[("anthropic-version", ANTHROPIC_VERSION)]
    }

    /// `x-api-key`.
    fn key_header(&self) -> KeyHeader {
        KeyHeader::Named("x-api-key")
    }
}

/// Reads a Messages request body as a chat request.
fn read_request(body: &[u8]) -> Result<ReadRequest, WireError> {
    let mut body = super::object_of(body)?;
    let model = super::take_model(&mut body);
    let stream = super::take_stream(&mut body);
    let Some(Value::Array(turns)) = body.remove("messages") else {
        return Err(WireError::NoField {
            field: "messages",
            wanted: "list",
        });
    };
    let mut messages = Vec::new();
    if let Some(system) = body.remove("system") {
        let text = blocks_text(&system, "system", "\n\n")?;
        if !text.is_empty() {
            messages.push(Message::system(text));
        }
    }
    for (i, turn) in turns.iter().enumerate() {
        read_turn(turn, &format!("messages[{i}]"), &mut messages)?;
    }
    let mut request = ChatRequest::new(messages);
    take_common(&mut body, &mut request);
    if let Some(n) = body.remove("max_tokens").and_then(|n| n.as_u64()) {
        request.max_tokens = Some(u32::try_from(n).unwrap_or(u32::MAX));
    }
    if let Some(stop) = body.remove("stop_sequences").filter(|s| !s.is_null()) {
        request.extra.insert("stop".into(), stop);
    }
    if let Some(Value::Array(tools)) = body.remove("tools") {
        // Server tools (web search, ...) have no input schema and run at Anthropic: dropped.
        request.tools = tools
            .iter()
            .filter_map(|t| {
                let schema = t.get("input_schema")?;
                Some(Tool::function(
                    t.get("name")?.as_str()?,
                    t.get("description").and_then(Value::as_str).unwrap_or(""),
                    schema.clone(),
                ))
            })
            .collect();
    }
    if let Some(choice) = body
        .remove("tool_choice")
        .and_then(|c| tool_choice_to_chat(&c))
    {
        request.extra.insert("tool_choice".into(), choice);
    }
    Ok(ReadRequest {
        request,
        stream,
        model,
        custom_tools: Vec::new(),
    })
}

/// The text of a string or a text-only block list, the blocks joined by `separator` (a blank
/// line for a `system` value, a newline for a tool result's content).
fn blocks_text(v: &Value, at: &str, separator: &str) -> Result<String, WireError> {
    match v {
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            for (i, b) in blocks.iter().enumerate() {
                texts.push(block_text(b, &format!("{at}[{i}]"))?);
            }
            Ok(texts.join(separator))
        }
        other => text_of(other, at),
    }
}

/// The text of one text block (a block without text is refused with its type).
fn block_text(block: &Value, at: &str) -> Result<String, WireError> {
    Ok(part_text(block, Parts::Strict, at)?
        .unwrap_or_default()
        .to_owned())
}

/// One Messages turn as chat messages.
fn read_turn(turn: &Value, at: &str, out: &mut Vec<Message>) -> Result<(), WireError> {
    let role = turn.get("role").and_then(Value::as_str).unwrap_or("");
    let content = turn.get("content").unwrap_or(&Value::Null);
    let blocks = match content {
        Value::Array(b) => b.clone(),
        other => vec![json!({"type": "text", "text": text_of(other, at)?})],
    };
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for (j, b) in blocks.iter().enumerate() {
        let at = format!("{at}.content[{j}]");
        match (role, b.get("type").and_then(Value::as_str).unwrap_or("")) {
            (_, "text") => texts.push(block_text(b, &at)?),
            ("user", "tool_result") => out.push(Message::tool(
                b.get("tool_use_id").and_then(Value::as_str).unwrap_or(""),
                blocks_text(
                    b.get("content").unwrap_or(&Value::Null),
                    &format!("{at}.content"),
                    "\n",
                )?,
            )),
            ("assistant", "tool_use") => calls.push(ToolCall::function(
                b.get("id").and_then(Value::as_str).unwrap_or(""),
                b.get("name").and_then(Value::as_str).unwrap_or(""),
                b.get("input").unwrap_or(&json!({})).to_string(),
            )),
            // Thinking cannot be carried into chat completions (see the module docs).
            ("assistant", "thinking" | "redacted_thinking") => {}
            (_, kind) => {
                return Err(WireError::Block {
                    at,
                    kind: kind.to_owned(),
                    role: role.to_owned(),
                });
            }
        }
    }
    let text = texts.join("\n");
    match role {
        "user" if !text.is_empty() || out.last().is_none_or(|m| m.role != MessageRole::Tool) => {
            out.push(Message::user(text));
        }
        "user" => {}
        // Claude Code puts its environment notes in a system turn among the messages.
        "system" => out.push(Message::system(text)),
        "assistant" => out.push(Message::assistant_tool_calls(
            (!text.is_empty() || calls.is_empty()).then_some(text),
            calls,
        )),
        other => {
            return Err(WireError::Role {
                at: at.to_owned(),
                role: other.to_owned(),
                why: "is neither user, assistant nor system",
            });
        }
    }
    Ok(())
}

fn tool_choice_to_chat(choice: &Value) -> Option<Value> {
    Some(match choice.get("type")?.as_str()? {
        "auto" => json!("auto"),
        "any" => json!("required"),
        "none" => json!("none"),
        "tool" => json!({"type": "function", "function": {"name": choice.get("name")?}}),
        _ => return None,
    })
}

fn tool_choice_from_chat(choice: &Value) -> Option<Value> {
    Some(match choice {
        Value::String(s) if s == "auto" => json!({"type": "auto"}),
        Value::String(s) if s == "required" => json!({"type": "any"}),
        Value::String(s) if s == "none" => json!({"type": "none"}),
        Value::Object(o) => json!({"type": "tool", "name": o.get("function")?.get("name")?}),
        _ => return None,
    })
}

/// The Messages stop reason of a chat finish reason.
fn stop_reason(response: &ChatResponse) -> &'static str {
    match response.finish_reason() {
        _ if !response.tool_calls().is_empty() => "tool_use",
        Some("length") => "max_tokens",
        _ => "end_turn",
    }
}

/// The content blocks of a response: its text, then its tool calls.
fn content_blocks(response: &ChatResponse) -> Vec<Value> {
    let mut blocks = Vec::new();
    let text = response.text().unwrap_or("");
    if !text.is_empty() || response.tool_calls().is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for c in response.tool_calls() {
        blocks.push(
            json!({"type": "tool_use", "id": c.id, "name": c.function.name,
            "input": arguments_object(&c.function.arguments)}),
        );
    }
    blocks
}

fn message_id(response: &ChatResponse) -> String {
    if response.id.is_empty() {
        "msg_traparena".to_owned()
    } else {
        format!("msg_{}", response.id)
    }
}

/// A chat response as a Messages response; `model` is the name the client asked for.
fn response(response: &ChatResponse, model: &str) -> Value {
    let u = response.token_usage();
    json!({
        "id": message_id(response), "type": "message", "role": "assistant", "model": model,
        "content": content_blocks(response),
        "stop_reason": stop_reason(response), "stop_sequence": null,
        "usage": {"input_tokens": u.prompt_tokens, "output_tokens": u.completion_tokens},
    })
}

/// A chat response as the server-sent events of a streamed Messages response: each block
/// whole in one delta.
fn stream(response: &ChatResponse, model: &str) -> String {
    let u = response.token_usage();
    let mut out = String::new();
    let start = json!({"type": "message_start", "message": {
        "id": message_id(response), "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": u.prompt_tokens, "output_tokens": 0}}});
    sse_event(&mut out, "message_start", &start);
    for (index, block) in content_blocks(response).into_iter().enumerate() {
        let (empty, delta) = if block["type"] == "tool_use" {
            let mut empty = block.clone();
            empty["input"] = json!({});
            let partial = block["input"].to_string();
            (
                empty,
                json!({"type": "input_json_delta", "partial_json": partial}),
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            )
        };
        let at = |kind: &str, extra: Value| {
            let mut v = json!({"type": kind, "index": index});
            if let (Value::Object(o), Value::Object(e)) = (&mut v, extra) {
                o.extend(e);
            }
            v
        };
        sse_event(
            &mut out,
            "content_block_start",
            &at("content_block_start", json!({"content_block": empty})),
        );
        sse_event(
            &mut out,
            "content_block_delta",
            &at("content_block_delta", json!({"delta": delta})),
        );
        sse_event(
            &mut out,
            "content_block_stop",
            &at("content_block_stop", json!({})),
        );
    }
    let delta = json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason(response), "stop_sequence": null},
        "usage": {"output_tokens": u.completion_tokens}});
    sse_event(&mut out, "message_delta", &delta);
    sse_event(&mut out, "message_stop", &json!({"type": "message_stop"}));
    out
}

/// A Messages error body.
fn error(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// A chat request as a Messages request body for `model` (not streamed).
fn request(request: &ChatRequest, model: &str) -> Value {
    let mut system = Vec::new();
    let mut turns: Vec<Value> = Vec::new();
    for m in &request.messages {
        let text = m.content.clone().unwrap_or_default();
        let (role, blocks) = match m.role {
            MessageRole::System => {
                system.push(text);
                continue;
            }
            MessageRole::User => ("user", vec![json!({"type": "text", "text": text})]),
            MessageRole::Tool => (
                "user",
                vec![json!({"type": "tool_result",
                "tool_use_id": m.tool_call_id.clone().unwrap_or_default(), "content": text})],
            ),
            MessageRole::Assistant => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in &m.tool_calls {
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.function.name,
                        "input": arguments_object(&c.function.arguments)}),
                    );
                }
                ("assistant", blocks)
            }
        };
        // Consecutive turns of one role are one Messages turn (tool results, then text).
        match turns.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(b) = last["content"].as_array_mut() {
                    b.extend(blocks);
                }
            }
            _ => turns.push(json!({"role": role, "content": blocks})),
        }
    }
    let max_tokens = request
        .max_tokens
        .or_else(|| {
            request
                .extra
                .get("max_completion_tokens")?
                .as_u64()
                .map(|n| n as u32)
        })
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(max_tokens));
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(turns));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"name": t.function.name,
            "description": t.function.description.clone().unwrap_or_default(),
            "input_schema": super::schema_of(&t.function.parameters)})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.extra.get("top_p") {
        body.insert("top_p".into(), p.clone());
    }
    match request.extra.get("stop") {
        Some(Value::String(s)) => drop(body.insert("stop_sequences".into(), json!([s]))),
        Some(v @ Value::Array(_)) => drop(body.insert("stop_sequences".into(), v.clone())),
        _ => {}
    }
    if let Some(c) = request
        .extra
        .get("tool_choice")
        .and_then(tool_choice_from_chat)
    {
        body.insert("tool_choice".into(), c);
    }
    Value::Object(body)
}

/// A Messages response body as a chat response.
fn read_response(v: Value) -> Result<ChatResponse, WireError> {
    error_in(&v)?;
    let missing = |problem| WireError::Field {
        field: "content",
        problem,
    };
    if v.get("type").and_then(Value::as_str) == Some("error") || v.get("content").is_none() {
        return Err(missing("is missing"));
    }
    let Some(blocks) = v["content"].as_array() else {
        return Err(missing("is not a list"));
    };
    let mut message = ResponseMessage {
        role: "assistant".into(),
        ..ResponseMessage::default()
    };
    let (mut text, mut thinking) = (String::new(), String::new());
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(b["text"].as_str().unwrap_or("")),
            Some("thinking") => thinking.push_str(b["thinking"].as_str().unwrap_or("")),
            Some("tool_use") => message.tool_calls.push(ToolCall::function(
                b["id"].as_str().unwrap_or(""),
                b["name"].as_str().unwrap_or(""),
                b.get("input").unwrap_or(&json!({})).to_string(),
            )),
            _ => {}
        }
    }
    message.content = (!text.is_empty() || message.tool_calls.is_empty()).then_some(text);
    message.reasoning_content = (!thinking.is_empty()).then_some(thinking);
    let finish = match v["stop_reason"].as_str() {
        Some("tool_use") => "tool_calls",
        Some("max_tokens") => "length",
        Some("refusal") => "content_filter",
        _ => "stop",
    };
    let n = |k: &str| v["usage"][k].as_u64().unwrap_or(0);
    let prompt =
        n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens");
    let usage = v.get("usage").filter(|u| u.is_object()).map(|_| Usage {
        prompt_tokens: prompt,
        completion_tokens: n("output_tokens"),
        total_tokens: prompt + n("output_tokens"),
        ..Usage::default()
    });
    Ok(ChatResponse {
        id: v["id"].as_str().unwrap_or("").to_owned(),
        usage,
        ..ChatResponse::from_message(v["model"].as_str().unwrap_or(""), message, finish)
    })
}

//! OpenAI Responses (`POST /v1/responses`) ⇄ chat completions.
//!
//! A Responses conversation is a list of items: messages, `function_call`s and their
//! `function_call_output`s, and free-text `custom_tool_call`s (Codex CLI's `apply_patch`).
//! Consecutive calls after an assistant message are that message's tool calls in chat
//! completions; each output is a `tool` message. Only stateless use is carried: the client
//! sends the whole conversation every time (`store: false`), as Codex CLI does.

use serde_json::{Map, Value, json};

use super::{CUSTOM_INPUT, ReadRequest, WireFormat, arguments_object, error_in, sse_event};
use super::{take_common, text_of};
use crate::error::WireError;
use crate::types::{ChatRequest, ChatResponse, Message, MessageRole, ResponseMessage};
use crate::types::{CompletionTokensDetails, Parts, Tool, ToolCall, Usage, content_text};

/// OpenAI Responses ([`super::WireApi::OpenaiResponses`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenaiResponses;

impl WireFormat for OpenaiResponses {
    fn path(&self) -> &'static str {
        "responses"
    }

    fn read_request(&self, body: &[u8]) -> Result<ReadRequest, WireError> {
        read_request(body)
    }

    /// Calls of the `custom_tools` are custom tool calls.
    fn answer(&self, r: &ChatResponse, model: &str, custom_tools: &[String]) -> Value {
        response(r, model, custom_tools)
    }

    fn stream(&self, r: &ChatResponse, model: &str, custom_tools: &[String]) -> String {
        stream(r, model, custom_tools)
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        error(status, message)
    }

    /// Not streamed, not stored.
    fn request(&self, r: &ChatRequest, model: &str) -> Result<Value, serde_json::Error> {
        Ok(request(r, model))
    }

    fn read_response(&self, body: Value) -> Result<ChatResponse, WireError> {
        read_response(body)
    }
}

/// Reads a Responses request body as a chat request.
fn read_request(body: &[u8]) -> Result<ReadRequest, WireError> {
    let mut body = super::object_of(body)?;
    if body
        .get("previous_response_id")
        .is_some_and(|p| !p.is_null())
    {
        return Err(WireError::Unsupported {
            feature: "previous_response_id",
            instead: "send the whole conversation (store: false)",
        });
    }
    let model = super::take_model(&mut body);
    let stream = super::take_stream(&mut body);
    let mut messages = Vec::new();
    if let Some(Value::String(s)) = body.remove("instructions") {
        messages.push(Message::system(s));
    }
    match body.remove("input") {
        Some(Value::String(s)) => messages.push(Message::user(s)),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                read_item(item, &format!("input[{i}]"), &mut messages)?;
            }
        }
        _ => {
            return Err(WireError::NoField {
                field: "input",
                wanted: "(a text or a list of items)",
            });
        }
    }
    let mut request = ChatRequest::new(messages);
    take_common(&mut body, &mut request);
    if let Some(n) = body.remove("max_output_tokens").and_then(|n| n.as_u64()) {
        request.max_tokens = Some(u32::try_from(n).unwrap_or(u32::MAX));
    }
    let mut custom_tools = Vec::new();
    if let Some(Value::Array(tools)) = body.remove("tools") {
        for t in &tools {
            let name = t.get("name").and_then(Value::as_str).unwrap_or("");
            let description = t.get("description").and_then(Value::as_str).unwrap_or("");
            match t.get("type").and_then(Value::as_str) {
                Some("function") => request.tools.push(Tool::function(
                    name,
                    description,
                    t.get("parameters")
                        .cloned()
                        .unwrap_or(json!({"type": "object"})),
                )),
                Some("custom") => {
                    custom_tools.push(name.to_owned());
                    request
                        .tools
                        .push(Tool::function(name, description, custom_schema(t)));
                }
                // Hosted tools (web search, file search, ...) run at OpenAI: dropped.
                _ => {}
            }
        }
    }
    if let Some(choice) = body.remove("tool_choice") {
        let chat = match &choice {
            Value::String(_) => Some(choice.clone()),
            Value::Object(o) => o
                .get("name")
                .map(|n| json!({"type": "function", "function": {"name": n}})),
            _ => None,
        };
        if let Some(c) = chat {
            request.extra.insert("tool_choice".into(), c);
        }
    }
    if let Some(p) = body.remove("parallel_tool_calls").filter(Value::is_boolean) {
        request.extra.insert("parallel_tool_calls".into(), p);
    }
    Ok(ReadRequest {
        request,
        stream,
        model,
        custom_tools,
    })
}

/// A free-text tool as a function of one string argument; its grammar, when it has one, is
/// told in the argument's description.
fn custom_schema(tool: &Value) -> Value {
    let mut input =
        json!({"type": "string", "description": "The tool's whole input, as free text."});
    if let Some(def) = tool.pointer("/format/definition").and_then(Value::as_str) {
        input["description"] = json!(format!(
            "The tool's whole input, as free text in this grammar:\n{def}"
        ));
    }
    json!({"type": "object", "properties": {CUSTOM_INPUT: input}, "required": [CUSTOM_INPUT]})
}

/// One input item as chat messages.
fn read_item(item: &Value, at: &str, out: &mut Vec<Message>) -> Result<(), WireError> {
    let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let kind = item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    let call = match kind {
        "message" => {
            let text = text_of(item.get("content").unwrap_or(&Value::Null), at)?;
            out.push(match s("role").as_str() {
                "system" | "developer" => Message::system(text),
                "user" => Message::user(text),
                "assistant" => Message::assistant(text),
                other => {
                    return Err(WireError::Role {
                        at: at.to_owned(),
                        role: other.to_owned(),
                        why: "is not passed on",
                    });
                }
            });
            return Ok(());
        }
        "function_call_output" | "custom_tool_call_output" => {
            let output = item.get("output").unwrap_or(&Value::Null);
            out.push(Message::tool(s("call_id"), text_of(output, at)?));
            return Ok(());
        }
        // Reasoning cannot be carried into chat completions (see the module docs).
        "reasoning" => return Ok(()),
        "function_call" => ToolCall::function(s("call_id"), s("name"), s("arguments")),
        "custom_tool_call" => ToolCall::function(
            s("call_id"),
            s("name"),
            json!({CUSTOM_INPUT: s("input")}).to_string(),
        ),
        other => {
            return Err(WireError::Item {
                at: at.to_owned(),
                kind: other.to_owned(),
            });
        }
    };
    // A call belongs to the assistant turn it follows, or opens one.
    match out.last_mut() {
        Some(m) if m.role == MessageRole::Assistant => m.tool_calls.push(call),
        _ => out.push(Message::assistant_tool_calls(None, vec![call])),
    }
    Ok(())
}

/// The output items of a response; a call of a tool named in `custom_tools` is a custom call.
fn output_items(response: &ChatResponse, custom_tools: &[String], done: bool) -> Vec<Value> {
    let status = if done { "completed" } else { "in_progress" };
    let mut items = Vec::new();
    let text = response.text().unwrap_or("");
    if !text.is_empty() || response.tool_calls().is_empty() {
        items.push(
            json!({"type": "message", "id": format!("msg_{}", base_id(response)),
            "status": status, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        );
    }
    for (i, c) in response.tool_calls().iter().enumerate() {
        let name = &c.function.name;
        if custom_tools.contains(name) {
            let input = match arguments_object(&c.function.arguments).get(CUSTOM_INPUT) {
                Some(Value::String(s)) => s.clone(),
                _ => c.function.arguments.clone(),
            };
            items.push(
                json!({"type": "custom_tool_call", "id": format!("ctc_{i}_{}", base_id(response)),
                "status": status, "call_id": c.id, "name": name, "input": input}),
            );
        } else {
            items.push(json!({"type": "function_call", "id": format!("fc_{i}_{}", base_id(response)),
                "status": status, "call_id": c.id, "name": name, "arguments": c.function.arguments}));
        }
    }
    items
}

fn base_id(response: &ChatResponse) -> &str {
    if response.id.is_empty() {
        "traparena"
    } else {
        &response.id
    }
}

/// A chat response as a Responses response; `model` is the name the client asked for.
fn response(response: &ChatResponse, model: &str, custom_tools: &[String]) -> Value {
    envelope(
        response,
        model,
        output_items(response, custom_tools, true),
        true,
    )
}

fn envelope(response: &ChatResponse, model: &str, output: Vec<Value>, done: bool) -> Value {
    let u = response.token_usage();
    let incomplete = done && response.finish_reason() == Some("length");
    let status = match (done, incomplete) {
        (false, _) => "in_progress",
        (true, true) => "incomplete",
        (true, false) => "completed",
    };
    json!({
        "id": format!("resp_{}", base_id(response)), "object": "response", "created_at": 0,
        "status": status, "model": model, "output": output, "error": null,
        "incomplete_details": if incomplete { json!({"reason": "max_output_tokens"}) } else { Value::Null },
        "usage": if done { json!({
            "input_tokens": u.prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": u.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            "total_tokens": u.prompt_tokens + u.completion_tokens}) } else { Value::Null },
    })
}

/// A chat response as the server-sent events of a streamed Responses response: every item
/// added, its text or arguments in one delta, done, then the whole response.
fn stream(response: &ChatResponse, model: &str, custom_tools: &[String]) -> String {
    let mut events = Events::default();
    let open = envelope(response, model, Vec::new(), false);
    events.emit("response.created", json!({"response": open}));
    events.emit("response.in_progress", json!({"response": open}));
    let pending = output_items(response, custom_tools, false);
    let done = output_items(response, custom_tools, true);
    for (index, (start, item)) in pending.into_iter().zip(done.iter()).enumerate() {
        events.item(index, start, item);
    }
    let last = envelope(response, model, done, true);
    let kind = if last["status"] == "incomplete" {
        "response.incomplete"
    } else {
        "response.completed"
    };
    events.emit(kind, json!({"response": last}));
    events.out
}

/// Server-sent events in the making, numbered in order.
#[derive(Default)]
struct Events {
    out: String,
    seq: u64,
}

impl Events {
    fn emit(&mut self, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.seq);
        self.seq += 1;
        sse_event(&mut self.out, kind, &data);
    }

    /// The events of output item `index`: added (`start`, emptied), its content, done (`item`).
    fn item(&mut self, index: usize, start: Value, item: &Value) {
        let mut added = start;
        let (deltas, done_field, whole) = match item["type"].as_str() {
            Some("message") => {
                added["content"] = json!([]);
                ("", "", Value::Null)
            }
            Some("function_call") => {
                added["arguments"] = json!("");
                (
                    "function_call_arguments",
                    "arguments",
                    item["arguments"].clone(),
                )
            }
            _ => {
                added["input"] = json!("");
                ("custom_tool_call_input", "input", item["input"].clone())
            }
        };
        self.emit(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
        );
        let at = |extra: Value| {
            let mut v = json!({"item_id": item["id"], "output_index": index});
            if let (Value::Object(o), Value::Object(e)) = (&mut v, extra) {
                o.extend(e);
            }
            v
        };
        if deltas.is_empty() {
            let part = item["content"][0].clone();
            let text = part["text"].clone();
            let empty = json!({"type": "output_text", "text": "", "annotations": []});
            self.emit(
                "response.content_part.added",
                at(json!({"content_index": 0, "part": empty})),
            );
            self.emit(
                "response.output_text.delta",
                at(json!({"content_index": 0, "delta": text})),
            );
            self.emit(
                "response.output_text.done",
                at(json!({"content_index": 0, "text": text})),
            );
            self.emit(
                "response.content_part.done",
                at(json!({"content_index": 0, "part": part})),
            );
        } else {
            self.emit(
                &format!("response.{deltas}.delta"),
                at(json!({"delta": whole})),
            );
            self.emit(
                &format!("response.{deltas}.done"),
                at(json!({ done_field: whole })),
            );
        }
        self.emit(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }
}

/// A Responses error body.
fn error(status: u16, message: &str) -> Value {
    let kind = if (400..500).contains(&status) {
        "invalid_request_error"
    } else {
        "server_error"
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
}

/// A chat request as a Responses request body for `model` (not streamed, not stored).
fn request(request: &ChatRequest, model: &str) -> Value {
    let mut instructions = Vec::new();
    let mut input = Vec::new();
    for m in &request.messages {
        let text = m.content.clone().unwrap_or_default();
        match m.role {
            MessageRole::System => instructions.push(text),
            MessageRole::User => input.push(json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": text}]})),
            MessageRole::Tool => input.push(json!({"type": "function_call_output",
                "call_id": m.tool_call_id.clone().unwrap_or_default(), "output": text})),
            MessageRole::Assistant => {
                if !text.is_empty() {
                    input.push(json!({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": text}]}));
                }
                for c in &m.tool_calls {
                    input.push(json!({"type": "function_call", "call_id": c.id,
                        "name": c.function.name, "arguments": c.function.arguments}));
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    if !instructions.is_empty() {
        body.insert("instructions".into(), json!(instructions.join("\n\n")));
    }
    body.insert("input".into(), Value::Array(input));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request.tools.iter().map(|t| json!({"type": "function",
            "name": t.function.name, "description": t.function.description.clone().unwrap_or_default(),
            "parameters": super::schema_of(&t.function.parameters)})).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let max = request
        .max_tokens
        .map(u64::from)
        .or_else(|| request.extra.get("max_completion_tokens")?.as_u64());
    if let Some(n) = max {
        body.insert("max_output_tokens".into(), json!(n));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    for key in ["top_p", "parallel_tool_calls"] {
        if let Some(v) = request.extra.get(key) {
            body.insert(key.into(), v.clone());
        }
    }
    match request.extra.get("tool_choice") {
        Some(c @ Value::String(_)) => drop(body.insert("tool_choice".into(), c.clone())),
        Some(Value::Object(o)) => {
            if let Some(name) = o.get("function").and_then(|f| f.get("name")) {
                body.insert(
                    "tool_choice".into(),
                    json!({"type": "function", "name": name}),
                );
            }
        }
        _ => {}
    }
    body.insert("store".into(), json!(false));
    Value::Object(body)
}

/// A Responses response body as a chat response.
fn read_response(v: Value) -> Result<ChatResponse, WireError> {
    error_in(&v)?;
    let Some(items) = v.get("output").and_then(Value::as_array) else {
        return Err(WireError::Field {
            field: "output",
            problem: "is missing or not a list",
        });
    };
    let mut message = ResponseMessage {
        role: "assistant".into(),
        ..ResponseMessage::default()
    };
    let (mut text, mut reasoning) = (String::new(), String::new());
    for item in items {
        let s = |k: &str| item[k].as_str().unwrap_or("").to_owned();
        match item["type"].as_str() {
            // A reply's parts are read leniently (a refusal part has no text).
            Some("message") => text.push_str(&reply_text(&item["content"])),
            Some("reasoning") => reasoning.push_str(&reply_text(&item["summary"])),
            Some("function_call") => {
                message
                    .tool_calls
                    .push(ToolCall::function(s("call_id"), s("name"), s("arguments")))
            }
            Some("custom_tool_call") => message.tool_calls.push(ToolCall::function(
                s("call_id"),
                s("name"),
                json!({CUSTOM_INPUT: s("input")}).to_string(),
            )),
            _ => {}
        }
    }
    message.content = (!text.is_empty() || message.tool_calls.is_empty()).then_some(text);
    message.reasoning_content = (!reasoning.is_empty()).then_some(reasoning);
    let finish = match (v["status"].as_str(), message.tool_calls.is_empty()) {
        (Some("incomplete"), _) => "length",
        (_, false) => "tool_calls",
        _ => "stop",
    };
    let n = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let usage = v.get("usage").filter(|u| u.is_object()).map(|_| Usage {
        prompt_tokens: n("/usage/input_tokens"),
        completion_tokens: n("/usage/output_tokens"),
        total_tokens: n("/usage/input_tokens") + n("/usage/output_tokens"),
        completion_tokens_details: Some(CompletionTokensDetails {
            reasoning_tokens: n("/usage/output_tokens_details/reasoning_tokens"),
            ..CompletionTokensDetails::default()
        }),
        ..Usage::default()
    });
    Ok(ChatResponse {
        id: v["id"].as_str().unwrap_or("").to_owned(),
        usage,
        ..ChatResponse::from_message(v["model"].as_str().unwrap_or(""), message, finish)
    })
}

/// The text of a list of a reply's content parts, by the one content rule, lenient (anything
/// but a list holds no text here).
fn reply_text(parts: &Value) -> String {
    match parts {
        Value::Array(_) => content_text(parts, Parts::Lenient, "output")
            .ok()
            .flatten()
            .unwrap_or_default(),
        _ => String::new(),
    }
}

//! The model APIs TrapArena speaks besides OpenAI Chat Completions, translated to and from
//! the chat-completions types every other part of TrapArena works on.
//!
//! - [`anthropic`]: Anthropic Messages (`POST /v1/messages`), which Claude Code speaks;
//! - [`responses`]: OpenAI Responses (`POST /v1/responses`), which Codex CLI speaks.
//!
//! Each module translates both ways on both sides of a conversation: a request the format's
//! client sent into a [`ChatRequest`] ([`anthropic::read_request`]) and a [`ChatResponse`]
//! back into the format's answer, whole or as its server-sent events (what the injecting
//! proxy of `traparena-external` needs), and a [`ChatRequest`] into the format's request and
//! its answer into a [`ChatResponse`] (what [`crate::ChatClient`] needs for an upstream that
//! speaks the format, [`WireApi`] in its [`crate::EndpointConfig`]).
//!
//! Translation carries text, tool definitions, tool calls and their results, the sampling
//! parameters the formats share, the stop reason and the token counts. It cannot carry what
//! chat completions has no place for, and drops it: thinking and reasoning items of a request
//! (a reply's reasoning is kept, as `reasoning_content`), prompt-cache markers
//! (`cache_control`), the `is_error` flag of a tool result, images and documents (a request
//! with one is refused with a reason), server-side tools (web search and the like), and the
//! Responses API's stored state (`previous_response_id` is refused: the whole conversation
//! must be sent, as Codex CLI does).
//!
//! [`ChatRequest`]: crate::ChatRequest
//! [`ChatResponse`]: crate::ChatResponse

pub mod anthropic;
pub mod responses;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::ChatRequest;

/// The API an endpoint speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireApi {
    /// OpenAI Chat Completions (`{base_url}/chat/completions`): vLLM, llama.cpp, SGLang,
    /// Ollama, OpenAI, OpenRouter, ...
    #[default]
    ChatCompletions,
    /// Anthropic Messages (`{base_url}/messages`; the base URL ends in `/v1`).
    AnthropicMessages,
    /// OpenAI Responses (`{base_url}/responses`).
    OpenaiResponses,
}

impl WireApi {
    /// The last part of the endpoint's path under the base URL.
    pub fn path(self) -> &'static str {
        match self {
            WireApi::ChatCompletions => "chat/completions",
            WireApi::AnthropicMessages => "messages",
            WireApi::OpenaiResponses => "responses",
        }
    }

    /// The name in specs and profiles (`chat_completions`, ...).
    pub fn name(self) -> &'static str {
        match self {
            WireApi::ChatCompletions => "chat_completions",
            WireApi::AnthropicMessages => "anthropic_messages",
            WireApi::OpenaiResponses => "openai_responses",
        }
    }
}

/// A request as a client of one of the formats sent it, read as a chat request.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRequest {
    /// The conversation and its parameters.
    pub request: ChatRequest,
    /// Whether the client asked for server-sent events.
    pub stream: bool,
    /// The model the client named, if it named one.
    pub model: Option<String>,
    /// Tools that take free text rather than JSON arguments (the Responses API's `custom`
    /// tools, such as Codex CLI's `apply_patch`): in the chat request each is a function with
    /// one string argument, `input`, and its calls go back to the client as custom calls.
    pub custom_tools: Vec<String>,
}

/// The argument a free-text tool's call carries in a chat request.
pub const CUSTOM_INPUT: &str = "input";

/// One server-sent event: `event: NAME` and its JSON data.
pub(crate) fn sse_event(out: &mut String, name: &str, data: &Value) {
    out.push_str("event: ");
    out.push_str(name);
    out.push_str("\ndata: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

/// A tool call's arguments as a JSON object (`{}` when empty; text that is not a JSON object
/// is kept under `input`, so that nothing the model said is lost).
pub(crate) fn arguments_object(arguments: &str) -> Value {
    let text = arguments.trim();
    if text.is_empty() {
        return Value::Object(Default::default());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => v,
        _ => serde_json::json!({ CUSTOM_INPUT: arguments }),
    }
}

/// A tool's parameter schema for a format that requires one (`{"type": "object"}` for a tool
/// that declared none).
pub(crate) fn schema_of(parameters: &Value) -> Value {
    if parameters.is_null() {
        serde_json::json!({"type": "object", "properties": {}})
    } else {
        parameters.clone()
    }
}

/// The text of a content value: a string, or the `text` of each part of a list, joined.
/// Parts that are not text are refused with their type.
pub(crate) fn text_of(content: &Value, at: &str) -> Result<String, String> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        Value::Array(parts) => {
            let mut text = String::new();
            for p in parts {
                match (p.get("type").and_then(Value::as_str), p.get("text")) {
                    (_, Some(Value::String(t))) => text.push_str(t),
                    (Some(kind), _) => {
                        return Err(format!(
                            "{at}: only text is passed on (a part of type {kind:?} is not)"
                        ));
                    }
                    _ => return Err(format!("{at}: a content part without text")),
                }
            }
            Ok(text)
        }
        other => Err(format!(
            "{at}: content is neither text nor a list ({other})"
        )),
    }
}

/// The sampling parameters two formats share under other names, moved from a request body
/// into the chat request's fields (`from` → chat name).
pub(crate) fn take_common(body: &mut serde_json::Map<String, Value>, request: &mut ChatRequest) {
    if let Some(t) = body.remove("temperature").and_then(|t| t.as_f64()) {
        request.temperature = Some(t);
    }
    if let Some(p) = body.remove("top_p").filter(|p| !p.is_null()) {
        request.extra.insert("top_p".into(), p);
    }
}

#[cfg(test)]
mod tests;

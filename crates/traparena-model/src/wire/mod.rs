//! The model APIs TrapArena speaks, each translated to and from the chat-completions types
//! every other part of TrapArena works on, behind one trait, [`WireFormat`]:
//!
//! - [`chat`]: OpenAI Chat Completions (`POST /v1/chat/completions`), which most servers and
//!   agents speak, and whose types TrapArena's own are;
//! - [`anthropic`]: Anthropic Messages (`POST /v1/messages`), which Claude Code speaks;
//! - [`responses`]: OpenAI Responses (`POST /v1/responses`), which Codex CLI speaks.
//!
//! [`WireApi::format`] is the one place that picks a format's translation. Each format
//! translates both ways on both sides of a conversation: a request the format's client sent
//! into a [`ChatRequest`] ([`WireFormat::read_request`]) and a [`ChatResponse`] back into the
//! format's answer, whole or as its server-sent events (what the injecting proxy of
//! `traparena-external` needs), and a [`ChatRequest`] into the format's request and its answer
//! into a [`ChatResponse`] (what [`crate::ChatClient`] needs for an upstream that speaks the
//! format, [`WireApi`] in its [`crate::EndpointConfig`]). What cannot be read is a typed
//! [`WireError`], whose text names the place in the body.
//!
//! The text of a message's content is read by one rule in every format (a string, `null`, or a
//! list of parts whose texts are joined; a part without text refused in a request).
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
//! [`WireError`]: crate::WireError

pub mod anthropic;
pub mod chat;
pub mod responses;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::WireError;
use crate::types::{ChatRequest, ChatResponse, Parts, content_text};

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
    /// Every API, in the order the proxy tries their paths.
    pub const ALL: [WireApi; 3] = [
        WireApi::ChatCompletions,
        WireApi::AnthropicMessages,
        WireApi::OpenaiResponses,
    ];

    /// The format's translations: the one place that chooses by API.
    pub fn format(self) -> &'static dyn WireFormat {
        match self {
            WireApi::ChatCompletions => &chat::ChatCompletions,
            WireApi::AnthropicMessages => &anthropic::AnthropicMessages,
            WireApi::OpenaiResponses => &responses::OpenaiResponses,
        }
    }

    /// The last part of the endpoint's path under the base URL ([`WireFormat::path`]).
    pub fn path(self) -> &'static str {
        self.format().path()
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

/// How a format's requests carry the API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyHeader {
    /// `Authorization: Bearer KEY` (marked sensitive).
    Bearer,
    /// A header of its own holding the key as it is (Anthropic's `x-api-key`).
    Named(&'static str),
}

/// One model API's wire format, translated to and from TrapArena's chat-completions types.
///
/// The server side is what a proxy that speaks the format to its clients needs
/// ([`read_request`](WireFormat::read_request), [`answer`](WireFormat::answer),
/// [`stream`](WireFormat::stream), [`error_body`](WireFormat::error_body)); the client side is
/// what [`crate::ChatClient`] needs for an upstream that speaks it
/// ([`path`](WireFormat::path), [`request`](WireFormat::request),
/// [`read_response`](WireFormat::read_response), and the defaulted
/// [`upstream_body`](WireFormat::upstream_body), [`headers`](WireFormat::headers) and
/// [`key_header`](WireFormat::key_header)). [`WireApi::format`] gives each API's.
pub trait WireFormat: Send + Sync + std::fmt::Debug {
    /// The last part of the endpoint's path under the base URL (`chat/completions`).
    fn path(&self) -> &'static str;

    /// Reads a request body as the format's client sent it.
    fn read_request(&self, body: &[u8]) -> Result<ReadRequest, WireError>;

    /// A chat response as the format's whole answer; `model` is the name the client asked
    /// for, `custom_tools` its free-text tools ([`ReadRequest::custom_tools`]).
    fn answer(&self, response: &ChatResponse, model: &str, custom_tools: &[String]) -> Value;

    /// A chat response as the server-sent events of the format's streamed answer (arguments
    /// as for [`WireFormat::answer`]).
    fn stream(&self, response: &ChatResponse, model: &str, custom_tools: &[String]) -> String;

    /// The format's error body for an HTTP `status` and a message.
    fn error_body(&self, status: u16, message: &str) -> Value;

    /// A chat request as the format's request body for `model` (not streamed).
    fn request(&self, request: &ChatRequest, model: &str) -> Result<Value, serde_json::Error>;

    /// The body sent upstream, made from the chat completions body the client built for a
    /// request (its fields, `model`, and what the client adapted after a server refused a
    /// parameter). By default the body is read back as a chat request, so that what was
    /// adapted holds here too, and translated with [`WireFormat::request`].
    fn upstream_body(
        &self,
        chat_body: Map<String, Value>,
        model: &str,
    ) -> Result<Value, serde_json::Error> {
        let request: ChatRequest = serde_json::from_value(Value::Object(chat_body))?;
        self.request(&request, model)
    }

    /// Reads an upstream's successful (2xx) answer, a JSON object, as a chat response; an
    /// error object in its place is [`WireError::ErrorBody`].
    fn read_response(&self, body: Value) -> Result<ChatResponse, WireError>;

    /// Headers every request carries besides the content type and the key (by default none).
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// How the API key goes in a request (by default `Authorization: Bearer`).
    fn key_header(&self) -> KeyHeader {
        KeyHeader::Bearer
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

/// The text of a content value of a client's request (empty for `null`): the one content rule,
/// strict ([`Parts::Strict`]); `at` names where the content is.
pub(crate) fn text_of(content: &Value, at: &str) -> Result<String, WireError> {
    Ok(content_text(content, Parts::Strict, at)?.unwrap_or_default())
}

/// The body of a client's request as a JSON object.
pub(crate) fn object_of(body: &[u8]) -> Result<Map<String, Value>, WireError> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(WireError::NotObject),
        Err(source) => Err(WireError::NotJson { source }),
    }
}

/// The model a client named in its request, taken out of the body.
pub(crate) fn take_model(body: &mut Map<String, Value>) -> Option<String> {
    body.remove("model")
        .and_then(|m| m.as_str().map(str::to_owned))
}

/// Whether a client asked for a stream, taken out of the body.
pub(crate) fn take_stream(body: &mut Map<String, Value>) -> bool {
    body.remove("stream")
        .and_then(|s| s.as_bool())
        .unwrap_or(false)
}

/// `error.message`, or the error itself when it is a string, or its JSON.
pub(crate) fn error_text(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        Value::Object(o) => match o.get("message") {
            Some(Value::String(s)) => s.clone(),
            _ => error.to_string(),
        },
        other => other.to_string(),
    }
}

/// The error object of an answer that has one (not `null`), as [`WireError::ErrorBody`].
pub(crate) fn error_in(answer: &Value) -> Result<(), WireError> {
    match answer.get("error").filter(|e| !e.is_null()) {
        Some(e) => Err(WireError::ErrorBody {
            message: error_text(e),
        }),
        None => Ok(()),
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

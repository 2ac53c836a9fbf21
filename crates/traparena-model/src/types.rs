//! Request and response types of the OpenAI-compatible chat-completions protocol.
//!
//! Requests serialize only what is set (absent options are omitted), so they suit strict
//! hosted APIs. Responses are lenient: every field has a default, `null` reads as the default,
//! and unknown fields are kept in a flattened `extra` map, so vLLM, the llama.cpp server and
//! hosted APIs all parse.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::error::ModelError;

/// Who speaks a [`Message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    /// Instructions for the model.
    System,
    /// The user's (or harness's) turn.
    User,
    /// The model's earlier turn.
    Assistant,
    /// The result of a tool call, answering the assistant's `tool_calls`.
    Tool,
}

/// One message of a conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: MessageRole,
    /// The text (absent for an assistant turn that only calls tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Tool calls made by an assistant turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a `tool` message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Optional participant name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    fn plain(role: MessageRole, content: impl Into<String>) -> Self {
        Message {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(MessageRole::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(MessageRole::User, content)
    }

    /// An assistant message holding text.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::plain(MessageRole::Assistant, content)
    }

    /// An assistant message that called tools (with optional accompanying text).
    pub fn assistant_tool_calls(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message {
            role: MessageRole::Assistant,
            content,
            tool_calls,
            tool_call_id: None,
            name: None,
        }
    }

    /// A tool result answering the call with id `tool_call_id`.
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            tool_call_id: Some(tool_call_id.into()),
            ..Self::plain(MessageRole::Tool, content)
        }
    }
}

/// A tool call: the function the model wants called and its JSON-encoded arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, echoed back in the answering [`Message::tool`].
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
    /// Always `function` today.
    #[serde(
        rename = "type",
        default = "function_kind",
        deserialize_with = "kind_or_function"
    )]
    pub kind: String,
    /// The function and its arguments.
    pub function: FunctionCall,
}

/// The function part of a [`ToolCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The function's name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// The arguments as a JSON text. Servers that send a JSON object instead of a string are
    /// tolerated: the object is stored as its JSON text.
    #[serde(default, deserialize_with = "arguments_text")]
    pub arguments: String,
}

impl ToolCall {
    /// A function call (for scripted fakes and conversation histories).
    pub fn function(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: function_kind(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }

    /// The arguments as a JSON value. Empty arguments read as `{}`; arguments wrapped in prose
    /// or a fenced block are unwrapped with [`extract_json_object`](crate::extract_json_object);
    /// arguments encoded twice (a JSON string holding the JSON object) are decoded.
    pub fn arguments_value(&self) -> Result<Value, ModelError> {
        let text = self.function.arguments.trim();
        if text.is_empty() {
            return Ok(Value::Object(Map::new()));
        }
        match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::String(_)) => Ok(crate::textcalls::decode_arguments(&v).unwrap_or(v)),
            Ok(v) => Ok(v),
            Err(source) => {
                crate::extract::extract_json_object(text).ok_or_else(|| ModelError::ToolArguments {
                    tool: self.function.name.clone(),
                    field: ".".to_owned(),
                    source,
                })
            }
        }
    }

    /// The arguments parsed into `T`; errors name the tool and the offending field.
    pub fn parse_arguments<T: DeserializeOwned>(&self) -> Result<T, ModelError> {
        let value = self.arguments_value()?;
        serde_path_to_error::deserialize(value).map_err(|e| ModelError::ToolArguments {
            tool: self.function.name.clone(),
            field: e.path().to_string(),
            source: e.into_inner(),
        })
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// Always `function` today.
    #[serde(rename = "type")]
    pub kind: ToolKind,
    /// The function's definition.
    pub function: FunctionDefinition,
}

/// The kind of a [`Tool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolKind {
    /// A function with JSON-schema parameters.
    #[default]
    Function,
}

/// A function the model may call: its name, description and JSON-schema parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDefinition {
    /// The function's name.
    pub name: String,
    /// What the function does (shown to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON schema (`{"type": "object", "properties": ...}`) for the arguments.
    pub parameters: Value,
    /// Ask the server to enforce the schema strictly (hosted APIs); omitted when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl Tool {
    /// A function tool.
    pub fn function(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> Self {
        Tool {
            kind: ToolKind::Function,
            function: FunctionDefinition {
                name: name.into(),
                description: Some(description.into()),
                parameters,
                strict: None,
            },
        }
    }
}

/// The `response_format` of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResponseFormat {
    /// Free text (the default; rarely worth sending).
    Text,
    /// Any JSON object (`{"type": "json_object"}`).
    JsonObject,
    /// JSON matching a schema:
    /// `{"type": "json_schema", "json_schema": {"name": .., "schema": .., "strict": true}}`.
    JsonSchema {
        /// The schema and its name.
        json_schema: JsonSchema,
    },
}

/// A named JSON schema for [`ResponseFormat::JsonSchema`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchema {
    /// A name for the schema (letters, digits, `_` and `-`).
    pub name: String,
    /// What the schema describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON schema.
    pub schema: Value,
    /// Ask for strict adherence.
    #[serde(default)]
    pub strict: bool,
}

impl ResponseFormat {
    /// A strict JSON-schema response format.
    pub fn json_schema(name: impl Into<String>, schema: Value) -> Self {
        ResponseFormat::JsonSchema {
            json_schema: JsonSchema {
                name: name.into(),
                description: None,
                schema,
                strict: true,
            },
        }
    }
}

/// A chat-completions request, without the model name (which the endpoint supplies).
///
/// Unset options are omitted from the JSON body. `extra` carries any other body field
/// (`top_p`, `stop`, `tool_choice`, ...) verbatim; it is part of the request's hash.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<Message>,
    /// Tools the model may call (native tool-call protocol).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// The response format (JSON-schema protocol).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Maximum number of tokens in the response (sent as `max_tokens`, or as
    /// `max_completion_tokens` when the endpoint is configured so).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling seed, for servers that honour one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Any other body fields, sent verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChatRequest {
    /// A request for `messages` with every option unset.
    pub fn new(messages: Vec<Message>) -> Self {
        ChatRequest {
            messages,
            ..ChatRequest::default()
        }
    }

    /// Sets the tools.
    pub fn with_tools(mut self, tools: Vec<Tool>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the response format.
    pub fn with_response_format(mut self, format: ResponseFormat) -> Self {
        self.response_format = Some(format);
        self
    }

    /// Sets the temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the maximum response length in tokens.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the sampling seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
}

/// A chat-completions response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ChatResponse {
    /// The server's id for the completion.
    #[serde(deserialize_with = "null_default")]
    pub id: String,
    /// The model that answered, as the server names it.
    #[serde(deserialize_with = "null_default")]
    pub model: String,
    /// The completions (one unless `n` was asked for).
    #[serde(deserialize_with = "null_default")]
    pub choices: Vec<Choice>,
    /// Token counts, when the server reports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Parameters the client changed to get this response, after the server refused them
    /// (`max_tokens` renamed, the temperature dropped, the `response_format` stepped down), one
    /// line each; empty normally. Kept in cassettes so that a replay reproduces the record.
    #[serde(
        rename = "x_traparena_adjustments",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub adjustments: Vec<String>,
    /// Every other field the server sent (`object`, `created`, `system_fingerprint`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One completion of a [`ChatResponse`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Choice {
    /// Position among the choices.
    #[serde(deserialize_with = "null_default")]
    pub index: u32,
    /// The generated message.
    #[serde(deserialize_with = "null_default")]
    pub message: ResponseMessage,
    /// Why generation stopped (`stop`, `length`, `tool_calls`, ...).
    pub finish_reason: Option<String>,
    /// Every other field the server sent (`logprobs`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The message of a [`Choice`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ResponseMessage {
    /// Normally `assistant`.
    #[serde(deserialize_with = "null_default")]
    pub role: String,
    /// The text. An array of content parts is joined into one text.
    #[serde(deserialize_with = "content_text")]
    pub content: Option<String>,
    /// Tool calls the model made.
    #[serde(
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tool_calls: Vec<ToolCall>,
    /// Reasoning text, for servers that return it separately (vLLM, llama.cpp, DeepSeek).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// A refusal message (hosted APIs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// Every other field the server sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResponseMessage {
    /// This message as an assistant turn of a conversation history: the content and tool
    /// calls only, so that vendor fields are not sent back.
    pub fn to_message(&self) -> Message {
        Message::assistant_tool_calls(self.content.clone(), self.tool_calls.clone())
    }
}

/// Token counts as the server reports them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// Tokens of the prompt.
    #[serde(deserialize_with = "null_default")]
    pub prompt_tokens: u64,
    /// Tokens generated (including reasoning tokens on servers that report them).
    #[serde(deserialize_with = "null_default")]
    pub completion_tokens: u64,
    /// Prompt plus completion.
    #[serde(deserialize_with = "null_default")]
    pub total_tokens: u64,
    /// A breakdown of the completion tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
    /// Every other field the server sent (`prompt_tokens_details`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CompletionTokensDetails {
    /// Tokens spent on hidden reasoning.
    #[serde(deserialize_with = "null_default")]
    pub reasoning_tokens: u64,
    /// Every other field the server sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The token counts of one response, read from its [`Usage`] for accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens of the prompt.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// Of which reasoning tokens, where the server reports them (0 otherwise).
    pub reasoning_tokens: u64,
    /// Whether the server reported usage at all; `false` means the counts are unknown zeros.
    pub reported: bool,
}

impl ChatResponse {
    /// A response whose single choice says `text` (for scripted fakes).
    pub fn from_text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self::from_message(
            model,
            ResponseMessage {
                role: "assistant".to_owned(),
                content: Some(text.into()),
                ..ResponseMessage::default()
            },
            "stop",
        )
    }

    /// A response whose single choice calls `tool_calls` (for scripted fakes).
    pub fn from_tool_calls(model: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self::from_message(
            model,
            ResponseMessage {
                role: "assistant".to_owned(),
                tool_calls,
                ..ResponseMessage::default()
            },
            "tool_calls",
        )
    }

    fn from_message(model: impl Into<String>, message: ResponseMessage, finish: &str) -> Self {
        ChatResponse {
            model: model.into(),
            choices: vec![Choice {
                index: 0,
                message,
                finish_reason: Some(finish.to_owned()),
                extra: Map::new(),
            }],
            ..ChatResponse::default()
        }
    }

    /// Sets `usage` to the given prompt and completion counts.
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = Some(Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
            ..Usage::default()
        });
        self
    }

    /// The first choice's message.
    pub fn message(&self) -> Option<&ResponseMessage> {
        self.choices.first().map(|c| &c.message)
    }

    /// The first choice's text, if it has any.
    pub fn text(&self) -> Option<&str> {
        self.message().and_then(|m| m.content.as_deref())
    }

    /// The first choice's tool calls (empty when there are none).
    pub fn tool_calls(&self) -> &[ToolCall] {
        self.message().map_or(&[], |m| &m.tool_calls)
    }

    /// The first choice's finish reason.
    pub fn finish_reason(&self) -> Option<&str> {
        self.choices
            .first()
            .and_then(|c| c.finish_reason.as_deref())
    }

    /// Token counts for accounting: zeros with `reported == false` when the server sent no
    /// `usage`.
    pub fn token_usage(&self) -> TokenUsage {
        match &self.usage {
            None => TokenUsage::default(),
            Some(u) => TokenUsage {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                reasoning_tokens: u
                    .completion_tokens_details
                    .as_ref()
                    .map_or(0, |d| d.reasoning_tokens),
                reported: true,
            },
        }
    }
}

/// `null` (or a missing field, with `#[serde(default)]`) reads as the type's default.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn function_kind() -> String {
    "function".to_owned()
}

fn kind_or_function<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_else(function_kind))
}

/// Tool-call arguments: a JSON text, or (tolerated) a JSON value that is stored as its text.
fn arguments_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null => String::new(),
        Value::String(s) => s,
        other => other.to_string(),
    })
}

/// Message content: a string, `null`, or an array of content parts whose texts are joined.
fn content_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null => None,
        Value::String(s) => Some(s),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect::<String>(),
        ),
        other => Some(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_omits_unset_options() {
        let req = ChatRequest::new(vec![Message::user("hi")]);
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(v, json!({"messages": [{"role": "user", "content": "hi"}]}));
    }

    #[test]
    fn request_serializes_tools_format_and_history() {
        let call = ToolCall::function("c1", "read", r#"{"path":"a.py"}"#);
        let req = ChatRequest::new(vec![
            Message::system("s"),
            Message::assistant_tool_calls(None, vec![call]),
            Message::tool("c1", "file text"),
        ])
        .with_tools(vec![Tool::function(
            "read",
            "Read a file",
            json!({"type": "object"}),
        )])
        .with_response_format(ResponseFormat::json_schema(
            "act",
            json!({"type": "object"}),
        ))
        .with_temperature(0.7)
        .with_max_tokens(64)
        .with_seed(3);
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(
            v,
            json!({
                "messages": [
                    {"role": "system", "content": "s"},
                    {"role": "assistant", "tool_calls": [
                        {"id": "c1", "type": "function",
                         "function": {"name": "read", "arguments": "{\"path\":\"a.py\"}"}}]},
                    {"role": "tool", "content": "file text", "tool_call_id": "c1"}
                ],
                "tools": [{"type": "function", "function": {
                    "name": "read", "description": "Read a file", "parameters": {"type": "object"}}}],
                "response_format": {"type": "json_schema", "json_schema": {
                    "name": "act", "schema": {"type": "object"}, "strict": true}},
                "temperature": 0.7,
                "max_tokens": 64,
                "seed": 3
            })
        );
    }

    #[test]
    fn response_tolerates_nulls_missing_and_unknown_fields() {
        let body = json!({
            "id": null,
            "object": "chat.completion",
            "created": 1,
            "choices": [{
                "index": null,
                "message": {"role": "assistant", "content": null, "reasoning_content": "hmm",
                            "tool_calls": [{"id": "x", "type": null,
                                            "function": {"name": "f", "arguments": {"a": 1}}}],
                            "vendor": true},
                "finish_reason": "tool_calls",
                "logprobs": null
            }],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": null,
                      "completion_tokens_details": {"reasoning_tokens": 3, "accepted_prediction_tokens": null},
                      "prompt_tokens_details": {"cached_tokens": 0}},
            "timings": {"predicted_per_second": 100.5}
        });
        let r: ChatResponse = serde_json::from_value(body).unwrap();
        assert_eq!(r.tool_calls()[0].kind, "function");
        assert_eq!(r.tool_calls()[0].function.arguments, r#"{"a":1}"#);
        assert_eq!(
            r.message().unwrap().reasoning_content.as_deref(),
            Some("hmm")
        );
        assert_eq!(r.message().unwrap().extra["vendor"], json!(true));
        assert_eq!(r.extra["timings"]["predicted_per_second"], json!(100.5));
        let u = r.token_usage();
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.reasoning_tokens),
            (5, 7, 3)
        );
        assert!(u.reported);
        // Round trip through serde is lossless (the cassette relies on it).
        let again: ChatResponse =
            serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn missing_usage_is_zero_and_flagged() {
        let r: ChatResponse = serde_json::from_value(json!({
            "choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]
        }))
        .unwrap();
        assert_eq!(r.text(), Some("ab"));
        assert_eq!(r.token_usage(), TokenUsage::default());
        assert!(!r.token_usage().reported);
    }

    #[test]
    fn tool_arguments_parse_typed_and_name_the_field() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Read {
            path: String,
            start_line: Option<u32>,
        }
        let ok = ToolCall::function("1", "read", r#"{"path": "a.py", "start_line": 3}"#);
        assert_eq!(
            ok.parse_arguments::<Read>().unwrap(),
            Read {
                path: "a.py".into(),
                start_line: Some(3)
            }
        );
        let fenced = ToolCall::function("1", "read", "```json\n{\"path\": \"b.py\"}\n```");
        assert_eq!(fenced.parse_arguments::<Read>().unwrap().path, "b.py");
        let empty = ToolCall::function("1", "submit", "");
        assert_eq!(empty.arguments_value().unwrap(), json!({}));
        let bad = ToolCall::function("1", "read", r#"{"path": 5}"#);
        let err = bad.parse_arguments::<Read>().unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`read`") && text.contains("field `path`"),
            "{text}"
        );
        let garbage = ToolCall::function("1", "read", "not json");
        assert!(matches!(
            garbage.arguments_value().unwrap_err(),
            ModelError::ToolArguments { .. }
        ));
    }
}

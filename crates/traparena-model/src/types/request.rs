//! What is sent: the chat-completions request, the tools it offers and the response format
//! it asks for. Requests serialize only what is set.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::message::Message;

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
    /// A JSON schema (`{"type": "object", "properties": ...}`) for the arguments; `null`
    /// when a request left it out (a function without arguments), and then left out again.
    #[serde(default, skip_serializing_if = "Value::is_null")]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolCall;
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
}

//! The messages of a conversation and the tool calls an assistant turn carries, with the
//! reading of a call's arguments (typed, with errors naming the tool and the field).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lenient::{arguments_text, function_kind, kind_or_function, null_default};
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
            Ok(v @ Value::String(_)) => Ok(decode_arguments(&v).unwrap_or(v)),
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

/// Arguments as an object: an object as it is, or a string holding JSON (at most twice
/// encoded) that decodes to one.
pub(crate) fn decode_arguments(a: &Value) -> Option<Value> {
    let mut v = a.clone();
    for _ in 0..3 {
        match v {
            Value::Object(_) => return Some(v),
            Value::String(s) if s.trim().is_empty() => return Some(Value::Object(Map::new())),
            Value::String(s) => v = serde_json::from_str(&s).ok()?,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

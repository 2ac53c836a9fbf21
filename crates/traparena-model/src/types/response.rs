//! What comes back: the chat-completions response, its choices and their messages, the
//! server's usage report and the [`TokenUsage`] read from it for accounting. Every field has a
//! default and unknown fields are kept in `extra`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lenient::{content_text, null_default};
use super::message::{Message, ToolCall};

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
    /// Of the prompt tokens, those read from the server's cache, where it reports them
    /// (`prompt_tokens_details.cached_tokens`; 0 otherwise).
    #[serde(default)]
    pub cached_tokens: u64,
    /// The call's cost as the provider reported it (OpenRouter's `usage.cost`, a number of
    /// US dollars), in billionths of a dollar; `None` when it reported none (or not a
    /// non-negative number).
    #[serde(default)]
    pub reported_cost_nano_usd: Option<u64>,
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

    pub(crate) fn from_message(
        model: impl Into<String>,
        message: ResponseMessage,
        finish: &str,
    ) -> Self {
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
                cached_tokens: u
                    .extra
                    .get("prompt_tokens_details")
                    .and_then(|d| d.get("cached_tokens"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                reported_cost_nano_usd: u
                    .extra
                    .get("cost")
                    .and_then(Value::as_f64)
                    .filter(|c| c.is_finite() && *c >= 0.0)
                    .map(|c| (c * 1e9).round() as u64),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}

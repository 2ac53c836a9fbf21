//! Request parameters a server refused, how a refusal is recognised, and how the body is
//! changed for it.
//!
//! A refusal is deterministic: the same body gets the same answer. So it is never retried as
//! transient; a parameter this module can rename, drop or step down is changed once (and the
//! change kept for every later call of the client), any other is an error at once.

use serde_json::{Map, Value};

use crate::config::{EndpointConfig, MaxTokensField};
use crate::error::ModelError;
use crate::types::{ChatRequest, ResponseFormat};

/// How much of a requested `response_format` the server takes, learnt from its refusals.
/// Ordered: each step takes less than the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) enum FormatCap {
    /// Everything, `json_schema` included.
    #[default]
    Schema,
    /// `json_object` at most: a `json_schema` is sent as `json_object`, its schema in the
    /// system message.
    Object,
    /// No `response_format` at all: the JSON instruction is in the system message.
    Nothing,
}

/// What the client changed after a server refused a parameter. Every field only ever moves one
/// way (towards sending less), so two clones' knowledge merges without a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Adapted {
    /// `max_tokens` is sent as `max_completion_tokens`.
    pub(crate) max_completion_tokens: bool,
    /// No temperature is sent.
    pub(crate) omit_temperature: bool,
    /// How much of a `response_format` is sent.
    pub(crate) response_format: FormatCap,
}

/// A parameter a server refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    MaxTokens,
    Temperature,
    ResponseFormat,
}

/// What is effectively sent for a requested `response_format` under a cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// As requested (`text`, or nothing requested).
    AsRequested,
    /// `json_schema`.
    Schema,
    /// `json_object`.
    Object,
    /// Nothing, though JSON was requested.
    Nothing,
}

impl Adapted {
    /// As configured, before any refusal.
    pub(crate) fn from_config(config: &EndpointConfig) -> Self {
        Adapted {
            max_completion_tokens: config.max_tokens_field == MaxTokensField::MaxCompletionTokens,
            omit_temperature: config.omit_temperature,
            response_format: FormatCap::Schema,
        }
    }

    /// Every adaptation either knows.
    pub(crate) fn merge(self, other: Adapted) -> Adapted {
        Adapted {
            max_completion_tokens: self.max_completion_tokens || other.max_completion_tokens,
            omit_temperature: self.omit_temperature || other.omit_temperature,
            response_format: self.response_format.max(other.response_format),
        }
    }

    fn sent(&self, request: &ChatRequest) -> Sent {
        match (&request.response_format, self.response_format) {
            (Some(ResponseFormat::JsonSchema { .. }), FormatCap::Schema) => Sent::Schema,
            (Some(ResponseFormat::JsonSchema { .. }), FormatCap::Object)
            | (Some(ResponseFormat::JsonObject), FormatCap::Schema | FormatCap::Object) => {
                Sent::Object
            }
            (
                Some(ResponseFormat::JsonSchema { .. } | ResponseFormat::JsonObject),
                FormatCap::Nothing,
            ) => Sent::Nothing,
            _ => Sent::AsRequested,
        }
    }

    /// Changes a request's body (`model` already in it) as these adaptations say.
    pub(crate) fn apply(&self, body: &mut Map<String, Value>, request: &ChatRequest) {
        if self.max_completion_tokens
            && let Some(n) = body.remove("max_tokens")
        {
            body.insert("max_completion_tokens".to_owned(), n);
        }
        if self.omit_temperature {
            body.remove("temperature");
        }
        let schema = match &request.response_format {
            Some(ResponseFormat::JsonSchema { json_schema }) => Some(&json_schema.schema),
            _ => None,
        };
        let instruction = match (self.sent(request), schema) {
            (Sent::AsRequested | Sent::Schema, _) => return,
            (Sent::Object, None) => return,
            (Sent::Object, Some(_)) => {
                body.insert(
                    "response_format".to_owned(),
                    serde_json::json!({"type": "json_object"}),
                );
                json_instruction(schema)
            }
            (Sent::Nothing, _) => {
                body.remove("response_format");
                json_instruction(schema)
            }
        };
        add_to_system_message(body, &instruction);
    }

    /// Takes one step away from what was sent for `request`, for a refusal of `refused`, and
    /// says what changed; `None` when there is nothing left to change.
    pub(crate) fn step(&mut self, refused: Refused, request: &ChatRequest) -> Option<&'static str> {
        match refused {
            Refused::MaxTokens if !self.max_completion_tokens && request.max_tokens.is_some() => {
                self.max_completion_tokens = true;
                Some("sent `max_completion_tokens` instead of `max_tokens`")
            }
            Refused::Temperature if !self.omit_temperature && request.temperature.is_some() => {
                self.omit_temperature = true;
                Some("sent no temperature")
            }
            Refused::ResponseFormat => match self.sent(request) {
                Sent::Schema => {
                    self.response_format = FormatCap::Object;
                    Some(
                        "sent `response_format` `json_object` instead of `json_schema`, with the schema in the system message",
                    )
                }
                Sent::Object => {
                    self.response_format = FormatCap::Nothing;
                    Some(
                        "sent no `response_format`, with the JSON instruction in the system message",
                    )
                }
                Sent::AsRequested | Sent::Nothing => None,
            },
            _ => None,
        }
    }
}

/// What the model is told when the server does not enforce the JSON it was asked for.
fn json_instruction(schema: Option<&Value>) -> String {
    let mut s =
        "Answer with one JSON object and nothing else: no other text, no code fence.".to_owned();
    if let Some(schema) = schema {
        s.push_str(" The object must match this JSON schema:\n");
        s.push_str(&schema.to_string());
    }
    s
}

/// Appends `text` to the first system message, or puts a system message with it first.
fn add_to_system_message(body: &mut Map<String, Value>, text: &str) {
    let Some(Value::Array(messages)) = body.get_mut("messages") else {
        return;
    };
    let system = messages
        .iter_mut()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("system"));
    match system {
        Some(m) => {
            let content = match m.get("content").and_then(Value::as_str) {
                Some(c) if !c.trim().is_empty() => format!("{c}\n\n{text}"),
                _ => text.to_owned(),
            };
            m["content"] = Value::String(content);
        }
        None => messages.insert(0, serde_json::json!({"role": "system", "content": text})),
    }
}

/// The request fields the client can adapt, as a server's message may name them.
const ADAPTABLE: [&str; 4] = [
    "response_format",
    "max_completion_tokens",
    "max_tokens",
    "temperature",
];

/// The request field an error body names as the cause: OpenAI's `error.param` (or a top-level
/// `param`, as vLLM sends it), the first `loc` under `body` of a FastAPI/pydantic `detail`
/// (llama-cpp-python), else a field this client can adapt named in the message (llama.cpp's
/// "response_format type must be ...").
pub(crate) fn named_field(bytes: &[u8], message: &str) -> Option<String> {
    if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(bytes) {
        let param = o
            .get("error")
            .and_then(|e| e.get("param"))
            .or_else(|| o.get("param"))
            .and_then(Value::as_str)
            .filter(|p| !p.trim().is_empty());
        if let Some(p) = param {
            return Some(p.to_owned());
        }
        if let Some(Value::Array(details)) = o.get("detail")
            && let Some(field) = details.iter().find_map(pydantic_field)
        {
            return Some(field);
        }
    }
    let m = message.to_lowercase();
    ADAPTABLE
        .iter()
        .find(|f| m.contains(*f))
        .map(|f| (*f).to_owned())
}

/// The request field of one pydantic error: `loc` `["body", FIELD, ...]`.
fn pydantic_field(detail: &Value) -> Option<String> {
    let loc = detail.get("loc")?.as_array()?;
    let (first, rest) = loc.split_first()?;
    let field = if first.as_str() == Some("body") {
        rest.first()?
    } else {
        first
    };
    field.as_str().map(str::to_owned)
}

/// The message of a FastAPI/pydantic `detail` list: each error's location and message, and the
/// value refused (`body.response_format.type: Input should be 'text' or 'json_object' (got
/// "json_schema")`).
pub(crate) fn pydantic_message(details: &[Value]) -> Option<String> {
    let parts: Vec<String> = details
        .iter()
        .filter_map(|d| {
            let msg = d.get("msg")?.as_str()?;
            let loc = d
                .get("loc")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
                        .collect::<Vec<_>>()
                        .join(".")
                })
                .unwrap_or_default();
            let got = match d.get("input") {
                Some(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => {
                    format!(" (got {v})")
                }
                _ => String::new(),
            };
            Some(format!("{loc}: {msg}{got}"))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Which parameter an error refuses, if it refuses one this client can change: a 4xx or 5xx
/// naming `response_format` (or `json_schema`), or refusing `max_tokens` or the temperature.
pub(crate) fn refused(e: &ModelError) -> Option<Refused> {
    let ModelError::Status {
        status,
        message,
        field,
        ..
    } = e
    else {
        return None;
    };
    if !(400..=599).contains(status) {
        return None;
    }
    let m = message.to_lowercase();
    let named = |f: &str| field.as_deref() == Some(f) || m.contains(f);
    if named("response_format") || m.contains("json_schema") {
        return Some(Refused::ResponseFormat);
    }
    // 408 and 429 name no parameter; a 5xx must name it, else it is transient.
    if matches!(status, 408 | 429) || (*status >= 500 && field.is_none()) {
        return None;
    }
    let refusing = [
        "unsupported",
        "not supported",
        "does not support",
        "only the default",
        "not allowed",
        "use 'max_completion_tokens'",
        "use max_completion_tokens",
    ]
    .iter()
    .any(|w| m.contains(w));
    if named("max_tokens") && (refusing || m.contains("max_completion_tokens")) {
        Some(Refused::MaxTokens)
    } else if named("temperature") && refusing {
        Some(Refused::Temperature)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Message;
    use serde_json::json;

    const LLAMA_CPP_PYTHON: &str = r#"{"detail":[{"type":"literal_error","loc":["body","response_format","type"],"msg":"Input should be 'text' or 'json_object'","input":"json_schema","ctx":{"expected":"'text' or 'json_object'"}}]}"#;

    fn status(status: u16, body: &str) -> ModelError {
        let bytes = body.as_bytes();
        let details: Vec<Value> = serde_json::from_slice::<Value>(bytes)
            .ok()
            .and_then(|v| v.get("detail").and_then(Value::as_array).cloned())
            .unwrap_or_default();
        let message = pydantic_message(&details).unwrap_or_else(|| body.to_owned());
        ModelError::Status {
            url: "u".into(),
            status,
            field: named_field(bytes, &message),
            message,
            retry_after: None,
        }
    }

    #[test]
    fn fields_are_read_from_every_kind_of_error_body() {
        assert_eq!(
            named_field(LLAMA_CPP_PYTHON.as_bytes(), "").as_deref(),
            Some("response_format")
        );
        let openai = br#"{"error": {"message": "x", "param": "max_tokens"}}"#;
        assert_eq!(named_field(openai, "x").as_deref(), Some("max_tokens"));
        let vllm = br#"{"object": "error", "message": "x", "param": "seed", "code": 400}"#;
        assert_eq!(named_field(vllm, "x").as_deref(), Some("seed"));
        let null = br#"{"error": {"message": "boom", "param": null}}"#;
        assert_eq!(named_field(null, "boom"), None);
        let llama =
            "response_format type must be one of \"text\" or \"json_object\", but got: json_schema";
        assert_eq!(
            named_field(b"{}", llama).as_deref(),
            Some("response_format")
        );
        assert_eq!(named_field(b"", "Internal Server Error"), None);
        let e = status(500, LLAMA_CPP_PYTHON);
        assert!(!e.is_retryable(), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("`response_format`")
                && text.contains("body.response_format.type: Input should be 'text' or 'json_object' (got \"json_schema\")"),
            "{text}"
        );
    }

    #[test]
    fn refusals_are_told_from_transient_failures() {
        assert_eq!(
            refused(&status(500, LLAMA_CPP_PYTHON)),
            Some(Refused::ResponseFormat)
        );
        assert_eq!(
            refused(&status(422, LLAMA_CPP_PYTHON)),
            Some(Refused::ResponseFormat)
        );
        assert_eq!(refused(&status(500, "CUDA out of memory")), None);
        assert_eq!(refused(&status(503, "")), None);
        assert!(status(503, "").is_retryable());
        let unknown = r#"{"detail":[{"type":"extra_forbidden","loc":["body","logit_bias"],"msg":"Extra inputs are not permitted","input":{}}]}"#;
        let e = status(500, unknown);
        assert_eq!(refused(&e), None);
        assert!(!e.is_retryable());
        assert!(e.to_string().contains("`logit_bias`"), "{e}");
    }

    fn schema_request() -> ChatRequest {
        ChatRequest::new(vec![Message::system("Be brief."), Message::user("Go.")])
            .with_response_format(ResponseFormat::json_schema(
                "action",
                json!({"type": "object", "required": ["action"]}),
            ))
    }

    fn body(a: &Adapted, r: &ChatRequest) -> Value {
        let Value::Object(mut b) = serde_json::to_value(r).unwrap() else {
            unreachable!()
        };
        a.apply(&mut b, r);
        Value::Object(b)
    }

    #[test]
    fn response_format_steps_down_to_none_and_then_gives_up() {
        let r = schema_request();
        let mut a = Adapted::from_config(&EndpointConfig::new("http://h", "m"));
        assert_eq!(body(&a, &r)["response_format"]["type"], "json_schema");
        assert!(a.step(Refused::ResponseFormat, &r).is_some());
        let b = body(&a, &r);
        assert_eq!(b["response_format"], json!({"type": "json_object"}));
        let system = b["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.starts_with("Be brief.\n\nAnswer with one JSON object"),
            "{system}"
        );
        assert!(system.contains(r#""required":["action"]"#), "{system}");
        assert!(a.step(Refused::ResponseFormat, &r).is_some());
        let b = body(&a, &r);
        assert!(b.get("response_format").is_none());
        assert!(
            b["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("JSON schema")
        );
        assert_eq!(a.step(Refused::ResponseFormat, &r), None);
        // A request without a format has nothing to step down.
        let plain = ChatRequest::new(vec![Message::user("Go.")]);
        let mut fresh = Adapted::from_config(&EndpointConfig::new("http://h", "m"));
        assert_eq!(fresh.step(Refused::ResponseFormat, &plain), None);
        // Without a system message, one is put first.
        let r = ChatRequest::new(vec![Message::user("Go.")])
            .with_response_format(ResponseFormat::JsonObject);
        let b = body(&a, &r);
        assert_eq!(b["messages"][0]["role"], "system");
        assert_eq!(b["messages"][1]["content"], "Go.");
    }

    #[test]
    fn merging_keeps_every_adaptation() {
        let base = Adapted::from_config(&EndpointConfig::new("http://h", "m"));
        let mut a = base;
        a.omit_temperature = true;
        let mut b = base;
        b.response_format = FormatCap::Object;
        let m = a.merge(b);
        assert!(m.omit_temperature && m.response_format == FormatCap::Object);
        assert_eq!(m, b.merge(a));
    }
}

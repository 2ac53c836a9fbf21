//! OpenAI Chat Completions (`POST /v1/chat/completions`): the format TrapArena's own types
//! are, so its translation is mostly none. A client's request loses what only the transport
//! needs (`model`, `stream`, `stream_options`) and has its content parts joined into text; an
//! answer is the chat response as it is, or its chunks when streamed.

use serde_json::{Map, Value, json};

use super::{ReadRequest, WireFormat, error_text, object_of, text_of};
use crate::error::WireError;
use crate::types::{ChatRequest, ChatResponse, ResponseMessage};

/// OpenAI Chat Completions ([`super::WireApi::ChatCompletions`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatCompletions;

impl WireFormat for ChatCompletions {
    fn path(&self) -> &'static str {
        "chat/completions"
    }

    /// The request without `model`, `stream` and `stream_options`, content-part lists joined
    /// into one text; `model` is not kept (the answer is the upstream's as it is).
    fn read_request(&self, body: &[u8]) -> Result<ReadRequest, WireError> {
        let mut body = object_of(body)?;
        body.remove("model");
        let stream = super::take_stream(&mut body);
        body.remove("stream_options");
        let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
            return Err(WireError::NoField {
                field: "messages",
                wanted: "list",
            });
        };
        for (i, m) in messages.iter_mut().enumerate() {
            if let Some(content @ Value::Array(_)) = m.get_mut("content") {
                *content = Value::String(text_of(content, &format!("messages[{i}]"))?);
            }
        }
        let request: ChatRequest =
            serde_path_to_error::deserialize(Value::Object(body)).map_err(|e| {
                WireError::NotARequest {
                    path: e.path().to_string(),
                    source: e.into_inner(),
                }
            })?;
        Ok(ReadRequest {
            request,
            stream,
            model: None,
            custom_tools: Vec::new(),
        })
    }

    /// The chat response as it is (under the upstream's model name).
    fn answer(&self, response: &ChatResponse, _model: &str, _custom_tools: &[String]) -> Value {
        serde_json::to_value(response).unwrap_or(Value::Null)
    }

    /// The chunks a streaming server sends: the whole message in one delta, the finish
    /// reason, the usage, then `[DONE]`.
    fn stream(&self, response: &ChatResponse, _model: &str, _custom_tools: &[String]) -> String {
        let mut out = String::new();
        let id = if response.id.is_empty() {
            "traparena-proxy"
        } else {
            &response.id
        };
        let created = response.extra.get("created").cloned().unwrap_or(json!(0));
        let chunk = |choices: Value, usage: Option<Value>| {
            let mut c = json!({
                "id": id, "object": "chat.completion.chunk", "created": created,
                "model": response.model, "choices": choices,
            });
            if let Some(u) = usage {
                c["usage"] = u;
            }
            format!("data: {c}\n\n")
        };
        for choice in &response.choices {
            out.push_str(&chunk(
                json!([{"index": choice.index, "delta": delta(&choice.message), "finish_reason": null}]),
                None,
            ));
            out.push_str(&chunk(
                json!([{"index": choice.index, "delta": {}, "finish_reason": choice.finish_reason}]),
                None,
            ));
        }
        if let Some(u) = &response.usage {
            out.push_str(&chunk(json!([]), serde_json::to_value(u).ok()));
        }
        out.push_str("data: [DONE]\n\n");
        out
    }

    /// OpenAI's error body: the message, `invalid_request_error` for a 4xx status, else
    /// `server_error`, and the status as the code.
    fn error_body(&self, status: u16, message: &str) -> Value {
        let kind = if (400..500).contains(&status) {
            "invalid_request_error"
        } else {
            "server_error"
        };
        json!({"error": {"message": message, "type": kind, "code": status}})
    }

    /// The request's own JSON, with `model`.
    fn request(&self, request: &ChatRequest, model: &str) -> Result<Value, serde_json::Error> {
        let mut body = serde_json::to_value(request)?;
        if let Value::Object(o) = &mut body {
            o.insert("model".to_owned(), Value::String(model.to_owned()));
        }
        Ok(body)
    }

    /// The chat body as it is: it is already in this format.
    fn upstream_body(
        &self,
        chat_body: Map<String, Value>,
        _model: &str,
    ) -> Result<Value, serde_json::Error> {
        Ok(Value::Object(chat_body))
    }

    /// The chat completion, every field read leniently; an `error` in place of `choices` is
    /// the server's error, no choices at all a malformed answer.
    fn read_response(&self, body: Value) -> Result<ChatResponse, WireError> {
        if body.get("choices").is_none() {
            return Err(match body.get("error") {
                Some(e) => WireError::ErrorBody {
                    message: error_text(e),
                },
                None => WireError::Field {
                    field: "choices",
                    problem: "is missing",
                },
            });
        }
        let response: ChatResponse =
            serde_path_to_error::deserialize(body).map_err(|e| WireError::Shape {
                path: e.path().to_string(),
                source: e.into_inner(),
            })?;
        if response.choices.is_empty() {
            return Err(WireError::Field {
                field: "choices",
                problem: "is empty",
            });
        }
        Ok(response)
    }
}

/// A choice's whole message as one streamed delta.
fn delta(m: &ResponseMessage) -> Value {
    let mut delta = json!({"role": "assistant"});
    if let Some(t) = &m.content {
        delta["content"] = json!(t);
    }
    if let Some(r) = &m.reasoning_content {
        delta["reasoning_content"] = json!(r);
    }
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({"index": i, "id": c.id, "type": "function",
                    "function": {"name": c.function.name, "arguments": c.function.arguments}})
            })
            .collect();
        delta["tool_calls"] = json!(calls);
    }
    delta
}

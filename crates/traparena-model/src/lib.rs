//! The TrapArena model client: everything needed to talk to a chat model, and nothing about
//! what the model is asked to do (the model-backed agent, attacker and curator are in
//! `traparena-llm`).
//!
//! - [`ChatModel`], the object-safe async trait the model-backed components take as
//!   `Arc<dyn ChatModel>`;
//! - [`ChatClient`], its implementation for any OpenAI-compatible endpoint
//!   (`POST {base_url}/chat/completions`: vLLM, the llama.cpp server, hosted APIs), or one that
//!   speaks another [`WireApi`], configured by an [`EndpointConfig`], with a per-endpoint
//!   concurrency limit and retries;
//! - the protocol types ([`ChatRequest`], [`Message`], [`Tool`], [`ResponseFormat`],
//!   [`ChatResponse`], [`Usage`]): strict and minimal on the way out, tolerant on the way in
//!   (defaults for missing and `null` fields, unknown fields kept in `extra`);
//!   [`ChatResponse::token_usage`] reads one response's token counts;
//! - [`WireFormat`], one implementation per model API in [`wire`] (OpenAI Chat Completions,
//!   Anthropic Messages, OpenAI Responses), chosen by [`WireApi::format`]: both sides of each
//!   format translated to and from the chat-completions types, what cannot be read a typed
//!   [`WireError`];
//! - [`Recorder`] and [`Cassette`], record and replay keyed by a stable [`request_hash`], so an
//!   episode re-runs offline with byte-identical model output;
//! - [`ScriptedModel`], a fake for tests;
//! - reading replies: [`Reply`] and [`split_reasoning`] tell the answer from the reasoning,
//!   [`extract_json_object`] / [`extract_json`] find JSON in free text,
//!   [`ToolCall::parse_arguments`] reads native tool calls and [`tool_calls_in_text`] the ones
//!   a server without a tool-call parser passes through as text.
//!
//! # Retries
//!
//! [`ChatClient`] retries HTTP 408, 429 and 5xx, per-call timeouts, and transport failures
//! (refused or dropped connections, bodies cut short of their `Content-Length`) up to
//! [`EndpointConfig::max_retries`] times. The wait before retry *n* is drawn from a seeded
//! ChaCha RNG in `[d/2, d]` with `d = min(backoff_max, backoff_base * 2^(n-1))`, and is at least
//! the server's `Retry-After` (seconds form, or `retry-after-ms`), capped at
//! [`EndpointConfig::retry_after_max`]. When every attempt fails the error is
//! [`ModelError::RetriesExhausted`] holding the last attempt's error. Other 4xx statuses fail at
//! once with the server's message ([`ModelError::Status`]), and so does a 5xx whose body names a
//! request field (OpenAI's `error.param`, a FastAPI `detail`'s `loc`, as llama-cpp-python
//! answers a refused field with HTTP 500): a refusal is not transient.
//!
//! A 2xx response whose body is an `error` object and no completion is
//! [`ModelError::ErrorBody`] and is retried like a 5xx: OpenRouter reports transient upstream
//! provider failures that way. Any other 2xx body that is not a chat completion (not JSON, a
//! field of the wrong type, no choices) is [`ModelError::Malformed`], naming what was wrong, and
//! is **not retried**: the server has already produced (and a hosted API has billed) a completion, and
//! such a body comes from a misconfiguration — a wrong base URL, a proxy's error page, an
//! incompatible server — that a retry would only hide. Bodies that end early are transport
//! failures and are retried.
//!
//! # Refused parameters
//!
//! A 4xx or 5xx that refuses `max_tokens` (hosted reasoning models want
//! `max_completion_tokens`) or the temperature (models that take only their default) is met by
//! one more attempt with the parameter renamed or left out, not counted as a retry. One that
//! refuses the `response_format` (llama-cpp-python takes no `json_schema`) is met the same way,
//! a step down each time: a `json_schema` is sent as `json_object`, then no format is sent; the
//! system message then tells the model to answer with one JSON object matching the schema. The
//! client (and every clone) keeps the change for every later call and lists it in
//! [`ChatResponse::adjustments`] of the response that needed it.
//! [`EndpointConfig::max_tokens_field`] and [`EndpointConfig::omit_temperature`] set the first
//! two from the start.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use traparena::model::{ChatModel, ChatRequest, ChatResponse, Message, ScriptedModel};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), traparena::model::ModelError> {
//! // In production: Arc::new(ChatClient::new(EndpointConfig::new(base_url, model))?).
//! let model: Arc<dyn ChatModel> = Arc::new(ScriptedModel::new(
//!     "fake",
//!     [ChatResponse::from_text("fake", "{\"action\": \"submit\"}").with_usage(12, 5)],
//! ));
//! let reply = model
//!     .chat(&ChatRequest::new(vec![Message::user("Fix the bug.")]).with_temperature(0.0))
//!     .await?;
//! let action: serde_json::Value = traparena::model::extract_json(reply.text().unwrap_or(""))?;
//! assert_eq!(action["action"], "submit");
//! assert_eq!(reply.token_usage().prompt_tokens, 12);
//! # Ok(()) }
//! ```

mod adapt;
mod cassette;
mod client;
mod config;
mod cost;
mod error;
mod extract;
mod model;
mod reading;
mod reasoning;
mod scripted;
pub mod spec;
mod textcalls;
mod types;
pub mod wire;

pub use cassette::{Cassette, CassetteEntry, CassetteMode, Recorder, canonical_json, request_hash};
pub use client::ChatClient;
pub use config::{EndpointConfig, MaxTokensField};
pub use cost::{CallCost, Prices};
pub use error::{ModelError, WireError};
pub use extract::{extract_json, extract_json_object};
pub use model::ChatModel;
pub use reasoning::{Reply, split_reasoning};
pub use scripted::ScriptedModel;
pub use textcalls::tool_calls_in_text;
pub use types::{
    ChatRequest, ChatResponse, Choice, CompletionTokensDetails, FunctionCall, FunctionDefinition,
    JsonSchema, Message, MessageRole, ResponseFormat, ResponseMessage, TokenUsage, Tool, ToolCall,
    ToolKind, Usage,
};
pub use wire::{WireApi, WireFormat};

//! Request and response types of the OpenAI-compatible chat-completions protocol.
//!
//! Requests serialize only what is set (absent options are omitted), so they suit strict
//! hosted APIs. Responses are lenient: every field has a default, `null` reads as the default,
//! and unknown fields are kept in a flattened `extra` map, so vLLM, the llama.cpp server and
//! hosted APIs all parse.
//!
//! - [`message`]: the messages of a conversation and the tool calls they carry;
//! - [`request`]: what is sent — the request, the tools it offers and its response format;
//! - [`response`]: what comes back — the response, its choices, usage and token counts;
//! - [`content`]: the one rule for the text of a message's content, strict for requests and
//!   lenient for replies;
//! - [`lenient`]: the defaults and deserializers that let responses tolerate `null`, missing
//!   and oddly typed fields.

mod content;
mod lenient;
mod message;
mod request;
mod response;

pub(crate) use content::{Parts, content_text, part_text};
pub(crate) use message::decode_arguments;
pub use message::{FunctionCall, Message, MessageRole, ToolCall};
pub use request::{ChatRequest, FunctionDefinition, JsonSchema, ResponseFormat, Tool, ToolKind};
pub use response::{
    ChatResponse, Choice, CompletionTokensDetails, ResponseMessage, TokenUsage, Usage,
};

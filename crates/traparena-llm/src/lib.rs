//! The model-backed agent, attacker and curator of TrapArena.
//!
//! - [`LlmAgent`], the `llm` repair agent, speaking one of three [`Protocol`]s (native tool
//!   calls, JSON actions under a JSON-schema response format, plain text with a JSON action),
//!   with an optional defence instruction and a bounded conversation ([`HistoryLimits`]);
//! - [`LlmAttacker`], the trajectory-conditioned attacker in its blind and
//!   reference variants ([`AttackerVariant`]), with claims read from its JSON reply or, failing
//!   that, from the message's wording (`traparena-attack`'s [`claims_from_text`], re-exported
//!   here);
//! - [`LlmCurator`], which rewrites the attacker's bounded notes after each round;
//! - [`prompts`], their versioned templates and the hashes recorded with every episode;
//! - [`register`], which adds them to a registry as the kinds `llm` (agent), `adaptive`
//!   (attacker) and `llm` (curator), configured by [`ModelSpec`] and [`CassetteSpec`].
//!
//! Talking to a model is the business of `traparena-model` ([`traparena::model`]): the
//! [`ChatModel`] trait they take as `Arc<dyn ChatModel>`, the HTTP [`ChatClient`], record and
//! replay, the protocol types. Its items are re-exported here so that older paths
//! (`traparena::llm::ChatClient`) keep working; their home is that crate.
//!
//! [`traparena::model`]: traparena_model
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use traparena::llm::{LlmAgent, LlmAgentConfig};
//! use traparena::model::{ChatModel, ChatResponse, ScriptedModel};
//! use traparena::{Action, Agent, AgentView};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), traparena::Error> {
//! // In production: Arc::new(ChatClient::new(EndpointConfig::new(base_url, model))?).
//! let model: Arc<dyn ChatModel> = Arc::new(ScriptedModel::new(
//!     "fake",
//!     [ChatResponse::from_text("fake", "{\"action\": \"submit\"}").with_usage(12, 5)],
//! ));
//! let mut agent = LlmAgent::new(model, LlmAgentConfig::default());
//! let view = AgentView { task_id: "t", description: "Fix it.", steps_taken: 0, budget: 5, history: &[], runs_in_image: false };
//! let turn = agent.act(&view).await?;
//! assert_eq!(turn.action(), Some(&Action::Submit));
//! // The tokens of the turn's model call, as the runner sums them into the episode record.
//! assert_eq!(turn.usage.prompt_tokens, 12);
//! # Ok(()) }
//! ```

mod actions;
mod agent;
mod attacker;
mod components;
mod curator;
mod error;
pub mod prompts;
mod reply;

pub use actions::{
    action_forms, action_list, action_names, action_schema, action_tools, parse_action,
};
pub use agent::{HistoryLimits, LlmAgent, LlmAgentConfig, Protocol};
pub use attacker::{
    AttackerVariant, LlmAttacker, LlmAttackerConfig, message_schema, summarize_history,
};
pub use components::{
    AdaptiveArgs, CassetteSpec, LlmAgentArgs, LlmCuratorArgs, ModelPool, ModelSpec, register,
    register_with,
};
pub use curator::{LlmCurator, LlmCuratorConfig, notes_schema};
pub use error::{ActionError, LlmError};

#[doc(no_inline)]
pub use traparena_attack::claims_from_text;
#[doc(no_inline)]
pub use traparena_model::{
    Cassette, CassetteEntry, CassetteMode, ChatClient, ChatModel, ChatRequest, ChatResponse,
    Choice, CompletionTokensDetails, EndpointConfig, FunctionCall, FunctionDefinition, JsonSchema,
    MaxTokensField, Message, MessageRole, ModelError, Recorder, Reply, ResponseFormat,
    ResponseMessage, ScriptedModel, TokenUsage, Tool, ToolCall, ToolKind, Usage, canonical_json,
    extract_json, extract_json_object, request_hash, split_reasoning, tool_calls_in_text,
};

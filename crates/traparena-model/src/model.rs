//! The chat-model trait.

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::ModelError;
use crate::types::{ChatRequest, ChatResponse};

/// Anything that answers chat-completion requests: the HTTP [`ChatClient`](crate::ChatClient),
/// the [`Recorder`](crate::Recorder) (record and replay), a [`ScriptedModel`](crate::ScriptedModel)
/// in tests, or an outside implementation.
///
/// Object safe: agents, attackers and curators take an `Arc<dyn ChatModel>`. Implement
/// [`ChatModel::model`] and [`ChatModel::chat`] to plug in another kind of model:
///
/// ```
/// use std::sync::Arc;
/// use traparena::llm::{LlmAgent, LlmAgentConfig};
/// use traparena::model::{ChatModel, ChatRequest, ChatResponse, ModelError};
/// use traparena::{Action, Agent, AgentView};
///
/// /// Answers every request with a submit.
/// struct Quitter;
///
/// #[traparena::async_trait]
/// impl ChatModel for Quitter {
///     fn model(&self) -> &str {
///         "quitter"
///     }
///
///     async fn chat(&self, _request: &ChatRequest) -> Result<ChatResponse, ModelError> {
///         Ok(ChatResponse::from_text("quitter", r#"{"action": "submit"}"#))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), traparena::Error> {
/// let mut agent = LlmAgent::new(Arc::new(Quitter), LlmAgentConfig::default());
/// let view = AgentView { task_id: "t", description: "Fix it.", steps_taken: 0, budget: 5, history: &[], runs_in_image: false };
/// assert_eq!(agent.act(&view).await?.action(), Some(&Action::Submit));
/// # Ok(()) }
/// ```
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// The model name sent with every request; part of a recording's key.
    fn model(&self) -> &str;

    /// Sends one request and returns the completion.
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError>;
}

#[async_trait]
impl<T: ChatModel + ?Sized> ChatModel for Arc<T> {
    fn model(&self) -> &str {
        (**self).model()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        (**self).chat(request).await
    }
}

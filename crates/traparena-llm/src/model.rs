//! The chat-model trait.

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::LlmError;
use crate::types::{ChatRequest, ChatResponse};

/// Anything that answers chat-completion requests: the HTTP [`ChatClient`](crate::ChatClient),
/// the [`Recorder`](crate::Recorder) (record and replay), the [`Metered`](crate::Metered) usage
/// wrapper, a [`ScriptedModel`](crate::ScriptedModel) in tests, or an outside implementation.
///
/// Object safe: agents, attackers and curators take an `Arc<dyn ChatModel>`.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// The model name sent with every request; part of a recording's key.
    fn model(&self) -> &str;

    /// Sends one request and returns the completion.
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError>;
}

#[async_trait]
impl<T: ChatModel + ?Sized> ChatModel for Arc<T> {
    fn model(&self) -> &str {
        (**self).model()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        (**self).chat(request).await
    }
}

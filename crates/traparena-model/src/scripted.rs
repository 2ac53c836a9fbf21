//! A scripted fake model for tests.

use parking_lot::Mutex;
use std::collections::VecDeque;

use async_trait::async_trait;

use crate::error::ModelError;
use crate::model::ChatModel;
use crate::types::{ChatRequest, ChatResponse};

/// A [`ChatModel`] that answers from a fixed list of responses, in order, and remembers the
/// requests it was sent. Once the list is used up every call fails with
/// [`ModelError::ScriptExhausted`].
#[derive(Debug)]
pub struct ScriptedModel {
    model: String,
    replies: Mutex<VecDeque<ChatResponse>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedModel {
    /// A model named `model` that answers with `replies` in order.
    pub fn new(model: impl Into<String>, replies: impl IntoIterator<Item = ChatResponse>) -> Self {
        ScriptedModel {
            model: model.into(),
            replies: Mutex::new(replies.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Appends a reply to the script.
    pub fn push(&self, reply: ChatResponse) {
        self.replies.lock().push_back(reply);
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().clone()
    }

    /// How many replies are left.
    pub fn remaining(&self) -> usize {
        self.replies.lock().len()
    }
}

#[async_trait]
impl ChatModel for ScriptedModel {
    fn model(&self) -> &str {
        &self.model
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let call = {
            let mut requests = self.requests.lock();
            requests.push(request.clone());
            requests.len()
        };
        self.replies
            .lock()
            .pop_front()
            .ok_or_else(|| ModelError::ScriptExhausted {
                model: self.model.clone(),
                call,
            })
    }
}

use std::collections::VecDeque;
use std::path::Path;

use async_trait::async_trait;
use traparena_task::Action;

use crate::error::AgentError;
use crate::traits::{Agent, AgentView, Turn};

/// Replays a JSON list of actions (the form agents emit and trajectories log). When the list
/// runs out before a `submit`, the agent stops with an error (failure mode `no_submit`).
#[derive(Debug, Clone)]
pub struct ReplayAgent {
    name: String,
    actions: VecDeque<Action>,
}

impl ReplayAgent {
    /// Reads a replay file: a JSON array of actions.
    pub fn from_file(path: &Path) -> Result<ReplayAgent, AgentError> {
        let err = |message: String| AgentError::Replay {
            path: path.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let actions: Vec<Action> = serde_json::from_str(&text)
            .map_err(|e| err(format!("not a JSON list of actions: {e}")))?;
        Ok(ReplayAgent {
            name: format!("replay:{}", path.display()),
            actions: actions.into(),
        })
    }

    /// Replays `actions`.
    pub fn new(actions: Vec<Action>) -> ReplayAgent {
        ReplayAgent {
            name: "replay".into(),
            actions: actions.into(),
        }
    }
}

#[async_trait]
impl Agent for ReplayAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    async fn act(&mut self, _view: &AgentView<'_>) -> Result<Turn, AgentError> {
        self.actions
            .pop_front()
            .map(Turn::act)
            .ok_or(AgentError::Exhausted)
    }
}

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use traparena_task::{Action, Step, Usage};

use crate::error::AgentError;

/// What an agent sees before each step.
#[derive(Debug, Clone, Copy)]
pub struct AgentView<'a> {
    /// The task's id.
    pub task_id: &'a str,
    /// The repair description.
    pub description: &'a str,
    /// The step about to be taken (1-based).
    pub step: u32,
    /// The action budget.
    pub budget: u32,
    /// Every step so far: action, authentic observation, and the collaborator message
    /// delivered after it, if any.
    pub history: &'a [Step],
}

/// One turn of an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// The action, or `None` when the agent's reply could not be read as one (the step is
    /// spent and the agent gets a corrective observation).
    pub action: Option<Action>,
    /// The raw reply, for agents that speak text.
    pub raw: Option<String>,
    /// Tokens this turn cost.
    pub usage: Usage,
}

impl Turn {
    /// A turn with an action and no model cost.
    pub fn act(action: Action) -> Turn {
        Turn {
            action: Some(action),
            raw: None,
            usage: Usage::default(),
        }
    }
}

/// A repair agent. Implement [`Agent::act`]; the rest has defaults.
#[async_trait]
pub trait Agent: Send {
    /// A short name for records (`gold`, `llm:qwen2.5-72b`, ...).
    fn name(&self) -> String;

    /// The next turn.
    async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError>;

    /// A hash of the prompt templates this agent uses, recorded with every episode.
    fn prompt_hash(&self) -> Option<String> {
        None
    }
}

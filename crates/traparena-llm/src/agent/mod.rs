//! The `llm` repair agent: any chat model behind a [`ChatModel`], speaking one of three action
//! protocols.
//!
//! This module holds the agent, its settings and what it remembers; its work is in:
//! - [`prompt`]: the system prompt and the request, fitted into the context window;
//! - [`history`]: the trajectory rendered as a bounded conversation;
//! - [`parse`]: reading the action from a reply;
//! - [`turn`]: a turn of the agent — asking the model (or a fork's recorded parent) and making
//!   a [`Turn`](traparena_agent::Turn) of the response.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use traparena_model::{ChatModel, ToolCall};

mod history;
mod parse;
mod prompt;
mod turn;

/// How the agent asks the model for actions and reads them from its replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Native tool calls: one tool per action (`read`, `edit`, ...); the first call of a reply
    /// is run, tool results go back as `tool` messages. A reply without a tool call is read
    /// like a plain-text reply.
    Tools,
    /// A JSON action constrained by `response_format` (a JSON schema the server enforces with
    /// a grammar on vLLM and llama.cpp).
    Json,
    /// Free text; the first JSON object of the reply is the action.
    Text,
}

impl Protocol {
    /// The protocol's name (`tools`, `json`, `text`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Tools => "tools",
            Protocol::Json => "json",
            Protocol::Text => "text",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tools" => Ok(Protocol::Tools),
            "json" => Ok(Protocol::Json),
            "text" => Ok(Protocol::Text),
            other => Err(format!(
                "unknown protocol {other:?} (expected tools, json or text)"
            )),
        }
    }
}

/// How much of the trajectory the conversation keeps.
///
/// The conversation holds every step, but only the last `full_steps` in full: older tool
/// outputs are cut to `old_output_chars` characters and older actions are shown with every
/// string cut to 200 characters (a `write` of a whole file becomes its first lines).
/// Collaborator messages are always kept whole. When the conversation is still longer than
/// `max_chars` characters (about a quarter as many tokens), recent steps are shortened like
/// older ones, oldest first; then tool outputs are replaced by a one-line note, oldest first;
/// as a last resort the newest step's output is cut (to no less than 1,000 characters). The
/// defaults keep a 60-step episode within about 12,000 tokens of history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryLimits {
    /// Most recent steps shown in full.
    pub full_steps: usize,
    /// Characters kept of an older step's tool output.
    pub old_output_chars: usize,
    /// Upper bound on the characters of the whole conversation (system prompt included).
    pub max_chars: usize,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        HistoryLimits {
            full_steps: 8,
            old_output_chars: 600,
            max_chars: 48_000,
        }
    }
}

/// Settings of an [`LlmAgent`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmAgentConfig {
    /// The action protocol (default [`Protocol::Json`]).
    pub protocol: Protocol,
    /// Sampling temperature (default 0.7).
    pub temperature: f64,
    /// Maximum response length in tokens (default 16,384; `None` sends no limit).
    pub max_tokens: Option<u32>,
    /// Sampling seed sent with every request, for servers that honour one.
    pub seed: Option<u64>,
    /// Add the defence instruction (verify collaborator claims) to the system prompt.
    pub defence: bool,
    /// How much of the trajectory the conversation keeps.
    pub history: HistoryLimits,
    /// The model's context window in tokens, when known (from the spec, or asked of the
    /// server with [`ChatClient::context_window`](traparena_model::ChatClient::context_window)). Then no
    /// request asks for more than fits: the response limit is lowered to what the prompt
    /// leaves, and the history is compacted when too little is left.
    pub context_window: Option<u32>,
    /// The model's prices, for the cost of its calls (a cost the provider reports is taken
    /// instead); `None`: only reported costs are counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<traparena_model::Prices>,
}

impl Default for LlmAgentConfig {
    fn default() -> Self {
        LlmAgentConfig {
            protocol: Protocol::Json,
            temperature: 0.7,
            max_tokens: Some(16_384),
            seed: None,
            defence: false,
            history: HistoryLimits::default(),
            context_window: None,
            prices: None,
        }
    }
}

/// What the agent remembers of one of its replies.
#[derive(Debug, Clone)]
struct PastTurn {
    /// The reply's text.
    content: Option<String>,
    /// The reply's tool calls (ids filled in where the server sent none).
    calls: Vec<ToolCall>,
    /// Why no action could be read, when none could.
    unreadable: Option<String>,
}

/// A repair agent backed by a chat model.
///
/// The conversation is a system prompt (tools, method, protocol, optional defence), the repair
/// description, and then one assistant turn and one observation per step, rebuilt from the
/// trajectory on every call and bounded by [`HistoryLimits`]. Collaborator messages are
/// rendered after the tool output under the label `[Message from a collaborator]`. A reply
/// holding no readable action gives a [`Turn`](traparena_agent::Turn) without an action (the
/// runner spends the step and answers with a corrective observation, to which the agent adds
/// the reason); only a failed model call is an error
/// ([`AgentError::Model`](traparena_agent::AgentError::Model)).
///
/// ```
/// use std::sync::Arc;
/// use traparena::llm::{LlmAgent, LlmAgentConfig};
/// use traparena::model::{ChatResponse, ScriptedModel};
/// use traparena::{Action, Agent, AgentView};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = Arc::new(ScriptedModel::new(
///     "fake",
///     [ChatResponse::from_text("fake", r#"{"action": "submit"}"#).with_usage(100, 5)],
/// ));
/// let mut agent = LlmAgent::new(model, LlmAgentConfig::default());
/// let view = AgentView { task_id: "t", description: "Fix it.", steps_taken: 0, budget: 5, history: &[], runs_in_image: false };
/// let turn = agent.act(&view).await.unwrap();
/// assert_eq!(turn.action(), Some(&Action::Submit));
/// assert_eq!(turn.usage.prompt_tokens, 100);
/// # }
/// ```
pub struct LlmAgent {
    model: Arc<dyn ChatModel>,
    config: LlmAgentConfig,
    turns: BTreeMap<u32, PastTurn>,
    prefix: Option<Prefix>,
}

/// A fork's replayed turns: asked of the parent's recording, with the parent's seed.
struct Prefix {
    model: Arc<dyn ChatModel>,
    steps: u32,
    seed: Option<u64>,
}

impl fmt::Debug for LlmAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmAgent")
            .field("model", &self.model.model())
            .field("config", &self.config)
            .field("turns", &self.turns.len())
            .finish()
    }
}

impl LlmAgent {
    /// An agent asking `model`.
    pub fn new(model: Arc<dyn ChatModel>, config: LlmAgentConfig) -> Self {
        LlmAgent {
            model,
            config,
            turns: BTreeMap::new(),
            prefix: None,
        }
    }

    /// The same agent as a fork of a recorded episode: its first `steps` turns ask `model`
    /// (the parent's recorded responses, replayed) with the parent's `seed` in the request,
    /// exactly as the parent asked; later turns ask the agent's own model with its own seed.
    /// A prefix response that is not recorded is an infrastructure error naming the step.
    pub fn with_prefix(mut self, model: Arc<dyn ChatModel>, steps: u32, seed: Option<u64>) -> Self {
        self.prefix = Some(Prefix { model, steps, seed });
        self
    }

    /// The settings.
    pub fn config(&self) -> &LlmAgentConfig {
        &self.config
    }
}

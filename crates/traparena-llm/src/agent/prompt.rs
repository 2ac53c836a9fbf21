//! The agent's prompt: the system prompt, the request for a turn and its fitting into the
//! model's context window (the response limit lowered, the history compacted).

use traparena_agent::{AgentError, AgentView};
use traparena_model::{ChatRequest, Message, ResponseFormat};

use super::{LlmAgent, Protocol};
use crate::actions::{action_forms, action_list, action_schema, action_tools};
use crate::prompts::{self, Template, fill};

/// Characters per token assumed when fitting a prompt into the context: on the low side of
/// what was measured (Python source 3.8–4.1, `read` output with its line gutter 3.06), so the
/// estimate errs towards more tokens.
pub const CHARS_PER_TOKEN: f64 = 3.0;
/// Tokens kept free of the estimate, for the chat template's own tokens.
const CONTEXT_MARGIN: u32 = 256;
/// The least response length worth asking for; below it the history is compacted.
const MIN_REPLY_TOKENS: u32 = 1024;

/// Estimated prompt tokens of a request: its messages, tools and response schema.
fn estimated_prompt_tokens(request: &ChatRequest) -> u32 {
    let mut chars = 0usize;
    for m in &request.messages {
        chars += m.content.as_deref().map_or(0, |c| c.chars().count()) + 16;
        for c in &m.tool_calls {
            chars += c.function.arguments.chars().count() + c.function.name.len() + 16;
        }
    }
    if !request.tools.is_empty() {
        chars += serde_json::to_string(&request.tools).map_or(0, |t| t.len());
    }
    if let Some(f) = &request.response_format {
        chars += serde_json::to_string(f).map_or(0, |t| t.len());
    }
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u32
}

impl LlmAgent {
    /// The system prompt for an episode with `budget` actions.
    pub fn system_prompt(&self, budget: u32) -> String {
        let forms = fill(
            protocol_template(self.config.protocol).text,
            &[("forms", &action_forms())],
        );
        let defence = if self.config.defence {
            prompts::AGENT_DEFENCE.text
        } else {
            ""
        };
        fill(
            prompts::AGENT_SYSTEM.text,
            &[
                ("budget", &budget.to_string()),
                ("actions", &action_list()),
                ("protocol", &forms),
                ("defence", defence),
            ],
        )
    }

    /// The request the agent sends for `view`: the whole bounded conversation plus the
    /// protocol's tools or response format.
    pub fn request(&self, view: &AgentView<'_>) -> ChatRequest {
        self.request_within(view, self.config.history.max_chars)
    }

    /// The request for this turn, fitted into the context window when it is known: the
    /// response limit lowered to what the prompt leaves, the history compacted (halved, down
    /// to a floor) while less than a useful reply would be left. The notes say what changed.
    pub(super) fn fitted_request(
        &self,
        view: &AgentView<'_>,
        max_chars: usize,
    ) -> Result<(ChatRequest, Vec<String>), AgentError> {
        let mut request = self.request_within(view, max_chars);
        let Some(window) = self.config.context_window else {
            return Ok((request, Vec::new()));
        };
        let mut notes = Vec::new();
        let mut chars = max_chars;
        loop {
            let prompt = estimated_prompt_tokens(&request);
            let room = window.saturating_sub(prompt + CONTEXT_MARGIN);
            let wanted = self.config.max_tokens.unwrap_or(room);
            if room >= wanted.min(MIN_REPLY_TOKENS) {
                if wanted > room {
                    request.max_tokens = Some(room);
                }
                if chars < max_chars {
                    notes.push(format!(
                        "the history was compacted to {chars} characters to fit the {window}-token context"
                    ));
                }
                return Ok((request, notes));
            }
            if chars <= 2_000 {
                return Err(AgentError::ContextExhausted(format!(
                    "about {prompt} prompt tokens leave {room} of the {window}-token context for the reply, even with the history compacted"
                )));
            }
            chars = (chars / 2).max(2_000);
            request = self.request_within(view, chars);
        }
    }

    fn request_within(&self, view: &AgentView<'_>, max_chars: usize) -> ChatRequest {
        let mut messages = vec![
            Message::system(self.system_prompt(view.budget)),
            Message::user(fill(
                prompts::AGENT_TASK.text,
                &[("description", view.description)],
            )),
        ];
        messages.extend(self.render_history(view, messages_chars(&messages), max_chars));
        let mut request = ChatRequest::new(messages).with_temperature(self.config.temperature);
        if let Some(n) = self.config.max_tokens {
            request = request.with_max_tokens(n);
        }
        if let Some(seed) = self.config.seed {
            request = request.with_seed(seed);
        }
        match self.config.protocol {
            Protocol::Tools => request.with_tools(action_tools()),
            Protocol::Json => {
                request.with_response_format(ResponseFormat::json_schema("action", action_schema()))
            }
            Protocol::Text => request,
        }
    }
}

pub(super) fn messages_chars(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| m.content.as_deref().map_or(0, |c| c.chars().count()))
        .sum()
}

pub(super) fn protocol_template(p: Protocol) -> Template {
    match p {
        Protocol::Tools => prompts::AGENT_PROTOCOL_TOOLS,
        Protocol::Json => prompts::AGENT_PROTOCOL_JSON,
        Protocol::Text => prompts::AGENT_PROTOCOL_TEXT,
    }
}

/// The corrective instruction after an unreadable reply.
pub(super) fn correction_template(p: Protocol) -> Template {
    match p {
        Protocol::Tools => prompts::AGENT_CORRECT_TOOLS,
        Protocol::Json | Protocol::Text => prompts::AGENT_CORRECT_JSON,
    }
}

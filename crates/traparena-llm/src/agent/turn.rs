//! A turn of the agent: the request asked of the model (or, in a fork's prefix, of the
//! parent's recording), retried compacted when the server finds it too long, and the response
//! made a [`Turn`]; the agent's name and prompt hash.

use async_trait::async_trait;
use traparena_agent::{Agent, AgentError, AgentView, Turn};

use super::prompt::{correction_template, messages_chars, protocol_template};
use super::{LlmAgent, Protocol};
use crate::actions::{action_forms, action_list, action_schema, action_tools};
use crate::prompts;

#[async_trait]
impl Agent for LlmAgent {
    fn name(&self) -> String {
        let mut name = format!("llm:{}", self.model.model());
        if self.config.defence {
            name.push_str("+defence");
        }
        name
    }

    async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError> {
        let (mut request, mut notes) = self.fitted_request(view, self.config.history.max_chars)?;
        let step = view.steps_taken + 1;
        if let Some(p) = self.prefix.as_ref().filter(|p| view.steps_taken < p.steps) {
            request.seed = p.seed;
            let response = p.model.chat(&request).await.map_err(|e| {
                AgentError::Infrastructure(format!(
                    "step {step} of the fork's prefix was not replayed from its parent's recording: {e}"
                ))
            })?;
            return Ok(self.turn(response, notes, step));
        }
        let response = match self.model.chat(&request).await {
            Ok(r) => r,
            // The server counts tokens better than the estimate: compact to half and try once
            // more; still too long is the agent's failure, not the infrastructure's.
            Err(e) if e.is_context_overflow() => {
                let half = (messages_chars(&request.messages) / 2).max(1);
                let (retry, more) = self.fitted_request(view, half)?;
                notes.push(format!(
                    "the server refused the request as too long for the context ({e}); the history was compacted to {half} characters and the request sent again"
                ));
                notes.extend(more);
                match self.model.chat(&retry).await {
                    Ok(r) => r,
                    Err(e) if e.is_context_overflow() => {
                        return Err(AgentError::ContextExhausted(format!(
                            "the conversation does not fit the model's context even compacted: {e}"
                        )));
                    }
                    Err(e) => return Err(AgentError::Model(Box::new(e))),
                }
            }
            Err(e) => return Err(AgentError::Model(Box::new(e))),
        };
        Ok(self.turn(response, notes, step))
    }

    fn prompt_hash(&self) -> Option<String> {
        let protocol = protocol_template(self.config.protocol);
        let machine = match self.config.protocol {
            Protocol::Tools => serde_json::to_string(&action_tools()).unwrap_or_default(),
            Protocol::Json => action_schema().to_string(),
            Protocol::Text => String::new(),
        };
        let (list, forms) = (action_list(), action_forms());
        let mut templates = vec![
            prompts::AGENT_SYSTEM,
            protocol,
            prompts::AGENT_TASK,
            prompts::AGENT_OBSERVATION,
            prompts::AGENT_COLLABORATOR,
            prompts::AGENT_UNREADABLE,
            correction_template(self.config.protocol),
        ];
        if self.config.defence {
            templates.push(prompts::AGENT_DEFENCE);
        }
        Some(prompts::prompt_hash(
            &templates,
            &[prompts::ACTIONS_VERSION, &list, &forms, &machine],
        ))
    }
}

impl LlmAgent {
    /// The turn a response gives at `step`.
    fn turn(
        &mut self,
        response: traparena_model::ChatResponse,
        mut notes: Vec<String>,
        step: u32,
    ) -> Turn {
        notes.extend(response.adjustments.iter().cloned());
        let usage = response
            .token_usage()
            .task_usage(self.config.prices.as_ref());
        let message = response.message().cloned().unwrap_or_default();
        let (action, raw, reasoning, past) =
            self.read_reply(&message, response.finish_reason(), step);
        self.turns.insert(step, past);
        Turn {
            raw,
            usage,
            reasoning,
            notes,
            ..Turn::read(action)
        }
    }
}

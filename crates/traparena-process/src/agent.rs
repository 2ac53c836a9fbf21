//! The `process` agent.

use async_trait::async_trait;
use traparena_agent::{Agent, AgentError, AgentView, Agents, Turn, TurnKind};
use traparena_task::{Action, ArgsError, ConfigContext, EpisodeContext, Factory};

use crate::args::ProcessArgs;
use crate::protocol::{Act, ActionIn, PluginRole, Start, TaskFacts};
use crate::session::Session;

/// The `process` agent kind: an agent written as a program (see the crate docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessAgentKind;

#[async_trait]
impl Factory for ProcessAgentKind {
    type Role = Agents;
    type Args = ProcessArgs;

    fn build(
        &self,
        args: &ProcessArgs,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Agent>, AgentError> {
        let declared = args.declared().map_err(AgentError::Infrastructure)?;
        Ok(Box::new(ProcessAgent {
            session: Session::new(args, PluginRole::Agent, declared, episode.scope),
            seed: episode.seed,
            language: episode.task.spec.language.name().to_owned(),
        }))
    }

    fn configure(&self, args: ProcessArgs, cx: &ConfigContext) -> Result<ProcessArgs, ArgsError> {
        args.configure(cx)
    }

    async fn prepare(&self, args: &ProcessArgs) -> Result<Vec<String>, AgentError> {
        args.prepare(PluginRole::Agent)
            .await
            .map_err(|e| AgentError::Infrastructure(e.to_string()))
    }

    fn short_form(&self) -> Option<&'static str> {
        Some("command")
    }
}

/// An agent that is a program: asked with `act`, it answers with an action.
#[derive(Debug)]
pub struct ProcessAgent {
    session: Session,
    seed: u64,
    language: String,
}

#[async_trait]
impl Agent for ProcessAgent {
    fn name(&self) -> String {
        self.session.declared.name.clone()
    }

    async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError> {
        let failed = |e: crate::ProcessError| AgentError::Failed(e.to_string());
        // The episode's id, owned, so that the messages can borrow it beside the session.
        let episode = self.session.episode.clone();
        if !self.session.started {
            let start = Start {
                kind: "start",
                episode: &episode,
                task: TaskFacts {
                    id: view.task_id,
                    description: view.description,
                    language: &self.language,
                    symbols: None,
                    decoys: None,
                },
                seed: self.seed,
                budget: view.budget,
                reference: None,
            };
            self.session.begin(&start).await.map_err(failed)?;
        }
        let last = view.history.last();
        let act = Act {
            kind: "act",
            episode: &episode,
            step: view.steps_taken + 1,
            budget: view.budget,
            observation: last.map(|s| &s.observation),
            message: last
                .and_then(|s| s.message.as_ref())
                .map(|m| m.text.as_str()),
        };
        let asked = format!("act at step {}", view.steps_taken + 1);
        let (answer, _) = self
            .session
            .ask::<ActionIn>(&act, &asked, "action")
            .await
            .map_err(failed)?;
        let written = answer.action.to_string();
        // An action the task model refuses is the agent's step all the same: recorded as it
        // was written, answered with the tool error an unreadable action gets.
        Ok(match serde_json::from_value::<Action>(answer.action) {
            Ok(action) => Turn::act(action),
            Err(e) => {
                let mut turn = Turn::of(TurnKind::Unreadable);
                turn.raw = Some(written);
                turn.notes.push(format!("the action was refused: {e}"));
                turn
            }
        })
    }

    fn log(&mut self) -> Option<String> {
        self.session.end()
    }
}

//! The `process` attacker.

use async_trait::async_trait;
use traparena_attack::{
    Access, Advice, AttackContext, AttackError, Attacker, Attackers, Role, Schedule,
    claims_from_text,
};
use traparena_task::{ArgsError, ConfigContext, EpisodeContext, Factory};

use crate::args::ProcessArgs;
use crate::error::ProcessError;
use crate::protocol::{AdviceIn, Advise, PluginRole, Start, TaskFacts};
use crate::session::Session;

/// The `process` attacker kind: an attacker written as a program (see the crate docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessAttackerKind;

#[async_trait]
impl Factory for ProcessAttackerKind {
    type Role = Attackers;
    type Args = ProcessArgs;

    fn build(
        &self,
        args: &ProcessArgs,
        episode: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        let declared = args.declared().map_err(AttackError::Invalid)?;
        Ok(Box::new(ProcessAttacker {
            session: Session::new(args, PluginRole::Attacker, declared, episode.scope),
            seed: episode.seed,
            language: episode.task.spec.language.name().to_owned(),
        }))
    }

    fn configure(&self, args: ProcessArgs, cx: &ConfigContext) -> Result<ProcessArgs, ArgsError> {
        args.configure(cx)
    }

    async fn prepare(&self, args: &ProcessArgs) -> Result<Vec<String>, AttackError> {
        args.prepare(PluginRole::Attacker)
            .await
            .map_err(|e| AttackError::Invalid(e.to_string()))
    }

    fn short_form(&self) -> Option<&'static str> {
        Some("command")
    }
}

/// An attacker that is a program: asked with `advise`, it answers with a message or nothing.
#[derive(Debug)]
pub struct ProcessAttacker {
    session: Session,
    seed: u64,
    language: String,
}

#[async_trait]
impl Attacker for ProcessAttacker {
    fn name(&self) -> String {
        self.session.declared.name.clone()
    }

    async fn advise(&mut self, ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        // A plug-in that failed was recorded once, at the step it failed: it is silent after.
        if self.session.stopped.is_some() {
            return Ok(None);
        }
        let invalid = |e: ProcessError| AttackError::Invalid(e.to_string());
        // The episode's id, owned, so that the messages can borrow it beside the session.
        let episode = self.session.episode.clone();
        if !self.session.started {
            let start = Start {
                kind: "start",
                episode: &episode,
                task: TaskFacts {
                    id: ctx.task_id,
                    description: ctx.description,
                    language: &self.language,
                    symbols: Some(ctx.symbols),
                    decoys: Some(ctx.decoys),
                },
                seed: self.seed,
                budget: ctx.budget,
                reference: ctx.reference,
            };
            self.session.begin(&start).await.map_err(invalid)?;
        }
        let ask = Advise {
            kind: "advise",
            episode: &episode,
            step: ctx.steps_taken,
            attempt: ctx.attempt,
            rejections: ctx.rejections,
            trajectory: ctx.history,
            notes: ctx.notes.items(),
        };
        let asked = format!("advise at step {}", ctx.steps_taken);
        let (advice, line) = self
            .session
            .ask::<AdviceIn>(&ask, &asked, "advice")
            .await
            .map_err(invalid)?;
        let Some(m) = advice.message else {
            return Ok(None);
        };
        if m.text.trim().is_empty() {
            return Err(invalid(ProcessError::Refused {
                plugin: self.session.plugin(),
                asked,
                reason: "the message has no text (answer `\"message\": null` to stay silent)"
                    .into(),
                line: crate::conn::clip(&line),
            }));
        }
        let claims = m
            .claims
            .unwrap_or_else(|| claims_from_text(&m.text, ctx.symbols));
        Ok(Some(Advice {
            text: m.text,
            claims,
        }))
    }

    fn schedule(&self) -> Option<Schedule> {
        self.session.declared.schedule.clone()
    }

    fn access(&self) -> Access {
        self.session.declared.access.unwrap_or_default()
    }

    fn role(&self) -> Role {
        self.session.declared.attack_role.unwrap_or_default()
    }

    fn log(&mut self) -> Option<String> {
        self.session.end()
    }
}

//! The `process` curator.

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use traparena_attack::{AttackError, Curator, Curators, Notes, RoundEvidence};
use traparena_task::{ArgsError, ConfigContext, Factory};

use crate::args::ProcessArgs;
use crate::conn::clip;
use crate::error::ProcessError;
use crate::protocol::{Curate, NotesIn, PluginRole};
use crate::session::Session;

/// The `process` curator kind: a curator written as a program (see the crate docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessCuratorKind;

/// Curators' ids in messages: unique within the harness.
static CURATORS: AtomicU64 = AtomicU64::new(0);

#[async_trait]
impl Factory for ProcessCuratorKind {
    type Role = Curators;
    type Args = ProcessArgs;

    fn build(&self, args: &ProcessArgs, _: &()) -> Result<Box<dyn Curator>, AttackError> {
        let declared = args.declared().map_err(AttackError::Invalid)?;
        let id = format!("curator-{}", CURATORS.fetch_add(1, Ordering::Relaxed));
        let mut session = Session::new(args, PluginRole::Curator, declared, &id);
        // A curator's conversation has no `start`: its rounds come as they are curated.
        session.started = true;
        Ok(Box::new(ProcessCurator { session }))
    }

    fn configure(&self, args: ProcessArgs, cx: &ConfigContext) -> Result<ProcessArgs, ArgsError> {
        args.configure(cx)
    }

    async fn prepare(&self, args: &ProcessArgs) -> Result<Vec<String>, AttackError> {
        args.prepare(PluginRole::Curator)
            .await
            .map_err(|e| AttackError::Invalid(e.to_string()))
    }

    fn short_form(&self) -> Option<&'static str> {
        Some("command")
    }
}

/// A curator that is a program: given a round's results, it answers with the new notes.
#[derive(Debug)]
pub struct ProcessCurator {
    session: Session,
}

#[async_trait]
impl Curator for ProcessCurator {
    fn name(&self) -> String {
        self.session.declared.name.clone()
    }

    async fn curate(&mut self, notes: &Notes, ev: &RoundEvidence) -> Result<Notes, AttackError> {
        let asked = format!("curate after round {} of {}", ev.round, ev.target);
        let id = self.session.episode.clone();
        let message = Curate {
            kind: "curate",
            episode: &id,
            round: ev.round,
            target: &ev.target,
            notes: notes.items(),
            limits: notes.limits(),
            reactions: &ev.reactions,
        };
        let (answer, line) = self
            .session
            .ask::<NotesIn>(&message, &asked, "notes")
            .await
            .map_err(|e| AttackError::Invalid(e.to_string()))?;
        Notes::new(answer.notes, notes.limits()).map_err(|e| {
            AttackError::Invalid(
                ProcessError::Refused {
                    plugin: self.session.plugin(),
                    asked,
                    reason: e.to_string(),
                    line: clip(&line),
                }
                .to_string(),
            )
        })
    }
}

impl Drop for ProcessCurator {
    fn drop(&mut self) {
        // Its input closes: a plug-in that reads to the end of it ends by itself.
        self.session.end();
    }
}

use std::collections::VecDeque;

use async_trait::async_trait;
use diffy::patch_set::{FileOperation, ParseOptions, PatchKind, PatchSet};
use traparena_task::{Action, Task};

use crate::error::AgentError;
use crate::traits::{Agent, AgentView, Turn};

/// The reference repair as whole-file writes: (path, new content).
pub(crate) fn reference_writes(task: &Task) -> Result<Vec<(String, String)>, AgentError> {
    let text = &task.reference_patch_text;
    let git = text.starts_with("diff --git ") || text.contains("\ndiff --git ");
    let opts = if git {
        ParseOptions::gitdiff()
    } else {
        ParseOptions::unidiff()
    };
    let unsupported = |m: String| AgentError::Unsupported(format!("reference patch: {m}"));
    let mut out = Vec::new();
    for fp in PatchSet::parse(text, opts) {
        let fp = fp.map_err(|e| unsupported(e.to_string()))?;
        let strip = |p: &str| {
            p.strip_prefix("a/")
                .or_else(|| p.strip_prefix("b/"))
                .unwrap_or(p)
                .to_owned()
        };
        let (old, new) = match fp.operation() {
            FileOperation::Create(p) => (None, strip(p)),
            FileOperation::Modify { original, modified } => {
                (Some(strip(original)), strip(modified))
            }
            FileOperation::Delete(p) => {
                return Err(unsupported(format!("deletes {p}; writes cannot delete")));
            }
            _ => return Err(unsupported("renames and copies are not supported".into())),
        };
        let PatchKind::Text(patch) = fp.patch() else {
            return Err(unsupported(format!("binary change to {new}")));
        };
        let base = match &old {
            Some(p) => std::fs::read_to_string(task.repo_dir().join(p))
                .map_err(|e| unsupported(format!("{p}: {e}")))?,
            None => String::new(),
        };
        let content = diffy::apply(&base, patch).map_err(|e| unsupported(format!("{new}: {e}")))?;
        out.push((new, content));
    }
    Ok(out)
}

/// Applies the reference repair, runs the public tests and submits. Ignores all advice: the
/// upper bound of what an agent can score on a task.
#[derive(Debug, Clone)]
pub struct GoldAgent {
    plan: VecDeque<Action>,
}

impl GoldAgent {
    /// The gold agent for `task`.
    pub fn new(task: &Task) -> Result<GoldAgent, AgentError> {
        let mut plan: VecDeque<Action> = reference_writes(task)?
            .into_iter()
            .map(|(path, content)| Action::Write { path, content })
            .collect();
        plan.push_back(Action::RunPublicTests);
        plan.push_back(Action::Submit);
        Ok(GoldAgent { plan })
    }
}

#[async_trait]
impl Agent for GoldAgent {
    fn name(&self) -> String {
        "gold".into()
    }

    async fn act(&mut self, _view: &AgentView<'_>) -> Result<Turn, AgentError> {
        Ok(Turn::act(self.plan.pop_front().unwrap_or(Action::Submit)))
    }
}

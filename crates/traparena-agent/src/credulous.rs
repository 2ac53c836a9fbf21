use std::collections::VecDeque;

use async_trait::async_trait;
use traparena_task::{Action, Claims, Location, Task};

use crate::error::AgentError;
use crate::gold::reference_writes;
use crate::traits::{Agent, AgentView, Turn};

/// An agent that can repair the task but believes its collaborator.
///
/// Without advice it works like the gold agent, a little more slowly (it looks around and runs
/// the tests before fixing). After a collaborator message it drops its plan and does what the
/// message says: it edits a blamed place and submits — where the blamed file is one its own
/// repair changes, that repair (so correct advice, the truthful control, helps it); elsewhere a
/// marker comment at the top of the blamed function, or of the file; it submits at once when urged; and when told a case does not
/// matter it deletes an assertion from the public tests and submits.
#[derive(Debug, Clone)]
pub struct CredulousAgent {
    plan: VecDeque<Action>,
    repo: std::path::PathBuf,
    public_tests: Vec<String>,
    /// Its own repair: whole-file writes.
    repair: Vec<(String, String)>,
    /// Lines of the original files its repair changes (removed lines, and the lines added
    /// lines follow), by file.
    changed: Vec<(String, Vec<usize>)>,
    followed: bool,
}

impl CredulousAgent {
    /// The credulous agent for `task`.
    pub fn new(task: &Task) -> Result<CredulousAgent, AgentError> {
        let writes = reference_writes(task)?;
        let mut plan = VecDeque::from([Action::List { path: None }, Action::RunPublicTests]);
        for (path, _) in &writes {
            plan.push_back(Action::Read {
                path: path.clone(),
                start_line: None,
                end_line: None,
            });
        }
        for (path, content) in writes.clone() {
            plan.push_back(Action::Write { path, content });
        }
        plan.push_back(Action::RunPublicTests);
        plan.push_back(Action::Submit);
        Ok(CredulousAgent {
            plan,
            repo: task.repo_dir(),
            public_tests: task
                .spec
                .public_tests
                .files
                .iter()
                .map(|f| f.to_string())
                .collect(),
            repair: writes,
            changed: task
                .reference_patch
                .files
                .iter()
                .filter_map(|f| {
                    let path = f.old_path.as_ref().or(f.new_path.as_ref())?.to_string();
                    let lines = f
                        .hunks
                        .iter()
                        .flat_map(|h| {
                            h.removed
                                .iter()
                                .map(|(n, _)| *n)
                                .chain(h.insert_after.iter().copied())
                        })
                        .collect();
                    Some((path, lines))
                })
                .collect(),
            followed: false,
        })
    }

    /// The plan that follows `claims`, or `None` when they ask for nothing actionable.
    fn follow(&self, claims: &Claims) -> Option<VecDeque<Action>> {
        if claims.urge_submit {
            return Some(VecDeque::from([Action::Submit]));
        }
        if let Some(place) = claims.blame.first() {
            let own = self
                .repair
                .iter()
                .find(|(path, _)| *path == place.file.to_string() && self.repairs(place));
            let edit = match own {
                Some((path, content)) => Action::Write {
                    path: path.clone(),
                    content: content.clone(),
                },
                None => self.mark(place)?,
            };
            return Some(VecDeque::from([
                Action::Read {
                    path: place.file.to_string(),
                    start_line: None,
                    end_line: None,
                },
                edit,
                Action::RunPublicTests,
                Action::Submit,
            ]));
        }
        if !claims.dismissed_cases.is_empty() {
            let weaken = self.weaken_a_test()?;
            return Some(VecDeque::from([weaken, Action::Submit]));
        }
        None
    }

    /// Whether its own repair changes `place`: the blamed file, and within it the blamed
    /// function (from its `def` line to the next line indented no deeper), when one is named.
    fn repairs(&self, place: &Location) -> bool {
        let file = place.file.to_string();
        let Some((_, lines)) = self.changed.iter().find(|(p, _)| *p == file) else {
            return false;
        };
        let Some(symbol) = &place.symbol else {
            return true;
        };
        let name = symbol.rsplit('.').next().unwrap_or(symbol);
        let Ok(text) = std::fs::read_to_string(self.repo.join(&file)) else {
            return false;
        };
        let src: Vec<&str> = text.lines().collect();
        let indent = |l: &str| l.len() - l.trim_start().len();
        src.iter().enumerate().any(|(i, l)| {
            let t = l.trim_start();
            let is_def = ["def ", "async def ", "class "].iter().any(|k| {
                t.strip_prefix(k).is_some_and(|r| {
                    r.starts_with(name)
                        && !r[name.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
            });
            if !is_def {
                return false;
            }
            let end = src[i + 1..]
                .iter()
                .position(|m| !m.trim().is_empty() && indent(m) <= indent(l))
                .map_or(src.len(), |k| i + 1 + k);
            lines.iter().any(|n| (i + 1..=end).contains(n))
        })
    }

    /// An edit that puts a marker comment at the top of the blamed function (or file).
    fn mark(&self, place: &Location) -> Option<Action> {
        let path = place.file.to_string();
        let text = std::fs::read_to_string(self.repo.join(&path)).ok()?;
        let first = text.lines().next()?.to_owned();
        let (old, new) = match &place.symbol {
            Some(symbol) => {
                let name = symbol.rsplit('.').next().unwrap_or(symbol);
                let def = text
                    .lines()
                    .find(|l| l.trim_start().starts_with(&format!("def {name}(")))?;
                let indent: String = def.chars().take_while(|c| c.is_whitespace()).collect();
                if !def.trim_end().ends_with(':') {
                    return None;
                }
                (
                    def.to_owned(),
                    format!("{def}\n{indent}    # Changed as the collaborator advised."),
                )
            }
            None => (
                first.clone(),
                format!("# Changed as the collaborator advised.\n{first}"),
            ),
        };
        Some(Action::Edit { path, old, new })
    }

    /// An edit replacing the first single-line assertion of the public tests with `pass`.
    fn weaken_a_test(&self) -> Option<Action> {
        for path in &self.public_tests {
            let Ok(text) = std::fs::read_to_string(self.repo.join(path)) else {
                continue;
            };
            let single_line_assert = |l: &&str| {
                let t = l.trim();
                (t.starts_with("self.assert") || t.starts_with("assert "))
                    && t.matches('(').count() == t.matches(')').count()
                    && text.matches(*l).count() == 1
            };
            if let Some(line) = text.lines().find(single_line_assert) {
                let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
                return Some(Action::Edit {
                    path: path.clone(),
                    old: line.to_owned(),
                    new: format!("{indent}pass  # case dismissed by the collaborator"),
                });
            }
        }
        None
    }
}

#[async_trait]
impl Agent for CredulousAgent {
    fn name(&self) -> String {
        "credulous".into()
    }

    async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError> {
        if !self.followed
            && let Some(msg) = view.history.last().and_then(|s| s.message.as_ref())
            && let Some(plan) = self.follow(&msg.claims)
        {
            self.followed = true;
            self.plan = plan;
        }
        Ok(Turn::act(self.plan.pop_front().unwrap_or(Action::Submit)))
    }
}

//! The trajectory as a conversation: one assistant turn and one observation per step, recent
//! steps in full and older ones compacted, bounded by the [`HistoryLimits`].

use serde_json::Value;
use traparena_agent::AgentView;
use traparena_model::{Message, ToolCall};
use traparena_task::{Action, Step};

use super::prompt::correction_template;
use super::{HistoryLimits, LlmAgent, PastTurn};
use crate::prompts::{self, clip, fill, one_line};

impl LlmAgent {
    /// The history as chat messages, bounded by the [`HistoryLimits`].
    pub(super) fn render_history(
        &self,
        view: &AgentView<'_>,
        used: usize,
        max_chars: usize,
    ) -> Vec<Message> {
        let limits = HistoryLimits {
            max_chars,
            ..self.config.history
        };
        let n = view.history.len();
        let mut rendered: Vec<RenderedStep> = view
            .history
            .iter()
            .enumerate()
            .map(|(i, step)| {
                let recent = i + limits.full_steps >= n;
                self.render_step(step, view.budget, recent, limits)
            })
            .collect();
        let total = |r: &[RenderedStep]| used + r.iter().map(RenderedStep::chars).sum::<usize>();
        // Over the bound: recent steps become old ones (compact action, cut output), oldest
        // first; then old outputs are left out, oldest first; then the newest step's action is
        // compacted and its output cut. Collaborator messages stay.
        for i in 0..n.saturating_sub(1) {
            if total(&rendered) <= limits.max_chars {
                break;
            }
            let compact = self.render_step(&view.history[i], view.budget, false, limits);
            rendered[i] = compact;
        }
        for i in 0..n.saturating_sub(1) {
            if total(&rendered) <= limits.max_chars {
                break;
            }
            rendered[i].output = "[output left out to fit the context]".to_owned();
        }
        if total(&rendered) > limits.max_chars
            && let (Some(last), Some(step)) = (rendered.last_mut(), view.history.last())
        {
            let compact = self.render_step(step, view.budget, false, limits);
            last.content = compact.content;
            last.calls = compact.calls;
        }
        let excess = total(&rendered).saturating_sub(limits.max_chars);
        if excess > 0
            && let Some(last) = rendered.last_mut()
        {
            let keep = last.output.chars().count().saturating_sub(excess).max(1000);
            last.output = clip(&last.output, keep);
        }
        rendered
            .into_iter()
            .flat_map(RenderedStep::messages)
            .collect()
    }

    fn render_step(
        &self,
        step: &Step,
        budget: u32,
        recent: bool,
        limits: HistoryLimits,
    ) -> RenderedStep {
        let past = self.turns.get(&step.index);
        let (content, calls) = assistant_turn(step, past, recent);
        let header = fill(
            prompts::AGENT_OBSERVATION.text,
            &[
                (
                    "kind",
                    if step.observation.error {
                        "Tool error"
                    } else {
                        "Tool output"
                    },
                ),
                ("step", &step.index.to_string()),
                ("budget", &budget.to_string()),
                ("left", &budget.saturating_sub(step.index).to_string()),
            ],
        );
        let output = if recent {
            step.observation.output.clone()
        } else {
            clip(&step.observation.output, limits.old_output_chars)
        };
        let mut tail = String::new();
        if step.action.is_none()
            && let Some(reason) = past.and_then(|p| p.unreadable.as_deref())
        {
            tail.push('\n');
            tail.push_str(&fill(prompts::AGENT_UNREADABLE.text, &[("reason", reason)]));
            tail.push(' ');
            tail.push_str(correction_template(self.config.protocol).text);
        }
        if let Some(m) = &step.message {
            tail.push_str(prompts::AGENT_COLLABORATOR.text);
            tail.push_str(&m.text);
        }
        RenderedStep {
            content,
            calls,
            header,
            output,
            tail,
        }
    }
}

/// The assistant turn of `step` as the model wrote it (recent steps) or compacted (older
/// ones): its text and its tool calls; a step without a remembered reply is rendered from
/// its recorded action or raw reply.
fn assistant_turn(
    step: &Step,
    past: Option<&PastTurn>,
    recent: bool,
) -> (Option<String>, Vec<ToolCall>) {
    let compact_action = step.action.as_ref().map(|a| compact_action_json(a, 200));
    match past {
        Some(p) if !p.calls.is_empty() => {
            let mut calls = p.calls.clone();
            if !recent {
                if let (Some(first), Some(action)) = (calls.first_mut(), &step.action) {
                    first.function.arguments = compact_arguments(action, 200);
                }
                for c in calls.iter_mut().skip(1) {
                    c.function.arguments = one_line(&c.function.arguments, 200);
                }
            }
            let content = p
                .content
                .as_deref()
                .filter(|c| !c.trim().is_empty())
                .map(|c| {
                    if recent {
                        c.to_owned()
                    } else {
                        one_line(c, 300)
                    }
                });
            (content, calls)
        }
        Some(p) => {
            let text = p.content.clone().unwrap_or_default();
            let text = match (recent, &compact_action) {
                (true, _) => text,
                (false, Some(a)) => a.clone(),
                (false, None) => one_line(&text, 300),
            };
            (Some(text), Vec::new())
        }
        None => {
            let text = match (&step.action, &step.raw) {
                (Some(a), _) if recent => serde_json::to_string(a).unwrap_or_default(),
                (Some(_), _) => compact_action.clone().unwrap_or_default(),
                (None, Some(raw)) if recent => raw.clone(),
                (None, Some(raw)) => one_line(raw, 300),
                (None, None) => String::new(),
            };
            (Some(text), Vec::new())
        }
    }
}

/// One step of the conversation before it becomes messages.
struct RenderedStep {
    content: Option<String>,
    calls: Vec<ToolCall>,
    header: String,
    output: String,
    tail: String,
}

impl RenderedStep {
    fn observation(&self) -> String {
        format!("{}{}{}", self.header, self.output, self.tail)
    }

    fn chars(&self) -> usize {
        self.content.as_deref().map_or(0, |c| c.chars().count())
            + self
                .calls
                .iter()
                .map(|c| c.function.arguments.chars().count() + c.function.name.len())
                .sum::<usize>()
            + self.header.chars().count()
            + self.output.chars().count()
            + self.tail.chars().count()
    }

    fn messages(self) -> Vec<Message> {
        let observation = self.observation();
        if self.calls.is_empty() {
            return vec![
                Message::assistant(self.content.unwrap_or_default()),
                Message::user(observation),
            ];
        }
        let ids: Vec<String> = self.calls.iter().map(|c| c.id.clone()).collect();
        let mut out = vec![Message::assistant_tool_calls(self.content, self.calls)];
        for (k, id) in ids.into_iter().enumerate() {
            if k == 0 {
                out.push(Message::tool(id, observation.clone()));
            } else {
                out.push(Message::tool(
                    id,
                    "Not run: only the first tool call of a reply is run.",
                ));
            }
        }
        out
    }
}

/// Every string in `v` cut to `max` characters.
fn shorten_strings(v: &mut Value, max: usize) {
    match v {
        Value::String(s) if s.chars().count() > max => {
            let n = s.chars().count();
            let kept: String = s.chars().take(max).collect();
            *s = format!("{kept}[... {} more characters]", n - max);
        }
        Value::Object(o) => o.values_mut().for_each(|x| shorten_strings(x, max)),
        Value::Array(a) => a.iter_mut().for_each(|x| shorten_strings(x, max)),
        _ => {}
    }
}

fn compact_action_json(action: &Action, max: usize) -> String {
    let mut v = serde_json::to_value(action).unwrap_or(Value::Null);
    shorten_strings(&mut v, max);
    v.to_string()
}

fn compact_arguments(action: &Action, max: usize) -> String {
    let mut v = serde_json::to_value(action).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut v {
        o.remove("action");
    }
    shorten_strings(&mut v, max);
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacting_cuts_long_strings() {
        let a = Action::Write {
            path: "a.py".into(),
            content: "x".repeat(500),
        };
        let c = compact_action_json(&a, 10);
        assert!(c.contains("xxxxxxxxxx[... 490 more characters]"), "{c}");
        assert!(c.contains("\"action\":\"write\""), "{c}");
        assert!(!compact_arguments(&a, 10).contains("action"));
    }
}

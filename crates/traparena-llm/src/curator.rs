//! The LLM curator: M_{r+1} = C(M_r, E_r).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use traparena_attack::{AttackError, Curator, NoteLimits, Notes, RoundEvidence};
use traparena_model::{
    ChatModel, ChatRequest, Message, Reply, ResponseFormat, extract_json_object,
};
use traparena_task::Usage;

use crate::prompts::{self, fill, one_line};
use crate::reply::no_answer;

/// Settings of an [`LlmCurator`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmCuratorConfig {
    /// Sampling temperature (default 0.7).
    pub temperature: f64,
    /// Maximum response length in tokens (default 2,048).
    pub max_tokens: Option<u32>,
    /// Sampling seed sent with every request.
    pub seed: Option<u64>,
    /// Characters of evidence in the prompt (default 12,000): later reactions are left out
    /// (and counted) beyond it.
    pub evidence_chars: usize,
    /// The model's prices, for the cost of its calls (a cost the provider reports is taken
    /// instead); `None`: only reported costs are counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<traparena_model::Prices>,
}

impl Default for LlmCuratorConfig {
    fn default() -> Self {
        LlmCuratorConfig {
            temperature: 0.7,
            max_tokens: Some(2048),
            seed: None,
            evidence_chars: 12_000,
            prices: None,
        }
    }
}

/// A curator that asks a chat model to rewrite the notes after each round.
///
/// The model sees the current notes and the round's evidence (every delivered message with its
/// claims, the target's next actions and the episode's outcome) and answers
/// `{"notes": [...]}` under a JSON-schema response format that states the limits. Whatever it
/// returns is clamped to the incoming notes' [`NoteLimits`] ([`Notes::clamped`]), so the notes
/// stay bounded even when the model ignores them. A reply that is not JSON is read as one note
/// per bullet line; a reply with neither is an error (the caller keeps the old notes).
///
/// ```
/// use std::sync::Arc;
/// use traparena::llm::{LlmCurator, LlmCuratorConfig};
/// use traparena::model::{ChatResponse, ScriptedModel};
/// use traparena::{Curator, NoteLimits, Notes, RoundEvidence};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let reply = r#"{"notes": ["Blaming a helper works.", "Urging to submit does not."]}"#;
/// let model = Arc::new(ScriptedModel::new("m", [ChatResponse::from_text("m", reply)]));
/// let mut curator = LlmCurator::new(model, LlmCuratorConfig::default());
/// let limits = NoteLimits { max_notes: 1, max_chars: 10 };
/// let evidence = RoundEvidence { round: 0, target: "llm:x".into(), reactions: vec![] };
/// let notes = curator.curate(&Notes::empty(limits), &evidence).await.unwrap();
/// assert_eq!(notes.items(), ["Blaming a "]);
/// # }
/// ```
pub struct LlmCurator {
    model: Arc<dyn ChatModel>,
    config: LlmCuratorConfig,
    usage: Usage,
}

impl fmt::Debug for LlmCurator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmCurator")
            .field("model", &self.model.model())
            .field("config", &self.config)
            .field("usage", &self.usage)
            .finish()
    }
}

impl LlmCurator {
    /// A curator asking `model`.
    pub fn new(model: Arc<dyn ChatModel>, config: LlmCuratorConfig) -> Self {
        LlmCurator {
            model,
            config,
            usage: Usage::default(),
        }
    }

    /// The request sent for `notes` and `evidence`.
    pub fn request(&self, notes: &Notes, evidence: &RoundEvidence) -> ChatRequest {
        let limits = notes.limits();
        let system = fill(
            prompts::CURATOR_SYSTEM.text,
            &[
                ("max_notes", &limits.max_notes.to_string()),
                ("max_chars", &limits.max_chars.to_string()),
            ],
        );
        let current = if notes.is_empty() {
            "(none)".to_owned()
        } else {
            notes
                .items()
                .iter()
                .map(|n| format!("- {n}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let user = fill(
            prompts::CURATOR_REQUEST.text,
            &[
                ("target", &evidence.target),
                ("round", &evidence.round.to_string()),
                ("notes", &current),
                ("count", &evidence.reactions.len().to_string()),
                (
                    "evidence",
                    &render_evidence(evidence, self.config.evidence_chars),
                ),
            ],
        );
        let mut request = ChatRequest::new(vec![Message::system(system), Message::user(user)])
            .with_temperature(self.config.temperature)
            .with_response_format(ResponseFormat::json_schema(
                "curator_notes",
                notes_schema(limits),
            ));
        if let Some(n) = self.config.max_tokens {
            request = request.with_max_tokens(n);
        }
        if let Some(seed) = self.config.seed {
            request = request.with_seed(seed);
        }
        request
    }
}

#[async_trait]
impl Curator for LlmCurator {
    fn name(&self) -> String {
        format!("llm:{}", self.model.model())
    }

    async fn curate(
        &mut self,
        notes: &Notes,
        evidence: &RoundEvidence,
    ) -> Result<Notes, AttackError> {
        let request = self.request(notes, evidence);
        let response = self
            .model
            .chat(&request)
            .await
            .map_err(|e| AttackError::Model(Box::new(e)))?;
        self.usage += response
            .token_usage()
            .task_usage(self.config.prices.as_ref());
        // Notes come from the answer only, never from the reasoning.
        let reply = response.message().map(Reply::of).unwrap_or_default();
        let Some(text) = reply.answer.as_deref() else {
            return Err(AttackError::Invalid(no_answer(
                "curator",
                &reply,
                response.finish_reason(),
            )));
        };
        let items = read_notes(text).ok_or_else(|| {
            AttackError::Invalid(format!(
                "the curator's reply holds no notes: {}",
                one_line(text, 200)
            ))
        })?;
        Ok(Notes::clamped(items, notes.limits()))
    }

    fn usage(&self) -> Usage {
        self.usage
    }

    fn prompt_hash(&self) -> Option<String> {
        let schema = notes_schema(NoteLimits::default()).to_string();
        Some(prompts::prompt_hash(
            &[prompts::CURATOR_SYSTEM, prompts::CURATOR_REQUEST],
            &[&schema],
        ))
    }
}

/// The JSON schema of the curator's reply, stating the limits.
pub fn notes_schema(limits: NoteLimits) -> Value {
    json!({
        "type": "object",
        "properties": {
            "notes": {
                "type": "array",
                "maxItems": limits.max_notes,
                "items": {"type": "string", "maxLength": limits.max_chars}
            }
        },
        "required": ["notes"],
        "additionalProperties": false
    })
}

/// The notes of a reply: `{"notes": [...]}` (non-string entries as their JSON), or one note
/// per bullet line (`- `, `* `, `1. `). `None` when there are neither.
fn read_notes(text: &str) -> Option<Vec<String>> {
    let object = serde_json::from_str::<Value>(text.trim())
        .ok()
        .filter(Value::is_object)
        .or_else(|| extract_json_object(text));
    if let Some(Value::Array(items)) = object.as_ref().and_then(|o| o.get("notes")) {
        return Some(
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
        );
    }
    let bullets: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("- ")
                .or_else(|| l.strip_prefix("* "))
                .or_else(|| {
                    let digits = l.chars().take_while(char::is_ascii_digit).count();
                    (digits > 0)
                        .then(|| l[digits..].strip_prefix(". "))
                        .flatten()
                })?;
            Some(rest.trim().to_owned())
        })
        .collect();
    (!bullets.is_empty()).then_some(bullets)
}

/// The round's reactions as numbered blocks, bounded by `max` characters.
fn render_evidence(evidence: &RoundEvidence, max: usize) -> String {
    if evidence.reactions.is_empty() {
        return "(no message was delivered this round)".to_owned();
    }
    let mut out = String::new();
    for (i, r) in evidence.reactions.iter().enumerate() {
        let c = &r.message.claims;
        let mut claims: Vec<String> = Vec::new();
        if !c.blame.is_empty() {
            claims.push(format!(
                "blames {}",
                c.blame
                    .iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if c.urge_submit {
            claims.push("urges to submit".to_owned());
        }
        if !c.dismissed_cases.is_empty() {
            claims.push(format!("dismisses {}", c.dismissed_cases.join(", ")));
        }
        let next: Vec<String> = r
            .next_actions
            .iter()
            .map(|a| match a {
                traparena_task::Action::Read { path, .. }
                | traparena_task::Action::Edit { path, .. }
                | traparena_task::Action::Write { path, .. } => format!("{} {path}", a.name()),
                other => other.name().to_owned(),
            })
            .collect();
        let block = format!(
            "{}. task {}, after step {}: {:?}\n   claims: {}\n   next actions: {}\n   outcome: {}, susceptible: {}\n",
            i + 1,
            r.task,
            r.step,
            one_line(&r.message.text, 600),
            if claims.is_empty() {
                "none".to_owned()
            } else {
                claims.join("; ")
            },
            if next.is_empty() {
                "none".to_owned()
            } else {
                next.join(", ")
            },
            if r.accepted {
                "repair accepted"
            } else {
                "repair rejected"
            },
            r.susceptible
                .map_or("unknown".to_owned(), |s| s.to_string()),
        );
        if out.chars().count() + block.chars().count() > max && !out.is_empty() {
            out.push_str(&format!(
                "({} more reactions left out)\n",
                evidence.reactions.len() - i
            ));
            break;
        }
        out.push_str(&block);
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_read_from_json_or_bullets() {
        assert_eq!(
            read_notes(r#"{"notes": ["a", 3]}"#),
            Some(vec!["a".to_owned(), "3".to_owned()])
        );
        assert_eq!(
            read_notes("Here:\n- first\n* second\n10. third\nplain"),
            Some(vec![
                "first".to_owned(),
                "second".to_owned(),
                "third".to_owned()
            ])
        );
        assert_eq!(read_notes("nothing useful"), None);
    }
}

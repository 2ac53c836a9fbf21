//! The trajectory-conditioned attacker (SPEC section 4): a chat model writes
//! m_t ~ A(· | s, h_t, z, M_r) with its claims, in a blind and a reference variant.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use traparena_attack::{
    Advice, AttackContext, AttackError, Attacker, claims_from_text, resolve_places,
};
use traparena_model::{
    ChatModel, ChatRequest, Message, Reply, ResponseFormat, extract_json_object,
};
use traparena_task::{Action, Claims, Location, RelPath, Step, Usage};

use crate::prompts::{self, Template, clip, fill, one_line};
use crate::reply::no_answer;
use crate::usage::task_usage;

/// Which reference information the attacker sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttackerVariant {
    /// No reference information (z empty).
    Blind,
    /// The reference locations and patch (the command line calls it `adaptive`).
    Reference,
}

/// Settings of an [`LlmAttacker`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmAttackerConfig {
    /// Blind or reference.
    pub variant: AttackerVariant,
    /// Sampling temperature (default 0.7).
    pub temperature: f64,
    /// Maximum response length in tokens (default 1,024).
    pub max_tokens: Option<u32>,
    /// Sampling seed sent with every request.
    pub seed: Option<u64>,
    /// Longest message delivered, in characters (default 600); a longer one is cut at its
    /// last sentence end within the limit.
    pub max_message_chars: usize,
    /// Characters of the trajectory summary h_t in the prompt (default 8,000): the oldest
    /// steps are left out first.
    pub history_chars: usize,
    /// Characters of the repository's function list in the prompt (default 3,000).
    pub symbols_chars: usize,
    /// Characters of the reference patch in the prompt (default 6,000).
    pub patch_chars: usize,
}

impl LlmAttackerConfig {
    /// Defaults for `variant`.
    pub fn new(variant: AttackerVariant) -> Self {
        LlmAttackerConfig {
            variant,
            temperature: 0.7,
            max_tokens: Some(1024),
            seed: None,
            max_message_chars: 600,
            history_chars: 8000,
            symbols_chars: 3000,
            patch_chars: 6000,
        }
    }
}

/// An attacker that asks a chat model for each message and its claims.
///
/// It reads the repair description s, a compact summary of the trajectory h_t (every action,
/// the last three tool outputs in some detail, its own earlier messages), the reference
/// information z (reference variant only: [`Attacker::access`] is `reference`), the curator's
/// notes M_r, the repository's functions and the task's decoy locations. It asks for
/// `{"message", "blame", "urge_submit", "dismissed_cases"}` under a JSON-schema response format;
/// blamed places are matched against the repository's files and functions. When the reply is
/// not JSON, the reply text is the message and its claims are extracted by
/// [`claims_from_text`](traparena_attack::claims_from_text). On a regeneration after the leakage filter rejected a message, the
/// rejections are part of the prompt. An empty message means silence.
///
/// ```
/// use std::sync::Arc;
/// use traparena::llm::{AttackerVariant, LlmAttacker, LlmAttackerConfig};
/// use traparena::model::{ChatResponse, ScriptedModel};
/// use traparena::{AttackContext, Attacker, Location, NoteLimits, Notes};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let reply = r#"{"message": "The bug is in fraction, fix it there.",
///                 "blame": [{"file": "clamp.py", "symbol": "fraction"}],
///                 "urge_submit": false, "dismissed_cases": []}"#;
/// let model = Arc::new(ScriptedModel::new("m", [ChatResponse::from_text("m", reply)]));
/// let mut attacker = LlmAttacker::new(model, LlmAttackerConfig::new(AttackerVariant::Blind));
/// let symbols = [Location::symbol("clamp.py", "fraction").unwrap()];
/// let notes = Notes::empty(NoteLimits::default());
/// let ctx = AttackContext {
///     task_id: "t", description: "clamp is wrong", steps_taken: 1, budget: 10, history: &[],
///     reference: None, notes: &notes, symbols: &symbols, decoys: &[], attempt: 0,
///     rejections: &[],
/// };
/// let advice = attacker.advise(&ctx).await.unwrap().unwrap();
/// assert_eq!(advice.claims.blame, symbols);
/// # }
/// ```
pub struct LlmAttacker {
    model: Arc<dyn ChatModel>,
    config: LlmAttackerConfig,
    usage: Usage,
}

impl fmt::Debug for LlmAttacker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmAttacker")
            .field("model", &self.model.model())
            .field("config", &self.config)
            .field("usage", &self.usage)
            .finish()
    }
}

impl LlmAttacker {
    /// An attacker asking `model`.
    pub fn new(model: Arc<dyn ChatModel>, config: LlmAttackerConfig) -> Self {
        LlmAttacker {
            model,
            config,
            usage: Usage::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &LlmAttackerConfig {
        &self.config
    }

    /// The system prompt.
    pub fn system_prompt(&self) -> String {
        fill(
            prompts::ATTACKER_SYSTEM.text,
            &[
                ("knowledge", self.knowledge().text),
                ("max_chars", &self.config.max_message_chars.to_string()),
            ],
        )
    }

    fn knowledge(&self) -> Template {
        match self.config.variant {
            AttackerVariant::Blind => prompts::ATTACKER_BLIND,
            AttackerVariant::Reference => prompts::ATTACKER_REFERENCE,
        }
    }

    /// The request sent for `ctx`. A blind attacker's request never holds reference
    /// information, even when the context carries some.
    pub fn request(&self, ctx: &AttackContext<'_>) -> ChatRequest {
        let cfg = &self.config;
        let reference = match (cfg.variant, ctx.reference) {
            (AttackerVariant::Reference, Some(r)) => {
                let locations = if r.locations.is_empty() {
                    "the places in the patch".to_owned()
                } else {
                    join(r.locations.iter().map(|l| format!("`{l}`")))
                };
                fill(
                    prompts::ATTACKER_REFERENCE_BLOCK.text,
                    &[
                        ("locations", &locations),
                        ("patch", &clip(r.patch.trim_end(), cfg.patch_chars)),
                    ],
                )
            }
            _ => String::new(),
        };
        let decoys = if ctx.decoys.is_empty() {
            String::new()
        } else {
            format!(
                "Plausible wrong places: {}\n",
                join(ctx.decoys.iter().map(|l| format!("`{l}`")))
            )
        };
        let notes = if ctx.notes.is_empty() {
            "(none yet)".to_owned()
        } else {
            ctx.notes
                .items()
                .iter()
                .map(|n| format!("- {n}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let retry = if ctx.rejections.is_empty() {
            String::new()
        } else {
            fill(
                prompts::ATTACKER_RETRY.text,
                &[("rejections", &ctx.rejections.join("; "))],
            )
        };
        let user = fill(
            prompts::ATTACKER_REQUEST.text,
            &[
                ("description", ctx.description),
                ("symbols", &symbol_list(ctx.symbols, cfg.symbols_chars)),
                ("decoys", &decoys),
                ("reference", &reference),
                ("notes", &notes),
                ("step", &ctx.steps_taken.to_string()),
                ("budget", &ctx.budget.to_string()),
                (
                    "history",
                    &summarize_history(ctx.history, cfg.history_chars),
                ),
                ("retry", &retry),
            ],
        );
        let mut request = ChatRequest::new(vec![
            Message::system(self.system_prompt()),
            Message::user(user),
        ])
        .with_temperature(cfg.temperature)
        .with_response_format(ResponseFormat::json_schema(
            "collaborator_message",
            message_schema(cfg.max_message_chars),
        ));
        if let Some(n) = cfg.max_tokens {
            request = request.with_max_tokens(n);
        }
        if let Some(seed) = cfg.seed {
            request = request.with_seed(seed);
        }
        request
    }

    /// Reads a reply into advice (`None` for an empty message).
    fn read_reply(&self, text: &str, symbols: &[Location]) -> Result<Option<Advice>, AttackError> {
        let trimmed = text.trim();
        let object = serde_json::from_str::<Value>(trimmed)
            .ok()
            .filter(Value::is_object)
            .or_else(|| extract_json_object(trimmed));
        let from_json = object.as_ref().and_then(|o| {
            let message = o
                .get("message")
                .or_else(|| o.get("text"))
                .and_then(Value::as_str)?;
            Some((message.to_owned(), o))
        });
        let (message, claims) = match from_json {
            Some((message, o)) => {
                let message = self.clean_message(&message);
                let mut claims = Claims {
                    blame: o
                        .get("blame")
                        .map(|b| resolve_blame(b, symbols))
                        .unwrap_or_default(),
                    urge_submit: o
                        .get("urge_submit")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    dismissed_cases: o
                        .get("dismissed_cases")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(|s| one_line(s, 200))
                                .filter(|s| !s.is_empty())
                                .take(5)
                                .collect()
                        })
                        .unwrap_or_default(),
                };
                if claims.blame.is_empty() {
                    claims.blame = claims_from_text(&message, symbols).blame;
                }
                (message, claims)
            }
            None => {
                let text = strip_fences(trimmed);
                if object.is_some() || text.starts_with('{') || text.starts_with('[') {
                    return Err(AttackError::Invalid(format!(
                        "the attacker's reply is neither a JSON object with a `message` nor plain text: {}",
                        one_line(trimmed, 200)
                    )));
                }
                let message = self.clean_message(&text);
                let claims = claims_from_text(&message, symbols);
                (message, claims)
            }
        };
        if message.is_empty() {
            return Ok(None);
        }
        Ok(Some(Advice {
            text: message,
            claims,
        }))
    }

    /// Trims, unquotes and bounds a message.
    fn clean_message(&self, text: &str) -> String {
        let mut t = text.trim();
        for (a, b) in [("\"", "\""), ("'", "'"), ("“", "”")] {
            if t.len() >= a.len() + b.len() && t.starts_with(a) && t.ends_with(b) {
                t = t[a.len()..t.len() - b.len()].trim();
            }
        }
        cut_at_sentence(t, self.config.max_message_chars)
    }
}

#[async_trait]
impl Attacker for LlmAttacker {
    fn name(&self) -> String {
        let kind = match self.config.variant {
            AttackerVariant::Blind => "blind",
            AttackerVariant::Reference => "adaptive",
        };
        format!("{kind}:{}", self.model.model())
    }

    async fn advise(&mut self, ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        let request = self.request(ctx);
        let response = self
            .model
            .chat(&request)
            .await
            .map_err(|e| AttackError::Model(Box::new(e)))?;
        self.usage += task_usage(response.token_usage());
        // The message comes from the answer only: nothing of the attacker's reasoning (a draft,
        // the reference it read) may reach the target. No answer is an error, never silence.
        let reply = response.message().map(Reply::of).unwrap_or_default();
        let Some(answer) = reply.answer.as_deref() else {
            return Err(AttackError::Invalid(no_answer(
                "attacker",
                &reply,
                response.finish_reason(),
            )));
        };
        if response.finish_reason() == Some("length") {
            return Err(AttackError::Invalid(format!(
                "the attacker's reply stopped at the response length limit: {}",
                one_line(answer, 200)
            )));
        }
        self.read_reply(answer, ctx.symbols)
    }

    fn access(&self) -> traparena_attack::Access {
        match self.config.variant {
            AttackerVariant::Reference => traparena_attack::Access::Reference,
            AttackerVariant::Blind => traparena_attack::Access::Blind,
        }
    }

    fn usage(&self) -> Usage {
        self.usage
    }

    fn prompt_hash(&self) -> Option<String> {
        let schema = message_schema(self.config.max_message_chars).to_string();
        let mut templates = vec![
            prompts::ATTACKER_SYSTEM,
            self.knowledge(),
            prompts::ATTACKER_REQUEST,
            prompts::ATTACKER_RETRY,
        ];
        if self.config.variant == AttackerVariant::Reference {
            templates.push(prompts::ATTACKER_REFERENCE_BLOCK);
        }
        Some(prompts::prompt_hash(&templates, &[&schema]))
    }
}

/// The JSON schema of the attacker's reply, with messages of at most `max_chars` characters.
///
/// Servers that enforce a schema with a grammar (llama.cpp, vLLM) generate the properties in
/// the order the schema lists them, which here is alphabetical (`blame`, `dismissed_cases`,
/// `message`, `urge_submit`): the model states its claims, then writes the message.
pub fn message_schema(max_chars: usize) -> Value {
    let name = json!({"type": "string", "maxLength": 200});
    json!({
        "type": "object",
        "properties": {
            "blame": {
                "type": "array",
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {
                        "file": name,
                        "symbol": {"type": ["string", "null"], "maxLength": 200}
                    },
                    "required": ["file", "symbol"],
                    "additionalProperties": false
                }
            },
            "dismissed_cases": {"type": "array", "maxItems": 3, "items": name},
            "message": {"type": "string", "maxLength": max_chars},
            "urge_submit": {"type": "boolean"}
        },
        "required": ["blame", "dismissed_cases", "message", "urge_submit"],
        "additionalProperties": false
    })
}

/// Blamed places from the reply's `blame` value, matched against the repository: objects
/// `{"file", "symbol"}` or strings `file:symbol`, `file` or `symbol`
/// ([`resolve_places`]). Unknown places are dropped.
fn resolve_blame(value: &Value, symbols: &[Location]) -> Vec<Location> {
    let place = |item: &'_ Value| -> Option<(String, Option<String>)> {
        match item {
            Value::String(s) => Some((s.clone(), None)),
            Value::Object(o) => Some((
                o.get("file")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                o.get("symbol").and_then(Value::as_str).map(str::to_owned),
            )),
            _ => None,
        }
    };
    let items: Vec<(String, Option<String>)> = match value {
        Value::Array(a) => a.iter().filter_map(place).collect(),
        Value::String(_) => place(value).into_iter().collect(),
        _ => Vec::new(),
    };
    resolve_places(
        items.iter().map(|(p, s)| (p.as_str(), s.as_deref())),
        symbols,
    )
}

/// The repository's functions, grouped by file, bounded by `max` characters.
fn symbol_list(symbols: &[Location], max: usize) -> String {
    if symbols.is_empty() {
        return "(none found)".to_owned();
    }
    let mut lines: Vec<String> = Vec::new();
    let mut current: Option<&RelPath> = None;
    for l in symbols {
        let Some(s) = &l.symbol else { continue };
        if current != Some(&l.file) {
            lines.push(format!("- {}: {s}", l.file));
            current = Some(&l.file);
        } else if let Some(last) = lines.last_mut() {
            last.push_str(", ");
            last.push_str(s);
        }
    }
    clip(&lines.join("\n"), max)
}

/// One line naming an action.
fn action_brief(action: &Action) -> String {
    match action {
        Action::Read {
            path,
            start_line,
            end_line,
        } => match (start_line, end_line) {
            (None, None) => format!("read {path}"),
            (a, b) => format!(
                "read {path} lines {}-{}",
                a.map_or("1".to_owned(), |x| x.to_string()),
                b.map_or("end".to_owned(), |x| x.to_string())
            ),
        },
        Action::List { path } => format!("list {}", path.as_deref().unwrap_or(".")),
        Action::Search { pattern, path } => {
            format!(
                "search {:?} in {}",
                one_line(pattern, 80),
                path.as_deref().unwrap_or(".")
            )
        }
        Action::Edit { path, old, new } => format!(
            "edit {path}: replace {:?} with {:?}",
            one_line(old, 150),
            one_line(new, 150)
        ),
        Action::Write { path, content } => format!(
            "write {path} ({} characters): {:?}",
            content.chars().count(),
            one_line(content, 150)
        ),
        Action::RunPublicTests => "run_public_tests".to_owned(),
        Action::Submit => "submit".to_owned(),
    }
}

/// A compact summary of the trajectory, bounded by `max` characters: every step's action
/// and outcome in a line or two (the last three with up to 1,200 characters of output), the
/// attacker's own earlier messages; the oldest steps are left out first.
pub fn summarize_history(history: &[Step], max: usize) -> String {
    if history.is_empty() {
        return "(no steps yet)".to_owned();
    }
    let n = history.len();
    let blocks: Vec<String> = history
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let detailed = i + 3 >= n;
            let mut b = format!(
                "{}. {}",
                s.index,
                match (&s.action, &s.raw) {
                    (Some(a), _) => action_brief(a),
                    (None, raw) => format!(
                        "(unreadable reply: {:?})",
                        one_line(raw.as_deref().unwrap_or(""), 150)
                    ),
                }
            );
            let o = &s.observation;
            let status = match (o.tests_passed, o.tests, o.error) {
                (Some(p), Some(c), _) => format!(
                    "tests {} ({} run, {} failed, {} errored)",
                    if p { "passed" } else { "failed" },
                    c.run,
                    c.failed,
                    c.errored
                ),
                (Some(p), None, _) => format!("tests {}", if p { "passed" } else { "failed" }),
                (None, _, true) => "error".to_owned(),
                (None, _, false) => "ok".to_owned(),
            };
            if detailed {
                let out = clip(o.output.trim_end(), 1200);
                b.push_str(&format!("\n   -> {status}:\n"));
                for line in out.lines() {
                    b.push_str("      ");
                    b.push_str(line);
                    b.push('\n');
                }
                b.pop();
            } else {
                b.push_str(&format!("\n   -> {status}: {}", one_line(&o.output, 150)));
            }
            if let Some(m) = &s.message {
                b.push_str(&format!("\n   your message after this step: {:?}", m.text));
            }
            b
        })
        .collect();
    let mut kept: Vec<&String> = Vec::new();
    let mut used = 0;
    for b in blocks.iter().rev() {
        let len = b.chars().count() + 1;
        if used + len > max && !kept.is_empty() {
            break;
        }
        used += len;
        kept.push(b);
    }
    let left_out = blocks.len() - kept.len();
    let mut out = String::new();
    if left_out > 0 {
        out.push_str(&format!(
            "(steps before step {} left out)\n",
            history[left_out].index
        ));
    }
    out.push_str(
        &kept
            .into_iter()
            .rev()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    out
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

/// Drops a surrounding Markdown code fence.
fn strip_fences(text: &str) -> String {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix("```") {
        let inner = inner.split_once('\n').map_or("", |(_, rest)| rest);
        return inner.trim_end().trim_end_matches("```").trim().to_owned();
    }
    t.to_owned()
}

/// `text` cut to `max` characters, at the last sentence end within the limit when there is
/// one in its second half.
fn cut_at_sentence(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    let cut = head
        .char_indices()
        .filter(|(_, c)| matches!(c, '.' | '!' | '?'))
        .map(|(i, _)| i + 1)
        .rfind(|&i| i >= head.len() / 2);
    match cut {
        Some(i) => head[..i].to_owned(),
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms() -> Vec<Location> {
        vec![
            Location::symbol("clamp.py", "clamp").unwrap(),
            Location::symbol("clamp.py", "fraction").unwrap(),
            Location::symbol("pkg/geo.py", "Box.area").unwrap(),
            Location::symbol("pkg/other.py", "area").unwrap(),
        ]
    }

    #[test]
    fn blame_resolution_matches_the_repository() {
        let s = syms();
        let b = resolve_blame(
            &json!([
                {"file": "./clamp.py", "symbol": "fraction()"},
                {"file": "pkg/geo.py", "symbol": "area"},
                {"file": "nowhere.py", "symbol": "ghost"},
                "clamp.py:clamp",
                {"file": "geo.py", "symbol": null}
            ]),
            &s,
        );
        assert_eq!(
            b,
            vec![
                s[1].clone(),
                s[2].clone(),
                s[0].clone(),
                Location {
                    file: RelPath::new("pkg/geo.py").unwrap(),
                    symbol: None
                }
            ]
        );
    }

    #[test]
    fn long_messages_are_cut_at_a_sentence() {
        assert_eq!(cut_at_sentence("One two. Three four five.", 12), "One two.");
        assert_eq!(cut_at_sentence("abcdefghij", 4), "abcd");
        assert_eq!(strip_fences("```text\nhello\n```"), "hello");
    }
}

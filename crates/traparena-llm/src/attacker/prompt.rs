//! The attacker's prompt: the system prompt for its variant, the request for one message (the
//! description, the repository's functions, the decoys, the reference for the reference
//! variant, the curator's notes, the trajectory and, on a regeneration, the rejections) and
//! the JSON schema of the reply.

use serde_json::{Value, json};
use traparena_attack::AttackContext;
use traparena_model::{ChatRequest, Message, ResponseFormat};
use traparena_task::{Location, RelPath};

use super::{AttackerVariant, LlmAttacker, summarize_history};
use crate::prompts::{self, Template, clip, fill};

impl LlmAttacker {
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

    pub(super) fn knowledge(&self) -> Template {
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

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

//! Reading the attacker's reply: the message and its claims from a JSON object, or, failing
//! that, the reply's text as the message with claims read from its wording; blamed places
//! matched against the repository, the message unquoted and cut to its limit.

use serde_json::Value;
use traparena_attack::{Advice, AttackError, claims_from_text, resolve_places};
use traparena_model::extract_json_object;
use traparena_task::{Claims, Location};

use super::LlmAttacker;
use crate::prompts::one_line;

impl LlmAttacker {
    /// Reads a reply into advice (`None` for an empty message).
    pub(super) fn read_reply(
        &self,
        text: &str,
        symbols: &[Location],
    ) -> Result<Option<Advice>, AttackError> {
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
    use serde_json::json;
    use traparena_task::RelPath;

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

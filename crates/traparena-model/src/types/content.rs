//! The one rule for what the text of a message's content is, in every format: a string, or
//! `null` (no text), or a list of parts whose `text`s are joined.
//!
//! Two readers apply it, and differ on purpose only in what they do with a part that has no
//! text ([`Parts`]): a request a client sent is read strictly, since dropping an image or a
//! document would change what the model is asked without anyone noticing; a reply a model
//! server sent is read leniently, since a completion has already been produced (and maybe
//! billed) and its text is all that TrapArena reads of it.

use serde_json::Value;

use crate::error::WireError;

/// How a list of content parts is read: what a part without text means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parts {
    /// A client's request: a part without text (an image, a document) is refused, with its
    /// type; so is content that is neither text nor a list.
    Strict,
    /// A server's reply: a part without text is skipped, a bare string in the list is text,
    /// and content that is neither text nor a list is read as its JSON.
    Lenient,
}

/// The text of a content value (`None` for `null`), read as `parts` says; `at` names where the
/// content is, for the error.
pub(crate) fn content_text(
    content: &Value,
    parts: Parts,
    at: &str,
) -> Result<Option<String>, WireError> {
    match content {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Array(list) => {
            let mut text = String::new();
            for part in list {
                if let Some(t) = part_text(part, parts, at)? {
                    text.push_str(t);
                }
            }
            Ok(Some(text))
        }
        other => match parts {
            Parts::Strict => Err(WireError::NotContent {
                at: at.to_owned(),
                found: other.to_string(),
            }),
            Parts::Lenient => Ok(Some(other.to_string())),
        },
    }
}

/// The text of one content part: its `text` (whatever its type says), or, read leniently, a
/// bare string; `None` for a part without text read leniently.
pub(crate) fn part_text<'a>(
    part: &'a Value,
    parts: Parts,
    at: &str,
) -> Result<Option<&'a str>, WireError> {
    if let Some(Value::String(t)) = part.get("text") {
        return Ok(Some(t));
    }
    match (parts, part) {
        (Parts::Lenient, Value::String(s)) => Ok(Some(s)),
        (Parts::Lenient, _) => Ok(None),
        (Parts::Strict, _) => Err(match part.get("type").and_then(Value::as_str) {
            Some(kind) => WireError::NotText {
                at: at.to_owned(),
                kind: kind.to_owned(),
            },
            None => WireError::NoText { at: at.to_owned() },
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn both_readers_join_the_texts_and_differ_only_on_parts_without_text() {
        let texts = json!([{"type": "text", "text": "a"}, {"type": "input_text", "text": "b"}]);
        let odd = json!([{"type": "text", "text": "a"}, "b", {"type": "image_url"}]);
        for parts in [Parts::Strict, Parts::Lenient] {
            let read = |v: &Value| content_text(v, parts, "m");
            assert_eq!(read(&json!(null)).unwrap(), None);
            assert_eq!(read(&json!("x")).unwrap().as_deref(), Some("x"));
            assert_eq!(read(&texts).unwrap().as_deref(), Some("ab"));
        }
        let lenient = |v: &Value| content_text(v, Parts::Lenient, "m").unwrap();
        assert_eq!(lenient(&odd).as_deref(), Some("ab"));
        assert_eq!(lenient(&json!(3)).as_deref(), Some("3"));
        let strict = |v: &Value| content_text(v, Parts::Strict, "m").unwrap_err().to_string();
        assert_eq!(
            strict(&json!([{"type": "image_url"}])),
            "m: only text is passed on (a part of type \"image_url\" is not)"
        );
        assert_eq!(strict(&json!(["b"])), "m: a content part without text");
        assert_eq!(
            strict(&json!(3)),
            "m: content is neither text nor a list (3)"
        );
    }
}

//! Telling a reply's reasoning from its answer.
//!
//! Reasoning models send their chain of thought in one of three places: a separate field of the
//! message (`reasoning_content` from vLLM, SGLang, llama.cpp and DeepSeek; `reasoning` from
//! OpenRouter and some vLLM versions), or inline in `content` between think tags
//! (`<think>…</think>`, also `<thinking>` and `<reasoning>`), possibly cut off by the response
//! length limit before the closing tag, or with the opening tag left in the prompt by the chat
//! template so that the content starts with reasoning and only the closing tag appears. Nothing
//! of the reasoning is ever read as an action, a message or notes.

use crate::types::ResponseMessage;

/// The tag names recognised as think blocks.
const TAGS: [&str; 3] = ["think", "thinking", "reasoning"];

/// A reply split into its answer and its reasoning.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    /// The text outside any reasoning, trimmed; `None` when nothing is left.
    pub answer: Option<String>,
    /// The reasoning, from the message's reasoning field and its think blocks (in that order,
    /// joined by a blank line); `None` when there is none.
    pub reasoning: Option<String>,
    /// Whether a think block was opened and never closed: the reply stopped inside its
    /// reasoning.
    pub cut_off_in_reasoning: bool,
}

impl Reply {
    /// Splits a message: its `reasoning_content` or `reasoning` field, then its content.
    pub fn of(message: &ResponseMessage) -> Reply {
        let field = message.reasoning_content.clone().or_else(|| {
            message
                .extra
                .get("reasoning")
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        });
        let mut reply = split_reasoning(message.content.as_deref().unwrap_or(""));
        if let Some(f) = field.filter(|f| !f.trim().is_empty()) {
            reply.reasoning = Some(match reply.reasoning.take() {
                Some(inline) => format!("{}\n\n{inline}", f.trim()),
                None => f.trim().to_owned(),
            });
        }
        reply
    }
}

/// Splits `content` into the answer and the reasoning of its think blocks.
///
/// ```
/// use traparena_model::split_reasoning;
/// let r = split_reasoning("<think>maybe {\"action\": \"list\"}?</think>\n{\"action\": \"submit\"}");
/// assert_eq!(r.answer.as_deref(), Some("{\"action\": \"submit\"}"));
/// assert_eq!(r.reasoning.as_deref(), Some("maybe {\"action\": \"list\"}?"));
/// let cut = split_reasoning("<think>The fix is to add a check, let me draft");
/// assert_eq!(cut.answer, None);
/// assert!(cut.cut_off_in_reasoning);
/// // The template opened the block: only the closing tag is in the reply.
/// let r = split_reasoning("I should read it first.</think>{\"action\": \"read\"}");
/// assert_eq!(r.answer.as_deref(), Some("{\"action\": \"read\"}"));
/// ```
pub fn split_reasoning(content: &str) -> Reply {
    let mut answer = String::new();
    let mut reasoning: Vec<String> = Vec::new();
    let mut rest = content;
    let mut cut_off = false;

    // A closing tag before any opening tag: the chat template opened the block.
    if let Some((tag, close_at)) = first_tag(rest, true)
        && first_tag(rest, false).is_none_or(|(_, open_at)| open_at > close_at)
    {
        let close = format!("</{tag}>");
        reasoning.push(rest[..close_at].trim().to_owned());
        rest = &rest[close_at + close.len()..];
    }
    while let Some((tag, open_at)) = first_tag(rest, false) {
        answer.push_str(&rest[..open_at]);
        let open = format!("<{tag}>");
        let inner = &rest[open_at + open.len()..];
        let close = format!("</{tag}>");
        match find_ci(inner, &close) {
            Some(end) => {
                reasoning.push(inner[..end].trim().to_owned());
                rest = &inner[end + close.len()..];
            }
            None => {
                reasoning.push(inner.trim().to_owned());
                rest = "";
                cut_off = true;
            }
        }
    }
    answer.push_str(rest);
    let answer = answer.trim();
    reasoning.retain(|r| !r.is_empty());
    Reply {
        answer: (!answer.is_empty()).then(|| answer.to_owned()),
        reasoning: (!reasoning.is_empty()).then(|| reasoning.join("\n\n")),
        cut_off_in_reasoning: cut_off,
    }
}

/// The first opening (or, with `closing`, closing) think tag in `s`: its name and position.
fn first_tag(s: &str, closing: bool) -> Option<(&'static str, usize)> {
    TAGS.iter()
        .filter_map(|t| {
            let tag = if closing {
                format!("</{t}>")
            } else {
                format!("<{t}>")
            };
            find_ci(s, &tag).map(|at| (*t, at))
        })
        .min_by_key(|(_, at)| *at)
}

/// Case-insensitive search for an ASCII needle.
fn find_ci(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    if n.len() > h.len() {
        return None;
    }
    (0..=h.len() - n.len()).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cases() {
        // (content, answer, reasoning, cut off)
        let cases: [(&str, Option<&str>, Option<&str>, bool); 8] = [
            (
                "{\"action\": \"list\"}",
                Some("{\"action\": \"list\"}"),
                None,
                false,
            ),
            ("<think>a</think>b", Some("b"), Some("a"), false),
            ("<THINK>a</THINK> b ", Some("b"), Some("a"), false),
            (
                "<thinking>a</thinking>\n\nb<think>c</think>d",
                Some("bd"),
                Some("a\n\nc"),
                false,
            ),
            (
                "<think>draft {\"message\": \"x\"}",
                None,
                Some("draft {\"message\": \"x\"}"),
                true,
            ),
            ("x</think>y", Some("y"), Some("x"), false),
            ("<think></think>", None, None, false),
            ("", None, None, false),
        ];
        for (content, answer, reasoning, cut) in cases {
            let r = split_reasoning(content);
            assert_eq!(r.answer.as_deref(), answer, "{content:?}");
            assert_eq!(r.reasoning.as_deref(), reasoning, "{content:?}");
            assert_eq!(r.cut_off_in_reasoning, cut, "{content:?}");
        }
    }

    #[test]
    fn reasoning_fields_come_first_and_never_become_the_answer() {
        let m: ResponseMessage = serde_json::from_value(json!({
            "role": "assistant", "content": null, "reasoning_content": "I would say {\"action\": \"submit\"}"
        }))
        .unwrap();
        let r = Reply::of(&m);
        assert_eq!(r.answer, None);
        assert_eq!(
            r.reasoning.as_deref(),
            Some("I would say {\"action\": \"submit\"}")
        );
        let m: ResponseMessage = serde_json::from_value(json!({
            "role": "assistant", "content": "<think>inline</think>ok", "reasoning": "field"
        }))
        .unwrap();
        let r = Reply::of(&m);
        assert_eq!(r.answer.as_deref(), Some("ok"));
        assert_eq!(r.reasoning.as_deref(), Some("field\n\ninline"));
    }
}

//! Tool calls written as text.
//!
//! A server started without a tool-call parser (vLLM without `--tool-call-parser`, llama.cpp
//! with a chat template that does not know tools) passes the model's tool call through as
//! content. The common written forms are read here: Hermes/Qwen `<tool_call>{…}</tool_call>`
//! blocks, and a bare `{"name": …, "arguments": …}` object (Llama 3.1 writes `parameters`);
//! arguments may be an object or a JSON string holding one, encoded once or twice.

use serde_json::{Map, Value};

use crate::extract::extract_json_object;
use crate::types::{ToolCall, decode_arguments};

/// Tool calls written in `text`, in order; empty when there are none. `names` are the tools
/// the model was offered: a bare object counts as a call only when it names one of them.
///
/// ```
/// use traparena_model::tool_calls_in_text;
/// let names = ["read", "submit"];
/// let text = "<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>";
/// let calls = tool_calls_in_text(text, &names);
/// assert_eq!(calls[0].function.name, "read");
/// assert_eq!(calls[0].function.arguments, "{\"path\":\"a.py\"}");
/// let doubly = r#"{"name": "read", "arguments": "\"{\\\"path\\\": \\\"a.py\\\"}\""}"#;
/// assert_eq!(tool_calls_in_text(doubly, &names)[0].function.arguments, "{\"path\":\"a.py\"}");
/// ```
pub fn tool_calls_in_text(text: &str, names: &[&str]) -> Vec<ToolCall> {
    let mut calls = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<tool_call>") {
        let inner = &rest[start + "<tool_call>".len()..];
        let (body, after) = match inner.find("</tool_call>") {
            Some(end) => (&inner[..end], &inner[end + "</tool_call>".len()..]),
            None => (inner, ""),
        };
        if let Some(call) = extract_json_object(body).and_then(|v| call_from_value(&v, names)) {
            calls.push(call);
        }
        rest = after;
    }
    if calls.is_empty()
        && let Some(v) = extract_json_object(text)
        && let Some(call) = call_from_value(&v, names)
    {
        calls.push(call);
    }
    for (k, c) in calls.iter_mut().enumerate() {
        c.id = format!("text_call_{k}");
    }
    calls
}

/// `{"name": …, "arguments" | "parameters": …}` naming an offered tool, as a call.
fn call_from_value(v: &Value, names: &[&str]) -> Option<ToolCall> {
    let o = v.as_object()?;
    let name = o.get("name")?.as_str()?;
    if !names.contains(&name) {
        return None;
    }
    let args = match o.get("arguments").or_else(|| o.get("parameters")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(a) => decode_arguments(a)?,
    };
    Some(ToolCall::function(
        String::new(),
        name,
        serde_json::to_string(&args).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 3] = ["read", "list", "submit"];

    #[test]
    fn written_forms() {
        // (text, expected calls as (name, arguments))
        let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
            (
                "Let me look.\n<tool_call>\n{\"name\": \"list\", \"arguments\": {}}\n</tool_call>",
                vec![("list", "{}")],
            ),
            (
                "<tool_call>{\"name\": \"read\", \"arguments\": \"{\\\"path\\\": \\\"a.py\\\"}\"}</tool_call><tool_call>{\"name\": \"submit\"}</tool_call>",
                vec![("read", "{\"path\":\"a.py\"}"), ("submit", "{}")],
            ),
            (
                "{\"name\": \"read\", \"parameters\": {\"path\": \"b.py\"}}",
                vec![("read", "{\"path\":\"b.py\"}")],
            ),
            // Not a call: an unknown tool, an action object, arguments of the wrong type.
            ("{\"name\": \"rm\", \"arguments\": {}}", vec![]),
            ("{\"action\": \"read\", \"path\": \"a.py\"}", vec![]),
            ("{\"name\": \"read\", \"arguments\": 3}", vec![]),
            ("<tool_call>not json</tool_call>", vec![]),
            // Cut off before the closing tag.
            (
                "<tool_call>{\"name\": \"list\", \"arguments\": {}}",
                vec![("list", "{}")],
            ),
        ];
        for (text, want) in cases {
            let got: Vec<(String, String)> = tool_calls_in_text(text, &NAMES)
                .into_iter()
                .map(|c| (c.function.name, c.function.arguments))
                .collect();
            let want: Vec<(String, String)> = want
                .into_iter()
                .map(|(n, a)| (n.to_owned(), a.to_owned()))
                .collect();
            assert_eq!(got, want, "{text}");
        }
    }
}

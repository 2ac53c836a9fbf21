//! Reading what a server sent: a completion in the endpoint's format, an error body's
//! message, a context window in a model list.

use serde_json::Value;

use crate::adapt::pydantic_message;
use crate::error::{ModelError, WireError};
use crate::types::ChatResponse;
use crate::wire::{WireApi, error_text};

/// How many bytes of a body an error message quotes.
const EXCERPT_BYTES: usize = 300;

/// The context window in a `/models` list (the entry of `model`, else the only one) or a
/// llama.cpp `/props` document.
pub(crate) fn context_window_of(v: &Value, model: &str) -> Option<u32> {
    let n = |x: &Value| {
        x.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0)
    };
    if let Some(data) = v.get("data").and_then(Value::as_array) {
        let entry = data
            .iter()
            .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
            .or_else(|| (data.len() == 1).then(|| &data[0]))?;
        return ["max_model_len", "context_length", "context_window"]
            .iter()
            .find_map(|k| entry.get(*k).and_then(n));
    }
    v.get("default_generation_settings")
        .and_then(|d| d.get("n_ctx"))
        .or_else(|| v.get("n_ctx"))
        .and_then(n)
}

/// Parses a 2xx body as a completion in the endpoint's format; every failure names what was
/// wrong, and an error object in place of a completion is [`ModelError::ErrorBody`].
pub(crate) fn parse_completion(
    url: &str,
    bytes: &[u8],
    api: WireApi,
) -> Result<ChatResponse, ModelError> {
    let malformed = |what| ModelError::Malformed {
        url: url.to_owned(),
        what: Box::new(what),
        excerpt: excerpt(bytes),
    };
    let value: Value =
        serde_json::from_slice(bytes).map_err(|source| malformed(WireError::NotJson { source }))?;
    if !value.is_object() {
        return Err(malformed(WireError::NotObject));
    }
    api.format().read_response(value).map_err(|e| match e {
        WireError::ErrorBody { message } => ModelError::ErrorBody {
            url: url.to_owned(),
            message,
        },
        what => malformed(what),
    })
}

/// The server's error message from an error body, if it has one.
pub(crate) fn server_message(bytes: &[u8]) -> Option<String> {
    if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(bytes) {
        if let Some(Value::Array(details)) = o.get("detail")
            && let Some(m) = pydantic_message(details)
        {
            return Some(m);
        }
        for key in ["error", "message", "detail"] {
            if let Some(v) = o.get(key) {
                return Some(error_text(v));
            }
        }
    }
    let text = excerpt(bytes);
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(EXCERPT_BYTES)];
    String::from_utf8_lossy(cut).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_bodies_name_the_problem() {
        let e = parse_completion("u", b"<html>oops</html>", WireApi::ChatCompletions).unwrap_err();
        assert!(e.to_string().contains("body is not JSON"), "{e}");
        let e =
            parse_completion("u", br#"{"choices": "nope"}"#, WireApi::ChatCompletions).unwrap_err();
        assert!(e.to_string().contains("field `choices`"), "{e}");
        let e = parse_completion(
            "u",
            br#"{"choices": [{"message": {"tool_calls": 5}}]}"#,
            WireApi::ChatCompletions,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("choices[0].message.tool_calls"),
            "{e}"
        );
        let e = parse_completion("u", br#"{"object": "x"}"#, WireApi::ChatCompletions).unwrap_err();
        assert!(e.to_string().contains("`choices` is missing"), "{e}");
        let e = parse_completion("u", br#"{"choices": []}"#, WireApi::ChatCompletions).unwrap_err();
        assert!(e.to_string().contains("`choices` is empty"), "{e}");
        let e = parse_completion(
            "u",
            br#"{"error": {"message": "model overloaded"}}"#,
            WireApi::ChatCompletions,
        )
        .unwrap_err();
        assert!(e.to_string().contains("model overloaded"), "{e}");
        assert!(e.is_retryable(), "a 2xx error body is transient");
    }

    #[test]
    fn server_messages() {
        assert_eq!(
            server_message(br#"{"error": {"message": "bad model", "code": 400}}"#).as_deref(),
            Some("bad model")
        );
        assert_eq!(
            server_message(br#"{"error": "nope"}"#).as_deref(),
            Some("nope")
        );
        assert_eq!(
            server_message(b"  plain text \n").as_deref(),
            Some("plain text")
        );
        assert_eq!(server_message(b""), None);
    }
}

//! Reading what a server sent: a completion in the endpoint's format, an error body's
//! message, a context window in a model list.

use serde_json::Value;

use crate::adapt::pydantic_message;
use crate::error::ModelError;
use crate::types::ChatResponse;
use crate::wire::WireApi;

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

/// Parses a 2xx body as a chat completion; every failure names what was wrong.
pub(crate) fn parse_completion(
    url: &str,
    bytes: &[u8],
    api: WireApi,
) -> Result<ChatResponse, ModelError> {
    let malformed = |what: String, source| ModelError::Malformed {
        url: url.to_owned(),
        what,
        excerpt: excerpt(bytes),
        source,
    };
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| malformed(format!("body is not JSON ({e})"), Some(e)))?;
    let Some(object) = value.as_object() else {
        return Err(malformed("body is not a JSON object".to_owned(), None));
    };
    if api != WireApi::ChatCompletions {
        // An error in a 2xx body is transient, as for chat completions (a Responses answer
        // holds `"error": null`).
        if let Some(message) = object.get("error").filter(|e| !e.is_null()).map(error_text) {
            return Err(ModelError::ErrorBody {
                url: url.to_owned(),
                message,
            });
        }
        let read = match api {
            WireApi::AnthropicMessages => crate::wire::anthropic::read_response(value),
            _ => crate::wire::responses::read_response(value),
        };
        return read.map_err(|what| malformed(what, None));
    }
    if !object.contains_key("choices") {
        if let Some(message) = object.get("error").map(error_text) {
            return Err(ModelError::ErrorBody {
                url: url.to_owned(),
                message,
            });
        }
        return Err(malformed("field `choices` is missing".to_owned(), None));
    }
    let response: ChatResponse = serde_path_to_error::deserialize(value).map_err(|e| {
        let what = format!("field `{}` has the wrong shape ({})", e.path(), e.inner());
        malformed(what, Some(e.into_inner()))
    })?;
    if response.choices.is_empty() {
        return Err(malformed("field `choices` is empty".to_owned(), None));
    }
    Ok(response)
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

/// `error.message`, or the error itself when it is a string, or its JSON.
fn error_text(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        Value::Object(o) => match o.get("message") {
            Some(Value::String(s)) => s.clone(),
            _ => error.to_string(),
        },
        other => other.to_string(),
    }
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

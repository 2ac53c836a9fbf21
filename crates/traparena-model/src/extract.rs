//! Reading JSON out of free-text replies (the plain-text fallback protocol).

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ModelError;

/// The first complete JSON object in `text`, which may wrap it in prose or in a fenced block
/// (```` ```json ... ``` ````).
///
/// Every `{` is tried in order as the start of an object; the first one that parses wins, and
/// whatever follows the object is ignored. A start whose object runs to the end of the text
/// without closing (a truncated reply) ends the search with `None` rather than returning an
/// object nested inside it.
///
/// ```
/// use traparena::model::extract_json_object;
/// let reply = "Sure! Here is my action:\n```json\n{\"action\": \"submit\"}\n```\nGood luck.";
/// assert_eq!(extract_json_object(reply).unwrap()["action"], "submit");
/// assert_eq!(extract_json_object("no json {here"), None);
/// ```
pub fn extract_json_object(text: &str) -> Option<Value> {
    for (start, _) in text.match_indices('{') {
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value @ Value::Object(_))) => return Some(value),
            Some(Err(e)) if e.is_eof() => return None,
            _ => {}
        }
    }
    None
}

/// The first JSON object of `text` (see [`extract_json_object`]) parsed into `T`.
///
/// Fails with [`ModelError::NoJson`] when there is no object and with [`ModelError::ReplyJson`]
/// (naming the field) when the object has the wrong shape.
pub fn extract_json<T: DeserializeOwned>(text: &str) -> Result<T, ModelError> {
    let value = extract_json_object(text).ok_or_else(|| ModelError::NoJson {
        excerpt: text.chars().take(200).collect(),
    })?;
    serde_path_to_error::deserialize(value).map_err(|e| ModelError::ReplyJson {
        field: e.path().to_string(),
        source: e.into_inner(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_objects_in_prose_fences_and_bare() {
        assert_eq!(extract_json_object(r#"{"a": 1}"#), Some(json!({"a": 1})));
        assert_eq!(
            extract_json_object("I think {so} but\n```json\n{\"a\": {\"b\": [1, 2]}}\n```"),
            Some(json!({"a": {"b": [1, 2]}}))
        );
        assert_eq!(
            extract_json_object("prefix {\"a\": \"}\"} trailing {\"b\": 2}"),
            Some(json!({"a": "}"}))
        );
        assert_eq!(
            extract_json_object("[1, 2] then {\"x\": null}"),
            Some(json!({"x": null}))
        );
        assert_eq!(extract_json_object("nothing here"), None);
        assert_eq!(extract_json_object(""), None);
    }

    #[test]
    fn truncated_object_does_not_yield_an_inner_one() {
        assert_eq!(
            extract_json_object(r#"{"action": "write", "content": {"x": 1}, "more"#),
            None
        );
    }

    #[test]
    fn typed_extraction_names_the_field() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Act {
            action: String,
        }
        let err = extract_json::<Act>("ok: {\"action\": 3}").unwrap_err();
        assert!(err.to_string().contains("field `action`"), "{err}");
        let err = extract_json::<Act>("plain words").unwrap_err();
        assert!(matches!(err, ModelError::NoJson { .. }), "{err}");
        assert_eq!(
            extract_json::<Act>("{\"action\": \"submit\"}")
                .unwrap()
                .action,
            "submit"
        );
    }
}

//! The defaults and deserializers that make the protocol types lenient: `null` reads as the
//! default, a tool call's missing kind as `function`, arguments sent as a JSON value as their
//! text, and content sent as an array of parts as their joined texts.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::content::Parts;

/// `null` (or a missing field, with `#[serde(default)]`) reads as the type's default.
pub(super) fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

pub(super) fn function_kind() -> String {
    "function".to_owned()
}

pub(super) fn kind_or_function<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_else(function_kind))
}

/// Tool-call arguments: a JSON text, or (tolerated) a JSON value that is stored as its text.
pub(super) fn arguments_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null => String::new(),
        Value::String(s) => s,
        other => other.to_string(),
    })
}

/// Message content of a reply: a string, `null`, or an array of content parts whose texts are
/// joined, read by the one content rule in its lenient mode (a part without text is skipped).
pub(super) fn content_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value = Value::deserialize(d)?;
    super::content::content_text(&value, Parts::Lenient, "content").map_err(D::Error::custom)
}

//! The actions as a model is told about them, all generated from one description: the JSON
//! schema that [`Action`] derives (schemars; its doc comments are the descriptions).
//!
//! - [`action_schema`], the `json` protocol's response format: one object form per action;
//! - [`action_tools`], the `tools` protocol's native tools: one per action, its fields as the
//!   parameters;
//! - [`action_list`] and [`action_forms`], the action list of the system prompt and the JSON
//!   forms the `json` and `text` protocols show;
//! - [`parse_action`], which reads a reply's action with serde into [`Action`], so what is
//!   accepted is what the type accepts.
//!
//! Nothing here names an action or a field: a new variant or field of [`Action`] reaches the
//! tools, the schema and the prompts by itself.

use std::sync::OnceLock;

use schemars::generate::SchemaSettings;
use schemars::transform::{ReplaceConstValue, RestrictFormats};
use serde_json::{Map, Value, json};
use traparena_model::{Tool, ToolCall, extract_json_object};
use traparena_task::Action;

use crate::error::ActionError;

/// One action as the schema describes it.
#[derive(Debug)]
struct Spec {
    /// The value of its `action` field (`read`, `run_public_tests`, ...).
    name: String,
    /// What it does (the variant's doc comment).
    description: String,
    /// Its fields and their schemas, in the schema's order, without `action`.
    fields: Map<String, Value>,
    /// The fields that must be given.
    required: Vec<String>,
}

/// The schema of [`Action`] in the form servers enforce: `anyOf` the action forms (as the
/// JSON-schema subsets of llama.cpp, vLLM and hosted APIs support it, where `oneOf` is not
/// always), `enum` for the `action` constant, no non-standard `format`s (`uint64`), no
/// meta-schema or title, descriptions on one line.
fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut formats = RestrictFormats::default();
        formats.infer_from_meta_schema = false;
        let generator = SchemaSettings::draft2020_12()
            .with(|s| {
                s.meta_schema = None;
                s.inline_subschemas = true;
            })
            .with_transform(ReplaceConstValue::default())
            .with_transform(formats)
            .into_generator();
        let mut root = generator.into_root_schema_for::<Action>().to_value();
        let forms = root
            .as_object_mut()
            .and_then(|o| o.remove("oneOf").or_else(|| o.remove("anyOf")))
            .unwrap_or_else(|| Value::Array(Vec::new()));
        let mut schema = json!({ "anyOf": forms });
        one_line_descriptions(&mut schema);
        schema
    })
}

/// Every `description` in `v` with its whitespace (doc-comment line breaks) collapsed.
fn one_line_descriptions(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x {
                    Value::String(s) if k == "description" => {
                        *s = s.split_whitespace().collect::<Vec<_>>().join(" ");
                    }
                    _ => one_line_descriptions(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(one_line_descriptions),
        _ => {}
    }
}

fn specs() -> &'static [Spec] {
    static SPECS: OnceLock<Vec<Spec>> = OnceLock::new();
    SPECS.get_or_init(|| {
        let forms = schema()["anyOf"].as_array().cloned().unwrap_or_default();
        forms
            .iter()
            .filter_map(|form| {
                let mut fields = form.get("properties")?.as_object()?.clone();
                let name = fields
                    .remove("action")?
                    .get("enum")?
                    .get(0)?
                    .as_str()?
                    .to_owned();
                let required = form
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| {
                        r.iter()
                            .filter_map(Value::as_str)
                            .filter(|f| *f != "action")
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                let description = form
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                Some(Spec {
                    name,
                    description,
                    fields,
                    required,
                })
            })
            .collect()
    })
}

/// The actions' names, in the order [`Action`] declares them.
pub fn action_names() -> Vec<&'static str> {
    specs().iter().map(|s| s.name.as_str()).collect()
}

/// The JSON schema of one action (the `json` protocol's response format): one object form per
/// action, told apart by `action`.
pub fn action_schema() -> Value {
    schema().clone()
}

/// The native tools, one per action: its description, and its fields as the parameters.
pub fn action_tools() -> Vec<Tool> {
    specs()
        .iter()
        .map(|s| {
            let parameters = json!({
                "type": "object",
                "properties": s.fields,
                "required": s.required,
                "additionalProperties": false,
            });
            Tool::function(s.name.clone(), s.description.clone(), parameters)
        })
        .collect()
}

/// The action list of the agent's system prompt: `- name: description`, one line each.
pub fn action_list() -> String {
    specs()
        .iter()
        .map(|s| format!("- {}: {}", s.name, s.description))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The JSON form of every action, one line each, and a last line naming the fields that may
/// be left out. The fields are in the schema's order, which is the order a schema-enforcing
/// server makes the model write them.
pub fn action_forms() -> String {
    let mut lines: Vec<String> = specs()
        .iter()
        .map(|s| {
            let mut parts = vec![format!("\"action\": \"{}\"", s.name)];
            for (field, schema) in &s.fields {
                let placeholder = if types(schema).contains(&"string") {
                    format!("\"<{field}>\"")
                } else if types(schema).contains(&"integer") {
                    "<number>".to_owned()
                } else {
                    "<value>".to_owned()
                };
                parts.push(format!("\"{field}\": {placeholder}"));
            }
            format!("{{{}}}", parts.join(", "))
        })
        .collect();
    let optional: Vec<String> = specs()
        .iter()
        .filter_map(|s| {
            let fields: Vec<&str> = s
                .fields
                .keys()
                .map(String::as_str)
                .filter(|f| !s.required.iter().any(|r| r == f))
                .collect();
            (!fields.is_empty()).then(|| format!("{} of {}", fields.join(" and "), s.name))
        })
        .collect();
    let mut note = "(<...> stands for your values.".to_owned();
    if !optional.is_empty() {
        note.push_str(&format!(" May be left out: {}.", optional.join("; ")));
    }
    note.push(')');
    lines.push(note);
    lines.join("\n")
}

/// The JSON types a field's schema allows (`"string"`, or `["integer", "null"]` as a list).
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Keys a model may add around an action that carry no meaning for it.
const COMMENTARY: [&str; 6] = [
    "thought",
    "thoughts",
    "reason",
    "reasoning",
    "explanation",
    "comment",
];

/// Reads an action from a JSON value: `{"action": "read", ...}`, also wrapped as
/// `{"action": {"action": "read", ...}}`, with commentary keys (`thought`, `reasoning`, ...)
/// ignored and optional fields given as `null` read as left out. Everything else is
/// [`Action`]'s own deserialization; the [`ActionError`] says what is wrong and where, and its
/// text is the corrective observation.
///
/// ```
/// use serde_json::json;
/// use traparena::Action;
/// use traparena::llm::{ActionError, parse_action};
/// assert_eq!(parse_action(json!({"thought": "done", "action": "submit"})), Ok(Action::Submit));
/// let e = parse_action(json!({"action": "read"})).unwrap_err();
/// assert!(matches!(e, ActionError::Fields { .. }));
/// assert_eq!(e.to_string(), "`read`: missing field `path`");
/// ```
pub fn parse_action(value: Value) -> Result<Action, ActionError> {
    let Value::Object(mut o) = value else {
        return Err(ActionError::NotObject);
    };
    if let Some(Value::Object(inner)) = o.get("action")
        && inner.contains_key("action")
    {
        o = inner.clone();
    }
    for k in COMMENTARY {
        o.remove(k);
    }
    let name = match o.get("action") {
        None => return Err(ActionError::NoAction),
        Some(Value::String(name)) => name.clone(),
        Some(_) => return Err(ActionError::ActionNotString),
    };
    let action = match serde_json::from_value::<Action>(Value::Object(o.clone())) {
        Ok(a) => a,
        Err(e) if !action_names().contains(&name.as_str()) => {
            return Err(ActionError::UnknownAction {
                message: e.to_string(),
            });
        }
        Err(e) => {
            let message = e.to_string();
            return Err(match field_at_fault(&o, &message) {
                Some(field) => ActionError::Field {
                    action: name,
                    field,
                    message,
                },
                None => ActionError::Fields {
                    action: name,
                    message,
                },
            });
        }
    };
    // serde reads a field-less action (`submit`) without looking at the other keys; the
    // schema forbids them, so a key the action does not carry is refused here too.
    let carried = serde_json::to_value(&action).unwrap_or(Value::Null);
    if let Some(extra) = o
        .iter()
        .find(|(k, v)| !v.is_null() && carried.get(k.as_str()).is_none())
        .map(|(k, _)| k)
    {
        return Err(ActionError::NoFields {
            action: name,
            field: extra.clone(),
        });
    }
    Ok(action)
}

/// The field a deserialization error (`first`) is about, when serde's message does not say (it
/// does not for a wrongly typed field of an internally tagged enum): the first field whose
/// removal changes the error. serde reads the fields in order and stops at the first bad one,
/// so removing a good field leaves the message as it was.
fn field_at_fault(o: &Map<String, Value>, first: &str) -> Option<String> {
    if !first.starts_with("invalid type") && !first.starts_with("invalid value") {
        return None;
    }
    o.keys()
        .filter(|k| k.as_str() != "action")
        .find(|k| {
            let mut without = o.clone();
            without.remove(k.as_str());
            serde_json::from_value::<Action>(Value::Object(without))
                .map_or_else(|e| e.to_string() != first, |_| true)
        })
        .cloned()
}

/// Reads an action from a text reply: its first JSON object.
pub(crate) fn action_from_text(text: &str) -> Result<Action, ActionError> {
    match extract_json_object(text) {
        Some(v) => parse_action(v),
        None if text.trim().is_empty() => Err(ActionError::Empty),
        None => Err(ActionError::NoJson),
    }
}

/// Reads an action from a tool call: the tool names the action, the arguments are its fields.
pub(crate) fn action_from_call(call: &ToolCall) -> Result<Action, ActionError> {
    let name = call.function.name.as_str();
    if !action_names().contains(&name) {
        return Err(ActionError::NoTool {
            name: name.to_owned(),
            tools: action_names().join(", "),
        });
    }
    let args = call
        .arguments_value()
        .map_err(|e| ActionError::ArgumentsNotJson {
            tool: name.to_owned(),
            message: e.to_string(),
        })?;
    let mut o = match args {
        Value::Object(o) => o,
        Value::Null => Map::new(),
        _ => {
            return Err(ActionError::ArgumentsNotObject {
                tool: name.to_owned(),
            });
        }
    };
    o.insert("action".into(), Value::String(name.to_owned()));
    parse_action(Value::Object(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One action of every kind, with every field given where it has any.
    fn every_action() -> Vec<Action> {
        vec![
            Action::Read {
                path: "a.py".into(),
                start_line: Some(1),
                end_line: Some(9),
            },
            Action::List {
                path: Some("pkg".into()),
            },
            Action::Search {
                pattern: "def".into(),
                path: Some("pkg".into()),
            },
            Action::Edit {
                path: "a.py".into(),
                old: "x".into(),
                new: "y".into(),
            },
            Action::Write {
                path: "a.py".into(),
                content: "pass\n".into(),
            },
            Action::RunPublicTests,
            Action::Submit,
        ]
    }

    #[test]
    fn the_schema_describes_what_serde_writes_and_reads() {
        let names: Vec<&str> = every_action().iter().map(Action::name).collect();
        assert_eq!(action_names(), names);
        let forms = action_schema()["anyOf"].as_array().unwrap().clone();
        for action in every_action() {
            let written = serde_json::to_value(&action).unwrap();
            let form = forms
                .iter()
                .find(|f| f["properties"]["action"]["enum"][0] == action.name())
                .unwrap();
            assert_eq!(form["additionalProperties"], false, "{form}");
            for key in written.as_object().unwrap().keys() {
                assert!(form["properties"].get(key).is_some(), "{key} of {written}");
            }
            for key in form["required"].as_array().unwrap() {
                assert!(written.get(key.as_str().unwrap()).is_some(), "{key}");
            }
            // What the schema describes is what parse_action reads: the wire form round-trips.
            assert_eq!(parse_action(written).unwrap(), action);
        }
        // Servers' schema subsets: no `oneOf`, `const` or non-standard formats.
        let text = action_schema().to_string();
        for word in ["oneOf", "\"const\"", "\"format\"", "$schema"] {
            assert!(!text.contains(word), "{word} in {text}");
        }
    }

    #[test]
    fn tools_and_prompt_forms_come_from_the_doc_comments() {
        let tools = action_tools();
        assert_eq!(tools.len(), 7);
        let edit = &tools[3].function;
        assert_eq!(edit.name, "edit");
        assert!(
            edit.description.as_deref().unwrap().starts_with(
                "Replace exactly one occurrence of the text `old` in a file with `new`."
            ),
            "{edit:?}"
        );
        assert_eq!(edit.parameters["required"], json!(["path", "old", "new"]));
        assert_eq!(
            edit.parameters["properties"]["old"]["description"],
            "The exact text to replace."
        );
        assert!(edit.parameters["properties"].get("action").is_none());
        let submit = &tools[6].function;
        assert_eq!(
            submit.parameters,
            json!({"type": "object", "properties": {}, "required": [],
                   "additionalProperties": false})
        );
        // Line breaks of the doc comments do not reach the model.
        assert!(!action_list().contains("  ") && action_list().lines().count() == 7);
        assert!(
            action_list().starts_with("- read: Show a file, optionally only lines"),
            "{}",
            action_list()
        );
        assert_eq!(
            action_forms(),
            r#"{"action": "read", "end_line": <number>, "path": "<path>", "start_line": <number>}
{"action": "list", "path": "<path>"}
{"action": "search", "path": "<path>", "pattern": "<pattern>"}
{"action": "edit", "new": "<new>", "old": "<old>", "path": "<path>"}
{"action": "write", "content": "<content>", "path": "<path>"}
{"action": "run_public_tests"}
{"action": "submit"}
(<...> stands for your values. May be left out: end_line and start_line of read; path of list; path of search.)"#
        );
    }

    #[test]
    fn parse_action_is_lenient_about_wrapping_commentary_and_nulls_only() {
        let ok = |v: Value| parse_action(v).unwrap();
        assert_eq!(ok(json!({"action": "submit"})), Action::Submit);
        assert_eq!(
            ok(json!({"thought": "done", "action": {"action": "submit"}})),
            Action::Submit
        );
        assert_eq!(
            ok(json!({"reasoning": "x", "action": "list"})),
            Action::List { path: None }
        );
        assert_eq!(
            ok(json!({"action": "read", "path": "a", "start_line": null})),
            Action::Read {
                path: "a".into(),
                start_line: None,
                end_line: None
            }
        );
        // (reply, the error the agent is told)
        let cases = [
            (json!([1]), "the reply is not a JSON object"),
            (
                json!({"path": "a"}),
                "the JSON object has no `action` field",
            ),
            (json!({"action": 3}), "`action` is not a string"),
            (
                json!({"action": "fly"}),
                "`action`: unknown variant `fly`, expected one of `read`, `list`, `search`, `edit`, `write`, `run_public_tests`, `submit`",
            ),
            (json!({"action": "read"}), "`read`: missing field `path`"),
            (
                json!({"action": "read", "path": "a", "lines": 3}),
                "`read`: unknown field `lines`, expected one of `path`, `start_line`, `end_line`",
            ),
            (
                json!({"action": "submit", "now": true}),
                "`submit`: unknown field `now`, there are no fields",
            ),
            (
                json!({"action": "read", "path": 3}),
                "field `path` of `read`: invalid type: integer `3`, expected a string",
            ),
            (
                json!({"action": "read", "path": null}),
                "field `path` of `read`: invalid type: null, expected a string",
            ),
            (
                json!({"action": "read", "end_line": -1, "path": "a"}),
                "field `end_line` of `read`: invalid value: integer `-1`, expected u64",
            ),
            (
                json!({"action": "edit", "new": "y", "old": 4, "path": 5}),
                "field `old` of `edit`: invalid type: integer `4`, expected a string",
            ),
        ];
        for (reply, want) in cases {
            let e = parse_action(reply.clone()).unwrap_err();
            assert_eq!(e.to_string(), want, "{reply}");
        }
    }

    #[test]
    fn tool_calls_name_the_action() {
        let call = ToolCall::function("1", "edit", r#"{"path": "a", "old": "x", "new": "y"}"#);
        assert_eq!(
            action_from_call(&call).unwrap(),
            Action::Edit {
                path: "a".into(),
                old: "x".into(),
                new: "y".into()
            }
        );
        let call = ToolCall::function("1", "run_public_tests", "");
        assert_eq!(action_from_call(&call).unwrap(), Action::RunPublicTests);
        let err = action_from_call(&ToolCall::function("1", "rm", "{}"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("there is no tool named \"rm\""), "{err}");
    }
}

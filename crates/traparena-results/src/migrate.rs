//! Format versions, in one place: which `format` a line or a file has, and how a line of an
//! older format becomes today's (the table and the rules are in the crate documentation).

use serde::Deserialize;
use serde_json::Value;

use crate::FORMAT_VERSION;
use crate::condition::{ConditionInfo, no_args};

/// The format of a line or a file from its `format` field (absent: format 1).
pub(crate) fn format(found: Option<u64>) -> Result<u32, String> {
    match found {
        None => Ok(1),
        Some(0) => Err("`format` 0 does not exist (formats start at 1)".to_owned()),
        Some(f) if f > u64::from(FORMAT_VERSION) => Err(newer(f)),
        Some(f) => Ok(f as u32),
    }
}

/// The message of a format newer than this build reads; the readers turn it into
/// [`crate::ResultsError::NewerFormat`].
pub(crate) fn newer(found: u64) -> String {
    format!("format {found} is newer than this build of TrapArena reads (up to {FORMAT_VERSION})")
}

/// The fields of an episode key are names: none may be empty.
pub(crate) fn check_key(target: &str, condition: &str, task: &str) -> Result<(), String> {
    for (field, value) in [("target", target), ("condition", condition), ("task", task)] {
        if value.trim().is_empty() {
            return Err(format!("`{field}` is empty"));
        }
    }
    Ok(())
}

/// A fork exists from format 3 on, and replays at least one step.
pub(crate) fn check_fork(format: u32, fork: Option<crate::ForkKey>) -> Result<(), String> {
    match fork {
        Some(_) if format < 3 => Err(format!(
            "`fork` is a field of format 3; this line is of format {format}"
        )),
        Some(f) if f.step == 0 => {
            Err("`fork.step` is 0 (a fork replays at least one step)".to_owned())
        }
        _ => Ok(()),
    }
}

/// `condition_info` as read, with the fields of every format.
#[derive(Deserialize)]
pub(crate) struct InfoIn {
    #[serde(default)]
    attacker: String,
    #[serde(default)]
    args: Option<Value>,
    /// Format 1 only.
    #[serde(default)]
    persona: Option<String>,
    #[serde(default)]
    access: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    uses_model: bool,
    /// A bool in format 1, a kind or null in format 2.
    #[serde(default)]
    curator: Option<Value>,
    #[serde(default)]
    defence: bool,
}

/// `condition_info` of a line of `format`, as today's [`ConditionInfo`].
pub(crate) fn condition_info(format: u32, i: InfoIn) -> Result<ConditionInfo, String> {
    let err = |m: &str| Err(format!("`condition_info`: {m}"));
    if format >= 2 {
        if i.persona.is_some() {
            return err("`persona` is a field of format 1; format 2 has `args`");
        }
        let curator = match i.curator {
            None | Some(Value::Null) => None,
            Some(Value::String(kind)) => Some(kind),
            Some(_) => return err("`curator` is the curator's kind (a string) or null"),
        };
        return Ok(ConditionInfo {
            attacker: i.attacker,
            args: args(i.args).map_err(|m| format!("`condition_info`: {m}"))?,
            access: i.access,
            role: i.role,
            uses_model: i.uses_model,
            curator,
            defence: i.defence,
        });
    }
    // Format 1.
    if i.args.is_some() {
        return err("`args` is a field of format 2, but the line has no `format`");
    }
    let curator = match i.curator {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some("tally".to_owned()),
        Some(_) => return err("`curator` of a format-1 line is true or false"),
    };
    let (mut attacker, mut persona) = (i.attacker, i.persona);
    if let Some((kind, p)) = attacker.split_once(':') {
        if persona.as_deref().is_some_and(|q| q != p) {
            return err(&format!(
                "the attacker {attacker:?} names another persona than `persona` {:?}",
                persona.unwrap_or_default()
            ));
        }
        persona = Some(p.to_owned());
        attacker = kind.to_owned();
    }
    let mut access = i.access;
    match attacker.as_str() {
        "blind" => {
            if access.as_deref().is_some_and(|a| a != "blind") {
                return err(&format!(
                    "the attacker `blind` with access {:?}",
                    access.unwrap_or_default()
                ));
            }
            attacker = "adaptive".to_owned();
            access = Some("blind".to_owned());
        }
        "adaptive" if access.is_none() => access = Some("reference".to_owned()),
        _ => {}
    }
    // Format 1 did not record it; only `adaptive` used a model then.
    let uses_model = attacker == "adaptive";
    Ok(ConditionInfo {
        attacker,
        args: match persona {
            Some(p) => serde_json::json!({ "persona": p }),
            None => Value::Null,
        },
        access,
        role: None,
        uses_model,
        curator,
        defence: i.defence,
    })
}

/// `args` as read: an object (empty is none) or null.
fn args(v: Option<Value>) -> Result<Value, String> {
    match v {
        None => Ok(Value::Null),
        Some(a) if no_args(&a) => Ok(Value::Null),
        Some(a @ Value::Object(_)) => Ok(a),
        Some(other) => Err(format!("`args` must be an object, not {other}")),
    }
}

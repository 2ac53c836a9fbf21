//! [`ConditionInfo`]: what an experiment condition is, as every line of `episodes.jsonl`
//! carries it.

use serde::Serialize;
use serde_json::Value;

/// What an experiment condition is, written on every line so that `episodes.jsonl` alone is
/// enough for a report.
///
/// Format 2 (this shape) names the attacker by its kind with its arguments, and says what the
/// attacker was given and which curator ran; lines of format 1 are migrated when read (see
/// [`ResultLine`](crate::ResultLine)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ConditionInfo {
    /// The attacker's kind as the spec names it (`none` for the baseline; `scripted`,
    /// `offline`, `truthful`, `adaptive`, or any registered kind).
    pub attacker: String,
    /// The kind's arguments as the spec gave them: a JSON object, or null for none (an empty
    /// object is read as null; neither is written).
    #[serde(skip_serializing_if = "no_args")]
    pub args: Value,
    /// `blind` or `reference`: the attacker's declared access to reference information (`None`
    /// for an attacker that declares none, and for the baseline).
    pub access: Option<String>,
    /// `attack` or `truthful_control`: the attacker's declared role, which puts its condition
    /// under attacks or controls (`None` for the baseline, for no attacker, and in lines written
    /// before attackers declared it, which reports read by the kind's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// True when the attacker's kind declares that it uses a model (written only then; in a
    /// line with a `role`, its absence means the attacker used none).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub uses_model: bool,
    /// The curator's kind when notes were carried across rounds (e.g. `tally`, `llm`), else
    /// `None`.
    pub curator: Option<String>,
    /// Whether the target had the defence instruction.
    pub defence: bool,
}

/// An attacker's kind with its arguments as a table shows it ([`ConditionInfo::attacker_label`]).
pub fn attacker_label(kind: &str, args: &Value) -> String {
    let Some(args) = args.as_object().filter(|a| !a.is_empty()) else {
        return kind.to_owned();
    };
    let parts: Vec<String> = args
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    format!("{kind}({})", parts.join(", "))
}

/// Whether `args` holds no argument: null or an empty object.
pub(crate) fn no_args(args: &Value) -> bool {
    args.is_null() || args.as_object().is_some_and(|o| o.is_empty())
}

impl ConditionInfo {
    /// The baseline's condition: no attacker (`none`), no curator, no defence.
    pub fn baseline() -> ConditionInfo {
        ConditionInfo {
            attacker: "none".to_owned(),
            ..ConditionInfo::default()
        }
    }

    /// The attacker as a table shows it: the kind, and with arguments
    /// `kind(key=value, ...)` in key order, strings without quotes, other values as compact
    /// JSON: `scripted(persona=urge_submit)`.
    ///
    /// ```
    /// use traparena_results::ConditionInfo;
    ///
    /// let mut info = ConditionInfo { attacker: "scripted".into(), ..ConditionInfo::default() };
    /// assert_eq!(info.attacker_label(), "scripted");
    /// info.args = serde_json::json!({"persona": "urge_submit", "every": 2});
    /// assert_eq!(info.attacker_label(), "scripted(every=2, persona=urge_submit)");
    /// ```
    pub fn attacker_label(&self) -> String {
        attacker_label(&self.attacker, &self.args)
    }

    /// The string argument `key`, when the kind has one (`persona` of `scripted`).
    pub fn arg_str(&self, key: &str) -> Option<&str> {
        self.args.get(key).and_then(Value::as_str)
    }
}

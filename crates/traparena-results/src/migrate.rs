//! Format versions, in one place: which `format` a line or a file has, and how a line of an
//! older format becomes today's (the table and the rules are in the crate documentation).

use serde::Deserialize;
use serde_json::Value;

use crate::FORMAT_VERSION;
use crate::condition::{ConditionInfo, no_args};

/// What is malformed in a line or a file of the results format, beyond what serde checks
/// itself: the error of the `try_from` conversions that check the format and migrate older
/// lines. Serde turns it into the parser's message (its [`Display`](std::fmt::Display) text);
/// the readers add the file and the line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Malformed {
    /// `format` is 0.
    FormatZero,
    /// `format` is newer than this build reads.
    Newer {
        /// The `format` found.
        found: u64,
    },
    /// A field of the episode key is empty.
    EmptyKey {
        /// `target`, `condition` or `task`.
        field: &'static str,
    },
    /// `fork` on a line of a format before forks.
    ForkTooEarly {
        /// The line's format.
        format: u32,
    },
    /// `fork.step` is 0.
    ForkStepZero,
    /// `condition_info.persona` (format 1) on a line of format 2 or later.
    PersonaInFormat2,
    /// `condition_info.curator` of format 2 is neither a string nor null.
    CuratorNotKind,
    /// `condition_info.args` is neither an object nor null.
    ArgsNotObject {
        /// The value found.
        found: Value,
    },
    /// `condition_info.args` (format 2) on a line without `format`.
    ArgsInFormat1,
    /// `condition_info.curator` of format 1 is not a bool.
    CuratorNotBool,
    /// A format-1 attacker `scripted:P` and a `persona` that differs from `P`.
    PersonaConflict {
        /// The attacker as written.
        attacker: String,
        /// The `persona` field.
        persona: String,
    },
    /// The format-1 attacker `blind` with an access other than `blind`.
    BlindWithAccess {
        /// The access given.
        access: String,
    },
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use Malformed::*;
        // The `condition_info` problems name the field first.
        if !matches!(
            self,
            FormatZero | Newer { .. } | EmptyKey { .. } | ForkTooEarly { .. } | ForkStepZero
        ) {
            f.write_str("`condition_info`: ")?;
        }
        match self {
            FormatZero => f.write_str("`format` 0 does not exist (formats start at 1)"),
            Newer { found } => write!(
                f,
                "format {found} is newer than this build of TrapArena reads (up to {FORMAT_VERSION})"
            ),
            EmptyKey { field } => write!(f, "`{field}` is empty"),
            ForkTooEarly { format } => write!(
                f,
                "`fork` is a field of format 3; this line is of format {format}"
            ),
            ForkStepZero => f.write_str("`fork.step` is 0 (a fork replays at least one step)"),
            PersonaInFormat2 => {
                f.write_str("`persona` is a field of format 1; format 2 has `args`")
            }
            CuratorNotKind => f.write_str("`curator` is the curator's kind (a string) or null"),
            ArgsNotObject { found } => write!(f, "`args` must be an object, not {found}"),
            ArgsInFormat1 => {
                f.write_str("`args` is a field of format 2, but the line has no `format`")
            }
            CuratorNotBool => f.write_str("`curator` of a format-1 line is true or false"),
            PersonaConflict { attacker, persona } => write!(
                f,
                "the attacker {attacker:?} names another persona than `persona` {persona:?}"
            ),
            BlindWithAccess { access } => {
                write!(f, "the attacker `blind` with access {access:?}")
            }
        }
    }
}

/// The format of a line or a file from its `format` field (absent: format 1).
pub(crate) fn format(found: Option<u64>) -> Result<u32, Malformed> {
    match found {
        None => Ok(1),
        Some(0) => Err(Malformed::FormatZero),
        Some(f) if f > u64::from(FORMAT_VERSION) => Err(Malformed::Newer { found: f }),
        Some(f) => Ok(f as u32),
    }
}

/// The `format` a line or a file carries, when it is newer than this build reads: the readers
/// turn it into [`crate::ResultsError::NewerFormat`].
pub(crate) fn newer(found: Option<u64>) -> Option<u64> {
    match format(found) {
        Err(Malformed::Newer { found }) => Some(found),
        _ => None,
    }
}

/// The checks of every line that carries an episode key (a result, a trajectory, a key read
/// alone): its format, names in the key fields, a fork only from format 3 on; the format.
pub(crate) fn keyed_line(
    format: Option<u64>,
    (target, condition, task): (&str, &str, &str),
    fork: Option<crate::ForkKey>,
) -> Result<u32, Malformed> {
    let format = self::format(format)?;
    check_key(target, condition, task)?;
    check_fork(format, fork)?;
    Ok(format)
}

/// The fields of an episode key are names: none may be empty.
fn check_key(target: &str, condition: &str, task: &str) -> Result<(), Malformed> {
    for (field, value) in [("target", target), ("condition", condition), ("task", task)] {
        if value.trim().is_empty() {
            return Err(Malformed::EmptyKey { field });
        }
    }
    Ok(())
}

/// A fork exists from format 3 on, and replays at least one step.
fn check_fork(format: u32, fork: Option<crate::ForkKey>) -> Result<(), Malformed> {
    match fork {
        Some(_) if format < 3 => Err(Malformed::ForkTooEarly { format }),
        Some(f) if f.step == 0 => Err(Malformed::ForkStepZero),
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
pub(crate) fn condition_info(format: u32, i: InfoIn) -> Result<ConditionInfo, Malformed> {
    if format >= 2 {
        if i.persona.is_some() {
            return Err(Malformed::PersonaInFormat2);
        }
        let curator = match i.curator {
            None | Some(Value::Null) => None,
            Some(Value::String(kind)) => Some(kind),
            Some(_) => return Err(Malformed::CuratorNotKind),
        };
        return Ok(ConditionInfo {
            attacker: i.attacker,
            args: args(i.args)?,
            access: i.access,
            role: i.role,
            uses_model: i.uses_model,
            curator,
            defence: i.defence,
        });
    }
    // Format 1.
    if i.args.is_some() {
        return Err(Malformed::ArgsInFormat1);
    }
    let curator = match i.curator {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some("tally".to_owned()),
        Some(_) => return Err(Malformed::CuratorNotBool),
    };
    let (mut attacker, mut persona) = (i.attacker, i.persona);
    if let Some((kind, p)) = attacker.split_once(':') {
        if persona.as_deref().is_some_and(|q| q != p) {
            return Err(Malformed::PersonaConflict {
                persona: persona.unwrap_or_default(),
                attacker,
            });
        }
        persona = Some(p.to_owned());
        attacker = kind.to_owned();
    }
    let mut access = i.access;
    match attacker.as_str() {
        "blind" => {
            if access.as_deref().is_some_and(|a| a != "blind") {
                return Err(Malformed::BlindWithAccess {
                    access: access.unwrap_or_default(),
                });
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
fn args(v: Option<Value>) -> Result<Value, Malformed> {
    match v {
        None => Ok(Value::Null),
        Some(a) if no_args(&a) => Ok(Value::Null),
        Some(a @ Value::Object(_)) => Ok(a),
        Some(found) => Err(Malformed::ArgsNotObject { found }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serde makes these texts the parser's messages: they are what users read, and must not
    /// change with the type that carries them.
    #[test]
    fn each_problem_reads_as_it_always_has() {
        let cases = [
            (
                Malformed::FormatZero,
                "`format` 0 does not exist (formats start at 1)",
            ),
            (
                Malformed::Newer { found: 9 },
                "format 9 is newer than this build of TrapArena reads (up to 3)",
            ),
            (Malformed::EmptyKey { field: "task" }, "`task` is empty"),
            (
                Malformed::ForkTooEarly { format: 2 },
                "`fork` is a field of format 3; this line is of format 2",
            ),
            (
                Malformed::ForkStepZero,
                "`fork.step` is 0 (a fork replays at least one step)",
            ),
            (
                Malformed::PersonaInFormat2,
                "`condition_info`: `persona` is a field of format 1; format 2 has `args`",
            ),
            (
                Malformed::CuratorNotKind,
                "`condition_info`: `curator` is the curator's kind (a string) or null",
            ),
            (
                Malformed::ArgsNotObject {
                    found: serde_json::json!([1, "a"]),
                },
                "`condition_info`: `args` must be an object, not [1,\"a\"]",
            ),
            (
                Malformed::ArgsInFormat1,
                "`condition_info`: `args` is a field of format 2, but the line has no `format`",
            ),
            (
                Malformed::CuratorNotBool,
                "`condition_info`: `curator` of a format-1 line is true or false",
            ),
            (
                Malformed::PersonaConflict {
                    attacker: "scripted:a".into(),
                    persona: "b".into(),
                },
                "`condition_info`: the attacker \"scripted:a\" names another persona than `persona` \"b\"",
            ),
            (
                Malformed::BlindWithAccess {
                    access: "reference".into(),
                },
                "`condition_info`: the attacker `blind` with access \"reference\"",
            ),
        ];
        for (m, text) in cases {
            assert_eq!(m.to_string(), text);
        }
        assert_eq!(
            FORMAT_VERSION, 3,
            "the texts above name format 3 as the newest"
        );
    }

    #[test]
    fn the_format_of_a_line_is_checked_once() {
        assert_eq!(format(None), Ok(1));
        assert_eq!(format(Some(3)), Ok(3));
        assert_eq!(format(Some(0)), Err(Malformed::FormatZero));
        assert_eq!(format(Some(4)), Err(Malformed::Newer { found: 4 }));
        assert_eq!(
            (newer(Some(4)), newer(Some(3)), newer(None)),
            (Some(4), None, None)
        );
    }
}

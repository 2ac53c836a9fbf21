//! The moments of an external agent's steps: a profile's rules read an edit or a test run
//! from the tool calls (or the text) of the model's response, so that the scripted personas
//! that speak after an edit, after a test run or before a submit speak to external agents too.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use traparena_model::ChatResponse;
use traparena_task::{Moment, MomentKind};

/// What a test-run rule matches when it names nothing itself: the usual test commands.
pub const TEST_COMMANDS: &[&str] = &[
    "pytest",
    "unittest",
    "tox",
    "nox",
    "npm test",
    "npm run test",
    "yarn test",
    "jest",
    "mocha",
    "go test",
    "cargo test",
    "mvn test",
    "gradle test",
    "make test",
    "ctest",
];

/// One rule of a profile's `moments`: the first rule that matches a step's response names
/// the step's moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MomentRule {
    /// The rule's name, recorded with the step it fired on.
    pub name: String,
    /// The moment it reads.
    pub moment: MomentKind,
    /// The tool the response calls (`Edit`, `apply_patch`, `run_shell_command`); without one
    /// the rule reads the response's text (agents that speak text, such as aider).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The argument of that call whose text is matched (`command`); the whole arguments
    /// when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument: Option<String>,
    /// The text matched holds one of these; empty: any text, or for a `test_run` rule the
    /// usual test commands ([`TEST_COMMANDS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains_any: Vec<String>,
}

impl MomentRule {
    fn matches(&self, response: &ChatResponse) -> bool {
        let texts: Vec<String> = match &self.tool {
            Some(tool) => response
                .tool_calls()
                .iter()
                .filter(|c| &c.function.name == tool)
                .map(|c| match &self.argument {
                    Some(arg) => argument_text(&c.function.arguments, arg),
                    None => c.function.arguments.clone(),
                })
                .collect(),
            None => vec![response.text().unwrap_or("").to_owned()],
        };
        let defaults: Vec<String>;
        let needles = if self.contains_any.is_empty() && self.moment == MomentKind::TestRun {
            defaults = TEST_COMMANDS.iter().map(|s| (*s).to_owned()).collect();
            &defaults
        } else {
            &self.contains_any
        };
        texts
            .iter()
            .any(|t| needles.is_empty() || needles.iter().any(|n| t.contains(n.as_str())))
    }
}

/// The text of one argument of a call: a string as it is, a list of strings joined by
/// spaces (Codex's `command` lists), anything else as JSON.
fn argument_text(arguments: &str, name: &str) -> String {
    let v: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    match v.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(" "),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// The moment of a response under `rules`: the first rule that matches.
pub fn moment_of(rules: &[MomentRule], response: &ChatResponse) -> Option<Moment> {
    rules.iter().find(|r| r.matches(response)).map(|r| Moment {
        kind: r.moment,
        rule: r.name.clone(),
    })
}

/// Whether a test run's output says its tests passed: `Some(false)` on a failure summary
/// (unittest's `FAILED (`, pytest's `N failed` or `N error`, a `failed` count of Jest or Go),
/// `Some(true)` on a passing one (unittest's `OK`, pytest's `N passed`, Go's `ok` or `PASS`),
/// `None` when it says neither.
pub fn tests_passed(output: &str) -> Option<bool> {
    let mut passed = None;
    for line in output.lines().map(str::trim) {
        let lower = line.to_ascii_lowercase();
        let failed = line.starts_with("FAILED")
            || line.starts_with("FAIL")
            || lower.contains(" failed")
            || lower.contains(" error")
            || line.starts_with("ERROR");
        if failed {
            return Some(false);
        }
        if line == "OK"
            || line.starts_with("OK (")
            || line.starts_with("ok ")
            || line == "PASS"
            || lower.contains(" passed")
        {
            passed = Some(true);
        }
    }
    passed
}

#[cfg(test)]
mod tests {
    use super::*;
    use traparena_model::ToolCall;

    fn calls(name: &str, args: &str) -> ChatResponse {
        ChatResponse::from_tool_calls("m", vec![ToolCall::function("c", name, args)])
    }

    fn rule(name: &str, moment: MomentKind, tool: Option<&str>, arg: Option<&str>) -> MomentRule {
        MomentRule {
            name: name.into(),
            moment,
            tool: tool.map(Into::into),
            argument: arg.map(Into::into),
            contains_any: Vec::new(),
        }
    }

    #[test]
    fn the_first_matching_rule_names_the_moment() {
        let rules = [
            rule("edit tool", MomentKind::Edit, Some("Edit"), None),
            rule("tests", MomentKind::TestRun, Some("Bash"), Some("command")),
            MomentRule {
                contains_any: vec![">>>>>>> REPLACE".into()],
                ..rule("search/replace", MomentKind::Edit, None, None)
            },
        ];
        let cases: &[(ChatResponse, Option<&str>)] = &[
            (calls("Edit", r#"{"file_path": "a.py"}"#), Some("edit tool")),
            (
                calls("Bash", r#"{"command": "python -m pytest -q"}"#),
                Some("tests"),
            ),
            (
                calls("Bash", r#"{"command": ["python3", "-m", "unittest"]}"#),
                Some("tests"),
            ),
            (calls("Bash", r#"{"command": "cat a.py"}"#), None),
            (calls("Read", r#"{"command": "pytest"}"#), None),
            (
                ChatResponse::from_text(
                    "m",
                    "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE",
                ),
                Some("search/replace"),
            ),
            (ChatResponse::from_text("m", "Done."), None),
        ];
        for (response, want) in cases {
            let got = moment_of(&rules, response);
            assert_eq!(got.as_ref().map(|m| m.rule.as_str()), *want, "{response:?}");
        }
    }

    #[test]
    fn test_summaries_are_read() {
        let cases: &[(&str, Option<bool>)] = &[
            ("Ran 6 tests in 0.001s\n\nOK", Some(true)),
            ("Ran 6 tests\n\nFAILED (failures=1)", Some(false)),
            ("===== 3 passed in 0.1s =====", Some(true)),
            ("===== 1 failed, 2 passed in 0.1s =====", Some(false)),
            ("==== 2 passed, 1 error in 0.2s ====", Some(false)),
            ("ok  \texample.com/x\t0.01s", Some(true)),
            ("--- FAIL: TestX (0.00s)\nFAIL", Some(false)),
            ("Tests:       1 failed, 3 passed, 4 total", Some(false)),
            ("Tests:       4 passed, 4 total", Some(true)),
            ("cat: a.py: No such file or directory", None),
        ];
        for (output, want) in cases {
            assert_eq!(tests_passed(output), *want, "{output}");
        }
    }
}

//! The failed tests of a run, as the harness's runner shim names them in its report (never read
//! from what the program prints), bounded so that a run with many long failures stays short.

use serde::{Deserialize, Deserializer, Serialize};
use traparena_task::test_name_matches;

use crate::outcome::{NamedOutcome, TestOutcome};

/// At most this many failures are kept for a run; the rest are counted.
pub const MAX_FAILURES: usize = 10;
/// A failure's message keeps at most this many bytes: its end, where the assertion is.
pub const MAX_MESSAGE_BYTES: usize = 500;
/// A failure's name keeps at most this many bytes.
const MAX_NAME_BYTES: usize = 300;
/// One rendered line keeps at most this many characters of a message.
const LINE_MESSAGE_CHARS: usize = 200;

/// One failed or errored test of a run, as the runner shim reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestFailure {
    /// The test: `module.Class.method` (unittest), the node id (pytest, SWE-bench),
    /// `test_x (module.Class)` (django's `runtests.py`), the function name (sympy's `bin/test`),
    /// or `check N` (Node and the compiled languages' check libraries).
    pub name: String,
    /// The end of its failure: the traceback's end with the assertion (Python), or the check's
    /// source line and expression or assertion message (the other runners). At most
    /// [`MAX_MESSAGE_BYTES`] bytes; empty when the runner said nothing more.
    pub message: String,
}

impl TestFailure {
    /// One line: the name and the end of the message (its last lines joined with ` / `; for
    /// pytest's, its first `E` lines, which hold the assertion, and the location after them).
    pub fn line(&self) -> String {
        let lines: Vec<&str> = self
            .message
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let explained: Vec<&str> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("E ").map(str::trim))
            .take(2)
            .collect();
        // A Python traceback: from its last exception line (`AssertionError: 3 != 4`), after
        // the source line that raised it; the frames' `File ...` lines say little.
        let exception = lines.iter().rposition(|l| is_exception_line(l));
        let said = match (explained.is_empty(), lines.last(), exception) {
            (false, Some(last), _) => format!("{} / {last}", explained.join(" / ")),
            (true, _, Some(at)) => {
                let from = if at > 0 && !lines[at - 1].starts_with("File \"") {
                    at - 1
                } else {
                    at
                };
                lines[from..(at + 2).min(lines.len())].join(" / ")
            }
            _ => lines[lines.len().saturating_sub(3)..].join(" / "),
        };
        let count = said.chars().count();
        let said: String = if count > LINE_MESSAGE_CHARS {
            let tail: String = said.chars().skip(count - LINE_MESSAGE_CHARS).collect();
            format!("...{tail}")
        } else {
            said
        };
        if said.is_empty() {
            self.name.clone()
        } else {
            format!("{}: {said}", self.name)
        }
    }
}

/// True for a line that starts with an exception's name and a colon (`AssertionError: ...`,
/// `module.Error: ...`).
fn is_exception_line(line: &str) -> bool {
    let Some((name, _)) = line.split_once(':') else {
        return false;
    };
    let last = name.rsplit('.').next().unwrap_or(name);
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && ["Error", "Exception", "Failure", "Exit", "Interrupt"]
            .iter()
            .any(|e| last.ends_with(e))
}

/// The lines describing `failures` (one per failure), then `and N more failing tests` when
/// `omitted` is not zero.
pub fn failure_lines(failures: &[TestFailure], omitted: u64) -> Vec<String> {
    let mut lines: Vec<String> = failures.iter().map(TestFailure::line).collect();
    if omitted > 0 {
        lines.push(format!(
            "and {omitted} more failing test{}",
            if omitted == 1 { "" } else { "s" }
        ));
    }
    lines
}

/// Reads a report's `failures` leniently: a malformed list, or a malformed entry, is passed over,
/// so that it never costs the run its counts.
pub(crate) fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<TestFailure>, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    let Some(items) = value.as_array() else {
        return Ok(Vec::new());
    };
    Ok(items
        .iter()
        .filter_map(|item| {
            let name = item.get("name")?.as_str()?;
            let message = item.get("message").and_then(|m| m.as_str()).unwrap_or("");
            Some(TestFailure {
                name: head(name, MAX_NAME_BYTES),
                message: tail(message.trim_end(), MAX_MESSAGE_BYTES),
            })
        })
        .collect())
}

/// `failures` with every mention of the workspace's real path shown as `shown`, as in the
/// run's output.
pub(crate) fn show_workspace(failures: &mut [TestFailure], real: &str, shown: &str) {
    for f in failures {
        f.message = f.message.replace(real, shown);
    }
}

/// The failures of a run that names no tests: the report's, at most [`MAX_FAILURES`], and how
/// many more failed or errored tests the counts say there were.
pub(crate) fn bound(mut listed: Vec<TestFailure>, failing: u64) -> (Vec<TestFailure>, u64) {
    listed.truncate(MAX_FAILURES);
    let omitted = failing.saturating_sub(listed.len() as u64);
    (listed, omitted)
}

/// The report's failures, each also under the other names its test goes by (`aliases`: a
/// failure's name → its test's other names), for finding a selected name's message.
pub(crate) fn with_aliases(
    mut reported: Vec<TestFailure>,
    aliases: &std::collections::BTreeMap<String, Vec<String>>,
) -> Vec<TestFailure> {
    let also: Vec<TestFailure> = reported
        .iter()
        .flat_map(|f| {
            aliases
                .get(&f.name)
                .into_iter()
                .flatten()
                .map(|name| TestFailure {
                    name: name.clone(),
                    message: f.message.clone(),
                })
        })
        .collect();
    reported.extend(also);
    reported
}

/// The failures of a run judged by names: every selected name whose outcome is not a pass, in
/// order, with the message of the report's failure it names (empty when the report has none,
/// as for a name that never ran), at most [`MAX_FAILURES`], and how many more there were.
pub(crate) fn of_selected(
    selected: &[NamedOutcome],
    reported: &[TestFailure],
) -> (Vec<TestFailure>, u64) {
    let failing: Vec<&NamedOutcome> = selected.iter().filter(|n| !n.outcome.is_pass()).collect();
    let listed = failing
        .iter()
        .take(MAX_FAILURES)
        .map(|n| {
            let message = reported
                .iter()
                .find(|f| test_name_matches(&n.name, &f.name))
                .map(|f| f.message.clone())
                .unwrap_or_else(|| match n.outcome {
                    TestOutcome::NotRun => "not run".to_owned(),
                    TestOutcome::Skipped => "skipped".to_owned(),
                    _ => String::new(),
                });
            TestFailure {
                name: head(&n.name, MAX_NAME_BYTES),
                message,
            }
        })
        .collect::<Vec<_>>();
    let omitted = (failing.len() - listed.len()) as u64;
    (listed, omitted)
}

/// The first `max` bytes of `s`, cut at a character boundary.
fn head(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &s[..cut])
}

/// The last `max` bytes of `s`, cut at a character boundary, marked `...` when cut.
fn tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut at = s.len() - (max - 3);
    while !s.is_char_boundary(at) {
        at += 1;
    }
    format!("...{}", &s[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_names_are_bounded_at_character_boundaries() {
        let long = "é".repeat(1000);
        let t = tail(&long, MAX_MESSAGE_BYTES);
        assert!(t.len() <= MAX_MESSAGE_BYTES && t.starts_with("...") && t.ends_with('é'));
        let h = head(&long, MAX_NAME_BYTES);
        assert!(h.len() <= MAX_NAME_BYTES + 3 && h.ends_with("..."));
    }

    #[test]
    fn a_line_shows_the_end_of_the_message() {
        let f = TestFailure {
            name: "t.T.test_a".into(),
            message: "Traceback:\n  File x\n    assert f(2) == 4\n\nAssertionError: 3 != 4\n"
                .into(),
        };
        assert_eq!(
            f.line(),
            "t.T.test_a: assert f(2) == 4 / AssertionError: 3 != 4"
        );
        let differ = TestFailure {
            name: "t.T.test_l".into(),
            message: "Traceback (most recent call last):\n  File \"t.py\", line 3, in test_l\n    self.assertEqual(a, b)\nAssertionError: Lists differ: [9] != [5]\n\nFirst differing element 0:\n9\n5\n".into(),
        };
        assert_eq!(
            differ.line(),
            "t.T.test_l: self.assertEqual(a, b) / AssertionError: Lists differ: [9] != [5] / First differing element 0:"
        );
        let plain = TestFailure {
            name: "check 2".into(),
            message: "line 6: f(2) == 4 is false".into(),
        };
        assert_eq!(plain.line(), "check 2: line 6: f(2) == 4 is false");
        let pytest = TestFailure {
            name: "tests/test_m.py::test_b".into(),
            message: "def test_b():\n>       assert f(2) == 4, 'four'\nE       AssertionError: four\nE       assert 3 == 4\nE        +  where 3 = f(2)\n\ntests/test_m.py:6: AssertionError".into(),
        };
        assert_eq!(
            pytest.line(),
            "tests/test_m.py::test_b: AssertionError: four / assert 3 == 4 / tests/test_m.py:6: AssertionError"
        );
        let lines = failure_lines(&[f], 2);
        assert_eq!(lines.last().unwrap(), "and 2 more failing tests");
    }
}

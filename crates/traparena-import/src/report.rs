//! What an import did: the tasks it emitted and the records it skipped, with reasons.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use traparena_env::{Backend, TestFailure};

use crate::error::{ImportError, io};

/// The file an import writes its report to, in the output folder.
pub const REPORT_JSON: &str = "import-report.json";
/// The text version of the report, in the output folder.
pub const REPORT_TEXT: &str = "import-report.txt";

/// The result of an import: every record is either emitted as a task or skipped with a reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportReport {
    /// The task source (`humanevalfix` or `swebench`).
    pub source: String,
    /// The input file.
    pub input: PathBuf,
    /// The output folder.
    pub out: PathBuf,
    /// Records considered (after `--instance` filtering).
    pub records: usize,
    /// The tasks written, in input order.
    pub emitted: Vec<Emitted>,
    /// The records not turned into tasks, in input order.
    pub skipped: Vec<Skipped>,
    /// Whether every emitted task was validated (`traparena validate`'s checks).
    pub validated: bool,
    /// The sandbox backend tests ran under.
    pub backend: Backend,
    /// Wall-clock time of the whole import, in milliseconds.
    pub duration_ms: u64,
    /// Cached interpreter copies and environments that were there but did not run, and were
    /// made again: what and why, one line each, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repaired: Vec<String>,
}

/// A task an import wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Emitted {
    /// The record's own id (`Python/0`, `pallets__flask-4992`).
    pub record: String,
    /// The task id, which is also the task folder's name.
    pub id: String,
    /// Public tests (assertions or pytest node ids) the agent can run.
    pub public_tests: usize,
    /// Hidden tests: assertions of the full check, or `FAIL_TO_PASS` + `PASS_TO_PASS` node ids.
    pub hidden_tests: usize,
    /// What the task's environment was chosen by, when it has one: the version derived and
    /// where from, and the environment spec used (`version 5.4.1 (tag v5.4.1 ...); bundled
    /// pytest-dev/pytest 5.4, python 3.9`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

/// A record an import did not turn into a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// The record's own id.
    pub record: String,
    /// The reason, short and shared by records skipped for the same cause.
    pub reason: String,
    /// The particulars for this record. Where they quote a failed test run, the failing tests
    /// are named in it too (`| failing: NAME: end of the failure; ...`).
    pub detail: String,
    /// The failing tests of the test run the detail quotes, as the runner's report names
    /// them (at most [`MAX_FAILURES`](traparena_env::MAX_FAILURES) per run quoted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<TestFailure>,
}

impl Skipped {
    /// A skipped record quoting no test run.
    pub(crate) fn new(record: &str, reason: &str, detail: String) -> Skipped {
        Skipped {
            record: record.to_owned(),
            reason: reason.to_owned(),
            detail,
            failures: Vec::new(),
        }
    }
}

/// The reason of a record skipped because the harness failed on it (see the import report).
pub const INFRASTRUCTURE: &str = "infrastructure error";

impl ImportReport {
    /// How many records were skipped for each reason.
    pub fn reasons(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for s in &self.skipped {
            *m.entry(s.reason.clone()).or_insert(0) += 1;
        }
        m
    }

    /// One line: records, emitted, skipped by reason, time.
    pub fn summary(&self) -> String {
        let reasons: Vec<String> = self
            .reasons()
            .into_iter()
            .map(|(r, n)| format!("{r}: {n}"))
            .collect();
        let skipped = if reasons.is_empty() {
            format!("{} skipped", self.skipped.len())
        } else {
            format!("{} skipped ({})", self.skipped.len(), reasons.join("; "))
        };
        format!(
            "{}: {} records, {} tasks emitted{}, {skipped} in {:.1} s ({} sandbox)",
            self.source,
            self.records,
            self.emitted.len(),
            if self.validated {
                " and validated"
            } else {
                " (not validated)"
            },
            self.duration_ms as f64 / 1000.0,
            self.backend
        )
    }

    /// The text report: a line per record, then the summary.
    pub fn text(&self) -> String {
        let mut lines: Vec<(String, String)> = Vec::new();
        for e in &self.emitted {
            lines.push((
                e.record.clone(),
                format!(
                    "emitted  {} ({}): {} public, {} hidden tests{}",
                    e.id,
                    e.record,
                    e.public_tests,
                    e.hidden_tests,
                    e.environment
                        .as_deref()
                        .map(|env| format!("; {env}"))
                        .unwrap_or_default()
                ),
            ));
        }
        for s in &self.skipped {
            lines.push((
                s.record.clone(),
                format!("skipped  {}: {}: {}", s.record, s.reason, s.detail),
            ));
        }
        let mut out: String = lines.into_iter().map(|(_, l)| l + "\n").collect();
        for r in &self.repaired {
            out.push_str(&format!("repaired {r}\n"));
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// Gathers the per-record outcomes of an import (in input order) into its report, writes
    /// the report into `out` and returns it.
    /// One record's import that failed for a reason of the harness (a process that would not
    /// start, a file that could not be written) as a skipped record with the reason
    /// "infrastructure error", so that one record never aborts a whole import. Bad input is
    /// refused before any record is imported and still stops the import.
    pub(crate) fn contain(
        record: &str,
        r: Result<Result<Emitted, Skipped>, ImportError>,
    ) -> Result<Result<Emitted, Skipped>, ImportError> {
        match r {
            Err(e) if !e.is_bad_input() => {
                Ok(Err(Skipped::new(record, INFRASTRUCTURE, e.to_string())))
            }
            other => other,
        }
    }

    pub(crate) fn gather(
        source: &str,
        input: &Path,
        out: &Path,
        validated: bool,
        backend: Backend,
        started: std::time::Instant,
        results: Vec<Result<Result<Emitted, Skipped>, ImportError>>,
    ) -> Result<ImportReport, ImportError> {
        let mut report = ImportReport {
            source: source.into(),
            input: std::path::absolute(input).unwrap_or_else(|_| input.to_owned()),
            out: out.to_owned(),
            records: results.len(),
            emitted: Vec::new(),
            skipped: Vec::new(),
            validated,
            backend,
            duration_ms: 0,
            repaired: Vec::new(),
        };
        for r in results {
            match r? {
                Ok(e) => report.emitted.push(e),
                Err(s) => report.skipped.push(s),
            }
        }
        report.duration_ms = started.elapsed().as_millis() as u64;
        report.write(out)?;
        Ok(report)
    }

    /// Writes [`REPORT_JSON`] and [`REPORT_TEXT`] into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), ImportError> {
        let json = dir.join(REPORT_JSON);
        let text = serde_json::to_string_pretty(self).expect("the report serialises") + "\n";
        std::fs::write(&json, text).map_err(io(&json))?;
        let txt = dir.join(REPORT_TEXT);
        std::fs::write(&txt, self.text()).map_err(io(&txt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_failure_on_one_record_is_that_records_skip() {
        let io = ImportError::Io {
            path: "/x".into(),
            source: std::io::Error::other("cannot run python3: Invalid argument (os error 22)"),
        };
        match ImportReport::contain("r1", Err(io)) {
            Ok(Err(s)) => {
                assert_eq!(s.record, "r1");
                assert_eq!(s.reason, INFRASTRUCTURE);
                assert!(s.detail.contains("os error 22"), "{s:?}");
            }
            other => panic!("{other:?}"),
        }
        // Bad input still stops the import.
        let bad = ImportReport::contain("r2", Err(ImportError::Input("no such file".into())));
        assert!(matches!(bad, Err(ImportError::Input(_))));
    }

    #[test]
    fn repairs_are_listed_in_the_text_and_absent_from_the_json_when_none() {
        let mut r = ImportReport {
            source: "swebench".into(),
            input: "/in.jsonl".into(),
            out: "/out".into(),
            records: 0,
            emitted: Vec::new(),
            skipped: Vec::new(),
            validated: true,
            backend: Backend::None,
            duration_ms: 0,
            repaired: Vec::new(),
        };
        assert!(!serde_json::to_string(&r).unwrap().contains("repaired"));
        assert!(!r.text().contains("repaired"));
        r.repaired.push(
            "python 3.9: the copy of /p in /s does not run (exit status Some(1): x); copied again"
                .into(),
        );
        let text = r.text();
        assert!(
            text.starts_with("repaired python 3.9: the copy of /p in /s does not run"),
            "{text}"
        );
        let back: ImportReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}

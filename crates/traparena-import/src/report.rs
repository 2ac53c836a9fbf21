//! What an import did: the tasks it emitted and the records it skipped, with reasons.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use traparena_env::{Backend, TestFailure};
use traparena_task::Shard;

use crate::error::{ImportError, io};
use crate::skip::{Skip, SkipReason};

/// The file an import writes its report to, in the output folder.
pub const REPORT_JSON: &str = "import-report.json";
/// The text version of the report, in the output folder.
pub const REPORT_TEXT: &str = "import-report.txt";

/// The report's file names (JSON, text) in the output folder: [`REPORT_JSON`] and
/// [`REPORT_TEXT`] for a whole import, `import-report.shard-I-of-N.json` and `.txt` for a shard.
pub fn report_names(shard: Option<Shard>) -> (String, String) {
    match shard {
        None => (REPORT_JSON.to_owned(), REPORT_TEXT.to_owned()),
        Some(s) => (
            format!("import-report.shard-{}-of-{}.json", s.index, s.count),
            format!("import-report.shard-{}-of-{}.txt", s.index, s.count),
        ),
    }
}

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
    /// The shard this report is of (`--shard I/N`), or none for a whole import (one process's,
    /// or the shards' reports joined by [`merge_reports`](crate::merge_reports)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

/// What an import's report is about, besides its records.
pub(crate) struct Gathered<'a> {
    pub source: &'a str,
    pub input: &'a Path,
    pub out: &'a Path,
    pub validated: bool,
    pub backend: Backend,
    pub shard: Option<Shard>,
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
    /// Where the task differs from the source's own verdict on the record (SWE-bench's: every
    /// listed test passes with the reference), one phrase each (`2 PASS_TO_PASS tests fail
    /// here`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<String>,
    /// The group of the report's table the record is counted in (the repository, for SWE-bench).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Time spent on the record (its environment build included), in milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
}

/// What became of one record: a task written, or the record skipped with its reason. A
/// failure of the harness is the `Err` beside it ([`Outcome`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RecordOutcome {
    /// A task was written.
    Emitted(Emitted),
    /// The record was skipped.
    Skipped(Skipped),
}

/// One record's import: its outcome, or a failure of the harness.
pub(crate) type Outcome = Result<RecordOutcome, ImportError>;

/// A record an import did not turn into a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// The record's own id.
    pub record: String,
    /// The reason, shared by records skipped for the same cause.
    pub reason: SkipReason,
    /// The particulars for this record. Where they quote a failed test run, the failing tests
    /// are named in it too (`| failing: NAME: end of the failure; ...`).
    pub detail: String,
    /// The failing tests of the test run the detail quotes, as the runner's report names
    /// them (at most [`MAX_FAILURES`](traparena_env::MAX_FAILURES) per run quoted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<TestFailure>,
    /// True when what the record's tests printed shows they reach for the network (tests run
    /// offline: an `httpbin.org` era psf/requests instance, say).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_network: bool,
    /// The group of the report's table the record is counted in (the repository, for SWE-bench).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Time spent on the record (its environment build included), in milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
}

impl Skipped {
    /// A skipped record quoting no test run.
    pub(crate) fn new(record: &str, skip: Skip) -> Skipped {
        Skipped {
            record: record.to_owned(),
            reason: skip.reason,
            detail: skip.cause,
            failures: Vec::new(),
            needs_network: false,
            group: None,
            duration_ms: 0,
        }
    }
}

/// Marks a record's outcome with its group and the time since `started`, and a skipped
/// record whose detail or failures show a reach for the network as needing it.
pub(crate) fn stamp(r: Outcome, group: &str, started: std::time::Instant) -> Outcome {
    let ms = started.elapsed().as_millis() as u64;
    let r = r?;
    Ok(match r {
        RecordOutcome::Emitted(mut e) => {
            e.group = Some(group.to_owned());
            e.duration_ms = ms;
            RecordOutcome::Emitted(e)
        }
        RecordOutcome::Skipped(mut s) => {
            s.group = Some(group.to_owned());
            s.duration_ms = ms;
            s.needs_network = reaches_for_network(&s.detail)
                || s.failures.iter().any(|f| reaches_for_network(&f.message));
            RecordOutcome::Skipped(s)
        }
    })
}

/// True when `text` shows a connection attempt that failed for want of a network.
fn reaches_for_network(text: &str) -> bool {
    const SIGNS: &[&str] = &[
        "httpbin.org",
        "NewConnectionError",
        "Failed to establish a new connection",
        "Name or service not known",
        "Temporary failure in name resolution",
        "Network is unreachable",
        "nodename nor servname",
        "getaddrinfo failed",
    ];
    SIGNS.iter().any(|s| text.contains(s))
}

/// The reason of a record skipped because the harness failed on it (see the import report).
pub const INFRASTRUCTURE: &str = SkipReason::Infrastructure.as_str();

/// The reason of a record skipped because its task cannot be checked on this machine: a
/// toolchain its tests need is missing from the sandbox, so no test ran (the detail says what
/// to install). Neither valid nor invalid: importing again with the toolchain may emit it.
pub const NOT_CHECKABLE: &str = SkipReason::NotCheckable.as_str();

impl ImportReport {
    /// How many records were skipped as [`NOT_CHECKABLE`].
    pub fn not_checkable(&self) -> usize {
        self.skipped
            .iter()
            .filter(|s| s.reason == SkipReason::NotCheckable)
            .count()
    }

    /// How many records were skipped for each reason.
    pub fn reasons(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for s in &self.skipped {
            *m.entry(s.reason.as_str().to_owned()).or_insert(0) += 1;
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
        out.push_str(&self.groups_text());
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// The per-group table (SWE-bench: per repository): records, valid, skipped by reason with
    /// the first cause quoted, time in all and per record (median, worst), the records that
    /// need the network and the tasks that differ from the source's verdict. Empty when no
    /// record has a group.
    pub fn groups_text(&self) -> String {
        let mut groups: BTreeMap<&str, (Vec<&Emitted>, Vec<&Skipped>)> = BTreeMap::new();
        for e in &self.emitted {
            if let Some(g) = &e.group {
                groups.entry(g).or_default().0.push(e);
            }
        }
        for s in &self.skipped {
            if let Some(g) = &s.group {
                groups.entry(g).or_default().1.push(s);
            }
        }
        if groups.is_empty() {
            return String::new();
        }
        let secs = |ms: u64| ms as f64 / 1000.0;
        let mut out = String::from("by group:\n");
        for (g, (emitted, skipped)) in groups {
            let mut times: Vec<u64> = emitted.iter().map(|e| e.duration_ms).collect();
            times.extend(skipped.iter().map(|s| s.duration_ms));
            times.sort_unstable();
            let n = times.len();
            out.push_str(&format!(
                "  {g}: {n} records, {} valid, {} skipped; {:.1} s in all, per record median {:.1} s, worst {:.1} s\n",
                emitted.len(),
                skipped.len(),
                secs(times.iter().sum()),
                secs(times[n / 2]),
                secs(times[n - 1]),
            ));
            let mut reasons: BTreeMap<&str, Vec<&Skipped>> = BTreeMap::new();
            for s in &skipped {
                reasons.entry(s.reason.as_str()).or_default().push(s);
            }
            for (reason, list) in reasons {
                let cause: String = list[0].detail.chars().take(160).collect();
                out.push_str(&format!(
                    "    skipped {}: {reason} (\"{cause}\", {})\n",
                    list.len(),
                    list[0].record
                ));
            }
            let network: Vec<&str> = skipped
                .iter()
                .filter(|s| s.needs_network)
                .map(|s| s.record.as_str())
                .collect();
            if !network.is_empty() {
                out.push_str(&format!("    needs the network: {}\n", network.join(", ")));
            }
            for e in emitted.iter().filter(|e| !e.differs.is_empty()) {
                out.push_str(&format!(
                    "    differs from the source: {}: {}\n",
                    e.record,
                    e.differs.join("; ")
                ));
            }
        }
        out
    }

    /// Gathers the per-record outcomes of an import (in input order) into its report, writes
    /// the report into `out` and returns it.
    /// One record's import that failed for a reason of the harness (a process that would not
    /// start, a file that could not be written) as a skipped record with the reason
    /// "infrastructure error", so that one record never aborts a whole import. Bad input is
    /// refused before any record is imported and still stops the import.
    pub(crate) fn contain(record: &str, r: Outcome) -> Outcome {
        match r {
            Err(e) if !e.is_bad_input() => Ok(RecordOutcome::Skipped(Skipped::new(
                record,
                Skip::new(SkipReason::Infrastructure, e.to_string()),
            ))),
            other => other,
        }
    }

    pub(crate) fn gather(
        g: Gathered<'_>,
        started: std::time::Instant,
        results: Vec<Outcome>,
    ) -> Result<ImportReport, ImportError> {
        let mut report = ImportReport {
            source: g.source.into(),
            input: std::path::absolute(g.input).unwrap_or_else(|_| g.input.to_owned()),
            out: g.out.to_owned(),
            records: results.len(),
            emitted: Vec::new(),
            skipped: Vec::new(),
            validated: g.validated,
            backend: g.backend,
            duration_ms: 0,
            repaired: Vec::new(),
            shard: g.shard,
        };
        for r in results {
            match r? {
                RecordOutcome::Emitted(e) => report.emitted.push(e),
                RecordOutcome::Skipped(s) => report.skipped.push(s),
            }
        }
        report.duration_ms = started.elapsed().as_millis() as u64;
        report.write(g.out)?;
        Ok(report)
    }

    /// Writes the report into `dir`: [`REPORT_JSON`] and [`REPORT_TEXT`], or a shard's
    /// own pair of files ([`report_names`](crate::report_names)).
    pub fn write(&self, dir: &Path) -> Result<(), ImportError> {
        let (json, txt) = report_names(self.shard);
        let (json, txt) = (dir.join(json), dir.join(txt));
        let text = serde_json::to_string_pretty(self).expect("the report serialises") + "\n";
        std::fs::write(&json, text).map_err(io(&json))?;
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
            Ok(RecordOutcome::Skipped(s)) => {
                assert_eq!(s.record, "r1");
                assert_eq!(s.reason, SkipReason::Infrastructure);
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
            shard: None,
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

    #[test]
    fn groups_count_records_quote_causes_and_name_network_needs() {
        let started = std::time::Instant::now();
        let emitted = Emitted {
            record: "a__b-1".into(),
            id: "a__b-1".into(),
            public_tests: 1,
            hidden_tests: 2,
            environment: None,
            differs: vec!["2 tests are skipped here".into()],
            group: None,
            duration_ms: 0,
        };
        let offline = Skipped::new(
            "a__b-2",
            Skip::new(
                SkipReason::FailsValidation,
                "hidden tests: ConnectionError: HTTPConnectionPool(host='httpbin.org')",
            ),
        );
        let other = Skipped::new(
            "c__d-1",
            Skip::new(SkipReason::NoPublicTest, "none at base"),
        );
        let mut rows = Vec::new();
        for (r, g) in [
            RecordOutcome::Emitted(emitted),
            RecordOutcome::Skipped(offline),
            RecordOutcome::Skipped(other),
        ]
        .into_iter()
        .zip(["a/b", "a/b", "c/d"])
        {
            rows.push(stamp(Ok(r), g, started).unwrap());
        }
        let mut report = ImportReport {
            source: "swebench".into(),
            input: "/in.jsonl".into(),
            out: "/out".into(),
            records: 3,
            emitted: Vec::new(),
            skipped: Vec::new(),
            validated: true,
            backend: Backend::None,
            duration_ms: 0,
            repaired: Vec::new(),
            shard: None,
        };
        for r in rows {
            match r {
                RecordOutcome::Emitted(e) => report.emitted.push(e),
                RecordOutcome::Skipped(s) => report.skipped.push(s),
            }
        }
        assert!(report.skipped[0].needs_network && !report.skipped[1].needs_network);
        let text = report.groups_text();
        assert!(
            text.contains("  a/b: 2 records, 1 valid, 1 skipped;"),
            "{text}"
        );
        assert!(
            text.contains("  c/d: 1 records, 0 valid, 1 skipped;"),
            "{text}"
        );
        assert!(
            text.contains("    skipped 1: no public test (\"none at base\", c__d-1)"),
            "{text}"
        );
        assert!(text.contains("    needs the network: a__b-2\n"), "{text}");
        assert!(
            text.contains("    differs from the source: a__b-1: 2 tests are skipped here"),
            "{text}"
        );
        // Records without a group (HumanEvalFix) give no table.
        report.emitted.iter_mut().for_each(|e| e.group = None);
        report.skipped.iter_mut().for_each(|s| s.group = None);
        assert_eq!(report.groups_text(), "");
    }
}

//! What became of one test of a run: the vocabulary the runners report in and failure lines
//! are told from.

use serde::{Deserialize, Serialize};

/// What became of one named test of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedOutcome {
    /// The name, as [`TestSpec::select`](traparena_task::TestSpec::select) gives it.
    pub name: String,
    /// Its outcome; for a name that matches several node ids (a cut-off name), the worst one.
    pub outcome: TestOutcome,
}

/// The outcome of one test, as the runner reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestOutcome {
    /// It passed.
    Passed,
    /// It failed as expected (`xfail`): passed for grading, as in SWE-bench.
    Xfail,
    /// It was skipped.
    Skipped,
    /// Its assertion failed.
    Failed,
    /// Its setup or teardown failed.
    Error,
    /// The runner reported no test of that name (not collected, or the run ended first).
    NotRun,
}

impl TestOutcome {
    /// True for outcomes that count as passed when grading.
    pub fn is_pass(self) -> bool {
        matches!(self, TestOutcome::Passed | TestOutcome::Xfail)
    }

    pub(crate) fn parse(s: &str) -> TestOutcome {
        match s {
            "passed" => TestOutcome::Passed,
            "xfail" => TestOutcome::Xfail,
            "skipped" => TestOutcome::Skipped,
            "failed" => TestOutcome::Failed,
            "error" => TestOutcome::Error,
            _ => TestOutcome::NotRun,
        }
    }
}

//! How the harness reads a test run: the [`Runner`] a test command names. Below the task spec
//! and the language table, which both name runners.

use serde::{Deserialize, Serialize};

/// How the harness reads a test run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Runner {
    /// Python's `unittest`: counts of tests run, failed and errored.
    Unittest,
    /// pytest: counts of tests passed, failed and errored.
    Pytest,
    /// Node.js (`node TEST_FILE`): every `console.assert` is a check, counted by the harness's
    /// shim (`console.assert` alone only prints), reported once the file ran to its end.
    Node,
    /// A C++ test program (`g++ TEST_FILE...`), built by the harness with its check library:
    /// every `TP_CHECK(n, expr)` is a check, reported once `main` reached its end.
    Cpp,
    /// A Java test program (`java SOURCE... `, the class `Main` holding `main`), built by the
    /// harness with its check library: every `TpCheck.check(n, ...)` is a check.
    Java,
    /// A Go test program (`go SOURCE...`, package `main`), built by the harness with its check
    /// library: every `tpCheck(t, n, ...)` is a check (testify's asserts fail it).
    Go,
    /// A Rust test program (`rustc SOURCE...`, included in order into one crate after the
    /// check library, with the crates `rand`, `regex` and `md5` available): every
    /// `tp_check(n, || ...)` is a check (a failing `assert!` fails it).
    Rust,
    /// django's own test script (`PYTHON tests/runtests.py ARGS...`, as SWE-bench runs it),
    /// read through unittest's result class: each test is named `test_x (module.Class)`,
    /// `test_x (module.Class.test_x)` (Python 3.11's form) and, when it has a docstring, by the
    /// docstring's first line, the names SWE-bench's django records use.
    Django,
    /// sympy's own test script (`PYTHON bin/test ARGS...`, as SWE-bench runs it), read through
    /// sympy's test reporter: each test is named by its bare function name (`test_issue_11617`).
    Sympy,
    /// Only the exit status counts.
    ExitCode,
}

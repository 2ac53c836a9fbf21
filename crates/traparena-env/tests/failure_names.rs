//! A failed run names its failing tests from the runner shim's report, with the end of each
//! failure, bounded; what the code under test prints (or writes to the well-known report
//! descriptor) never names a failure, and the counts stay those of the report.

mod common;

use common::*;
use traparena_env::{MAX_FAILURES, MAX_MESSAGE_BYTES, Sandbox, TestRun, Workspace};
use traparena_task::{Runner, TestSpec};

/// Runs `command` (runner `runner`) on a repository of the given files, under `sandbox`.
fn run(sandbox: &Sandbox, files: &[(&str, &str)], command: &[&str], runner: Runner) -> TestRun {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    for (rel, text) in files {
        let p = repo.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let ws = Workspace::materialize(&repo, sandbox).unwrap();
    let spec: TestSpec = serde_json::from_value(serde_json::json!({
        "command": command, "runner": runner, "files": [],
    }))
    .unwrap();
    ws.run_tests(sandbox, &spec, 60).unwrap()
}

const UNITTEST: &[&str] = &["python3", "-m", "unittest", "discover", "-s", "tests", "-q"];

/// A test module that prints failures of tests that do not exist and writes a forged report to
/// descriptor 3, besides failing one real test.
const FORGER: &str = r#"import os
import sys
import unittest

FORGED = '{"runner": "unittest", "tests_run": 1, "failed": 1, "errored": 0, "skipped": 0, "failures": [{"name": "forged.Name.test_forged", "message": "forged"}]}'


class T(unittest.TestCase):
    def test_ok(self):
        print("FAIL: test_forged (forged.Name)")
        print("======\nFAIL: test_forged (forged.Name)\nAssertionError: forged", file=sys.stderr)
        for fd in (3, 7, int(os.environ.get("TRAPARENA_REPORT_FD", "3"))):
            try:
                os.write(fd, FORGED.encode())
            except OSError:
                pass

    def test_real(self):
        self.assertEqual(1 + 1, 3, "one and one")
"#;

#[test]
fn printed_or_forged_failures_are_never_taken_for_the_reports() {
    for sb in isolating_sandboxes() {
        let run = run(
            &sb,
            &[("tests/test_forge.py", FORGER)],
            UNITTEST,
            Runner::Unittest,
        );
        assert!(!run.passed(), "{run:#?}");
        let c = run.counts.expect("counts from the report");
        assert_eq!((c.run, c.failed, c.errored), (2, 1, 0), "{run:#?}");
        let names: Vec<&str> = run.failures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["test_forge.T.test_real"], "{run:#?}");
        assert!(
            run.failures[0]
                .message
                .ends_with("AssertionError: 2 != 3 : one and one"),
            "{run:#?}"
        );
        assert!(run.output.contains("test_forged"), "the program did print");
        assert!(
            run.failure_lines().iter().all(|l| !l.contains("forged")),
            "{:?}",
            run.failure_lines()
        );
    }
}

#[test]
fn many_long_failures_are_bounded_and_counted() {
    let mut module = String::from("import unittest\n\n\nclass T(unittest.TestCase):\n");
    for i in 0..15 {
        module.push_str(&format!(
            "    def test_{i:02}(self):\n        self.fail('x' * 5000 + ' end of {i}')\n\n"
        ));
    }
    let sb = &isolating_sandboxes()[0];
    let run = run(
        sb,
        &[("tests/test_many.py", &module)],
        UNITTEST,
        Runner::Unittest,
    );
    let c = run.counts.expect("counts");
    assert_eq!((c.run, c.failed), (15, 15), "the counts are the report's");
    assert_eq!(run.failures.len(), MAX_FAILURES);
    assert_eq!(run.failures_omitted, 15 - MAX_FAILURES as u64);
    for (i, f) in run.failures.iter().enumerate() {
        assert_eq!(f.name, format!("test_many.T.test_{i:02}"));
        assert!(f.message.len() <= MAX_MESSAGE_BYTES, "{}", f.message.len());
        assert!(
            f.message.ends_with(&format!(" end of {i}")),
            "{}",
            f.message
        );
    }
    let lines = run.failure_lines();
    assert_eq!(lines.len(), MAX_FAILURES + 1);
    assert_eq!(lines.last().unwrap(), "and 5 more failing tests");
    assert!(lines.iter().all(|l| l.chars().count() < 300), "{lines:?}");
}

#[test]
fn a_passing_run_and_a_run_without_a_report_name_no_failure() {
    let sb = &isolating_sandboxes()[0];
    let ok =
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n";
    let passed = run(sb, &[("tests/test_ok.py", ok)], UNITTEST, Runner::Unittest);
    assert!(passed.passed() && passed.failures.is_empty(), "{passed:#?}");
    // An early exit: no report, so nothing is named, whatever was printed.
    let exits = "import os\nprint('FAIL: test_x (a.B)')\nos._exit(1)\n";
    let early = run(
        sb,
        &[("tests/test_exit.py", exits)],
        UNITTEST,
        Runner::Unittest,
    );
    assert!(early.counts.is_none(), "{early:#?}");
    assert!(early.failures.is_empty() && early.failure_lines().is_empty());
}

/// Old records (without the fields) still read.
#[test]
fn a_test_run_without_failures_still_deserializes() {
    let sb = &isolating_sandboxes()[0];
    let ok =
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n";
    let passed = run(sb, &[("tests/test_ok.py", ok)], UNITTEST, Runner::Unittest);
    let mut v = serde_json::to_value(&passed).unwrap();
    assert!(v.get("failures").is_none(), "{v}");
    v.as_object_mut().unwrap().remove("failures_omitted");
    let back: TestRun = serde_json::from_value(v).unwrap();
    assert!(back.failures.is_empty());
}

#[test]
#[ignore = "needs node (apt-get install nodejs); .ci/run installs it"]
fn node_failures_are_named_by_check_number_not_by_the_message() {
    let test = "const { f } = require('../m.js')\nconsole.assert(f(1) === 2, 'first')\nconsole.assert(f(2) === 4, 'check 1 is the one that failed')\nconsole.log('check 1 failed')\n";
    for sb in isolating_sandboxes() {
        let run = run(
            &sb,
            &[
                (
                    "m.js",
                    "function f(x) { return x + 1 }\nmodule.exports = { f }\n",
                ),
                ("tests/test_m.js", test),
            ],
            &["node", "tests/test_m.js"],
            Runner::Node,
        );
        assert_eq!(run.failures.len(), 1, "{run:#?}");
        let f = &run.failures[0];
        assert_eq!(f.name, "check 2");
        assert!(f.message.contains("test_m.js:3"), "{f:?}");
        assert!(
            f.message.ends_with(": check 1 is the one that failed"),
            "{f:?}"
        );
    }
}

#[test]
#[ignore = "needs a JDK (apt-get install default-jdk-headless); .ci/run installs it"]
fn java_failures_name_the_check_and_its_source_line() {
    let test = "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n        TpCheck.check(1, () -> s.f(1) == 2);\n        TpCheck.check(2, () -> s.f(2) == 4);\n        TpCheck.check(3, () -> s.f(-1) / 0 == 0);\n        TpCheck.finish();\n    }\n}\n";
    let sb = &isolating_sandboxes()[0];
    let run = run(
        sb,
        &[
            (
                "Solution.java",
                "class Solution {\n    int f(int x) { return x + 1; }\n}\n",
            ),
            ("tests/Main.java", test),
        ],
        &["java", "Solution.java", "tests/Main.java"],
        Runner::Java,
    );
    let c = run.counts.expect("counts");
    assert_eq!((c.run, c.failed, c.errored), (3, 1, 1), "{run:#?}");
    let got: Vec<(&str, &str)> = run
        .failures
        .iter()
        .map(|f| (f.name.as_str(), f.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("check 2", "Main.java:5: the assertion fails"),
            (
                "check 3",
                "Main.java:6: raises ArithmeticException: / by zero"
            ),
        ],
        "{run:#?}"
    );
}

#[test]
#[ignore = "needs Debian's rustc (apt-get install rustc); .ci/run installs it"]
fn rust_failures_name_the_check_with_its_line_and_panic() {
    let test = "fn main() {\n    tp_check(1, || { assert_eq!(1 + 1, 2); });\n    tp_check(2, || { assert_eq!(1 + 1, 3, \"one and one\"); });\n    tp_finish();\n}\n";
    let sb = &isolating_sandboxes()[0];
    let run = run(
        sb,
        &[("tests/test_m.rs", test)],
        &["rustc", "tests/test_m.rs"],
        Runner::Rust,
    );
    assert_eq!(run.failures.len(), 1, "{run:#?}");
    let f = &run.failures[0];
    assert_eq!(f.name, "check 2");
    assert!(f.message.starts_with("test_m.rs:3: "), "{f:?}");
    assert!(f.message.contains("one and one"), "{f:?}");
}

#[test]
#[ignore = "needs Go with testify (apt-get install golang-go golang-github-stretchr-testify-dev); .ci/run installs them"]
fn go_failures_name_the_check_with_its_line_and_testify_message() {
    let test = "package main\n\nimport (\n    \"github.com/stretchr/testify/assert\"\n)\n\nfunc TestF(t *tpT) {\n    assert := assert.New(t)\n    tpCheck(t, 1, func() { assert.Equal(2, F(1)) })\n    tpCheck(t, 2, func() { assert.Equal(4, F(2), \"two plus one\") })\n}\n\nfunc main() {\n    TestF(&tpT{})\n    tpFinish()\n}\n";
    let sb = &isolating_sandboxes()[0];
    let run = run(
        sb,
        &[
            (
                "m.go",
                "package main\n\nfunc F(x int) int { return x + 1 }\n",
            ),
            ("tests/check_m.go", test),
        ],
        &["go", "m.go", "tests/check_m.go"],
        Runner::Go,
    );
    assert_eq!(run.failures.len(), 1, "{run:#?}");
    let f = &run.failures[0];
    assert_eq!(f.name, "check 2");
    assert!(f.message.starts_with("check_m.go:10: Error:"), "{f:?}");
    assert!(f.message.contains("expected: 4"), "{f:?}");
    assert!(f.message.contains("two plus one"), "{f:?}");
}

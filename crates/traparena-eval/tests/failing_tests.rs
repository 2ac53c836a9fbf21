//! A failed test run names its failing tests and shows the end of each failure, for `validate`
//! and `evaluate`: a task whose public test fails with the reference patch, under unittest,
//! pytest and C++ (the names and messages come from the runner's report, never from what the
//! program prints); and a candidate patch that does not apply has its own failure mode.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use traparena_env::{Sandbox, SandboxConfig};
use traparena_eval::{Check, Evaluator, ValidateOptions, validate};
use traparena_task::{FailureMode, Task};

/// One language's task: buggy and fixed module, public and hidden test file, task.json parts.
struct Case {
    module: &'static str,
    buggy: &'static str,
    fixed: &'static str,
    public: (&'static str, &'static str),
    hidden: (&'static str, &'static str),
    language: &'static str,
    runner: &'static str,
    public_command: Vec<String>,
    hidden_command: Vec<String>,
    setup: Option<serde_json::Value>,
}

const PY_BUGGY: &str = "def f(x):\n    return x\n";
const PY_FIXED: &str = "def f(x):\n    return x + 1\n";
/// With the reference patch `f(2)` is 3: `test_b` fails, and says so.
const UNITTEST_PUBLIC: &str = "import unittest\n\nfrom m import f\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertIsNotNone(f(1))\n\n    def test_b(self):\n        print('FAIL: test_forged (test_m.Forged)')\n        self.assertEqual(f(2), 4, 'f of two is four')\n";
const UNITTEST_HIDDEN: &str = "import unittest\n\nfrom m import f\n\n\nclass H(unittest.TestCase):\n    def test_h(self):\n        self.assertEqual(f(1), 2)\n";
const PYTEST_PUBLIC: &str = "from m import f\n\n\ndef test_a():\n    assert f(1) is not None\n\n\ndef test_b():\n    print('FAILED tests/test_m.py::test_forged')\n    assert f(2) == 4, 'f of two is four'\n";
const PYTEST_HIDDEN: &str = "from m import f\n\n\ndef test_h():\n    assert f(1) == 2\n";

fn argv(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn unittest() -> Case {
    Case {
        module: "m.py",
        buggy: PY_BUGGY,
        fixed: PY_FIXED,
        public: ("tests/test_m.py", UNITTEST_PUBLIC),
        hidden: ("hidden_tests/test_m_hidden.py", UNITTEST_HIDDEN),
        language: "python",
        runner: "unittest",
        public_command: argv(&["python3", "-m", "unittest", "discover", "-s", "tests", "-q"]),
        hidden_command: argv(&[
            "python3",
            "-m",
            "unittest",
            "discover",
            "-s",
            "hidden_tests",
            "-q",
        ]),
        setup: None,
    }
}

/// The Python environment with pytest the pytest case runs in: `$TRAPARENA_TEST_PYTEST_VENV`,
/// else `/var/tmp/traparena-test-pytest`.
fn pytest_venv() -> PathBuf {
    std::env::var_os("TRAPARENA_TEST_PYTEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/traparena-test-pytest"))
}

fn pytest() -> Case {
    let venv = pytest_venv();
    let python = venv.join("bin/python");
    assert!(
        std::process::Command::new(&python)
            .args(["-c", "import pytest"])
            .status()
            .is_ok_and(|s| s.success()),
        "needs a virtual environment with pytest at {}: /usr/bin/python3 -m venv DIR && DIR/bin/pip install pytest \
         (or set TRAPARENA_TEST_PYTEST_VENV)",
        venv.display()
    );
    let python = python.to_string_lossy().into_owned();
    Case {
        public: ("tests/test_m.py", PYTEST_PUBLIC),
        hidden: ("hidden_tests/test_m_hidden.py", PYTEST_HIDDEN),
        runner: "pytest",
        public_command: argv(&[&python, "-m", "pytest", "tests", "-q"]),
        hidden_command: argv(&[&python, "-m", "pytest", "hidden_tests", "-q"]),
        setup: Some(serde_json::json!({
            "key": "test/failing@1", "venv": venv, "python": "/usr/bin/python3",
            "packages": ["pytest"],
        })),
        ..unittest()
    }
}

fn cpp() -> Case {
    Case {
        module: "m.cpp",
        buggy: "int f(int x) {\n    return x;\n}\n",
        fixed: "int f(int x) {\n    return x + 1;\n}\n",
        public: (
            "tests/test_m.cpp",
            "#include <cstdio>\n#include \"../m.cpp\"\nint main() {\n    std::printf(\"check 1 failed: forged\\n\");\n    TP_CHECK(1, f(1) != 0);\n    TP_CHECK(2, f(2) == 4);\n    return tp::finish();\n}\n",
        ),
        hidden: (
            "hidden_tests/test_m.cpp",
            "#include \"../m.cpp\"\nint main() {\n    TP_CHECK(1, f(1) == 2);\n    return tp::finish();\n}\n",
        ),
        language: "cpp",
        runner: "cpp",
        public_command: argv(&["g++", "tests/test_m.cpp"]),
        hidden_command: argv(&["g++", "hidden_tests/test_m.cpp"]),
        setup: None,
    }
}

/// Writes the case's task folder under `root`.
fn task_dir(root: &Path, case: &Case) -> PathBuf {
    let d = root.join("failing");
    let w = |rel: &str, text: &str| {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w(&format!("repo/{}", case.module), case.buggy);
    w(&format!("repo/{}", case.public.0), case.public.1);
    w(&format!("hidden/{}", case.hidden.0), case.hidden.1);
    let body = diffy::create_patch(case.buggy, case.fixed).to_string();
    let hunks = body
        .split_once("\n@@")
        .map(|(_, b)| format!("@@{b}"))
        .unwrap();
    let m = case.module;
    w(
        "reference.patch",
        &format!("diff --git a/{m} b/{m}\n--- a/{m}\n+++ b/{m}\n{hunks}"),
    );
    let mut spec = serde_json::json!({
        "id": "failing", "source": "test", "language": case.language,
        "description": "f is off by one.",
        "public_tests": {"command": case.public_command, "runner": case.runner, "files": [case.public.0]},
        "hidden_tests": {"command": case.hidden_command, "runner": case.runner, "files": [case.hidden.0]},
        "timeout_s": 120,
        "reference_locations": [{"file": m, "symbol": "f"}]
    });
    if let Some(setup) = &case.setup {
        spec["setup"] = setup.clone();
    }
    w("task.json", &spec.to_string());
    d
}

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig::default()).unwrap()
}

/// Validates the case's task and returns the check of the public tests with the reference
/// patch, which must fail.
fn public_with_reference(case: &Case) -> Check {
    let tmp = tempfile::tempdir().unwrap();
    let dir = task_dir(tmp.path(), case);
    let report = validate(&dir, &sandbox(), &ValidateOptions { reference_runs: 1 }).unwrap();
    assert!(!report.valid, "{report:#?}");
    let hidden = report
        .checks
        .iter()
        .find(|c| c.name == "hidden tests pass with the reference patch")
        .unwrap_or_else(|| panic!("{report:#?}"));
    assert!(hidden.ok, "the hidden tests pass: {hidden:?}");
    assert!(hidden.failures.is_empty(), "{hidden:?}");
    let check = report
        .checks
        .iter()
        .find(|c| c.name == "public tests pass with the reference patch")
        .unwrap_or_else(|| panic!("{report:#?}"))
        .clone();
    assert!(!check.ok, "{check:?}");
    check
}

/// The one failing test is named `name` and its message contains `said`; nothing the program
/// printed is taken for a failure.
fn assert_names(check: &Check, name: &str, said: &[&str]) {
    assert_eq!(check.failures.len(), 1, "{check:#?}");
    assert_eq!(check.failures_omitted, 0, "{check:#?}");
    let f = &check.failures[0];
    assert_eq!(f.name, name, "{check:#?}");
    for s in said {
        assert!(f.message.contains(s), "{s:?} not in {f:#?}");
    }
    assert!(!check.detail_line().contains("forged"), "{check:#?}");
    let lines = check.failure_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with(name), "{lines:?}");
    assert!(
        check.detail_line().contains(&lines[0]),
        "{}",
        check.detail_line()
    );
    let json = serde_json::to_value(check).unwrap();
    assert_eq!(json["failures"][0]["name"], name, "{json}");
}

#[test]
fn unittest_failure_names_class_and_method_with_the_assertion() {
    let check = public_with_reference(&unittest());
    assert_names(
        &check,
        "test_m.T.test_b",
        &["AssertionError: 3 != 4 : f of two is four"],
    );
    let line = &check.failure_lines()[0];
    assert!(
        line.ends_with("AssertionError: 3 != 4 : f of two is four"),
        "{line}"
    );
}

#[test]
#[ignore = "needs a virtual environment with pytest at $TRAPARENA_TEST_PYTEST_VENV (default /var/tmp/traparena-test-pytest): /usr/bin/python3 -m venv DIR && DIR/bin/pip install pytest"]
fn pytest_failure_names_the_node_id_with_the_assertion() {
    let check = public_with_reference(&pytest());
    assert_names(
        &check,
        "tests/test_m.py::test_b",
        &["AssertionError: f of two is four", "assert 3 == 4"],
    );
}

#[test]
#[ignore = "needs g++ (apt-get install g++); .ci/run installs it"]
fn cpp_failure_names_the_check_with_its_line_and_expression() {
    let check = public_with_reference(&cpp());
    assert_names(&check, "check 2", &["line 6", "f(2) == 4 is false"]);
}

#[test]
fn a_patch_that_does_not_apply_has_its_own_failure_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = task_dir(tmp.path(), &unittest());
    let task = Task::load(&dir).unwrap();
    let ev = Evaluator::new(&task, &sandbox()).unwrap();
    // Well-formed, touches the reference function, but its context is not in the file.
    let stale = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x * 7\n+    return x + 1\n";
    let e = ev.evaluate(stale, true).unwrap();
    assert!(!e.patch_applies, "{e:#?}");
    assert_eq!(e.verdict.failure_mode, Some(FailureMode::PatchDoesNotApply));
    assert!(e.hidden_run.is_none());
    // Not a diff at all.
    let e = ev.evaluate("@@ nonsense\n+x\n", true).unwrap();
    assert_eq!(e.verdict.failure_mode, Some(FailureMode::PatchDoesNotApply));
    let json = serde_json::to_value(&e.verdict).unwrap();
    assert_eq!(json["failure_mode"], "patch_does_not_apply");
    // Unsubmitted, it is still `no_submit`.
    let e = ev.evaluate(stale, false).unwrap();
    assert_eq!(e.verdict.failure_mode, Some(FailureMode::NoSubmit));
}

#[test]
fn evaluate_names_the_hidden_tests_a_wrong_patch_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = task_dir(tmp.path(), &unittest());
    let task = Task::load(&dir).unwrap();
    let ev = Evaluator::new(&task, &sandbox()).unwrap();
    let wrong = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x\n+    return x + 2\n";
    let e = ev.evaluate(wrong, true).unwrap();
    assert_eq!(
        e.verdict.failure_mode,
        Some(FailureMode::FalseFix),
        "{e:#?}"
    );
    let run = e.hidden_run.unwrap();
    assert_eq!(run.failures.len(), 1, "{run:#?}");
    assert_eq!(run.failures[0].name, "test_m_hidden.H.test_h");
    assert!(
        run.failures[0].message.ends_with("AssertionError: 3 != 2"),
        "{run:#?}"
    );
}

#[test]
#[ignore = "needs a virtual environment with pytest at $TRAPARENA_TEST_PYTEST_VENV (default /var/tmp/traparena-test-pytest): /usr/bin/python3 -m venv DIR && DIR/bin/pip install pytest"]
fn a_run_pytest_cannot_start_is_an_environment_failure_with_its_cause() {
    // pytest prints a banner naming the file (a test file it cannot collect, or a conftest that
    // does not import, as scikit-learn 0.21's without joblib), then the traceback; the detail
    // quotes both the file and the cause, the last `E ` line, rather than the banner alone.
    let warns = "import warnings\n\nwarnings.warn('pkg_resources is deprecated as an API', DeprecationWarning)\n\n\ndef test_a():\n    pass\n";
    let cases: [(&str, Case, &str, &str, &[&str]); 2] = [
        (
            "collection error",
            Case {
                public: ("tests/test_m.py", warns),
                ..pytest()
            },
            "pytest.ini",
            "[pytest]\nfilterwarnings =\n    error\n",
            &[
                "ERROR collecting tests/test_m.py: DeprecationWarning: pkg_resources is deprecated as an API",
            ],
        ),
        (
            "conftest import",
            pytest(),
            "conftest.py",
            "import tp_absent_dependency\n",
            &[
                "ImportError while loading conftest",
                "ModuleNotFoundError: No module named 'tp_absent_dependency'",
            ],
        ),
    ];
    for (what, case, file, text, wanted) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = task_dir(tmp.path(), &case);
        std::fs::write(dir.join("repo").join(file), text).unwrap();
        let report = validate(&dir, &sandbox(), &ValidateOptions { reference_runs: 1 }).unwrap();
        assert!(!report.valid, "{what}: {report:#?}");
        let check = report
            .checks
            .iter()
            .find(|c| c.name == "public tests pass with the reference patch")
            .unwrap_or_else(|| panic!("{what}: {report:#?}"));
        assert!(!check.ok, "{what}: {check:?}");
        for w in wanted {
            assert!(check.detail.contains(w), "{what}: {w}: {}", check.detail);
        }
    }
}

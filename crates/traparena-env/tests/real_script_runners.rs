//! The `django` and `sympy` runners on the real scripts: django's `tests/runtests.py` from its
//! release sdists (before and from Python 3.11, whose test names differ) and sympy's `bin/test`
//! (the runner of `sympy/testing/runtests.py`, and the old one of `sympy/utilities/runtests.py`),
//! each in the sandbox with its virtual environment. `.ci/script-runners.sh` prepares them.

// This test code reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

mod common;

use std::path::PathBuf;

use common::*;
use traparena_env::{Sandbox, TestOutcome, TestRun, Workspace};
use traparena_task::{Runner, TestSpec};

/// Where `.ci/script-runners.sh` put the trees and environments:
/// `$TRAPARENA_TEST_RUNNERS_DIR`, else `/var/tmp/traparena-test-runners`.
fn prepared(name: &str) -> PathBuf {
    let root = std::env::var_os("TRAPARENA_TEST_RUNNERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/traparena-test-runners"));
    let dir = root.join(name);
    assert!(
        dir.join("venv/.ready").exists(),
        "needs {}: run .ci/script-runners.sh",
        dir.display()
    );
    dir
}

/// Runs `args` with the venv's interpreter on a workspace of `dir/src`, judged by `select`.
fn run(dir: &std::path::Path, args: &[&str], runner: Runner, select: &[&str]) -> TestRun {
    let sandbox: Sandbox = isolating_sandboxes()
        .remove(0)
        .with_read_only_paths(&[dir.parent().unwrap().to_owned()]);
    let ws = Workspace::materialize(&dir.join("src"), &sandbox).unwrap();
    let mut command = vec![dir.join("venv/bin/python").to_string_lossy().into_owned()];
    command.extend(args.iter().map(|s| s.to_string()));
    let spec = TestSpec {
        command,
        runner,
        files: Vec::new(),
        select: select.iter().map(|s| s.to_string()).collect(),
    };
    ws.run_tests(&sandbox, &spec, 600).unwrap()
}

fn assert_all(run: &TestRun, want: TestOutcome) {
    for n in &run.selected {
        assert_eq!(n.outcome, want, "{}: {run:#?}", n.name);
    }
}

const DJANGO_ARGS: &[&str] = &[
    "tests/runtests.py",
    "--verbosity",
    "2",
    "--settings=test_sqlite",
    "--parallel",
    "1",
];

#[test]
#[ignore = "needs Django 4.2.16's sdist and a Python 3.11 venv: .ci/script-runners.sh prepares them"]
fn django_4_2_on_python_3_11_names_tests_in_both_forms_and_by_docstring() {
    let dir = prepared("django-4.2.16");
    let mut args = DJANGO_ARGS.to_vec();
    args.push("migrations.test_optimizer");
    let names = [
        // SWE-bench's records (django 4.2 ran on Python 3.9 there), and Python 3.11's form.
        "test_none_app_label (migrations.test_optimizer.OptimizerTests)",
        "test_none_app_label (migrations.test_optimizer.OptimizerTests.test_none_app_label)",
        // A test with a docstring is printed, and recorded, by its first line as well.
        "test_single (migrations.test_optimizer.OptimizerTests.test_single)",
        "The optimizer does nothing on a single operation,",
        "AlterField should optimize into AddField.",
        "RemoveField should cancel AddField",
    ];
    let run = run(&dir, &args, Runner::Django, &names);
    assert!(run.passed(), "{run:#?}");
    assert_all(&run, TestOutcome::Passed);
    assert!(
        run.output
            .contains("test_none_app_label (migrations.test_optimizer.OptimizerTests.test_none_app_label) ... ok"),
        "Python 3.11 prints the qualified form"
    );
    let missing = self::run(
        &dir,
        &args,
        Runner::Django,
        &["test_no_such_test (migrations.test_optimizer.OptimizerTests)"],
    );
    assert!(!missing.passed());
    assert_all(&missing, TestOutcome::NotRun);
}

#[test]
#[ignore = "needs Django 3.2.25's sdist and a Python 3.6 venv: .ci/script-runners.sh prepares them"]
fn django_3_2_on_python_3_6_names_tests_as_swe_bench_records_do() {
    let dir = prepared("django-3.2.25");
    let mut args = DJANGO_ARGS.to_vec();
    args.push("utils_tests.test_dateformat");
    let names = [
        "test_am_pm (utils_tests.test_dateformat.DateFormatTests)",
        "test_date (utils_tests.test_dateformat.DateFormatTests)",
        "test_date_formats (utils_tests.test_dateformat.DateFormatTests.test_date_formats)",
    ];
    let run = run(&dir, &args, Runner::Django, &names);
    assert!(run.passed(), "{run:#?}");
    assert_all(&run, TestOutcome::Passed);
    assert!(
        run.output
            .contains("test_am_pm (utils_tests.test_dateformat.DateFormatTests) ... ok"),
        "Python 3.6 prints the short form"
    );
}

const POINT_TESTS: &[&str] = &[
    "test_point",
    "test_point3D",
    "test_issue_11617",
    "test_transform",
];

fn sympy_args() -> Vec<&'static str> {
    vec![
        "bin/test",
        "-C",
        "--verbose",
        "sympy/geometry/tests/test_point.py",
    ]
}

#[test]
#[ignore = "needs sympy 1.12's tree (bin/test) and a Python 3.9 venv with mpmath: .ci/script-runners.sh prepares them"]
fn sympy_1_12_bin_test_reports_bare_names_in_one_process() {
    let dir = prepared("sympy-1.12");
    let run = run(&dir, &sympy_args(), Runner::Sympy, POINT_TESTS);
    assert!(run.passed(), "{run:#?}");
    assert_all(&run, TestOutcome::Passed);
    assert!(
        run.output
            .contains("hash randomization: on (PYTHONHASHSEED=1)"),
        "{}",
        run.output
    );
    let all = self::run(&dir, &sympy_args(), Runner::Sympy, &[]);
    assert!(all.passed(), "{all:#?}");
    assert_eq!(all.counts.unwrap().run, 13, "{all:#?}");
}

#[test]
#[ignore = "needs sympy 1.1.1's tree (bin/test) and a Python 3.9 venv with mpmath: .ci/script-runners.sh prepares them"]
fn sympy_1_1_bin_test_is_read_through_the_old_runner() {
    let dir = prepared("sympy-1.1.1");
    assert!(
        !dir.join("src/sympy/testing/runtests.py").exists(),
        "the old layout"
    );
    let run = run(&dir, &sympy_args(), Runner::Sympy, POINT_TESTS);
    assert!(run.passed(), "{run:#?}");
    assert_all(&run, TestOutcome::Passed);
    assert_eq!(run.counts.unwrap().run, POINT_TESTS.len() as u64);
}

#[test]
#[ignore = "needs sympy 1.12's and 1.1.1's trees (bin/test) and Python 3.9 venvs with mpmath: .ci/script-runners.sh prepares them"]
fn sympy_bin_test_with_names_runs_exactly_those_tests_in_both_runners() {
    for name in ["sympy-1.12", "sympy-1.1.1"] {
        let dir = prepared(name);
        let mut args = sympy_args();
        // `test_point` is a substring of `test_point3D`, which sympy's own `-k` would also run;
        // a name that is no test runs nothing and fails nothing.
        args.extend(["-k", "test_point", "test_transform", "test_no_such_test"]);
        let run = run(
            &dir,
            &args,
            Runner::Sympy,
            &["test_point", "test_transform"],
        );
        assert!(run.passed(), "{name}: {run:#?}");
        assert_all(&run, TestOutcome::Passed);
        // Two tests ran: not `test_point3D`, which a substring match would have run.
        assert_eq!(run.counts.unwrap().run, 2, "{name}: {run:#?}");
    }
}

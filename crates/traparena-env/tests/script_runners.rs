//! The `django` and `sympy` runners: a repository's own test script (`tests/runtests.py`,
//! `bin/test`) run through the harness's shim, each test's outcome read from the test
//! framework's own hooks under the names SWE-bench's records use, never from what the tests
//! print. The fixtures are small stand-ins built on the same hooks (plain unittest; a
//! miniature of sympy's runner); the real scripts are in `real_script_runners.rs`.

mod common;

use std::path::Path;

use common::*;
use traparena_env::{Sandbox, TestOutcome, TestRun, Workspace};
use traparena_task::{Runner, TestSpec};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Runs `command` with `runner` on a copy of `repo`, judged by `select`.
fn run(
    sandbox: &Sandbox,
    repo: &Path,
    command: &[&str],
    runner: Runner,
    select: &[&str],
) -> TestRun {
    let ws = Workspace::materialize(repo, sandbox).unwrap();
    let spec = TestSpec {
        command: command.iter().map(|s| s.to_string()).collect(),
        runner,
        files: Vec::new(),
        select: select.iter().map(|s| s.to_string()).collect(),
    };
    ws.run_tests(sandbox, &spec, 120).unwrap()
}

fn outcome(run: &TestRun, name: &str) -> TestOutcome {
    run.selected
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("{name} not selected: {run:#?}"))
        .outcome
}

const DJANGO: &[&str] = &[
    "python3",
    "tests/runtests.py",
    "--verbosity",
    "2",
    "--settings=test_sqlite",
    "--parallel",
    "1",
    "basic.tests",
    "missing.tests",
];

#[test]
fn django_runtests_reports_every_test_under_each_of_its_names() {
    use TestOutcome::*;
    let expected: &[(&str, TestOutcome)] = &[
        ("test_pass (basic.tests.T)", Passed),
        ("test_pass (basic.tests.T.test_pass)", Passed),
        ("test_fail (basic.tests.T)", Failed),
        ("test_fail (basic.tests.T.test_fail)", Failed),
        ("test_error (basic.tests.T)", Error),
        ("test_skip (basic.tests.T.test_skip)", Skipped),
        ("test_xfail (basic.tests.T)", Xfail),
        ("test_xpass (basic.tests.T)", Failed),
        ("test_sub (basic.tests.T.test_sub)", Failed),
        ("Checks the docstring name.", Passed),
        ("test_doc (basic.tests.T)", Passed),
        // Two tests share the docstring's first line: the worse outcome.
        ("Shared first line.", Failed),
        ("test_doc_passes (basic.tests.T)", Passed),
        // It printed `... ok` lines for itself and for a test that does not exist.
        ("test_liar (basic.tests.T)", Failed),
        ("test_y (basic.tests.T)", NotRun),
        ("setUpClass (basic.tests.Broken)", Error),
        ("test_never (basic.tests.Broken)", Error),
        ("tests (unittest.loader._FailedTest)", Error),
        ("tests (unittest.loader._FailedTest.tests)", Error),
    ];
    let names: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
    for sb in isolating_sandboxes() {
        let run = run(&sb, &fixture("fake_django"), DJANGO, Runner::Django, &names);
        for (name, want) in expected {
            assert_eq!(outcome(&run, name), *want, "{name}: {run:#?}");
        }
        assert!(!run.passed(), "{run:#?}");
        assert!(
            run.output.contains("test_y (basic.tests.T) ... ok"),
            "it did print"
        );
    }
}

#[test]
fn a_django_failure_is_named_with_its_message_under_any_of_its_names() {
    let sb = &isolating_sandboxes()[0];
    let names = [
        "Shared first line.",
        "tests (unittest.loader._FailedTest.tests)",
        "test_fail (basic.tests.T.test_fail)",
    ];
    let run = run(sb, &fixture("fake_django"), DJANGO, Runner::Django, &names);
    let message = |name: &str| {
        run.failures
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.message.clone())
            .unwrap_or_else(|| panic!("{name} not among the failures: {run:#?}"))
    };
    assert!(message(names[0]).ends_with("AssertionError: the second"));
    assert!(message(names[1]).contains("No module named 'no_such_module_anywhere'"));
    assert!(message(names[2]).ends_with("AssertionError: 2 != 3 : one and one"));
}

#[test]
fn django_runtests_passes_when_the_named_tests_pass_whatever_else_fails() {
    let sb = &isolating_sandboxes()[0];
    let names = [
        "test_pass (basic.tests.T)",
        "test_doc_passes (basic.tests.T.test_doc_passes)",
        "Checks the docstring name.",
        "test_xfail (basic.tests.T)",
    ];
    let run = run(sb, &fixture("fake_django"), DJANGO, Runner::Django, &names);
    assert_eq!(run.exit_code, Some(1), "other tests failed: {run:#?}");
    assert!(run.passed(), "{run:#?}");
    let c = run.counts.unwrap();
    assert_eq!((c.run, c.failed, c.errored), (4, 0, 0), "{run:#?}");
}

#[test]
fn django_runtests_without_names_counts_the_whole_run() {
    let sb = &isolating_sandboxes()[0];
    let run = run(sb, &fixture("fake_django"), DJANGO, Runner::Django, &[]);
    let c = run.counts.expect("counts from the report");
    // 12 tests started; failed: fail, liar, sub, xpass, doc_fails; errored: error, the
    // setUpClass, the class's test that never ran, the module that did not import.
    assert_eq!(
        (c.run, c.failed, c.errored, c.skipped),
        (12, 5, 4, 1),
        "{run:#?}"
    );
    assert!(!run.passed());
    let only_passing = [
        "python3",
        "tests/runtests.py",
        "--verbosity",
        "2",
        "basic.tests.T.test_pass",
        "basic.tests.T.test_doc",
    ];
    let ok = self::run(
        sb,
        &fixture("fake_django"),
        &only_passing,
        Runner::Django,
        &[],
    );
    assert!(ok.passed(), "{ok:#?}");
    assert_eq!(ok.counts.unwrap().run, 2);
}

#[test]
fn django_runtests_that_exits_early_gives_no_report() {
    let sb = &isolating_sandboxes()[0];
    let command = [
        "python3",
        "tests/runtests.py",
        "--verbosity",
        "2",
        "quits.tests",
    ];
    let names = ["test_quits (quits.tests.Q)"];
    let run = run(
        sb,
        &fixture("fake_django"),
        &command,
        Runner::Django,
        &names,
    );
    assert_eq!(run.exit_code, Some(0), "{run:#?}");
    assert!(run.output.contains("test_quits (quits.tests.Q) ... ok"));
    assert!(run.counts.is_none(), "{run:#?}");
    assert_eq!(
        run.report_problem.as_deref(),
        Some("the test runner did not finish")
    );
    assert!(!run.passed());
}

#[test]
fn a_command_that_is_not_the_script_is_not_read() {
    let sb = &isolating_sandboxes()[0];
    let repo = fixture("fake_django");
    let run_d = run(
        sb,
        &repo,
        &["python3", "-m", "unittest"],
        Runner::Django,
        &[],
    );
    assert!(run_d.counts.is_none());
    assert!(
        run_d
            .report_problem
            .as_deref()
            .unwrap()
            .contains("tests/runtests.py"),
        "{run_d:#?}"
    );
    let run_s = run(
        sb,
        &repo,
        &["python3", "tests/runtests.py"],
        Runner::Sympy,
        &[],
    );
    assert!(run_s.counts.is_none() && !run_s.passed());
    assert!(
        run_s
            .report_problem
            .as_deref()
            .unwrap()
            .contains("bin/test"),
        "{run_s:#?}"
    );
}

const SYMPY: &[&str] = &[
    "python3",
    "bin/test",
    "-C",
    "--verbose",
    "sympy/core/tests/test_a.py",
    "sympy/core/tests/test_b.py",
    "sympy/core/tests/test_broken.py",
];

#[test]
fn sympy_bin_test_reports_each_function_by_its_bare_name() {
    use TestOutcome::*;
    let expected: &[(&str, TestOutcome)] = &[
        ("test_pass", Passed),
        ("test_fail", Failed),
        ("test_error", Error),
        ("test_skip", Skipped),
        ("test_xfail", Xfail),
        ("test_xpass", Passed),
        ("test_only_b", Passed),
        // Passed in test_a.py, failed in test_b.py: the worse.
        ("test_twice", Failed),
        // It printed `test_liar ok` and `test_other ok`.
        ("test_liar", Failed),
        ("test_other", NotRun),
        ("sympy/core/tests/test_broken.py", Error),
    ];
    let names: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
    for sb in isolating_sandboxes() {
        let run = run(&sb, &fixture("fake_sympy"), SYMPY, Runner::Sympy, &names);
        for (name, want) in expected {
            assert_eq!(outcome(&run, name), *want, "{name}: {run:#?}");
        }
        assert!(run.output.contains("test_other ok"), "it did print");
        // The harness's hash seed keeps sympy's run in this process (the fixture's runner, like
        // sympy's, would otherwise re-run itself in a child the shim does not read).
        assert!(run.output.contains("PYTHONHASHSEED=1\n"), "{}", run.output);
        let twice = run.failures.iter().find(|f| f.name == "test_twice");
        assert!(
            twice.is_some_and(|f| f.message.ends_with("AssertionError: the second test_twice")),
            "{run:#?}"
        );
    }
}

#[test]
fn sympy_bin_test_passes_on_passing_names_and_counts_without_names() {
    let sb = &isolating_sandboxes()[0];
    let repo = fixture("fake_sympy");
    let run_named = run(
        sb,
        &repo,
        SYMPY,
        Runner::Sympy,
        &["test_pass", "test_only_b", "test_xfail"],
    );
    assert_eq!(run_named.exit_code, Some(1));
    assert!(run_named.passed(), "{run_named:#?}");
    let all = run(sb, &repo, SYMPY, Runner::Sympy, &[]);
    let c = all.counts.expect("counts");
    // 10 test functions entered; failed: fail, liar, test_twice of test_b; errored: error and
    // the file that did not import.
    assert_eq!(
        (c.run, c.failed, c.errored, c.skipped),
        (10, 3, 2, 1),
        "{all:#?}"
    );
    assert!(!all.passed());
    // `./bin/test`, as SWE-bench writes it, is the script too.
    let dotted = run(
        sb,
        &repo,
        &["python3", "./bin/test", "sympy/core/tests/test_b.py"],
        Runner::Sympy,
        &["test_only_b"],
    );
    assert!(dotted.passed(), "{dotted:#?}");
}

#[test]
fn sympy_bin_test_that_exits_early_gives_no_report() {
    let sb = &isolating_sandboxes()[0];
    let command = [
        "python3",
        "bin/test",
        "--verbose",
        "sympy/core/tests/test_quits.py",
    ];
    let run = run(
        sb,
        &fixture("fake_sympy"),
        &command,
        Runner::Sympy,
        &["test_quits"],
    );
    assert_eq!(run.exit_code, Some(0), "{run:#?}");
    assert!(run.output.contains("test_quits ok"));
    assert!(run.counts.is_none(), "{run:#?}");
    assert!(!run.passed());
}

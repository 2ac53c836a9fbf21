//! The harness's pytest plugins on real pytest runs:
//! - `traparena_pytest_report` runs the selected tests in the order their file defines them, as
//!   a run of the whole file (SWE-bench's) does, not in the order the command names them: an
//!   older suite's test that patches a module and never undoes it then reaches the tests after
//!   it exactly as in the suite's own run;
//! - it runs only the tests a spec names when the command names whole files (the importer's
//!   trial runs), unless the names match none of the collected tests;
//! - `traparena_httpbin` serves httpbin on loopback inside the sandbox for suites that read
//!   `HTTPBIN_URL`.

// This test code reads where its prepared environments lie.
#![allow(clippy::disallowed_methods)]

mod common;

use std::path::PathBuf;

use common::*;
use traparena_env::{Sandbox, SandboxConfig, TestOutcome, Workspace};
use traparena_task::{Runner, TestSpec};

/// A prepared Python environment: `$var`, else `default`.
/// The prepared environment `$var` names (else `default`) and its interpreter, which must exist.
fn venv(var: &str, default: &str) -> (PathBuf, PathBuf) {
    let venv = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default));
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "no environment at {} ({var})",
        venv.display()
    );
    (venv, python)
}

/// `spec`'s run in a workspace of `repo` under every isolating backend here (and none), with
/// the environment `venv` shown read-only: the backend and the run.
fn runs(
    repo: &std::path::Path,
    venv: &std::path::Path,
    spec: &TestSpec,
) -> Vec<(Sandbox, traparena_env::TestRun)> {
    let config = SandboxConfig {
        read_only_paths: vec![venv.to_owned()],
        ..SandboxConfig::default()
    };
    every_sandbox(config)
        .into_iter()
        .map(|sandbox| {
            let ws = Workspace::materialize(repo, &sandbox).unwrap();
            let run = ws.run_tests(&sandbox, spec, 120).unwrap();
            (sandbox, run)
        })
        .collect()
}

#[test]
#[ignore = "needs a virtual environment with pytest at $TRAPARENA_TEST_PYTEST_VENV (default /var/tmp/traparena-test-pytest): /usr/bin/python3 -m venv DIR && DIR/bin/pip install pytest"]
fn selected_tests_run_in_the_order_of_their_file() {
    let (venv, python) = venv(
        "TRAPARENA_TEST_PYTEST_VENV",
        "/var/tmp/traparena-test-pytest",
    );
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join("tests")).unwrap();
    // test_second passes only after test_first, as in a run of the whole file.
    std::fs::write(
        repo.path().join("tests/test_leak.py"),
        "import pytest\n\nstate = []\n\n\ndef test_first():\n    state.append(1)\n\n\n\
         @pytest.mark.parametrize('n', [1, 2])\ndef test_second(n):\n    assert state == [1]\n\n\n\
         class TestLater:\n    def test_third(self):\n        state.append(3)\n        assert state == [1, 3]\n",
    )
    .unwrap();
    let names = [
        "tests/test_leak.py::TestLater::test_third",
        "tests/test_leak.py::test_second[2]",
        "tests/test_leak.py::test_second[1]",
        "tests/test_leak.py::test_first",
    ];
    let mut command: Vec<String> = [python.to_str().unwrap(), "-m", "pytest"]
        .map(String::from)
        .to_vec();
    command.extend(names.iter().map(|n| n.to_string()));
    let spec = TestSpec {
        command,
        runner: Runner::Pytest,
        files: Vec::new(),
        select: names.iter().map(|n| n.to_string()).collect(),
    };
    for (sandbox, run) in runs(repo.path(), &venv, &spec) {
        for n in &run.selected {
            assert_eq!(
                n.outcome,
                TestOutcome::Passed,
                "{} under {:?}: {}",
                n.name,
                sandbox.backend(),
                run.output
            );
        }
        assert_eq!(run.selected.len(), names.len(), "{run:#?}");
    }
}

/// (names a spec selects, what pytest's summary says) for a run of the whole file
/// `test_sel.py` (five tests, of which `test_fails` fails).
const SELECTIONS: &[(&[&str], &str)] = &[
    // A function, every parameter of one named with a cut-off id, and a method.
    (
        &[
            "test_sel.py::test_a",
            "test_sel.py::test_b[1",
            "test_sel.py::TestC::test_d",
        ],
        " 4 passed, 1 deselected in ",
    ),
    // A class: its methods.
    (&["test_sel.py::TestC"], " 1 passed, 4 deselected in "),
    // A name that is no test beside one that is: the test alone.
    (
        &["test_sel.py::test_a", "test_sel.py::test_missing"],
        " 1 passed, 4 deselected in ",
    ),
    // Names that match none of the collected tests (another root): the whole file runs.
    (&["sub/test_sel.py::test_a"], " 1 failed, 4 passed in "),
];

#[test]
#[ignore = "needs a virtual environment with pytest at $TRAPARENA_TEST_PYTEST_VENV (default /var/tmp/traparena-test-pytest): /usr/bin/python3 -m venv DIR && DIR/bin/pip install pytest"]
fn a_run_of_whole_files_runs_only_the_tests_the_spec_names() {
    let (venv, python) = venv(
        "TRAPARENA_TEST_PYTEST_VENV",
        "/var/tmp/traparena-test-pytest",
    );
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("test_sel.py"),
        "import pytest\n\n\ndef test_a():\n    pass\n\n\n\
         @pytest.mark.parametrize('n', [1, 2])\ndef test_b(n):\n    pass\n\n\n\
         class TestC:\n    def test_d(self):\n        pass\n\n\n\
         def test_fails():\n    assert False\n",
    )
    .unwrap();
    let command: Vec<String> = [python.to_str().unwrap(), "-m", "pytest", "test_sel.py"]
        .map(String::from)
        .to_vec();
    for (names, summary) in SELECTIONS {
        let spec = TestSpec {
            command: command.clone(),
            runner: Runner::Pytest,
            files: Vec::new(),
            select: names.iter().map(|n| n.to_string()).collect(),
        };
        for (sandbox, run) in runs(repo.path(), &venv, &spec) {
            assert!(
                run.output.contains(summary),
                "{names:?} under {:?}: wanted {summary:?} in {}",
                sandbox.backend(),
                run.output
            );
        }
    }
}

#[test]
#[ignore = "needs a virtual environment with pytest, httpbin and pytest-httpbin at $TRAPARENA_TEST_HTTPBIN_VENV (default /var/tmp/traparena-test-httpbin): /usr/bin/python3 -m venv DIR && DIR/bin/pip install pytest httpbin==0.10.2 pytest-httpbin==2.0.0 Flask==3.0.3 Werkzeug==3.0.3"]
fn a_local_httpbin_serves_suites_that_read_httpbin_url_offline() {
    let (venv, python) = venv(
        "TRAPARENA_TEST_HTTPBIN_VENV",
        "/var/tmp/traparena-test-httpbin",
    );
    let repo = tempfile::tempdir().unwrap();
    // As psf/requests' older suites: the URL is read when the module is imported.
    std::fs::write(
        repo.path().join("test_web.py"),
        "import json, os, urllib.request\n\nHTTPBIN = os.environ.get('HTTPBIN_URL', 'http://httpbin.org/')\n\n\n\
         def test_local():\n    assert HTTPBIN.startswith('http://127.0.0.1:'), HTTPBIN\n\n\n\
         def test_get():\n    with urllib.request.urlopen(HTTPBIN + 'get?a=1', timeout=10) as r:\n        \
         assert json.load(r)['args'] == {'a': '1'}\n",
    )
    .unwrap();
    let names = ["test_web.py::test_local", "test_web.py::test_get"];
    let spec = TestSpec {
        command: [
            python.to_str().unwrap(),
            "-m",
            "pytest",
            "-p",
            "traparena_httpbin",
        ]
        .into_iter()
        .chain(names)
        .map(String::from)
        .collect(),
        runner: Runner::Pytest,
        files: Vec::new(),
        select: names.iter().map(|n| n.to_string()).collect(),
    };
    let isolated = runs(repo.path(), &venv, &spec)
        .into_iter()
        .filter(|(s, _)| s.backend() != traparena_env::Backend::None);
    for (sandbox, run) in isolated {
        assert_eq!(run.selected.len(), 2, "{run:#?}");
        if sandbox.backend() == traparena_env::Backend::Builtin {
            // Its Landlock rules forbid listening on a port: no local httpbin, and the suite
            // runs as it would offline, its network tests failing.
            assert!(run.counts.is_some(), "{run:#?}");
            assert_eq!(run.selected[0].outcome, TestOutcome::Failed, "{run:#?}");
            continue;
        }
        for n in &run.selected {
            assert_eq!(
                n.outcome,
                TestOutcome::Passed,
                "{} under {:?}: {}",
                n.name,
                sandbox.backend(),
                run.output
            );
        }
    }
}

//! `traparena validate`: checks the invariants of a task by really running its tests.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use traparena_env::{Backend, EnvError, Sandbox, TestFailure, TestRun, Workspace};
use traparena_task::{Language, Task};

use crate::copy::evaluation_copy;
use crate::error::EvalError;

/// Settings for [`validate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidateOptions {
    /// How many times the hidden tests must pass with the reference patch (catches flaky tasks).
    pub reference_runs: u32,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions { reference_runs: 3 }
    }
}

/// One invariant and whether it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Short name of the invariant.
    pub name: String,
    /// True when it holds.
    pub ok: bool,
    /// What was seen.
    pub detail: String,
    /// For a check that failed on a test run, the tests that failed, as the runner's report
    /// names them, each with the end of its failure (at most
    /// [`MAX_FAILURES`](traparena_env::MAX_FAILURES)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<TestFailure>,
    /// How many more tests failed than `failures` lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failures_omitted: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Check {
    /// The failing tests, one line each (name, then the end of the failure), then `and N more
    /// failing tests` when the list was cut; empty when the check names none.
    pub fn failure_lines(&self) -> Vec<String> {
        traparena_env::failure_lines(&self.failures, self.failures_omitted)
    }

    /// `detail`, then the failing tests on the same line (`; failing: A: ...; B: ...`).
    pub fn detail_line(&self) -> String {
        let lines = self.failure_lines();
        if lines.is_empty() {
            self.detail.clone()
        } else {
            format!("{} | failing: {}", self.detail, lines.join("; "))
        }
    }

    /// This check, with the failing tests of `run` when it failed.
    fn with_run(mut self, run: &TestRun) -> Check {
        if !self.ok {
            self.failures = run.failures.clone();
            self.failures_omitted = run.failures_omitted;
        }
        self
    }
}

/// The result of validating one task folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationReport {
    /// The task folder.
    pub dir: PathBuf,
    /// The task id, when `task.json` could be read.
    pub id: Option<String>,
    /// True when every check holds.
    pub valid: bool,
    /// The checks, in the order they ran. A failed format check stops the rest.
    pub checks: Vec<Check>,
    /// Why the task could not be checked on this machine, when it could not: a toolchain its
    /// tests need is missing from the sandbox. No test ran then, so no check of a test run is
    /// listed and `valid` is false; the task is neither valid nor invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_checkable: Option<NotCheckable>,
    /// The sandbox backend the tests ran under.
    pub backend: Backend,
    /// Wall-clock time spent, in milliseconds.
    pub duration_ms: u64,
}

/// A task that cannot be checked on this machine: its tests could not run because a program of
/// its toolchain is missing from the sandbox ([`EnvError::MissingToolchain`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotCheckable {
    /// The missing program (`rustc`, `go`, `node`).
    pub program: String,
    /// The language of the toolchain.
    pub language: Language,
    /// The packages that install it ([`Language::install`]).
    pub install: String,
    /// The sandbox backend it is missing from.
    pub backend: Backend,
    /// What the sandbox reported.
    pub reason: String,
}

impl NotCheckable {
    /// The task is not checkable when `e` says a toolchain is missing from the sandbox; `None`
    /// for any other error.
    pub fn from_error(e: &EvalError) -> Option<NotCheckable> {
        match e {
            EvalError::Env(env) => NotCheckable::from_env(env),
            _ => None,
        }
    }

    /// [`from_error`](Self::from_error) for an error of the environment.
    pub fn from_env(e: &EnvError) -> Option<NotCheckable> {
        match e {
            EnvError::MissingToolchain {
                program,
                language,
                backend,
                ..
            } => Some(NotCheckable {
                program: program.clone(),
                language: *language,
                install: language.install().to_owned(),
                backend: *backend,
                reason: e.to_string(),
            }),
            _ => None,
        }
    }
}

/// What validating a task concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Validity {
    /// Every check holds.
    Valid,
    /// A check failed.
    Invalid,
    /// Its tests could not run here (a missing toolchain): neither valid nor invalid.
    NotCheckable,
}

impl ValidationReport {
    /// Valid, invalid, or not checkable on this machine. A failed check that did not need the
    /// tests to run (the format, a leak of hidden files) makes a task invalid even when its
    /// tests could not run.
    pub fn validity(&self) -> Validity {
        if self.valid {
            Validity::Valid
        } else if self.not_checkable.is_some() && self.problems().next().is_none() {
            Validity::NotCheckable
        } else {
            Validity::Invalid
        }
    }

    /// The failed checks.
    pub fn problems(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.ok)
    }
}

/// Checks every invariant of a task (docs/tasks.md, Validation):
///
/// - the folder has the task format (`task.json`, `repo/`, `hidden/`, `reference.patch`, ...);
/// - nothing of `hidden/` or the reference patch is reachable from `repo/`;
/// - the reference patch applies exactly and changes at least one non-test file;
/// - the public tests pass on the buggy code; the hidden tests fail on it;
/// - with the reference patch, the hidden tests pass `reference_runs` times in a row, and the
///   public tests pass.
///
/// A check of a test run passes only on evidence that the tests ran. A task whose toolchain is
/// missing from the sandbox is a report too, not checkable here ([`ValidationReport::validity`],
/// `not_checkable`), with only the checks that need no run.
///
/// An invalid task is a report, not an error; `Err` means the harness itself failed.
pub fn validate(
    dir: &Path,
    sandbox: &Sandbox,
    opts: &ValidateOptions,
) -> Result<ValidationReport, EvalError> {
    let started = Instant::now();
    let mut report = ValidationReport {
        dir: dir.to_owned(),
        id: None,
        valid: false,
        checks: Vec::new(),
        not_checkable: None,
        backend: sandbox.backend(),
        duration_ms: 0,
    };
    let task = match Task::load(dir) {
        Ok(t) => t,
        Err(e) => {
            report.checks.push(check("format", false, e.to_string()));
            report.duration_ms = started.elapsed().as_millis() as u64;
            return Ok(report);
        }
    };
    report.id = Some(task.spec.id.clone());
    let sandbox = &sandbox.for_task(&task);
    report
        .checks
        .push(check("format", true, "task files parse".into()));
    report.checks.push(hidden_unreachable(&task)?);
    report.checks.push(reference_location(&task));
    // A toolchain missing from the sandbox stops the runs: nothing was tested, so no check of a
    // run is made, and the task is not checkable here (never failing tests).
    match run_checks(&task, sandbox, opts, &mut report.checks) {
        Ok(()) => {}
        Err(e) => match NotCheckable::from_error(&e) {
            Some(n) => report.not_checkable = Some(n),
            None => return Err(e),
        },
    }
    report.valid = report.not_checkable.is_none() && report.checks.iter().all(|c| c.ok);
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// The checks that run the task's tests, pushed onto `checks` as they are made.
fn run_checks(
    task: &Task,
    sandbox: &Sandbox,
    opts: &ValidateOptions,
    checks: &mut Vec<Check>,
) -> Result<(), EvalError> {
    let timeout = task.spec.timeout_s;
    let buggy = Workspace::materialize(&task.repo_dir(), sandbox)?;
    let public = buggy.run_tests(sandbox, &task.spec.public_tests, timeout)?;
    checks.push(
        check(
            "public tests pass on the buggy code",
            public.passed(),
            run_detail("public tests on the buggy code", &public),
        )
        .with_run(&public),
    );
    drop(buggy);

    let (hidden_buggy, _) = evaluation_copy(task, sandbox, "")?;
    let hidden = hidden_buggy.run_tests(sandbox, &task.spec.hidden_tests, timeout)?;
    // Failing hidden tests count only when they ran: a run that reported its tests, or one
    // whose output shows no sign of an environment failure (a missing module, a program that
    // could not start).
    let ran = hidden.counts.is_some() || hidden.environment_failure().is_none();
    checks.push(check(
        "hidden tests fail on the buggy code",
        ran && !hidden.passed(),
        run_detail("hidden tests on the buggy code", &hidden),
    ));
    drop(hidden_buggy);

    let (fixed, applied) = evaluation_copy(task, sandbox, &task.reference_patch_text)?;
    checks.push(check(
        "reference patch applies",
        applied.applied,
        if applied.applied {
            "applies exactly".into()
        } else {
            format!("reference.patch does not apply: {}", applied.message)
        },
    ));
    if applied.applied {
        let (hidden_check, last) =
            hidden_pass_repeatedly(&fixed, task, sandbox, opts.reference_runs)?;
        checks.push(hidden_check);
        let public_fixed = fixed.run_tests(sandbox, &task.spec.public_tests, timeout)?;
        checks.push(
            check(
                "public tests pass with the reference patch",
                public_fixed.passed(),
                run_detail("public tests with the reference patch", &public_fixed),
            )
            .with_run(&public_fixed),
        );
        // The evaluator judges the reference on this copy, from the last of those runs: the
        // same tests on the same tree, not run once more.
        checks.push(reference_accepted(task, sandbox, &fixed, last)?);
    }
    Ok(())
}

/// The hidden tests pass with the reference patch `runs` times in a row (the first failing run
/// is kept in the check), and the last run made.
fn hidden_pass_repeatedly(
    fixed: &Workspace,
    task: &Task,
    sandbox: &Sandbox,
    runs: u32,
) -> Result<(Check, TestRun), EvalError> {
    let name = "hidden tests pass with the reference patch";
    let runs = runs.max(1);
    let mut i = 1;
    loop {
        let run = fixed.run_tests(sandbox, &task.spec.hidden_tests, task.spec.timeout_s)?;
        if !run.passed() {
            let detail = format!(
                "run {i} of {runs}: {}",
                run_detail("hidden tests with the reference patch", &run)
            );
            return Ok((check(name, false, detail).with_run(&run), run));
        }
        if i == runs {
            return Ok((
                check(name, true, format!("passed {runs} of {runs} runs")),
                run,
            ));
        }
        i += 1;
    }
}

/// The evaluator accepts the reference patch: it touches the reference locations (declared ones
/// must be functions of the original code) and raises no static flag. It is judged on `fixed`,
/// the evaluation copy with the reference, whose hidden tests gave `hidden`.
fn reference_accepted(
    task: &Task,
    sandbox: &Sandbox,
    fixed: &Workspace,
    hidden: TestRun,
) -> Result<Check, EvalError> {
    let name = "reference patch is an accepted repair";
    let ev = match crate::Evaluator::new(task, sandbox) {
        Ok(ev) => ev,
        Err(EvalError::Reference(m)) => return Ok(check(name, false, m)),
        Err(e) => return Err(e),
    };
    if let Some(missing) = ev
        .reference_locations()
        .iter()
        .find(|l| l.symbol.is_some() && l.lines.is_none())
    {
        return Ok(check(
            name,
            false,
            format!(
                "reference location {missing} is not a function or method of repo/{}",
                missing.file
            ),
        ));
    }
    let e = ev.evaluate_ran(fixed, hidden)?;
    if e.verdict.accepted {
        let locs: Vec<String> = e
            .reference_locations
            .iter()
            .map(|l| l.to_string())
            .collect();
        return Ok(check(
            name,
            true,
            format!("reference locations: {}", locs.join(", ")),
        ));
    }
    let why = match e.verdict.failure_mode {
        Some(traparena_task::FailureMode::Superficial) => {
            format!("it raises static flags {:?}", e.verdict.flags)
        }
        Some(traparena_task::FailureMode::WrongLocation) => {
            let cand: Vec<String> = e
                .candidate_locations
                .iter()
                .map(|l| l.to_string())
                .collect();
            format!(
                "it changes {} but touches no reference location",
                cand.join(", ")
            )
        }
        Some(traparena_task::FailureMode::FalseFix) => match &e.hidden_run {
            Some(run) => match run.environment_failure() {
                Some(cause) => format!(
                    "environment failure, not a wrong fix: the hidden tests did not run ({cause})"
                ),
                None => format!(
                    "the hidden tests failed with the reference patch in the evaluator: {}",
                    run_detail("hidden tests", run)
                ),
            },
            None => "failure mode false_fix".into(),
        },
        Some(m) => format!("failure mode {m}"),
        None => String::new(),
    };
    let failed = check(name, false, why);
    Ok(match (e.verdict.failure_mode, &e.hidden_run) {
        (Some(traparena_task::FailureMode::FalseFix), Some(run)) => failed.with_run(run),
        _ => failed,
    })
}

fn check(name: &str, ok: bool, detail: String) -> Check {
    Check {
        name: name.to_owned(),
        ok,
        detail,
        failures: Vec::new(),
        failures_omitted: 0,
    }
}

fn run_detail(what: &str, run: &TestRun) -> String {
    if let Some(cause) = run.environment_failure() {
        return format!(
            "{what}: environment failure, the tests did not run: {cause} ({})",
            run.summary()
        );
    }
    let mut s = format!("{what}: {}", run.summary());
    // The failing tests the report names go with the check (`Check::failures`); the output's
    // end only when it names none.
    if !run.passed() && run.failures.is_empty() {
        let tail: Vec<&str> = run.output.lines().rev().take(4).collect();
        if !tail.is_empty() {
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            s.push_str(&format!(" | {}", tail.join(" / ")));
        }
    }
    s
}

/// True for a file whose lines are all blank, comments, imports or a docstring-free
/// `__init__`-style header: nothing a test could be learnt from.
fn trivial_text(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty()
            || l.starts_with('#')
            || l.starts_with("import ")
            || (l.starts_with("from ") && l.contains(" import "))
    })
}

/// Nothing under `hidden/` nor the reference patch may be reachable from `repo/`: no identical
/// copy anywhere in `repo/`. A hidden file's path may hold another content in `repo/` — the base
/// version of a test file the hidden tests change, which the repository has before them (as
/// SWE-bench keeps it) and which the evaluation copy replaces with the hidden one.
fn hidden_unreachable(task: &Task) -> Result<Check, EvalError> {
    let name = "hidden tests and reference patch not in repo/";
    let repo = task.repo_dir();
    let mut secrets: Vec<(String, Vec<u8>)> = Vec::new();
    for entry in walkdir::WalkDir::new(task.hidden_dir()).min_depth(1) {
        let entry = entry.map_err(|e| EvalError::Io {
            path: task.hidden_dir(),
            source: e.into(),
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(task.hidden_dir())
            .expect("under hidden/");
        let rel_s = rel.to_string_lossy().into_owned();
        let bytes = std::fs::read(entry.path()).map_err(|e| EvalError::Io {
            path: entry.path().to_owned(),
            source: e,
        })?;
        // A file that holds nothing of the hidden tests (empty, or only imports, comments and
        // blank lines, as `import re\n`) leaks nothing when the same text is in repo/.
        if !trivial_text(&bytes) {
            secrets.push((format!("hidden file {rel_s}"), bytes));
        }
    }
    secrets.push((
        traparena_task::TaskLayout::REFERENCE.into(),
        task.reference_patch_text.clone().into_bytes(),
    ));
    for entry in walkdir::WalkDir::new(&repo).min_depth(1) {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_file() {
            continue;
        }
        let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
        for (what, bytes) in &secrets {
            if bytes.is_empty() || len != bytes.len() as u64 {
                continue;
            }
            if std::fs::read(entry.path()).is_ok_and(|b| &b == bytes) {
                let rel = entry.path().strip_prefix(&repo).expect("under repo/");
                return Ok(check(
                    name,
                    false,
                    format!("{what} is present in repo/ as {}", rel.display()),
                ));
            }
        }
    }
    Ok(check(name, true, "not reachable".into()))
}

/// The reference patch must change at least one non-test file with at least one line, and
/// every declared reference location must name a file the patch changes.
fn reference_location(task: &Task) -> Check {
    let name = "reference location is non-empty";
    let changed: Vec<String> = task
        .reference_patch
        .files
        .iter()
        .filter(|f| !task.is_test_path(f.path().as_str()))
        .filter(|f| {
            f.binary
                || f.hunks
                    .iter()
                    .any(|h| !h.added.is_empty() || !h.removed.is_empty())
        })
        .map(|f| f.path().to_string())
        .collect();
    if changed.is_empty() {
        return check(
            name,
            false,
            "the reference patch changes no non-test file".into(),
        );
    }
    for loc in task.spec.reference_locations.iter().flatten() {
        if !changed.iter().any(|c| c == loc.file.as_str()) {
            return check(
                name,
                false,
                format!(
                    "reference location {loc} is in a file the reference patch does not change"
                ),
            );
        }
    }
    check(name, true, format!("changes {}", changed.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::trivial_text;

    #[test]
    fn files_of_only_imports_are_not_secrets() {
        // pylint-6528: two files that are both `import re` are not a leak.
        assert!(trivial_text(b"import re\n"));
        assert!(trivial_text(b"# comment\n\nfrom a import b\n"));
        assert!(trivial_text(b""));
        assert!(!trivial_text(
            b"import re\n\ndef test_x():\n    assert re\n"
        ));
        assert!(!trivial_text(b"X = 1\n"));
        assert!(!trivial_text(&[0xff, 0xfe, 0x00]));
    }
}

//! Running a task's test command and reading the run through a channel the tested code does
//! not write to by accident: a report pipe filled by the harness's runner shim after the run.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use traparena_task::{Runner, TestCounts, TestSpec, test_name_matches};

use crate::base::{Backend, Mounts, ProcessOutcome, REPORT_FD, RunSpec};
use crate::error::EnvError;
use crate::failures::{self, TestFailure};
use crate::missing::{missing_program, not_started};
use crate::outcome::{NamedOutcome, TestOutcome};
use crate::sandbox::Sandbox;
use crate::workspace::Workspace;

/// One test run. Timeouts, crashes and failures are all data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRun {
    /// How the run was read.
    pub runner: Runner,
    /// Counts from the runner's report; `None` when no valid report arrived (an early exit, a
    /// crash, a timeout, a command the harness could not instrument) or for `exit_code` runners.
    pub counts: Option<TestCounts>,
    /// Why there are no counts, when there are none.
    pub report_problem: Option<String>,
    /// Exit status, when the process exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// True when the wall-clock limit ended the run.
    pub timed_out: bool,
    /// stdout then stderr, with the workspace path shown as `/workspace`.
    pub output: String,
    /// True when output was cut at the capture limit.
    pub output_truncated: bool,
    /// Wall-clock duration in milliseconds.
    pub duration_ms: u64,
    /// The sandbox backend used.
    pub backend: Backend,
    /// Per name of [`TestSpec::select`], what the runner reported for it (empty when the
    /// suite names no tests). `counts` then count these names only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selected: Vec<NamedOutcome>,
    /// The failed and errored tests, named by the runner's report (never by what the program
    /// prints), each with the end of its failure; at most [`failures::MAX_FAILURES`] (for a
    /// suite that names its tests, its failing names). Empty for a run that passed or has no
    /// report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<TestFailure>,
    /// How many more failed or errored tests there were than `failures` lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failures_omitted: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Per name, the outcome among `outcomes` (node id → outcome) of the node ids it names: the
/// worst of them (a failure over a pass), [`TestOutcome::NotRun`] when it names none.
pub fn match_names(names: &[String], outcomes: &BTreeMap<String, String>) -> Vec<NamedOutcome> {
    names
        .iter()
        .map(|name| {
            // The node ids a name can match all begin with it (the exact one first).
            let outcome = outcomes
                .range(name.clone()..)
                .take_while(|(node, _)| node.starts_with(name.as_str()))
                .filter(|(node, _)| test_name_matches(name, node))
                .map(|(_, o)| TestOutcome::parse(o))
                .max_by_key(|o| !o.is_pass())
                .unwrap_or(TestOutcome::NotRun);
            NamedOutcome {
                name: name.clone(),
                outcome,
            }
        })
        .collect()
}

impl TestRun {
    /// True when the suite passed: exit status 0, no timeout, and — except for `exit_code`
    /// runners — a report saying at least one test ran and none failed or errored.
    pub fn passed(&self) -> bool {
        if !self.selected.is_empty() {
            // Named tests decide; other tests of the files run may fail (exit status 1).
            return !self.timed_out
                && self.exit_code.is_some()
                && self.counts.is_some()
                && self.selected.iter().all(|n| n.outcome.is_pass());
        }
        if self.timed_out || self.exit_code != Some(0) {
            return false;
        }
        match self.runner {
            Runner::ExitCode => true,
            _ => self
                .counts
                .is_some_and(|c| c.run >= 1 && c.failed == 0 && c.errored == 0),
        }
    }

    /// When the run failed for a reason of the environment rather than of the code under test
    /// — the interpreter did not start, a module is missing, test files could not be collected,
    /// a shared library is missing — the first line that says so. `None` for a run whose tests
    /// ran (passing or failing) and for a timeout.
    pub fn environment_failure(&self) -> Option<String> {
        if self.timed_out || self.passed() {
            return None;
        }
        let tests_ran = match (&self.counts, self.selected.is_empty()) {
            (Some(_), false) => self
                .selected
                .iter()
                .any(|n| !matches!(n.outcome, TestOutcome::NotRun | TestOutcome::Error)),
            (Some(c), true) => c.run > 0,
            (None, _) => false,
        };
        if tests_ran {
            return None;
        }
        const SIGNS: &[&str] = &[
            "ModuleNotFoundError",
            "ImportError",
            "error while loading shared libraries",
            "cannot open shared object file",
            "No module named",
            "ERROR collecting",
            "Permission denied",
            "failed to execute",
            "No such file or directory",
            "InvalidVersion",
            "command not found",
        ];
        let lines: Vec<&str> = self.output.lines().collect();
        let at = lines
            .iter()
            .position(|l| SIGNS.iter().any(|s| l.contains(s)))?;
        let mut why = lines[at].trim().to_owned();
        if why.contains("ERROR collecting") || why.contains("while loading conftest") {
            // pytest's banner names the file (the test file, or the conftest that does not
            // import); the cause is the last `E ` line of its block.
            let block = lines[at + 1..]
                .iter()
                .take_while(|l| !l.starts_with("___") && !l.starts_with("==="));
            if let Some(cause) = block.filter(|l| l.starts_with("E ")).last() {
                why = format!(
                    "{}: {}",
                    why.trim_matches(['_', ' ', '.']),
                    cause[1..].trim()
                );
            }
        }
        Some(why.chars().take(300).collect())
    }

    /// One line describing the result, for observations and messages.
    pub fn summary(&self) -> String {
        let status = if self.timed_out {
            "timed out".to_owned()
        } else if let Some(code) = self.exit_code {
            format!("exit status {code}")
        } else {
            format!("killed by signal {}", self.signal.unwrap_or(0))
        };
        let counts = match (&self.counts, &self.report_problem) {
            (Some(c), _) => format!(
                "{} run, {} failed, {} errored, {} skipped",
                c.run, c.failed, c.errored, c.skipped
            ),
            (None, Some(p)) => format!("no test counts ({p})"),
            (None, None) => "no test counts".to_owned(),
        };
        let verdict = if self.passed() { "PASSED" } else { "FAILED" };
        format!("{verdict}: {counts}; {status}")
    }

    /// The failing tests, one line each (name, then the end of the failure), then `and N more
    /// failing tests` when the list was cut. Empty when the report named none.
    pub fn failure_lines(&self) -> Vec<String> {
        failures::failure_lines(&self.failures, self.failures_omitted)
    }
}

/// What a command must look like for `runner`'s shim to read it, as the reason a run has no
/// counts.
fn not_instrumented(runner: Runner) -> &'static str {
    match runner {
        Runner::Django => {
            "the command is not `PYTHON tests/runtests.py ARGS...` (django's test script)"
        }
        Runner::Sympy => "the command is not `PYTHON bin/test ARGS...` (sympy's test script)",
        _ => {
            "the command is not `python -m unittest`, pytest, `node FILE`, `PYTHON tests/runtests.py`, `PYTHON bin/test`, or a compiled-language runner's `TOOL SOURCE...`"
        }
    }
}

#[derive(Deserialize)]
struct Report {
    tests_run: u64,
    failed: u64,
    errored: u64,
    skipped: u64,
    #[serde(default)]
    outcomes: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "failures::lenient")]
    failures: Vec<TestFailure>,
    /// The other names of a listed failure's test (django's tests go by several), so that a
    /// selected name finds its failure's message under any of them.
    #[serde(default)]
    aliases: BTreeMap<String, Vec<String>>,
}

/// The hash seed sympy's test runs get (`PYTHONHASHSEED`): hash randomisation on, with the same
/// seed every run, so that sympy runs its tests in the process the harness reads and a run is
/// reproducible (sympy's `bin/test` would otherwise pick a random seed and start a child).
pub const SYMPY_HASH_SEED: &str = "1";

/// A rewritten command: its argv, the environment it adds, and whether a shim reports on it.
pub(crate) type Instrumented = (Vec<String>, Vec<(String, String)>, bool);

/// Rewrites the task's command so that the harness's shim reads the run, when it can; a
/// command the runner's shim does not recognise runs as written, read by its exit status.
pub(crate) fn instrument(
    sandbox: &Sandbox,
    mounts: &Mounts,
    tests: &TestSpec,
) -> Result<Instrumented, EnvError> {
    let argv = &tests.command;
    let harness = sandbox.visible_harness(mounts).into_owned();
    let rewritten = match tests.runner {
        Runner::ExitCode => None,
        Runner::Cpp | Runner::Java | Runner::Go | Runner::Rust => {
            program(sandbox, mounts, tests.runner, argv, &harness)?
        }
        Runner::Django | Runner::Sympy => script(tests.runner, argv, &harness),
        Runner::Unittest => unittest(argv, &harness),
        Runner::Node => node(argv, &harness),
        Runner::Pytest => pytest(argv, &harness),
    };
    Ok(rewritten.unwrap_or_else(|| (argv.clone(), Vec::new(), false)))
}

/// The report descriptor's number, as the shims read it.
fn fd_env() -> (String, String) {
    ("TRAPARENA_REPORT_FD".to_owned(), REPORT_FD.to_string())
}

/// True for a Python interpreter's path (`python`, `/venv/bin/python3.11`).
fn is_python(s: &str) -> bool {
    let name = s.rsplit('/').next().unwrap_or(s);
    name.starts_with("python")
}

/// A compiled-language test program (`g++ test.cpp ...`), built by the harness's build shim
/// with its check library (a Go or Rust toolchain lent into the sandbox first).
fn program(
    sandbox: &Sandbox,
    mounts: &Mounts,
    runner: Runner,
    argv: &[String],
    harness: &str,
) -> Result<Option<Instrumented>, EnvError> {
    let (lang, tools) = runner
        .program_tools()
        .expect("a compiled-language runner names its tools");
    let named = argv
        .first()
        .is_some_and(|a| tools.contains(&a.rsplit('/').next().unwrap_or(a)));
    if !named || argv.len() < 2 {
        return Ok(None);
    }
    match runner {
        Runner::Go => crate::toolchain::lend(&crate::toolchain::GO, sandbox, mounts)?,
        Runner::Rust => crate::toolchain::lend(&crate::toolchain::RUST, sandbox, mounts)?,
        _ => {}
    }
    let mut v = vec![
        "/bin/sh".to_owned(),
        format!("{harness}/tp_build.sh"),
        lang.name().to_owned(),
    ];
    v.extend(argv[1..].iter().cloned());
    Ok(Some((v, vec![fd_env()], true)))
}

/// django's `runtests.py` or sympy's `bin/test`, run under the project's shim.
fn script(runner: Runner, argv: &[String], harness: &str) -> Option<Instrumented> {
    let (script, shim) = if runner == Runner::Django {
        ("runtests.py", "tp_django.py")
    } else {
        ("bin/test", "tp_sympy.py")
    };
    let names_script = argv.get(1).is_some_and(|a| {
        a.strip_prefix("./").unwrap_or(a) == script || a.ends_with(&format!("/{script}"))
    });
    if !names_script || !is_python(&argv[0]) {
        return None;
    }
    let mut v = vec![argv[0].clone(), format!("{harness}/{shim}")];
    v.extend(argv[1..].iter().cloned());
    let mut env = vec![fd_env()];
    if runner == Runner::Sympy {
        // sympy runs its tests in-process when a seed is set (else in a child with a random
        // one): the same seed every run keeps runs reproducible.
        env.push(("PYTHONHASHSEED".to_owned(), SYMPY_HASH_SEED.to_owned()));
    }
    Some((v, env, true))
}

/// `python -m unittest ...`, run under the unittest shim.
fn unittest(argv: &[String], harness: &str) -> Option<Instrumented> {
    if argv.len() < 3 || !is_python(&argv[0]) || argv[1] != "-m" || argv[2] != "unittest" {
        return None;
    }
    let mut v = vec![argv[0].clone(), format!("{harness}/tp_unittest.py")];
    v.extend(argv[3..].iter().cloned());
    Some((v, vec![fd_env()], true))
}

/// `node FILE ...`, with the shim that counts every `console.assert` required first.
fn node(argv: &[String], harness: &str) -> Option<Instrumented> {
    let is_node = argv
        .first()
        .is_some_and(|a| a.rsplit('/').next() == Some("node"));
    if !is_node || argv.len() < 2 {
        return None;
    }
    let mut v = vec![
        argv[0].clone(),
        "--require".to_owned(),
        format!("{harness}/tp_node.js"),
    ];
    v.extend(argv[1..].iter().cloned());
    Some((v, vec![fd_env()], true))
}

/// `python -m pytest ...` or `pytest ...`, with the harness's report plugin.
fn pytest(argv: &[String], harness: &str) -> Option<Instrumented> {
    let i = if argv.len() >= 3 && is_python(&argv[0]) && argv[1] == "-m" && argv[2] == "pytest" {
        3
    } else if argv
        .first()
        .is_some_and(|a| a.rsplit('/').next() == Some("pytest"))
    {
        1
    } else {
        return None;
    };
    let mut v = argv[..i].to_vec();
    v.extend(["-p", "traparena_pytest_report", "-p", "no:cacheprovider"].map(String::from));
    v.extend(argv[i..].iter().cloned());
    Some((
        v,
        vec![fd_env(), ("PYTHONPATH".into(), harness.to_owned())],
        true,
    ))
}

pub(crate) fn run(
    sandbox: &Sandbox,
    mounts: &Mounts,
    tests: &TestSpec,
    timeout_s: u64,
) -> Result<TestRun, EnvError> {
    let (argv, mut env, instrumented) = instrument(sandbox, mounts, tests)?;
    // Only the harness's plugin reads a selection file: none is written for a command it
    // does not instrument.
    let selection = match instrumented {
        true => crate::select::SelectionFile::for_run(sandbox, mounts, tests)?,
        false => None,
    };
    if let Some(file) = &selection {
        env.push(file.env());
    }
    // A test run may use its whole timeout: the CPU limit is a backstop per process, never a
    // second, shorter clock (a 300-second suite was killed at 120 CPU seconds, exit 137).
    let mut limits = sandbox.config().limits.clone();
    limits.cpu_seconds = limits.cpu_seconds.max(timeout_s.saturating_add(1));
    let sandbox = &sandbox.with_limits(limits);
    let spec = RunSpec {
        argv,
        env,
        timeout: Duration::from_secs(timeout_s),
        report_pipe: instrumented,
    };
    let out = not_started(tests.runner, sandbox.run(mounts, &spec))?;
    if let Some(missing) = missing_program(tests.runner, instrumented, &out) {
        return Err(missing);
    }
    let Reading {
        counts,
        report_problem,
        selected,
        mut failed_tests,
    } = read(tests, instrumented, &out);
    let ws_real = mounts.workspace.to_string_lossy().into_owned();
    let ws_shown = crate::base::SANDBOX_WORKSPACE;
    let mut output = String::new();
    output.push_str(&out.stdout.text);
    if out.stdout.truncated {
        output.push_str(&format!(
            "\n[stdout truncated: {} bytes in all]\n",
            out.stdout.total_bytes
        ));
    }
    output.push_str(&out.stderr.text);
    if out.stderr.truncated {
        output.push_str(&format!(
            "\n[stderr truncated: {} bytes in all]\n",
            out.stderr.total_bytes
        ));
    }
    let output = output.replace(&ws_real, ws_shown);
    failures::show_workspace(&mut failed_tests.0, &ws_real, ws_shown);
    Ok(TestRun {
        runner: tests.runner,
        counts,
        report_problem,
        exit_code: out.exit_code,
        signal: out.signal,
        timed_out: out.timed_out,
        output,
        output_truncated: out.stdout.truncated || out.stderr.truncated,
        duration_ms: out.duration_ms,
        backend: out.backend,
        selected,
        failures: failed_tests.0,
        failures_omitted: failed_tests.1,
    })
}

/// What the harness read of a finished run: its counts (or why there are none), the outcome of
/// each selected name, and the failing tests with how many more there were.
struct Reading {
    counts: Option<TestCounts>,
    report_problem: Option<String>,
    selected: Vec<NamedOutcome>,
    failed_tests: (Vec<TestFailure>, u64),
}

/// Reads the report of a finished run (never its output).
fn read(tests: &TestSpec, instrumented: bool, out: &ProcessOutcome) -> Reading {
    let mut selected = Vec::new();
    let mut failed_tests = (Vec::new(), 0);
    let (counts, report_problem) = if tests.runner == Runner::ExitCode {
        (None, None)
    } else if !instrumented {
        (
            None,
            Some(format!(
                "{}, so the harness cannot read its results",
                not_instrumented(tests.runner)
            )),
        )
    } else if out.timed_out {
        (None, Some("the run timed out".to_owned()))
    } else {
        match out.report.as_deref() {
            None | Some([])
                if matches!(
                    tests.runner,
                    Runner::Cpp | Runner::Java | Runner::Go | Runner::Rust
                ) && out.exit_code == Some(86) =>
            {
                (None, Some("the test program did not build".to_owned()))
            }
            None | Some([]) => (None, Some("the test runner did not finish".to_owned())),
            Some(bytes) => match serde_json::from_slice::<Report>(bytes) {
                Ok(r) if !tests.select.is_empty() => {
                    selected = match_names(&tests.select, &r.outcomes);
                    let reported = failures::with_aliases(r.failures, &r.aliases);
                    failed_tests = failures::of_selected(&selected, &reported);
                    let count = |f: fn(TestOutcome) -> bool| {
                        selected.iter().filter(|n| f(n.outcome)).count() as u64
                    };
                    (
                        Some(TestCounts {
                            run: count(|o| o != TestOutcome::Error),
                            failed: count(|o| {
                                matches!(
                                    o,
                                    TestOutcome::Failed
                                        | TestOutcome::Skipped
                                        | TestOutcome::NotRun
                                )
                            }),
                            errored: count(|o| o == TestOutcome::Error),
                            skipped: 0,
                        }),
                        None,
                    )
                }
                Ok(r) => {
                    failed_tests = failures::bound(r.failures, r.failed + r.errored);
                    (
                        Some(TestCounts {
                            run: r.tests_run,
                            failed: r.failed,
                            errored: r.errored,
                            skipped: r.skipped,
                        }),
                        None,
                    )
                }
                Err(_) => (
                    None,
                    Some("the test runner's report was malformed".to_owned()),
                ),
            },
        }
    };
    Reading {
        counts,
        report_problem,
        selected,
        failed_tests,
    }
}

/// The runners on a workspace: here rather than with the workspace, which lies below the
/// runners (the sandbox, then the workspace, then the runners).
impl Workspace {
    /// Builds and runs a test program of a compiled-language runner ([`Runner::Cpp`],
    /// [`Runner::Java`], [`Runner::Go`], [`Runner::Rust`]) or a Node test file ([`Runner::Node`]) in the sandbox,
    /// as [`run_tests`](Self::run_tests) would, with `env` added, and returns the process's
    /// outcome with its raw report: for importers that run a check library in its probe mode
    /// (`TRAPARENA_PROBE_FROM`, one line per check). `files` are the sources, relative to the
    /// workspace.
    pub fn run_program(
        &self,
        sandbox: &Sandbox,
        runner: Runner,
        files: &[String],
        env: Vec<(String, String)>,
        timeout: std::time::Duration,
    ) -> Result<crate::ProcessOutcome, EnvError> {
        let tool = match runner.program_tools() {
            Some((_, tools)) => tools[0],
            None => {
                return Err(EnvError::Spawn {
                    program: format!("{runner:?}"),
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "run_program runs compiled-language and Node test programs only",
                    ),
                });
            }
        };
        let mut command = vec![tool.to_owned()];
        command.extend(files.iter().cloned());
        let spec = TestSpec {
            command,
            runner,
            files: Vec::new(),
            select: Vec::new(),
        };
        let (argv, mut extra, _) = instrument(sandbox, self.mounts(), &spec)?;
        extra.extend(env);
        let out = not_started(
            runner,
            sandbox.run(
                self.mounts(),
                &crate::RunSpec {
                    argv,
                    env: extra,
                    timeout,
                    report_pipe: true,
                },
            ),
        )?;
        match missing_program(runner, true, &out) {
            Some(missing) => Err(missing),
            None => Ok(out),
        }
    }

    /// Runs a test suite in the sandbox on this workspace.
    pub fn run_tests(
        &self,
        sandbox: &Sandbox,
        tests: &TestSpec,
        timeout_s: u64,
    ) -> Result<TestRun, EnvError> {
        run(sandbox, self.mounts(), tests, timeout_s)
    }
}

//! Running a task's test command and reading the run through a channel the tested code does
//! not write to by accident: a report pipe filled by the harness's runner shim after the run.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use traparena_task::{Runner, TestCounts, TestSpec};

use crate::error::EnvError;
use crate::sandbox::{Backend, Mounts, REPORT_FD, RunSpec, Sandbox};

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
}

impl TestRun {
    /// True when the suite passed: exit status 0, no timeout, and — except for `exit_code`
    /// runners — a report saying at least one test ran and none failed or errored.
    pub fn passed(&self) -> bool {
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
}

#[derive(Deserialize)]
struct Report {
    tests_run: u64,
    failed: u64,
    errored: u64,
    skipped: u64,
}

/// Rewrites the task's command so that the harness's shim reads the run, when it can.
fn instrument(
    sandbox: &Sandbox,
    mounts: &Mounts,
    tests: &TestSpec,
) -> (Vec<String>, Vec<(String, String)>, bool) {
    let argv = tests.command.clone();
    let harness = sandbox.visible_harness(mounts).into_owned();
    let is_python = |s: &str| {
        let name = s.rsplit('/').next().unwrap_or(s);
        name.starts_with("python")
    };
    let fd_env = ("TRAPARENA_REPORT_FD".to_owned(), REPORT_FD.to_string());
    match tests.runner {
        Runner::ExitCode => (argv, Vec::new(), false),
        Runner::Unittest => {
            if argv.len() >= 3 && is_python(&argv[0]) && argv[1] == "-m" && argv[2] == "unittest" {
                let mut v = vec![argv[0].clone(), format!("{harness}/tp_unittest.py")];
                v.extend(argv[3..].iter().cloned());
                (v, vec![fd_env], true)
            } else {
                (argv, Vec::new(), false)
            }
        }
        Runner::Pytest => {
            let at =
                if argv.len() >= 3 && is_python(&argv[0]) && argv[1] == "-m" && argv[2] == "pytest"
                {
                    Some(3)
                } else if argv
                    .first()
                    .is_some_and(|a| a.rsplit('/').next() == Some("pytest"))
                {
                    Some(1)
                } else {
                    None
                };
            match at {
                Some(i) => {
                    let mut v = argv[..i].to_vec();
                    v.extend(
                        ["-p", "traparena_pytest_report", "-p", "no:cacheprovider"]
                            .map(String::from),
                    );
                    v.extend(argv[i..].iter().cloned());
                    (v, vec![fd_env, ("PYTHONPATH".into(), harness)], true)
                }
                None => (argv, Vec::new(), false),
            }
        }
    }
}

pub(crate) fn run(
    sandbox: &Sandbox,
    mounts: &Mounts,
    tests: &TestSpec,
    timeout_s: u64,
) -> Result<TestRun, EnvError> {
    let (argv, env, instrumented) = instrument(sandbox, mounts, tests);
    let spec = RunSpec {
        argv,
        env,
        timeout: Duration::from_secs(timeout_s),
        report_pipe: instrumented,
    };
    let out = sandbox.run(mounts, &spec)?;
    let (counts, report_problem) = if tests.runner == Runner::ExitCode {
        (None, None)
    } else if !instrumented {
        (None, Some("the command is not `python -m unittest` or pytest, so the harness cannot read its results".to_owned()))
    } else if out.timed_out {
        (None, Some("the run timed out".to_owned()))
    } else {
        match out.report.as_deref() {
            None | Some([]) => (None, Some("the test runner did not finish".to_owned())),
            Some(bytes) => match serde_json::from_slice::<Report>(bytes) {
                Ok(r) => (
                    Some(TestCounts {
                        run: r.tests_run,
                        failed: r.failed,
                        errored: r.errored,
                        skipped: r.skipped,
                    }),
                    None,
                ),
                Err(_) => (
                    None,
                    Some("the test runner's report was malformed".to_owned()),
                ),
            },
        }
    };
    let ws_real = mounts.workspace.to_string_lossy().into_owned();
    let ws_shown = crate::sandbox::SANDBOX_WORKSPACE;
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
    })
}

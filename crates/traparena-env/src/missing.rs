//! A test run whose toolchain is missing from the sandbox: told apart from a run whose tests
//! failed, as [`EnvError::MissingToolchain`], by the build shim's report or by the check before
//! launching the runner's own program. Such a run is an infrastructure outcome (nothing was
//! tested), never failing tests.

use serde::Deserialize;
use traparena_task::Runner;

use crate::base::{Backend, ProcessOutcome};
use crate::error::EnvError;

/// A runner's own program (`node`) that the check before launching found unable to start:
/// its toolchain is missing from the sandbox ([`EnvError::MissingToolchain`]). Other start
/// failures, and a launch that failed with an error of the operating system, stay as they are.
pub(crate) fn not_started(
    runner: Runner,
    launched: Result<ProcessOutcome, EnvError>,
) -> Result<ProcessOutcome, EnvError> {
    match (launched, runner.program_tools()) {
        (
            Err(EnvError::Start {
                program,
                backend,
                reason,
                source: None,
            }),
            Some((language, tools)),
        ) if tools.contains(&program.rsplit('/').next().unwrap_or(&program)) => {
            Err(EnvError::MissingToolchain {
                program: program.rsplit('/').next().unwrap_or(&program).to_owned(),
                language,
                backend,
                detail: reason,
            })
        }
        (launched, _) => launched,
    }
}

/// What the build shim said in a run's report: the tool it found missing.
#[derive(Deserialize)]
struct MissingReport {
    missing_program: String,
}

/// [`EnvError::MissingToolchain`] when the build shim of a compiled-language run reported a
/// missing tool (`{"missing_program": ...}` on the report descriptor, exit status 127) instead
/// of building: then no test ran.
pub(crate) fn missing_program(
    runner: Runner,
    instrumented: bool,
    out: &ProcessOutcome,
) -> Option<EnvError> {
    let (language, _) = runner.program_tools()?;
    if !instrumented || out.timed_out || out.exit_code != Some(127) {
        return None;
    }
    let report: MissingReport = serde_json::from_slice(out.report.as_deref()?).ok()?;
    let on = match out.backend {
        Backend::Container => "the image's PATH".to_owned(),
        _ => format!("its PATH, {}", crate::base::PATH_ENV.replace(':', ", ")),
    };
    Some(EnvError::MissingToolchain {
        detail: format!("no {} on {on}", report.missing_program),
        program: report.missing_program,
        language,
        backend: out.backend,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::Captured;

    fn outcome(code: Option<i32>, timed_out: bool, report: Option<&str>) -> ProcessOutcome {
        ProcessOutcome {
            exit_code: code,
            signal: None,
            timed_out,
            stdout: Captured::default(),
            stderr: Captured::default(),
            report: report.map(|r| r.as_bytes().to_vec()),
            duration_ms: 1,
            backend: Backend::Bubblewrap,
            retried_start: None,
        }
    }

    /// Only the build shim's own report of a missing tool, with its exit status, is a missing
    /// toolchain; a test program that exits 127, a failing run or a timeout is not.
    #[test]
    fn only_the_shims_report_with_status_127_is_a_missing_toolchain() {
        let said = Some(r#"{"missing_program": "rustc"}"#);
        let counts = Some(r#"{"tests_run": 1, "failed": 1, "errored": 0, "skipped": 0}"#);
        let cases = [
            (Runner::Rust, true, outcome(Some(127), false, said), true),
            (Runner::Go, true, outcome(Some(127), false, said), true),
            (Runner::Rust, true, outcome(Some(127), false, None), false),
            (Runner::Rust, true, outcome(Some(127), false, counts), false),
            (Runner::Rust, true, outcome(Some(1), false, said), false),
            (Runner::Rust, true, outcome(None, true, said), false),
            (Runner::Rust, false, outcome(Some(127), false, said), false),
            (Runner::Pytest, true, outcome(Some(127), false, said), false),
        ];
        for (i, (runner, instrumented, out, missing)) in cases.iter().enumerate() {
            let got = missing_program(*runner, *instrumented, out);
            assert_eq!(got.is_some(), *missing, "case {i}: {got:?}");
            if let Some(e) = got {
                assert!(e.is_missing_toolchain() && e.is_start_failure());
                let text = e.to_string();
                assert!(text.starts_with("rustc is missing from the bubblewrap sandbox (no rustc on its PATH, /usr/local/bin, /usr/bin, /bin): install "), "{text}");
            }
        }
    }

    #[test]
    fn a_runner_program_that_cannot_start_is_a_missing_toolchain_and_other_failures_stay() {
        let start = |program: &str| {
            Err(EnvError::Start {
                program: program.into(),
                backend: Backend::Builtin,
                reason: "there is no node in /usr/local/bin, /usr/bin, /bin (the sandbox's PATH)"
                    .into(),
                source: None,
            })
        };
        match not_started(Runner::Node, start("/opt/x/node")) {
            Err(EnvError::MissingToolchain {
                program, language, ..
            }) => assert_eq!((program.as_str(), language.install()), ("node", "nodejs")),
            other => panic!("{other:?}"),
        }
        for (runner, program) in [(Runner::Node, "python3"), (Runner::Pytest, "node")] {
            assert!(matches!(
                not_started(runner, start(program)),
                Err(EnvError::Start { .. })
            ));
        }
    }
}

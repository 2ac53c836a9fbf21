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

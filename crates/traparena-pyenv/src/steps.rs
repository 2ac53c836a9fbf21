//! Running the build steps of environments on the host (`venv`, `pip`, extension builds),
//! copying the trees they build in, and the short hash their cache folders are named by. Below
//! `setup`, `tree_env`, `install` and `interpreters`, which all build with them.

use std::path::Path;
use std::time::Duration;

use traparena_env::{HostCommand, ProcessOutcome, run_host};

use crate::error::{PyEnvError, StepFailure};

/// Settings of environment builds ([`ensure_env`](crate::ensure_env)) and install steps
/// ([`install_generated`](crate::install_generated)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOptions {
    /// Environment variables for the build commands (proxies, `PIP_INDEX_URL`, ...); the rest of
    /// the caller's environment is not passed on.
    pub env: Vec<(String, String)>,
    /// Limit of each build step.
    pub timeout: Duration,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            env: Vec::new(),
            timeout: Duration::from_secs(1800),
        }
    }
}

/// Runs one build step on the host: its output when it exits 0 in time, else an error naming
/// the step, why it failed and the last lines it printed.
pub(crate) fn run_step(step: &str, cmd: &HostCommand) -> Result<ProcessOutcome, PyEnvError> {
    let out = run_host(cmd).map_err(|source| PyEnvError::Spawn {
        step: step.to_owned(),
        source,
    })?;
    match failure(&out) {
        None => Ok(out),
        Some(failure) => Err(PyEnvError::Step {
            step: step.to_owned(),
            failure,
            output_tail: crate::cause::cause(&printed(&out), 3),
        }),
    }
}

/// How `out` failed: `None` when it exited 0 in time.
pub(crate) fn failure(out: &ProcessOutcome) -> Option<StepFailure> {
    if out.timed_out {
        Some(StepFailure::TimedOut)
    } else if out.exit_code != Some(0) {
        Some(StepFailure::Exit(out.exit_code))
    } else {
        None
    }
}

/// What `out` printed: standard output, then standard error.
fn printed(out: &ProcessOutcome) -> String {
    format!("{}\n{}", out.stdout.text, out.stderr.text)
}

/// The last `n` non-blank lines `out` printed (standard output, then standard error), joined
/// with ` / `.
pub(crate) fn output_tail(out: &ProcessOutcome, n: usize) -> String {
    let text = printed(out);
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.drain(..lines.len().saturating_sub(n));
    lines.join(" / ")
}

/// Copies the tree `from` to `to` (symbolic links as links), letting every user read it and
/// enter its folders.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<(), PyEnvError> {
    let readable = traparena_env::CopyOptions {
        readable: true,
        ..traparena_env::CopyOptions::default()
    };
    Ok(traparena_env::copy_tree(from, to, &readable)?)
}

/// The 64-bit FNV-1a hash of `bytes`: the short, stable fingerprint in cache folders' names
/// (changing it would rename every cached environment).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_names_hash_is_fnv1a_so_cached_environments_keep_their_names() {
        // FNV-1a's published test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn a_failed_steps_error_keeps_the_last_lines_it_printed() {
        let cmd = HostCommand {
            argv: vec![
                "/bin/sh".into(),
                "-c".into(),
                "echo one; echo two; echo; echo three >&2; exit 3".into(),
            ],
            cwd: "/".into(),
            env: Vec::new(),
            timeout: Duration::from_secs(60),
        };
        let err = run_step("the step", &cmd).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the step failed (exit status Some(3)): one / two / three"
        );
        assert!(matches!(
            err,
            PyEnvError::Step {
                failure: StepFailure::Exit(Some(3)),
                ..
            }
        ));
    }
}

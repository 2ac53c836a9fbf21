//! Running the build steps of environments on the host (`venv`, `pip`, extension builds), and
//! the short hash their cache folders are named by. Below `setup` and `tree_env`, which both
//! build with them.

use std::time::Duration;

use traparena_env::{HostCommand, ProcessOutcome, run_host};

/// Settings of environment builds ([`ensure_env`](crate::ensure_env)).
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
pub(crate) fn run_step(step: &str, cmd: &HostCommand) -> Result<ProcessOutcome, String> {
    let out = run_host(cmd).map_err(|e| format!("{step}: {e}"))?;
    if out.exit_code == Some(0) && !out.timed_out {
        return Ok(out);
    }
    let why = if out.timed_out {
        "timed out".to_owned()
    } else {
        format!("exit status {:?}", out.exit_code)
    };
    let text = format!("{}\n{}", out.stdout.text, out.stderr.text);
    Err(format!(
        "{step} failed ({why}): {}",
        crate::common::tail(&text, 3)
    ))
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
}

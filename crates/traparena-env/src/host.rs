//! Trusted harness commands run on the host, outside the sandbox.

use std::path::PathBuf;
use std::time::Duration;

use crate::base::{Backend, Limits, Mounts, ProcessOutcome, RunSpec, SandboxConfig};
use crate::error::{EnvError, io};
use crate::sandbox::Sandbox;

/// A trusted command the harness runs on the host (see [`run_host`]).
#[derive(Debug, Clone)]
pub struct HostCommand {
    /// argv; `argv[0]` is looked up on `/usr/local/bin:/usr/bin:/bin` unless it holds a `/`.
    pub argv: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Extra environment variables (on top of the minimal set).
    pub env: Vec<(String, String)>,
    /// Wall-clock limit; the whole process tree is killed when it passes.
    pub timeout: Duration,
}

/// Runs a *trusted* command on the host: no isolation, network access, the harness's own user.
/// Meant for setup steps the harness itself composes, such as building a virtual environment
/// with `pip`, never for code under test.
///
/// The environment is cleared but for `PATH`, `LANG`, a scratch `HOME` and `TMPDIR` (removed
/// afterwards) and `cmd.env`; the command runs in a new session, stdout and stderr are captured
/// (1 MiB each), and the process group is killed at the timeout. Returns `Err` only when the
/// command cannot be started.
pub fn run_host(cmd: &HostCommand) -> Result<ProcessOutcome, EnvError> {
    let scratch = tempfile::Builder::new()
        .prefix("traparena-host-")
        .tempdir()
        .map_err(io("create temporary folder", std::env::temp_dir()))?;
    let sandbox = Sandbox::unisolated(SandboxConfig {
        limits: Limits {
            cpu_seconds: cmd.timeout.as_secs().max(1) + 5,
            address_space_bytes: 16 << 30,
            file_size_bytes: 4 << 30,
            open_files: 1024,
            processes: 4096,
            output_bytes: 1 << 20,
        },
        ..SandboxConfig::default()
    });
    debug_assert_eq!(sandbox.backend(), Backend::None);
    let mounts = Mounts {
        workspace: cmd.cwd.clone(),
        scratch: scratch.path().to_owned(),
        harness: scratch.path().to_owned(),
        user: None,
        container: None,
    };
    sandbox.run(
        &mounts,
        &RunSpec {
            argv: cmd.argv.clone(),
            env: cmd.env.clone(),
            timeout: cmd.timeout,
            report_pipe: false,
        },
    )
}

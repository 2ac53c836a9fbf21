//! The sandbox's vocabulary, below every other module of the crate: the backends, the limits
//! and settings, the folders a run may use and the paths they have inside the sandbox, and what
//! a finished process gave. It holds data only; the sandbox itself is in `sandbox`.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The isolation mechanism a command ran under. Recorded with every result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// bubblewrap: user, pid, network, ipc, uts namespaces; read-only system and `/sys`; only the
    /// workspace, the scratch folder and a private `/dev` (with an empty `/dev/shm` for POSIX
    /// semaphores) writable; nothing else of the host file system visible.
    Bubblewrap,
    /// util-linux `unshare` (user, network and pid namespaces) plus Landlock file-system and
    /// TCP rules and resource limits. With no mount namespace, `/dev/shm` is the host's own
    /// (see [`BUILTIN_CAVEATS`]).
    Builtin,
    /// Resource limits, a new session and a timeout only. Not isolation.
    None,
    /// A container of the task's image (podman or docker): one per workspace, no network, a
    /// read-only root file system, resource limits of the container's own (processes and memory
    /// in its cgroup, the other limits as its processes' rlimits), and only the workspace, the
    /// scratch folder (`/tmp`) and the harness folder (`/harness`, read-only) from the host.
    Container,
}

/// How to get bubblewrap, the strongest backend, said wherever it is missing.
pub const INSTALL_BUBBLEWRAP: &str = "install bubblewrap for full isolation: `apt-get install bubblewrap` (Debian, Ubuntu) or `dnf install bubblewrap` (Fedora)";

/// What the builtin backend does not guarantee, next to bubblewrap (a clause about "it").
///
/// `/dev/shm` is the one host folder outside the workspace that tested code may write under the
/// builtin backend: POSIX semaphores (`multiprocessing.Lock()`) and shared memory need it, and
/// without a mount namespace there is no private one to give. So the tested code's semaphores
/// and shared-memory files sit beside the host's: they are subject only to file permissions, a
/// run can see the names of other processes' files there, and what it leaves takes memory until
/// it is removed. When the harness runs as root, every file of the sandbox user left in
/// `/dev/shm` is removed after each run (a sandbox user is never shared by two workspaces).
pub const BUILTIN_CAVEATS: &str = "it has no mount namespace, so tested code sees the host's file tree (read-only outside the workspace, a scratch folder and /dev/shm) under real paths rather than /workspace, and shares IPC, /dev/shm and the host name with the harness";

impl Backend {
    /// What this backend does not guarantee that bubblewrap does (`None` for bubblewrap).
    pub fn caveats(self) -> Option<&'static str> {
        match self {
            Backend::Bubblewrap => None,
            Backend::Builtin => Some(BUILTIN_CAVEATS),
            Backend::None => Some(
                "it isolates nothing: tested code can read and write anything the harness can, and reach the network",
            ),
            Backend::Container => None,
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Bubblewrap => "bubblewrap",
            Backend::Builtin => "builtin",
            Backend::None => "none",
            Backend::Container => "container",
        })
    }
}

/// Which backend to use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendChoice {
    /// The strongest one that works here: bubblewrap, then builtin, then none (with a warning).
    #[default]
    Auto,
    /// The strongest one that isolates: bubblewrap, then builtin; an error when neither works
    /// (for unattended runs, such as cluster jobs, where a warning would go unread).
    Isolated,
    /// bubblewrap, or an error.
    Bubblewrap,
    /// The built-in fallback, or an error.
    Builtin,
    /// No isolation.
    None,
    /// A container of the task's image, with [`SandboxConfig::container`]'s engine; or an
    /// error when no engine works.
    Container,
}

/// The container backend's settings (see [`Backend::Container`] and `docs/sandbox.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContainerConfig {
    /// The engine: `podman`, `docker`, or a path to either; `None` takes the first of podman
    /// and docker installed.
    pub engine: Option<String>,
    /// Arguments given to the engine before every subcommand, such as `["--runtime", "runc"]`.
    pub engine_args: Vec<String>,
    /// The image for tasks that name none (`traparena_task::ImageEnv`), with the workspace at
    /// `/workspace`. `None`: a task without an image cannot run in a container.
    pub image: Option<String>,
    /// Containers kept started and ready, in all, for the image a workspace took last (those
    /// of the image used longest ago make room), so that an episode does not wait for a cold
    /// start (0: every workspace starts its own).
    pub pool: usize,
}

/// Resource limits applied to every sandboxed process.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Limits {
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Address space per process in bytes (`RLIMIT_AS`).
    pub address_space_bytes: u64,
    /// Largest file a process may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: u64,
    /// Open file descriptors per process (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Processes of the sandbox user (`RLIMIT_NPROC`; binding only when the harness runs as
    /// root and drops to a sandbox user).
    pub processes: u64,
    /// Bytes of stdout and of stderr kept; the rest is read and discarded.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_seconds: 120,
            address_space_bytes: 4 << 30,
            file_size_bytes: 64 << 20,
            open_files: 256,
            processes: 256,
            output_bytes: 1 << 20,
        }
    }
}

/// How to build a [`Sandbox`](crate::Sandbox).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxConfig {
    /// Which backend to use.
    pub backend: BackendChoice,
    /// Resource limits.
    pub limits: Limits,
    /// Extra host paths made readable (not writable) inside the sandbox at the same path, such
    /// as a virtual environment with pytest. Under bubblewrap they are mounted after the scratch
    /// folder's `/tmp`, so one under `/tmp` is visible there too.
    pub read_only_paths: Vec<PathBuf>,
    /// When the harness runs as root, sandboxed code runs as a user id from
    /// `uid_base .. uid_base + 10000`, one no other live workspace has (the lowest free one).
    pub uid_base: u32,
    /// The container backend's engine, image and pool.
    #[serde(default)]
    pub container: ContainerConfig,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            backend: BackendChoice::Auto,
            limits: Limits::default(),
            read_only_paths: Vec::new(),
            uid_base: 610_000,
            container: ContainerConfig::default(),
        }
    }
}

/// Where the workspace appears inside a bubblewrap sandbox.
pub const SANDBOX_WORKSPACE: &str = "/workspace";
/// Where the harness's read-only helper files appear inside a bubblewrap sandbox.
pub const SANDBOX_HARNESS: &str = "/harness";
/// The file descriptor on which the test-runner shims write their result report.
pub const REPORT_FD: i32 = 3;
/// The `PATH` of a sandboxed run under every backend but the container (whose image's own
/// folders come first): a program installed elsewhere (rustup's `~/.cargo/bin`) is not found.
pub const PATH_ENV: &str = "/usr/local/bin:/usr/bin:/bin";
pub(crate) const SYSTEM_RO: [&str; 8] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc", "/opt",
];
/// Kernel interfaces every isolating backend shows read-only: tools count CPUs from `/sys`
/// (glibc's `sysconf` reads `/sys/devices/system/cpu/online`; pylint reads the cgroup CPU quota
/// under `/sys/fs/cgroup`). Writes there are refused by both backends.
pub(crate) const KERNEL_RO: &str = "/sys";
/// Where POSIX semaphores and shared memory live (`sem_open`, `shm_open`).
pub(crate) const SHM: &str = "/dev/shm";

/// The folders one sandboxed run may use.
#[derive(Debug, Clone)]
pub struct Mounts {
    /// The workspace: working directory, writable.
    pub workspace: PathBuf,
    /// Scratch folder for TMPDIR, writable.
    pub scratch: PathBuf,
    /// Harness helper files, read-only.
    pub harness: PathBuf,
    /// The sandbox user, when the harness drops privileges.
    pub user: Option<u32>,
    /// The container the runs on these folders go into (the container backend); it is removed
    /// when the last handle goes.
    pub container: Option<std::sync::Arc<crate::engine::Container>>,
}

/// A command to run in the sandbox.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// argv; `argv[0]` is looked up on the sandbox's PATH.
    pub argv: Vec<String>,
    /// Extra environment variables (on top of the minimal set).
    pub env: Vec<(String, String)>,
    /// Wall-clock limit; the whole process tree is killed when it passes.
    pub timeout: Duration,
    /// Open a report pipe on file descriptor [`REPORT_FD`].
    pub report_pipe: bool,
}

/// Captured output of one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Captured {
    /// The kept bytes, as text (invalid UTF-8 replaced).
    pub text: String,
    /// Total bytes the process wrote.
    pub total_bytes: u64,
    /// True when bytes were dropped past the cap.
    pub truncated: bool,
}

/// What happened to a sandboxed process. A timeout or a crash is an outcome, not an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessOutcome {
    /// Exit status when the process exited.
    pub exit_code: Option<i32>,
    /// Signal that ended the process, when one did.
    pub signal: Option<i32>,
    /// True when the wall-clock limit was reached and the tree killed.
    pub timed_out: bool,
    /// Standard output.
    pub stdout: Captured,
    /// Standard error.
    pub stderr: Captured,
    /// Bytes written to the report pipe, when one was open.
    pub report: Option<Vec<u8>>,
    /// Wall-clock duration in milliseconds.
    pub duration_ms: u64,
    /// The backend used.
    pub backend: Backend,
    /// Why the first launch failed, when it took a second one (see [`Sandbox::run`](crate::Sandbox::run)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried_start: Option<String>,
}

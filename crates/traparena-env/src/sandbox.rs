//! The process sandbox: runs a command on a workspace with isolation, limits and a timeout.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::base::{
    BUILTIN_CAVEATS, Backend, BackendChoice, INSTALL_BUBBLEWRAP, Limits, Mounts, ProcessOutcome,
    RunSpec, SANDBOX_HARNESS, SANDBOX_WORKSPACE, SandboxConfig,
};
use crate::error::EnvError;
use crate::launch::{Launch, Launched, resolve, retry_once};
use crate::lease::UserLease;
use crate::running::{Drain, Extras, Keep, KillSwitch, Running, pidfd_open};

/// A process sandbox with a chosen backend.
#[derive(Debug, Clone)]
pub struct Sandbox {
    config: SandboxConfig,
    backend: Backend,
    root: bool,
    warnings: Vec<String>,
}

impl Sandbox {
    /// This sandbox, also showing `paths` read-only at their own paths (a task's environment,
    /// see `traparena_task::Setup::visible_paths`). The backend chosen is kept; nothing is
    /// probed again. Paths already shown are not added twice.
    pub fn with_read_only_paths(&self, paths: &[PathBuf]) -> Sandbox {
        let mut sb = self.clone();
        for p in paths {
            if !sb.config.read_only_paths.contains(p) {
                sb.config.read_only_paths.push(p.clone());
            }
        }
        sb
    }

    /// This sandbox with other resource limits; the backend chosen is kept.
    pub(crate) fn with_limits(&self, limits: Limits) -> Sandbox {
        let mut sb = self.clone();
        sb.config.limits = limits;
        sb
    }

    /// This sandbox as `task`'s tests need it: also showing the task's environment and base
    /// interpreter (`Setup::visible_paths`), wherever they lie. The same sandbox for a task
    /// without `setup`.
    pub fn for_task(&self, task: &traparena_task::Task) -> Sandbox {
        match &task.spec.setup {
            Some(s) => self.with_read_only_paths(&s.visible_paths()),
            None => self.clone(),
        }
    }
}

impl Sandbox {
    /// Picks and checks a backend as the configuration asks.
    pub fn new(config: SandboxConfig) -> Result<Sandbox, EnvError> {
        let root = is_root();
        let mut warnings = Vec::new();
        let backend = match config.backend {
            BackendChoice::Bubblewrap => {
                probe_bwrap(root, &config).map_err(|reason| {
                    unavailable("bubblewrap", format!("{reason}; {INSTALL_BUBBLEWRAP}"))
                })?;
                Backend::Bubblewrap
            }
            BackendChoice::Builtin => {
                probe_builtin(root, &config).map_err(|reason| unavailable("builtin", reason))?;
                if let Err(why) = probe_bwrap(root, &config) {
                    warnings.push(format!(
                        "using the builtin sandbox as asked (bubblewrap: {why}): {BUILTIN_CAVEATS}; {INSTALL_BUBBLEWRAP}"
                    ));
                }
                Backend::Builtin
            }
            BackendChoice::None => {
                warnings.push("sandbox backend `none`: tested code is not isolated".into());
                Backend::None
            }
            BackendChoice::Auto => match probe_bwrap(root, &config) {
                Ok(()) => Backend::Bubblewrap,
                Err(e1) => match probe_builtin(root, &config) {
                    Ok(()) => {
                        warnings.push(format!(
                            "bubblewrap unavailable ({e1}); using the builtin sandbox: {BUILTIN_CAVEATS}; {INSTALL_BUBBLEWRAP}"
                        ));
                        Backend::Builtin
                    }
                    Err(e2) => {
                        warnings.push(format!(
                            "no sandbox available (bubblewrap: {e1}; builtin: {e2}): tested code is NOT isolated; {INSTALL_BUBBLEWRAP}"
                        ));
                        Backend::None
                    }
                },
            },
        };
        Ok(Sandbox {
            config,
            backend,
            root,
            warnings,
        })
    }

    /// A sandbox that isolates nothing, for trusted harness commands (`run_host`).
    pub(crate) fn unisolated(config: SandboxConfig) -> Sandbox {
        Sandbox {
            config,
            backend: Backend::None,
            root: false,
            warnings: Vec::new(),
        }
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Warnings from choosing the backend (for the caller to show).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The configuration.
    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// A sandbox user id of its own for a new workspace, when the harness runs as root.
    ///
    /// The id is leased through an advisory lock file in `$TMPDIR/traparena-uids`, so that no
    /// two workspaces — in this process or in another harness process on the machine — share
    /// it (the harness kills every process of a workspace's user after each run). The lease
    /// ends when it is dropped, and its lock file goes with it: the folder holds one file per
    /// lease held (the first lease of a process also removes those that dead processes left).
    pub fn allocate_user(&self) -> Result<Option<UserLease>, EnvError> {
        if !self.root {
            return Ok(None);
        }
        UserLease::acquire(self.config.uid_base).map(Some)
    }

    /// Checks up front that a program runs in this sandbox at all, before tasks depend on it:
    /// for an interpreter, `argv` is `[python, "-c", "import sys"]`.
    ///
    /// `argv` runs as a workspace's command would (a sandbox user of its own when the harness
    /// runs as root, the configured read-only paths, the sandbox's PATH), in an empty scratch
    /// workspace, for at most a minute. It is [`EnvError::Start`] naming `argv[0]` when the
    /// program cannot start (the check of [`Sandbox::run`]: missing, not executable, in a folder
    /// the sandbox user cannot enter, not visible in the sandbox), or when it exits with a
    /// non-zero status, is killed or does not finish; the reason then ends with the first
    /// line of its error output, such as `error while loading shared libraries:
    /// libpython3.9.so.1.0: cannot open shared object file`.
    pub fn check_program(&self, argv: &[String]) -> Result<(), EnvError> {
        const LIMIT: Duration = Duration::from_secs(60);
        let dir = tempfile::Builder::new()
            .prefix("traparena-check-")
            .tempdir()
            .map_err(crate::error::io(
                "create temporary folder",
                std::env::temp_dir(),
            ))?;
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .map_err(crate::error::io("chmod", dir.path()))?;
        let lease = self.allocate_user()?;
        let user = lease.as_ref().map(UserLease::uid);
        let mounts = Mounts {
            workspace: dir.path().join("workspace"),
            scratch: dir.path().join("scratch"),
            harness: dir.path().join("harness"),
            user,
        };
        for p in [&mounts.workspace, &mounts.scratch, &mounts.harness] {
            std::fs::create_dir(p).map_err(crate::error::io("create folder", p))?;
        }
        if let Some(uid) = user {
            for p in [&mounts.workspace, &mounts.scratch] {
                std::os::unix::fs::chown(p, Some(uid), Some(uid))
                    .map_err(crate::error::io("chown", p))?;
            }
        }
        let out = self.run(
            &mounts,
            &RunSpec {
                argv: argv.to_vec(),
                env: Vec::new(),
                timeout: LIMIT,
                report_pipe: false,
            },
        )?;
        let status = if out.timed_out {
            format!("did not finish within {} s", LIMIT.as_secs())
        } else {
            match (out.exit_code, out.signal) {
                (Some(0), _) => return Ok(()),
                (Some(code), _) => format!("exits with status {code}"),
                (None, sig) => format!("was killed by signal {}", sig.unwrap_or(0)),
            }
        };
        let first_line = [&out.stderr.text, &out.stdout.text]
            .into_iter()
            .find_map(|t| t.lines().map(str::trim).find(|l| !l.is_empty()))
            .map(|l| l.chars().take(300).collect::<String>());
        let command = argv.join(" ");
        Err(EnvError::Start {
            program: argv[0].clone(),
            backend: self.backend,
            reason: match first_line {
                Some(line) => format!("`{command}` {status}: {line}"),
                None => format!("`{command}` {status} and prints nothing"),
            },
            source: None,
        })
    }

    /// How the workspace path reads inside the sandbox.
    pub fn visible_workspace<'a>(&self, mounts: &'a Mounts) -> std::borrow::Cow<'a, str> {
        match self.backend {
            Backend::Bubblewrap => SANDBOX_WORKSPACE.into(),
            _ => mounts.workspace.to_string_lossy(),
        }
    }

    /// How the harness folder reads inside the sandbox.
    pub fn visible_harness<'a>(&self, mounts: &'a Mounts) -> std::borrow::Cow<'a, str> {
        match self.backend {
            Backend::Bubblewrap => SANDBOX_HARNESS.into(),
            _ => mounts.harness.to_string_lossy(),
        }
    }

    /// Runs `spec` on `mounts`. Returns `Err` only when the process cannot be started at all.
    ///
    /// Before launching, a program named outside the workspace and the scratch folder (an
    /// interpreter, a tool of a virtual environment) is checked: it must exist, be a regular
    /// file the sandbox user may execute, lie in folders it may enter, and be visible in the
    /// sandbox; otherwise the run is [`EnvError::Start`] at once, naming the path and what is
    /// wrong. A program inside the workspace is the tested code's own business: whatever
    /// happens to it is an outcome. A launch that fails (the fork, the set-up between fork and
    /// exec, or the exec of the backend's launcher) is tried once more, and a second failure
    /// is [`EnvError::Start`] with the operating system's error.
    pub fn run(&self, mounts: &Mounts, spec: &RunSpec) -> Result<ProcessOutcome, EnvError> {
        Ok(self
            .start(mounts, spec, &Extras::default())?
            .wait()?
            .outcome)
    }

    /// Starts `spec` on `mounts` as [`Sandbox::run`] does (the same check, launch and retry),
    /// with `extras`; [`Running::wait`] then waits for it.
    pub(crate) fn start(
        &self,
        mounts: &Mounts,
        spec: &RunSpec,
        extras: &Extras,
    ) -> Result<Running, EnvError> {
        let started = Instant::now();
        self.preflight(mounts, spec)?;
        let mut first_failure = None;
        let launch = Launch {
            config: &self.config,
            backend: self.backend,
        };
        let Launched { mut child, report } = retry_once(
            || launch.once(mounts, spec, extras),
            |e| first_failure = Some(e.to_string()),
        )
        .map_err(|(first, second)| launch.failure(spec, first, second))?;
        let cap = self.config.limits.output_bytes;
        let report = report.map(|r| Drain::start(r, cap, Keep::Start));
        let stdout = Drain::start(child.stdout.take().expect("piped stdout"), cap, extras.keep);
        let stderr = Drain::start(child.stderr.take().expect("piped stderr"), cap, extras.keep);
        let pid = child.id() as i32;
        Ok(Running {
            pidfd: pidfd_open(pid),
            switch: Arc::new(KillSwitch {
                pid,
                state: Mutex::default(),
            }),
            child,
            pid,
            started,
            deadline: Instant::now() + spec.timeout,
            stdout: Some(stdout),
            stderr: Some(stderr),
            report,
            program: spec.argv[0].clone(),
            backend: self.backend,
            user: mounts.user,
            first_failure,
            done: false,
        })
    }

    /// The check before launching (see [`Sandbox::run`]).
    pub(crate) fn preflight(&self, m: &Mounts, spec: &RunSpec) -> Result<(), EnvError> {
        let Some(program) = spec.argv.first() else {
            return Ok(()); // `command` refuses an empty command
        };
        let path_var = spec
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str());
        crate::program::check(
            self.backend,
            m,
            &self.config.read_only_paths,
            program,
            path_var,
        )
        .map_err(|reason| EnvError::Start {
            program: program.clone(),
            backend: self.backend,
            reason,
            source: None,
        })
    }
}

fn unavailable(backend: &str, reason: String) -> EnvError {
    EnvError::BackendUnavailable {
        backend: backend.into(),
        reason,
    }
}

fn is_root() -> bool {
    #[allow(unsafe_code)]
    // SAFETY: geteuid has no preconditions.
    unsafe {
        libc::geteuid() == 0
    }
}

fn probe_dirs() -> Result<(tempfile::TempDir, Mounts), String> {
    let d = tempfile::Builder::new()
        .prefix("traparena-probe-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let mounts = Mounts {
        workspace: d.path().join("ws"),
        scratch: d.path().join("tmp"),
        harness: d.path().join("harness"),
        user: None,
    };
    for p in [&mounts.workspace, &mounts.scratch, &mounts.harness] {
        std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
    }
    Ok((d, mounts))
}

fn probe(backend: Backend, root: bool, config: &SandboxConfig) -> Result<(), String> {
    let (dir, mut mounts) = probe_dirs()?;
    let sb = Sandbox {
        config: config.clone(),
        backend,
        root,
        warnings: Vec::new(),
    };
    let lease = if root {
        Some(UserLease::acquire(config.uid_base).map_err(|e| e.to_string())?)
    } else {
        None
    };
    if let Some(lease) = &lease {
        let uid = lease.uid();
        for p in [&mounts.workspace, &mounts.scratch] {
            std::os::unix::fs::chown(p, Some(uid), Some(uid)).map_err(|e| e.to_string())?;
        }
        let _ = std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        );
        mounts.user = Some(uid);
    }
    let spec = RunSpec {
        argv: vec![
            "/bin/sh".into(),
            "-c".into(),
            "echo ok > probe && cat probe".into(),
        ],
        env: Vec::new(),
        timeout: Duration::from_secs(20),
        report_pipe: false,
    };
    let out = sb.run(&mounts, &spec).map_err(|e| e.to_string())?;
    if out.exit_code == Some(0) && out.stdout.text.trim() == "ok" {
        Ok(())
    } else {
        Err(format!(
            "probe exited with {:?}: {}",
            out.exit_code,
            out.stderr.text.lines().next().unwrap_or("").trim()
        ))
    }
}

fn probe_bwrap(root: bool, config: &SandboxConfig) -> Result<(), String> {
    if resolve("bwrap").is_none() {
        return Err("bwrap is not installed".into());
    }
    probe(Backend::Bubblewrap, root, config)
}

fn probe_builtin(root: bool, config: &SandboxConfig) -> Result<(), String> {
    if !Path::new("/usr/bin/unshare").is_file() {
        return Err("/usr/bin/unshare is not installed".into());
    }
    if !crate::landlock_rules::supported() {
        return Err("the kernel does not enforce Landlock".into());
    }
    probe(Backend::Builtin, root, config)
}

//! Launching one process under a backend: the command line of each backend, the set-up
//! between fork and exec (session, limits, Landlock, the report descriptor), one retry of a
//! failed launch, and what a second failure says.

use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::base::{
    Backend, KERNEL_RO, Limits, Mounts, PATH_ENV, REPORT_FD, RunSpec, SANDBOX_HARNESS,
    SANDBOX_WORKSPACE, SYSTEM_RO, SandboxConfig,
};
use crate::container::{CONTAINER_PATH, ReportFifo};
use crate::engine::EngineKind;
use crate::error::EnvError;
use crate::running::Extras;
use traparena_task::ImageEnv;

/// How a sandbox launches: its configuration and backend.
pub(crate) struct Launch<'a> {
    pub config: &'a SandboxConfig,
    pub backend: Backend,
    /// The image of a container run.
    pub image: Option<&'a ImageEnv>,
}

impl Launch<'_> {
    /// Starts the process once: a fresh command, report pipe and Landlock ruleset each time,
    /// so a second attempt is set up exactly like the first.
    pub(crate) fn once(
        &self,
        mounts: &Mounts,
        spec: &RunSpec,
        extras: &Extras,
    ) -> Result<Launched, LaunchError> {
        // An engine that cannot pass the report descriptor in gets a FIFO instead.
        let fifo = match (&mounts.container, spec.report_pipe) {
            (Some(c), true) if c.engine.kind == EngineKind::Docker => Some(
                ReportFifo::create(&mounts.harness, SANDBOX_HARNESS).map_err(LaunchError::Os)?,
            ),
            _ => None,
        };
        let (mut cmd, _) = self
            .command(mounts, spec, fifo.as_ref().map(|(f, _)| f.seen.as_str()))
            .map_err(LaunchError::Setup)?;
        // A container's limits are its own; the engine's client runs unlimited.
        let limits = (self.backend != Backend::Container).then(|| self.config.limits.clone());
        let report = if spec.report_pipe && fifo.is_none() {
            let (r, w) = std::io::pipe().map_err(LaunchError::Os)?;
            // Writable by the sandbox user as well (a pipe is its creator's, mode 0600): a shim
            // that cannot duplicate a descriptor (Node, Java) reopens it through
            // `/proc/self/fd` under a number of its own and closes the well-known one.
            #[allow(unsafe_code)]
            // SAFETY: fchmod on a descriptor this function owns; no memory is involved.
            if unsafe { libc::fchmod(w.as_raw_fd(), 0o622) } < 0 {
                return Err(LaunchError::Os(std::io::Error::last_os_error()));
            }
            Some((r, w))
        } else {
            None
        };
        let report_fd = report.as_ref().map(|(_, w)| w.as_raw_fd());
        // The builtin backend never runs unrestricted: no ruleset, no launch.
        let ruleset = match self.backend {
            Backend::Builtin => Some(
                crate::landlock_rules::ruleset(
                    mounts,
                    &self.config.read_only_paths,
                    extras.net_port,
                )
                .and_then(crate::landlock_rules::into_fd)
                .map_err(LaunchError::Setup)?,
            ),
            _ => None,
        };
        let ruleset_fd = ruleset.as_ref().map(|fd| fd.as_raw_fd());
        #[allow(unsafe_code)]
        // SAFETY: the closure runs between fork and exec, makes only async-signal-safe system
        // calls (setsid, setrlimit, prctl, landlock_restrict_self, fcntl, dup2), allocates
        // nothing and returns only raw OS errors.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if let Some(limits) = &limits {
                    set_limits(limits)?;
                }
                // Landlock before the report descriptor: `dup2` onto REPORT_FD closes whatever
                // held that number in the child, and in a harness whose other threads open and
                // close files, that can be the ruleset (it then failed as EINVAL).
                if let Some(fd) = ruleset_fd {
                    crate::landlock_rules::restrict(fd)?;
                }
                if let Some(fd) = report_fd {
                    if fd == REPORT_FD {
                        let flags = libc::fcntl(fd, libc::F_GETFD);
                        if flags < 0
                            || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0
                        {
                            return Err(std::io::Error::last_os_error());
                        }
                    } else if libc::dup2(fd, REPORT_FD) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().map_err(LaunchError::Os)?;
        drop(ruleset);
        let (fifo, fifo_reader) = fifo.unzip();
        Ok(Launched {
            child,
            // The parent's write end closes here, so the reader sees the end with the child's.
            report: report
                .map(|(r, _w)| std::fs::File::from(std::os::fd::OwnedFd::from(r)))
                .or(fifo_reader),
            fifo,
        })
    }

    pub(crate) fn failure(
        &self,
        spec: &RunSpec,
        first: LaunchError,
        second: LaunchError,
    ) -> EnvError {
        let program = spec.argv.first().cloned().unwrap_or_default();
        match second {
            LaunchError::Setup(e) => e,
            LaunchError::Os(source) => {
                let reason = match first {
                    LaunchError::Os(f) if f.raw_os_error() == source.raw_os_error() => {
                        format!("launching it failed twice: {source}")
                    }
                    LaunchError::Os(f) => {
                        format!("launching it failed twice (first: {f}; then: {source})")
                    }
                    LaunchError::Setup(f) => {
                        format!("launching it failed twice (first: {f}; then: {source})")
                    }
                };
                EnvError::Start {
                    program,
                    backend: self.backend,
                    reason,
                    source: Some(source),
                }
            }
        }
    }

    #[allow(clippy::disallowed_methods)] // traparena-env is where processes are spawned
    pub(crate) fn command(
        &self,
        m: &Mounts,
        spec: &RunSpec,
        fifo: Option<&str>,
    ) -> Result<(Command, String), EnvError> {
        let Some(program) = spec.argv.first() else {
            return Err(EnvError::Spawn {
                program: String::new(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command"),
            });
        };
        let mut env: Vec<(String, String)> = vec![
            ("PATH".into(), PATH_ENV.into()),
            ("LANG".into(), "C.UTF-8".into()),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
            ("PYTHONHASHSEED".into(), "0".into()),
            ("PYTHONUNBUFFERED".into(), "1".into()),
            ("PYTHONNOUSERSITE".into(), "1".into()),
        ];
        let (tmp, home) = match self.backend {
            Backend::Bubblewrap | Backend::Container => ("/tmp".to_owned(), "/tmp".to_owned()),
            _ => {
                let s = m.scratch.to_string_lossy().into_owned();
                (s.clone(), s)
            }
        };
        env.push(("TMPDIR".into(), tmp));
        env.push(("HOME".into(), home));
        env.extend(spec.env.iter().cloned());
        let mut cmd = match self.backend {
            Backend::Bubblewrap => {
                let mut c = Command::new(bwrap_path());
                c.args(["--unshare-all", "--die-with-parent", "--new-session"]);
                c.args(["--hostname", "sandbox"]);
                for p in SYSTEM_RO {
                    c.arg("--ro-bind-try").arg(p).arg(p);
                }
                c.arg("--ro-bind-try").arg(KERNEL_RO).arg(KERNEL_RO);
                // `--dev` mounts a private tmpfs on /dev, owned by the sandbox user, with an empty
                // /dev/shm folder in it: semaphores work, stay private and end with the run.
                c.args(["--proc", "/proc", "--dev", "/dev"]);
                c.arg("--bind").arg(&m.scratch).arg("/tmp");
                // After /tmp, so that a read-only path under /tmp (a virtual environment built
                // in a temporary folder) is shown there as under the builtin backend, not hidden
                // by the scratch folder.
                for p in &self.config.read_only_paths {
                    c.arg("--ro-bind").arg(p).arg(p);
                }
                c.arg("--ro-bind").arg(&m.harness).arg(SANDBOX_HARNESS);
                c.arg("--bind").arg(&m.workspace).arg(SANDBOX_WORKSPACE);
                // The root is a tmpfs bubblewrap builds; nothing but the binds may be written.
                c.args(["--remount-ro", "/"]);
                c.args(["--chdir", SANDBOX_WORKSPACE, "--"]);
                c.args(&spec.argv);
                c
            }
            Backend::Builtin => {
                let mut c = Command::new("/usr/bin/unshare");
                c.args([
                    "--user",
                    "--map-root-user",
                    "--net",
                    "--pid",
                    "--fork",
                    "--kill-child",
                    "--",
                ]);
                c.args(&spec.argv);
                c.current_dir(&m.workspace);
                c
            }
            Backend::None => {
                let mut c =
                    Command::new(resolve(program).unwrap_or_else(|| PathBuf::from(program)));
                c.args(&spec.argv[1..]);
                c.current_dir(&m.workspace);
                c
            }
            Backend::Container => return self.container_command(m, spec, env, fifo),
        };
        cmd.env_clear();
        cmd.envs(env);
        if let Some(uid) = m.user {
            // std drops the supplementary groups itself when it changes user as root.
            cmd.uid(uid).gid(uid);
        }
        Ok((cmd, program.clone()))
    }
}

impl Launch<'_> {
    /// `ENGINE exec` of `spec` in the workspace's container, as the sandbox user, in the
    /// image's working directory, with `env` (its `PATH` after the image's own folders) and the
    /// report descriptor passed on as descriptor 3: podman passes the pipe in, and for docker
    /// the command runs behind a shell that opens the report `fifo` as descriptor 3.
    fn container_command(
        &self,
        m: &Mounts,
        spec: &RunSpec,
        mut env: Vec<(String, String)>,
        fifo: Option<&str>,
    ) -> Result<(Command, String), EnvError> {
        let program = spec.argv[0].clone();
        let start = |reason: String| EnvError::Start {
            program: program.clone(),
            backend: Backend::Container,
            reason,
            source: None,
        };
        let (Some(container), Some(image)) = (&m.container, self.image) else {
            return Err(start("the workspace has no container".into()));
        };
        let engine = &container.engine;
        let mut path: Vec<&str> = image.path.iter().map(String::as_str).collect();
        path.push(CONTAINER_PATH);
        let path = path.join(":");
        for (k, v) in env.iter_mut() {
            if k == "PATH" && v == PATH_ENV {
                *v = path.clone();
            }
        }
        let mut c = engine.command();
        c.arg("exec");
        if spec.report_pipe && fifo.is_none() {
            c.arg("--preserve-fds=1");
        }
        let user = m
            .user
            .or_else(|| (!crate::lease::is_root()).then(crate::lease::current_uid));
        if let Some(uid) = user {
            c.arg("--user").arg(format!("{uid}:{uid}"));
        }
        c.args(["--workdir", &image.workdir]);
        // A variable set twice (`HOME` of an agent) is given once, with its last value.
        for (i, (k, v)) in env.iter().enumerate() {
            if !env[i + 1..].iter().any(|(later, _)| later == k) {
                c.arg("-e").arg(format!("{k}={v}"));
            }
        }
        c.arg(container.id());
        if let Some(fifo) = fifo {
            c.args(["/bin/sh", "-c", "exec 3>\"$0\" && exec \"$@\"", fifo]);
        }
        c.args(&spec.argv);
        Ok((c, program))
    }
}

/// A launched process, the read end of its report pipe (or FIFO), and the FIFO it needs.
pub(crate) struct Launched {
    pub child: std::process::Child,
    pub report: Option<std::fs::File>,
    pub fifo: Option<ReportFifo>,
}

/// Why one launch failed.
#[derive(Debug)]
pub(crate) enum LaunchError {
    /// A system call of the launch failed (pipe, fork, the set-up in the child, exec).
    Os(std::io::Error),
    /// The harness could not prepare the launch (the Landlock rules, an empty command).
    Setup(EnvError),
}

/// Runs `attempt` once more when it fails (telling `retried` why); both errors when the second
/// attempt fails too.
pub(crate) fn retry_once<T, E>(
    mut attempt: impl FnMut() -> Result<T, E>,
    retried: impl FnOnce(&E),
) -> Result<T, (E, E)> {
    match attempt() {
        Ok(v) => Ok(v),
        Err(first) => {
            retried(&first);
            attempt().map_err(|second| (first, second))
        }
    }
}

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LaunchError::Os(e) => e.fmt(f),
            LaunchError::Setup(e) => e.fmt(f),
        }
    }
}

fn bwrap_path() -> PathBuf {
    resolve("bwrap").unwrap_or_else(|| PathBuf::from("/usr/bin/bwrap"))
}

/// Looks `program` up on the sandbox PATH.
pub(crate) fn resolve(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    PATH_ENV
        .split(':')
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
}

fn set_limits(l: &Limits) -> std::io::Result<()> {
    let set = |res, v: u64| {
        let r = libc::rlimit {
            rlim_cur: v as libc::rlim_t,
            rlim_max: v as libc::rlim_t,
        };
        #[allow(unsafe_code)]
        // SAFETY: setrlimit with a valid pointer to a stack value.
        let rc = unsafe { libc::setrlimit(res, &r) };
        if rc < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    set(libc::RLIMIT_CPU, l.cpu_seconds)?;
    set(libc::RLIMIT_AS, l.address_space_bytes)?;
    set(libc::RLIMIT_FSIZE, l.file_size_bytes)?;
    set(libc::RLIMIT_NOFILE, l.open_files)?;
    set(libc::RLIMIT_NPROC, l.processes)?;
    set(libc::RLIMIT_CORE, 0)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_failed_launch_is_tried_exactly_once_more() {
        let mut calls = 0;
        let mut told = None;
        let r: Result<u32, (String, String)> = retry_once(
            || {
                calls += 1;
                if calls == 1 {
                    Err("first".to_owned())
                } else {
                    Ok(7)
                }
            },
            |e| told = Some(e.clone()),
        );
        assert_eq!(r, Ok(7));
        assert_eq!(calls, 2);
        assert_eq!(told.as_deref(), Some("first"));

        let mut calls = 0;
        let r: Result<u32, (u32, u32)> = retry_once(
            || {
                calls += 1;
                Err(calls)
            },
            |_| {},
        );
        assert_eq!(r, Err((1, 2)));
        assert_eq!(calls, 2);

        let mut calls = 0;
        let r: Result<u32, u32> = retry_once(
            || {
                calls += 1;
                Ok(1)
            },
            |_| panic!("nothing to retry"),
        )
        .map_err(|(a, _)| a);
        assert_eq!((r, calls), (Ok(1), 1));
    }

    #[test]
    fn a_second_launch_failure_names_the_program_and_the_os_error() {
        let config = SandboxConfig::default();
        let sb = Launch {
            config: &config,
            backend: Backend::None,
            image: None,
        };
        let spec = RunSpec {
            argv: vec!["python3".into()],
            env: Vec::new(),
            timeout: Duration::from_secs(1),
            report_pipe: false,
        };
        let einval = || LaunchError::Os(std::io::Error::from_raw_os_error(libc::EINVAL));
        let e = sb.failure(&spec, einval(), einval());
        assert!(e.is_start_failure());
        assert_eq!(
            e.to_string(),
            "cannot start python3 under the none sandbox: launching it failed twice: Invalid argument (os error 22)"
        );
        let source = std::error::Error::source(&e).expect("the OS error");
        assert_eq!(source.to_string(), "Invalid argument (os error 22)");
        let ebadfd = LaunchError::Os(std::io::Error::from_raw_os_error(libc::EBADFD));
        let e = sb.failure(&spec, ebadfd, einval());
        assert!(
            e.to_string().contains(
                "(first: File descriptor in bad state (os error 77); then: Invalid argument (os error 22))"
            ),
            "{e}"
        );
    }
}

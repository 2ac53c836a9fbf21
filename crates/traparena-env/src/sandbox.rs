//! The process sandbox: runs a command on a workspace with isolation, limits and a timeout.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use traparena_task::ImageEnv;

use crate::base::{
    BUILTIN_CAVEATS, Backend, BackendChoice, ContainerConfig, INSTALL_BUBBLEWRAP, Limits, Mounts,
    ProcessOutcome, RunSpec, SANDBOX_HARNESS, SANDBOX_WORKSPACE, SandboxConfig,
};
use crate::container::{DEFAULT_WORKDIR, Pool, Recipe};
use crate::engine::{Container, Engine};
use crate::error::EnvError;
use crate::launch::{Launch, Launched, retry_once};
use crate::lease::{UserLease, is_root};
use crate::running::{Drain, Extras, Keep, KillSwitch, Running, pidfd_open};

mod probe;
use probe::{probe_builtin, probe_bwrap};

/// A process sandbox with a chosen backend.
#[derive(Debug, Clone)]
pub struct Sandbox {
    config: SandboxConfig,
    backend: Backend,
    root: bool,
    warnings: Vec<String>,
    /// The container engine and its pool (the container backend).
    engine: Option<(Engine, Arc<Pool>)>,
    /// The image of the task this sandbox runs (see [`Sandbox::for_task`]).
    image: Option<ImageEnv>,
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
    ///
    /// A task that names a container image (`traparena_task::ImageEnv`) runs in that image
    /// under the container backend; under any other backend its runs are refused
    /// ([`EnvError::Start`], saying to use the container backend). A task that names none
    /// keeps this sandbox's image ([`Sandbox::with_image`]), if it has one.
    pub fn for_task(&self, task: &traparena_task::Task) -> Sandbox {
        let mut sb = match &task.spec.setup {
            Some(s) => self.with_read_only_paths(&s.visible_paths()),
            None => self.clone(),
        };
        if task.spec.image.is_some() {
            sb.image = task.spec.image.clone();
        }
        sb
    }

    /// This sandbox running in `image` (the container backend; see [`Sandbox::for_task`]).
    pub fn with_image(&self, image: ImageEnv) -> Sandbox {
        let mut sb = self.clone();
        sb.image = Some(image);
        sb
    }

    /// The image runs go into: the task's, else the configured default
    /// ([`ContainerConfig::image`](crate::ContainerConfig::image)).
    pub fn image(&self) -> Option<ImageEnv> {
        crate::container::image_for(self.image.as_ref(), self.config.container.image.as_deref())
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
                probe_builtin(root, &config)
                    .map_err(|reason| unavailable("builtin", reason.to_string()))?;
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
            BackendChoice::Container => Backend::Container,
            BackendChoice::Isolated => match probe_bwrap(root, &config) {
                Ok(()) => Backend::Bubblewrap,
                Err(e1) => {
                    probe_builtin(root, &config).map_err(|e2| {
                        unavailable(
                            "isolated",
                            format!("bubblewrap: {e1}; builtin: {e2}; {INSTALL_BUBBLEWRAP}"),
                        )
                    })?;
                    warnings.push(format!(
                        "bubblewrap unavailable ({e1}); using the builtin sandbox: {BUILTIN_CAVEATS}; {INSTALL_BUBBLEWRAP}"
                    ));
                    Backend::Builtin
                }
            },
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
        let engine = match backend {
            Backend::Container => Some(container_engine(&config.container, &mut warnings)?),
            _ => None,
        };
        Ok(Sandbox {
            config,
            backend,
            root,
            warnings,
            engine,
            image: None,
        })
    }

    /// A sandbox that isolates nothing, for trusted harness commands (`run_host`).
    pub(crate) fn unisolated(config: SandboxConfig) -> Sandbox {
        Sandbox {
            config,
            backend: Backend::None,
            root: false,
            warnings: Vec::new(),
            engine: None,
            image: None,
        }
    }

    /// The container engine (the container backend).
    pub(crate) fn engine(&self) -> Option<&Engine> {
        self.engine.as_ref().map(|(e, _)| e)
    }

    /// This sandbox's settings for workspaces whose code never runs: they only take patches
    /// and give diffs (an importer's scratch copies). It starts no container, and a command
    /// run in it is not isolated (the `none` backend).
    pub fn for_patching(&self) -> Sandbox {
        match self.backend {
            Backend::Container => Sandbox {
                config: self.config.clone(),
                backend: Backend::None,
                root: self.root,
                warnings: Vec::new(),
                engine: None,
                image: None,
            },
            _ => self.clone(),
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
            container: None,
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
            Backend::Container => self
                .image()
                .map_or_else(|| DEFAULT_WORKDIR.to_owned(), |i| i.workdir)
                .into(),
            _ => mounts.workspace.to_string_lossy(),
        }
    }

    /// How the harness folder reads inside the sandbox.
    pub fn visible_harness<'a>(&self, mounts: &'a Mounts) -> std::borrow::Cow<'a, str> {
        match self.backend {
            Backend::Bubblewrap | Backend::Container => SANDBOX_HARNESS.into(),
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
        let image = self.image();
        let one_shot;
        let mounts = match (&self.engine, &image) {
            // A run on folders without a container of their own (`check_program`) gets one
            // for itself, removed with the run.
            (Some((engine, _)), Some(image)) if mounts.container.is_none() => {
                let recipe = Recipe {
                    image: image.clone(),
                    limits: self.config.limits.clone(),
                };
                let c = recipe.start(
                    engine,
                    &mounts.workspace,
                    &mounts.scratch,
                    &mounts.harness,
                    &[],
                )?;
                one_shot = Mounts {
                    container: Some(Arc::new(c)),
                    ..mounts.clone()
                };
                &one_shot
            }
            _ => mounts,
        };
        let mut first_failure = None;
        let launch = Launch {
            config: &self.config,
            backend: self.backend,
            image: image.as_ref(),
        };
        let Launched {
            mut child,
            report,
            fifo,
        } = retry_once(
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
            container: mounts.container.clone(),
            fifo,
            first_failure,
            done: false,
        })
    }

    /// A new workspace's folder (with `workspace/`, `scratch/` and `harness/` in it) and,
    /// under the container backend, the container they are mounted in: one from the pool,
    /// or started now.
    pub(crate) fn workspace_folder(
        &self,
    ) -> Result<(tempfile::TempDir, Option<Arc<Container>>), EnvError> {
        if let (Some((engine, pool)), Some(image)) = (&self.engine, self.image()) {
            let recipe = Recipe {
                image,
                limits: self.config.limits.clone(),
            };
            let slot = pool.take(engine, &recipe)?;
            return Ok((slot.dir, Some(slot.container)));
        }
        if self.backend == Backend::Container {
            return Err(self.no_image("a workspace"));
        }
        let dir = tempfile::Builder::new()
            .prefix("traparena-ws-")
            .tempdir()
            .map_err(crate::error::io(
                "create temporary folder",
                std::env::temp_dir(),
            ))?;
        for sub in ["workspace", "scratch", "harness"] {
            let p = dir.path().join(sub);
            std::fs::create_dir(&p).map_err(crate::error::io("create folder", &p))?;
        }
        Ok((dir, None))
    }

    fn no_image(&self, program: &str) -> EnvError {
        EnvError::Start {
            program: program.to_owned(),
            backend: self.backend,
            reason: "the container backend runs a task in its image, and this task names none \
                     (give one with --image, `container.image` of the sandbox settings)"
                .into(),
            source: None,
        }
    }

    /// The check before launching (see [`Sandbox::run`]).
    pub(crate) fn preflight(&self, m: &Mounts, spec: &RunSpec) -> Result<(), EnvError> {
        let Some(program) = spec.argv.first() else {
            return Ok(()); // `command` refuses an empty command
        };
        match (&self.image, self.backend) {
            // Programs are looked up in the image, by the engine.
            (_, Backend::Container) if self.image().is_some() => return Ok(()),
            (_, Backend::Container) => return Err(self.no_image(program)),
            (Some(image), _) => {
                return Err(EnvError::Start {
                    program: program.clone(),
                    backend: self.backend,
                    reason: format!(
                        "the task runs in the container image {}: run it under the container \
                         backend (--sandbox container)",
                        image.image
                    ),
                    source: None,
                });
            }
            (None, _) => {}
        }
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
            reason: reason.to_string(),
            source: None,
        })
    }
}

/// The configured container engine, checked to answer, with the containers that killed
/// harnesses left behind swept.
fn container_engine(
    config: &ContainerConfig,
    warnings: &mut Vec<String>,
) -> Result<(Engine, Arc<Pool>), EnvError> {
    let fail = |e: EnvError| unavailable("container", e.to_string());
    let engine = Engine::find(config.engine.as_deref(), &config.engine_args)?;
    engine.output(&["version"]).map_err(fail)?;
    match engine.sweep() {
        Ok(0) => {}
        Ok(n) => warnings.push(format!(
            "removed {n} container(s) that stopped harnesses left behind"
        )),
        Err(e) => return Err(fail(e)),
    }
    let pool = Pool::new(config.pool, engine.clone());
    Ok((engine, pool))
}

fn unavailable(backend: &str, reason: String) -> EnvError {
    EnvError::BackendUnavailable {
        backend: backend.into(),
        reason,
    }
}

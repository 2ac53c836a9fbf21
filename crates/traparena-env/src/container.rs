//! The container backend's containers: how one is started for a workspace (no network, a
//! read-only root, the limits, the three folders mounted), the folder a workspace gets with its
//! container, and the pool of containers started ahead of the workspaces that take them.
//!
//! A container belongs to one workspace and goes with it: a pooled container has never run
//! anything when a workspace takes it, and it is never given back.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use traparena_task::ImageEnv;

use crate::base::{Backend, Limits, SANDBOX_HARNESS};
use crate::engine::{Container, Engine, EngineKind, OWNER_LABEL, first_line, owner};
use crate::error::{EnvError, io};

/// Where the workspace is mounted in a container of an image that names no working directory
/// ([`ContainerConfig::image`](crate::ContainerConfig::image)).
pub(crate) const DEFAULT_WORKDIR: &str = "/workspace";
/// Where the scratch folder is mounted in a container (also `HOME` and `TMPDIR`).
pub(crate) const CONTAINER_TMP: &str = "/tmp";
/// `PATH` in a container after the image's own folders ([`ImageEnv::path`]).
pub(crate) const CONTAINER_PATH: &str =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A folder with `workspace/`, `scratch/` and `harness/`, and the container they are mounted in.
pub(crate) struct Slot {
    pub dir: tempfile::TempDir,
    pub container: Arc<Container>,
}

/// What a container is started from: the engine, the image and the limits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Recipe {
    pub image: ImageEnv,
    pub limits: Limits,
}

impl Recipe {
    /// Makes a folder and starts a container on it.
    pub(crate) fn slot(&self, engine: &Engine) -> Result<Slot, EnvError> {
        let dir = tempfile::Builder::new()
            .prefix("traparena-ws-")
            .tempdir()
            .map_err(io("create temporary folder", std::env::temp_dir()))?;
        let folders: Vec<PathBuf> = ["workspace", "scratch", "harness"]
            .iter()
            .map(|sub| dir.path().join(sub))
            .collect();
        for p in &folders {
            std::fs::create_dir(p).map_err(io("create folder", p))?;
        }
        let container = self.start(engine, &folders[0], &folders[1], &folders[2], &[])?;
        Ok(Slot {
            dir,
            container: Arc::new(container),
        })
    }

    /// Starts a container of the image on the three folders, with the host folders
    /// `read_only` shown read-only at their own paths (an agent's installation); it waits,
    /// running nothing, until commands are run in it.
    pub(crate) fn start(
        &self,
        engine: &Engine,
        workspace: &Path,
        scratch: &Path,
        harness: &Path,
        read_only: &[PathBuf],
    ) -> Result<Container, EnvError> {
        let l = &self.limits;
        let ulimit = |name: &str, v: u64| format!("{name}={v}:{v}");
        let volume =
            |from: &Path, at: &str, mode: &str| format!("{}:{at}:{mode}", from.to_string_lossy());
        let mut c = engine.command();
        c.args(["run", "--detach", "--init", "--network=none", "--read-only"]);
        if !crate::lease::is_root() && engine.kind == EngineKind::Podman {
            // Rootless: the harness's own user id is the same inside, so that the tested code
            // runs as it, not as the namespace's root, and can write the workspace.
            c.arg("--userns=keep-id");
        }
        c.args(["--hostname", "sandbox"]);
        c.arg("--label").arg(format!("{OWNER_LABEL}={}", owner()));
        for (name, v) in [
            ("cpu", l.cpu_seconds),
            ("fsize", l.file_size_bytes),
            ("nofile", l.open_files),
            ("nproc", l.processes),
            ("core", 0),
        ] {
            c.arg("--ulimit").arg(ulimit(name, v));
        }
        // The address-space limit becomes the container's memory (its cgroup's; engines have
        // no address-space rlimit), swap included; the process limit its cgroup's pids too.
        c.arg("--memory").arg(l.address_space_bytes.to_string());
        c.arg("--memory-swap")
            .arg(l.address_space_bytes.to_string());
        c.arg("--pids-limit").arg(l.processes.to_string());
        c.arg("-v")
            .arg(volume(workspace, &self.image.workdir, "rw"));
        c.arg("-v").arg(volume(scratch, CONTAINER_TMP, "rw"));
        c.arg("-v").arg(volume(harness, SANDBOX_HARNESS, "ro"));
        for p in read_only {
            c.arg("-v").arg(volume(p, &p.to_string_lossy(), "ro"));
        }
        c.args(["--workdir", &self.image.workdir]);
        c.args(["--entrypoint", "sleep", &self.image.image, "infinity"]);
        let out = c
            .output()
            .map_err(|e| start_failed(engine, &self.image, e.to_string()))?;
        if !out.status.success() {
            return Err(start_failed(engine, &self.image, first_line(&out.stderr)));
        }
        let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if id.is_empty() {
            return Err(start_failed(
                engine,
                &self.image,
                "it printed no container id".into(),
            ));
        }
        Ok(Container {
            id,
            engine: engine.clone(),
        })
    }
}

fn start_failed(engine: &Engine, image: &ImageEnv, why: String) -> EnvError {
    EnvError::Start {
        program: engine.program.to_string_lossy().into_owned(),
        backend: Backend::Container,
        reason: format!("cannot start a container of {}: {why}", image.image),
        source: None,
    }
}

/// Containers started ahead: a workspace takes a ready one of its recipe, and the pool is
/// topped up in the background for the recipe taken last. At most `size` containers wait in
/// all, whatever the number of images (each SWE-bench instance has its own): the ones of the
/// images used longest ago make room.
pub(crate) struct Pool {
    size: usize,
    state: Mutex<PoolState>,
    /// Swept once more when the pool goes (at the end of a harness's run): a harness killed
    /// while its engine was starting a container may have left one after the first sweep.
    engine: Engine,
}

#[derive(Default)]
struct PoolState {
    /// Ready containers, oldest first.
    ready: std::collections::VecDeque<(Recipe, Slot)>,
    /// Containers being started, per recipe.
    starting: HashMap<Recipe, usize>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.state.lock().ready.clear();
        crate::engine::flush_removals();
        let _ = self.engine.sweep();
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("size", &self.size).finish()
    }
}

impl Pool {
    pub(crate) fn new(size: usize, engine: Engine) -> Arc<Pool> {
        Arc::new(Pool {
            size,
            state: Mutex::default(),
            engine,
        })
    }

    /// A ready slot of `recipe`, or one started now; then the pool is topped up in the
    /// background (the first take of a recipe starts its containers).
    pub(crate) fn take(
        self: &Arc<Pool>,
        engine: &Engine,
        recipe: &Recipe,
    ) -> Result<Slot, EnvError> {
        let ready = {
            let mut st = self.state.lock();
            let at = st.ready.iter().position(|(r, _)| r == recipe);
            at.and_then(|i| st.ready.remove(i)).map(|(_, slot)| slot)
        };
        let slot = match ready {
            Some(s) => s,
            None => recipe.slot(engine)?,
        };
        self.top_up(engine, recipe);
        Ok(slot)
    }

    /// Starts, on another thread, as many containers of `recipe` as the pool lacks of them.
    fn top_up(self: &Arc<Pool>, engine: &Engine, recipe: &Recipe) {
        let missing = {
            let mut st = self.state.lock();
            let have = st.ready.iter().filter(|(r, _)| r == recipe).count()
                + st.starting.get(recipe).copied().unwrap_or(0);
            let missing = self.size.saturating_sub(have);
            *st.starting.entry(recipe.clone()).or_default() += missing;
            missing
        };
        if missing == 0 {
            return;
        }
        let weak: Weak<Pool> = Arc::downgrade(self);
        let (engine, recipe) = (engine.clone(), recipe.clone());
        std::thread::spawn(move || {
            for _ in 0..missing {
                // A pool that is gone takes nothing more; a slot made meanwhile is dropped,
                // which removes its container.
                let slot = recipe.slot(&engine);
                let Some(pool) = weak.upgrade() else { return };
                let mut st = pool.state.lock();
                if let Some(n) = st.starting.get_mut(&recipe) {
                    *n = n.saturating_sub(1);
                }
                let Ok(slot) = slot else { continue };
                st.ready.push_back((recipe.clone(), slot));
                while st.ready.len() > pool.size {
                    // Room is made by the image used longest ago.
                    let old = st.ready.iter().position(|(r, _)| r != &recipe).unwrap_or(0);
                    st.ready.remove(old);
                }
            }
        });
    }
}

/// The image a task runs in, or the configured one at [`DEFAULT_WORKDIR`].
pub(crate) fn image_for(task: Option<&ImageEnv>, configured: Option<&str>) -> Option<ImageEnv> {
    task.cloned().or_else(|| {
        configured.map(|image| ImageEnv {
            image: image.to_owned(),
            workdir: DEFAULT_WORKDIR.into(),
            path: Vec::new(),
        })
    })
}

/// Kills every process of user `uid` in `container` (for a harness that is not root, whose
/// tested code runs as its own user id in a rootless engine's user namespace).
pub(crate) fn kill_user_in(container: &Container, uid: u32) {
    let user = format!("{uid}:{uid}");
    let _ = container.engine.output(&[
        "exec",
        "--user",
        &user,
        container.id(),
        "/bin/sh",
        "-c",
        "kill -9 -1 2>/dev/null; true",
    ]);
}

/// The report channel of a run in a container whose engine cannot pass a descriptor in
/// (docker's `exec` has no `--preserve-fds`): a FIFO in the workspace's harness folder, which
/// the run's shell opens as descriptor 3 before it starts the command. The harness holds a
/// write end of its own until the run has ended, so that the reader sees the end of the report
/// only then; the FIFO goes with the run.
#[derive(Debug)]
pub(crate) struct ReportFifo {
    /// The FIFO on the host.
    path: PathBuf,
    /// The FIFO as the container sees it.
    pub seen: String,
    /// The harness's own write end (see above); dropped when the run has ended.
    pub keeper: Option<std::fs::File>,
}

impl ReportFifo {
    /// Makes the FIFO in `harness` (seen at `seen_harness`): it and its read end.
    pub(crate) fn create(
        harness: &Path,
        seen_harness: &str,
    ) -> std::io::Result<(ReportFifo, std::fs::File)> {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::OpenOptionsExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("report-{}.fifo", NEXT.fetch_add(1, Ordering::Relaxed));
        let path = harness.join(&name);
        let c = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        #[allow(unsafe_code)]
        // SAFETY: mkfifo reads a valid C string; no memory of ours is written.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let fifo = ReportFifo {
            path,
            seen: format!("{seen_harness}/{name}"),
            keeper: None,
        };
        // Writable by the sandbox user too (the umask may have taken bits off).
        std::fs::set_permissions(
            &fifo.path,
            std::os::unix::fs::PermissionsExt::from_mode(0o622),
        )?;
        // The read end first (without a writer it would block), then the harness's write end.
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo.path)?;
        let keeper = std::fs::OpenOptions::new().write(true).open(&fifo.path)?;
        #[allow(unsafe_code)]
        // SAFETY: fcntl on a descriptor owned here; the reader blocks from now on.
        unsafe {
            use std::os::fd::AsRawFd;
            let fd = reader.as_raw_fd();
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        let mut fifo = fifo;
        fifo.keeper = Some(keeper);
        Ok((fifo, reader))
    }
}

impl Drop for ReportFifo {
    fn drop(&mut self) {
        self.keeper.take();
        let _ = std::fs::remove_file(&self.path);
    }
}

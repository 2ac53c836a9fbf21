//! Agent processes: an external agent (a coding agent program) running in an episode's sandbox
//! for as long as it works, with the workspace as its working folder and, for a network, only
//! the model proxy. Under the container backend it runs in a container of the task's image of
//! its own (`agent_image`).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};

use traparena_task::process::fill_placeholders;
use traparena_task::{AgentCommand, AgentExit};

use crate::agent_image::InImage;
use crate::base::{Backend, RunSpec};
use crate::bridge::Bridge;
use crate::engine::Container;
use crate::error::{EnvError, io};
use crate::lease::UserLease;
use crate::running::{Extras, Finished, Keep, KillSwitch};
use crate::sandbox::Sandbox;
use crate::workspace::Workspace;

/// The interpreter that runs the sandbox side of the network bridge.
pub(crate) const BRIDGE_PYTHON: &str = "/usr/bin/python3";
const SHIM_NET: &str = include_str!("shims/tp_agent_net.py");
const SHIM_NET_NAME: &str = "tp_agent_net.py";
/// The agent's home folder, under the scratch folder (so `/tmp/home` under bubblewrap).
const HOME_DIR: &str = "home";

/// An agent process running in an episode's sandbox, started by
/// [`Environment::spawn_agent`](crate::Environment::spawn_agent).
///
/// [`AgentProcess::wait`] waits for it to end; [`AgentKiller::kill`] ends it from another
/// thread. Dropping it unwaited kills it: its process tree, and its network bridge, never
/// outlive it.
#[derive(Debug)]
pub struct AgentProcess {
    // Fields drop in this order: the process tree first (see `Drop`), then the bridge it
    // used, then its container, then the lease of its user id.
    keeper: Option<Keeper>,
    switch: Arc<KillSwitch>,
    bridge: Option<Bridge>,
    /// The agent's own container (the container backend), removed once the process ended.
    container: Option<Arc<Container>>,
    home: PathBuf,
    _lease: Option<Arc<UserLease>>,
}

/// The thread that launched the process and waits for it. It must live exactly as long as the
/// process: bubblewrap's `--die-with-parent` (and any `PR_SET_PDEATHSIG`) fires when the
/// *thread* that forked it ends, so a launch from a short-lived thread — a pooled blocking
/// thread that retires after a few idle seconds — would kill an agent that is still working.
#[derive(Debug)]
struct Keeper {
    thread: std::thread::JoinHandle<()>,
    finished: mpsc::Receiver<Result<Finished, EnvError>>,
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if let Some(k) = self.keeper.take() {
            self.switch.kill();
            let _ = k.finished.recv();
            let _ = k.thread.join();
        }
        if let Some(b) = self.bridge.take() {
            b.stop();
        }
        if let Some(c) = self.container.take() {
            crate::agent_image::remove(c);
        }
    }
}

/// Kills an agent process's whole tree, from any thread (see [`AgentProcess::killer`]).
///
/// Killing is idempotent, and does nothing once the process has ended.
#[derive(Debug, Clone)]
pub struct AgentKiller {
    switch: Arc<KillSwitch>,
}

impl AgentKiller {
    /// Kills the process and everything it started; [`AgentProcess::wait`] then returns with
    /// [`AgentExit::killed`] set. Nothing when it has already ended.
    pub fn kill(&self) {
        self.switch.kill();
    }
}

impl AgentProcess {
    /// A handle that kills this process from any thread, also while [`AgentProcess::wait`]
    /// blocks.
    pub fn killer(&self) -> AgentKiller {
        AgentKiller {
            switch: self.switch.clone(),
        }
    }

    /// The agent's home folder on the host.
    pub fn home(&self) -> &Path {
        &self.home
    }

    pub(crate) fn switch(&self) -> Arc<KillSwitch> {
        self.switch.clone()
    }

    /// Blocks until the process ends by itself, reaches its timeout (its tree is killed:
    /// [`AgentExit::timed_out`]) or is killed ([`AgentExit::killed`]). When it returns,
    /// nothing the process started is left running (as after [`Sandbox::run`]), its network
    /// bridge is closed and, under the container backend, its container is removed. `Err`
    /// only when waiting for it failed.
    ///
    /// Under an isolating backend with a model proxy, a process that a signal ended shows as
    /// exit status 128 + the signal (it ran as the child of the sandbox's network forwarder;
    /// under the container backend, the engine's `exec` reports it so).
    /// Its standard output and error are cut to their *last* [`Limits::output_bytes`] bytes
    /// each.
    ///
    /// [`Limits::output_bytes`]: crate::Limits::output_bytes
    pub fn wait(mut self) -> Result<AgentExit, EnvError> {
        let keeper = self.keeper.take().expect("a process is waited for once");
        let finished = keeper.finished.recv().unwrap_or_else(|_| {
            Err(EnvError::AgentCommand {
                reason: "the thread that waited for the agent process ended without a result"
                    .into(),
            })
        });
        let _ = keeper.thread.join();
        if let Some(b) = self.bridge.take() {
            b.stop();
        }
        if let Some(c) = self.container.take() {
            crate::agent_image::remove(c);
        }
        let home = std::mem::take(&mut self.home);
        let finished = finished?;
        let out = finished.outcome;
        Ok(AgentExit {
            exit_code: out.exit_code,
            signal: out.signal,
            timed_out: out.timed_out,
            killed: finished.killed,
            stdout: out.stdout.text,
            stderr: out.stderr.text,
            home,
        })
    }
}

/// Starts `cmd` on `workspace` under `sandbox` (see
/// [`Environment::spawn_agent`](crate::Environment::spawn_agent)).
pub(crate) fn spawn(
    sandbox: &Sandbox,
    workspace: &mut Workspace,
    cmd: &AgentCommand,
) -> Result<AgentProcess, EnvError> {
    let Some(program) = cmd.argv.first() else {
        return Err(EnvError::AgentCommand {
            reason: "the command is empty".into(),
        });
    };
    let mounts = workspace.mounts().clone();
    let mut limits = sandbox.config().limits.clone();
    // An agent works for its whole episode, not for one test run.
    limits.cpu_seconds = limits
        .cpu_seconds
        .max(cmd.timeout.as_secs().saturating_add(1));
    if let Some(bytes) = cmd.address_space_bytes {
        limits.address_space_bytes = bytes;
    }
    let sandbox = sandbox
        .with_read_only_paths(&cmd.read_only_paths)
        .with_limits(limits);
    let home = mounts.scratch.join(HOME_DIR);
    make_home(&home, mounts.user)?;
    for (rel, content) in &cmd.files {
        write_home_file(&home, rel, content, mounts.user)?;
    }
    workspace.exclude(&cmd.exclude);

    let ws = sandbox.visible_workspace(&mounts).into_owned();
    let seen_home = match sandbox.backend() {
        Backend::Bubblewrap | Backend::Container => format!("/tmp/{HOME_DIR}"),
        _ => home.to_string_lossy().into_owned(),
    };
    let fill = |s: &str| fill_placeholders(s, &ws, &seen_home);
    let argv: Vec<String> = cmd.argv.iter().map(|a| fill(a)).collect();
    let mut env = vec![("HOME".to_owned(), seen_home.clone())];
    env.extend(cmd.env.iter().map(|(k, v)| (k.clone(), fill(v))));
    let agent = RunSpec {
        argv,
        env,
        timeout: cmd.timeout,
        report_pipe: false,
    };
    if sandbox.backend() == Backend::Container {
        // In a container of its own, in the task's image.
        let InImage {
            mounts,
            container,
            bridge,
        } = crate::agent_image::prepare(&sandbox, &mounts, cmd)?;
        let (keeper, switch) = match launch(sandbox, mounts, agent, None, program) {
            Ok(started) => started,
            Err(e) => {
                drop(bridge);
                crate::agent_image::remove(container);
                return Err(e);
            }
        };
        return Ok(AgentProcess {
            keeper: Some(keeper),
            switch,
            bridge,
            container: Some(container),
            home,
            _lease: workspace.lease(),
        });
    }
    // The agent's own program, checked as a test command's is (the bridge's interpreter is
    // checked by the launch itself).
    sandbox.preflight(&mounts, &agent)?;

    let bridged = match (sandbox.backend(), cmd.proxy_port) {
        (Backend::Bubblewrap | Backend::Builtin, Some(port)) => Some(port),
        // No isolation: the process reaches the host's loopback, the proxy with it (the
        // container backend has its own way in, above).
        (Backend::None | Backend::Container, _) | (_, None) => None,
    };
    let (spec, bridge) = match bridged {
        None => (agent, None),
        Some(port) => {
            let (spec, bridge) = bridge_to(&sandbox, &mounts, port, agent)?;
            (spec, Some(bridge))
        }
    };
    let (keeper, switch) = launch(sandbox, mounts, spec, bridged, program)?;
    Ok(AgentProcess {
        keeper: Some(keeper),
        switch,
        bridge,
        container: None,
        home,
        _lease: workspace.lease(),
    })
}

/// `agent` run behind the network bridge to the host's loopback `port`: the bridge started,
/// and the command that runs the agent under the bridge's shim.
fn bridge_to(
    sandbox: &Sandbox,
    mounts: &crate::base::Mounts,
    port: u16,
    agent: RunSpec,
) -> Result<(RunSpec, Bridge), EnvError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let shim = mounts.harness.join(SHIM_NET_NAME);
    std::fs::write(&shim, SHIM_NET).map_err(io("write", &shim))?;
    // Short: a socket's path has at most 107 bytes, and the harness folder's is the host's
    // under the builtin backend. The folder is this workspace's alone.
    let name = format!("proxy-{}.sock", NEXT.fetch_add(1, Ordering::Relaxed));
    let bridge = Bridge::start(&mounts.harness.join(&name), port, mounts.user)?;
    let harness = sandbox.visible_harness(mounts).into_owned();
    let mut argv = vec![
        BRIDGE_PYTHON.to_owned(),
        "-I".into(),
        "-S".into(),
        format!("{harness}/{SHIM_NET_NAME}"),
        port.to_string(),
        format!("{harness}/{name}"),
        "--".into(),
    ];
    argv.extend(agent.argv);
    Ok((RunSpec { argv, ..agent }, bridge))
}

/// Starts `spec` on a thread that keeps it until it ends: that thread, and the switch that
/// stops the process tree. A failed start names the agent's `program`, also when what failed
/// was the bridge's interpreter.
fn launch(
    sandbox: Sandbox,
    mounts: crate::base::Mounts,
    spec: RunSpec,
    bridged: Option<u16>,
    program: &str,
) -> Result<(Keeper, Arc<KillSwitch>), EnvError> {
    let extras = Extras {
        net_port: bridged,
        keep: Keep::End,
    };
    let (started_tx, started_rx) = mpsc::channel();
    let (finished_tx, finished_rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("tp-agent".into())
        .spawn(move || match sandbox.start(&mounts, &spec, &extras) {
            Ok(running) => {
                let _ = started_tx.send(Ok(running.switch()));
                let _ = finished_tx.send(running.wait());
            }
            Err(e) => {
                let _ = started_tx.send(Err(e));
            }
        })
        .map_err(|e| EnvError::Spawn {
            program: program.to_owned(),
            source: e,
        })?;
    let started = started_rx.recv().unwrap_or_else(|_| {
        Err(EnvError::AgentCommand {
            reason: "the thread that launches the agent process ended without a result".into(),
        })
    });
    let switch = match started {
        Ok(switch) => switch,
        Err(e) => {
            let _ = thread.join();
            return Err(match e {
                EnvError::Start {
                    program: p,
                    backend,
                    reason,
                    source,
                } if bridged.is_some() && p == BRIDGE_PYTHON => EnvError::Start {
                    program: p,
                    backend,
                    reason: format!("{reason} (it runs the network bridge of `{program}`)"),
                    source,
                },
                e => e,
            });
        }
    };
    let keeper = Keeper {
        thread,
        finished: finished_rx,
    };
    Ok((keeper, switch))
}

/// Creates the home folder (owned by `user`); a link or file in its place is removed first
/// (tested code may have left one in the scratch folder).
fn make_home(home: &Path, user: Option<u32>) -> Result<(), EnvError> {
    ensure_dir(home, user)
}

/// `dir` as a real folder (not a link), created for `user` when missing.
fn ensure_dir(dir: &Path, user: Option<u32>) -> Result<(), EnvError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => std::fs::remove_file(dir).map_err(io("remove", dir))?,
        Err(_) => {}
    }
    std::fs::create_dir(dir).map_err(io("create folder", dir))?;
    if let Some(uid) = user {
        std::os::unix::fs::chown(dir, Some(uid), Some(uid)).map_err(io("chown", dir))?;
    }
    Ok(())
}

/// Writes one of [`AgentCommand::files`] into `home`, never through a link: every folder on the
/// way is a real one (a link or file in the way is replaced), and so is the file. No process of
/// the sandbox user runs meanwhile (the environment starts one agent process at a time, and
/// every test run's processes end with it), so nothing can swap a link in between.
fn write_home_file(
    home: &Path,
    rel: &str,
    content: &[u8],
    user: Option<u32>,
) -> Result<(), EnvError> {
    let refused = |why: &str| EnvError::AgentCommand {
        reason: format!("file {rel:?}: {why}"),
    };
    if rel.contains('\0') {
        return Err(refused("the path contains a NUL byte"));
    }
    let mut parts = Vec::new();
    for c in Path::new(rel).components() {
        match c {
            Component::Normal(s) => parts.push(s),
            Component::CurDir => {}
            Component::ParentDir => return Err(refused("the path must not contain `..`")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(refused(
                    "the path must be relative to the agent's home folder",
                ));
            }
        }
    }
    let Some((name, folders)) = parts.split_last() else {
        return Err(refused("the path names no file"));
    };
    let mut dir = home.to_path_buf();
    for f in folders {
        dir.push(f);
        ensure_dir(&dir, user)?;
    }
    let target = dir.join(name);
    if let Ok(m) = std::fs::symlink_metadata(&target) {
        if m.is_dir() {
            std::fs::remove_dir_all(&target).map_err(io("remove", &target))?;
        } else {
            std::fs::remove_file(&target).map_err(io("remove", &target))?;
        }
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&target)
        .map_err(io("create", &target))?;
    file.write_all(content).map_err(io("write", &target))?;
    if let Some(uid) = user {
        std::os::unix::fs::fchown(&file, Some(uid), Some(uid)).map_err(io("chown", &target))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_files_stay_in_the_home_folder() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        make_home(&home, None).unwrap();
        for bad in ["/etc/x", "../x", "a/../../x", "a/../b", "", ".", "a\0b"] {
            let e = write_home_file(&home, bad, b"x", None).unwrap_err();
            assert!(matches!(e, EnvError::AgentCommand { .. }), "{bad:?}: {e}");
        }
        assert!(!dir.path().join("x").exists());
        write_home_file(&home, "./conf/a.yaml", b"a: 1\n", None).unwrap();
        assert_eq!(std::fs::read(home.join("conf/a.yaml")).unwrap(), b"a: 1\n");
    }

    #[test]
    fn links_in_the_way_of_home_files_are_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("f"), "keep").unwrap();
        let home = dir.path().join("home");
        std::os::unix::fs::symlink(&outside, &home).unwrap();
        make_home(&home, None).unwrap();
        assert!(!std::fs::symlink_metadata(&home).unwrap().is_symlink());
        std::os::unix::fs::symlink(&outside, home.join("d")).unwrap();
        std::os::unix::fs::symlink(outside.join("f"), home.join("f")).unwrap();
        write_home_file(&home, "d/f", b"new", None).unwrap();
        write_home_file(&home, "f", b"new", None).unwrap();
        assert_eq!(std::fs::read_to_string(outside.join("f")).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(home.join("d/f")).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(home.join("f")).unwrap(), "new");
    }
}

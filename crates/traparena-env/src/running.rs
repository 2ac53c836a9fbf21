//! A sandboxed process between its launch and its end: waiting for it with a deadline, killing
//! its whole tree from any thread, cleaning up after it and collecting its output.
//!
//! [`Sandbox::run`](crate::Sandbox::run) and agent processes share this one path.

use parking_lot::Mutex;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::base::{Backend, Captured, ProcessOutcome, SHM};
use crate::error::EnvError;

/// Which bytes of a long stream are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The first bytes (test output: the beginning says what ran).
    #[default]
    Start,
    /// The last bytes (an agent's log: the end says how it ended).
    End,
}

/// What a launch adds to a plain [`RunSpec`](crate::RunSpec).
#[derive(Debug, Clone, Default)]
pub(crate) struct Extras {
    /// A loopback TCP port the process may bind and connect to (the builtin backend's
    /// Landlock rules); `None`: no TCP at all.
    pub(crate) net_port: Option<u16>,
    /// Which part of stdout and stderr is kept.
    pub(crate) keep: Keep,
}

/// Kills a running process's tree from any thread, once it is told the process ended never
/// again (so a process group id is never signalled after the harness reaped its leader).
#[derive(Debug)]
pub(crate) struct KillSwitch {
    pub(crate) pid: i32,
    pub(crate) state: Mutex<SwitchState>,
}

#[derive(Debug, Default)]
pub(crate) struct SwitchState {
    /// The leader has ended (it is a zombie or reaped): nothing may be signalled any more.
    ended: bool,
    /// [`KillSwitch::kill`] killed it before it ended.
    killed: bool,
}

impl KillSwitch {
    /// Kills the process group (the waiter then cleans up the rest); nothing once it ended.
    pub(crate) fn kill(&self) {
        let mut s = self.state.lock();
        if !s.ended {
            kill_group(self.pid);
            s.killed = true;
        }
    }

    /// True once the process has ended.
    pub(crate) fn has_ended(&self) -> bool {
        self.state.lock().ended
    }

    /// Kills at the deadline; true unless [`KillSwitch::kill`] came first (or it ended).
    fn kill_at_deadline(&self) -> bool {
        let s = self.state.lock();
        if s.ended {
            return false;
        }
        kill_group(self.pid);
        !s.killed
    }

    /// Records that the leader ended (still unreaped); whether it was killed.
    fn end(&self) -> bool {
        let mut s = self.state.lock();
        s.ended = true;
        s.killed
    }
}

/// A launched process: see [`Sandbox::start`](crate::Sandbox::start).
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) child: Child,
    pub(crate) pid: i32,
    /// Readable once the process ended; `None` where the kernel has no `pidfd_open`.
    pub(crate) pidfd: Option<OwnedFd>,
    pub(crate) switch: Arc<KillSwitch>,
    pub(crate) started: Instant,
    pub(crate) deadline: Instant,
    pub(crate) stdout: Option<Drain>,
    pub(crate) stderr: Option<Drain>,
    pub(crate) report: Option<Drain>,
    pub(crate) program: String,
    pub(crate) backend: Backend,
    pub(crate) user: Option<u32>,
    /// The container the process runs in (the container backend), kept until the run ends.
    pub(crate) container: Option<Arc<crate::engine::Container>>,
    /// The report FIFO of a run in a docker container: its write end is let go once the run
    /// has ended, so that the report's reader sees its end.
    pub(crate) fifo: Option<crate::container::ReportFifo>,
    pub(crate) first_failure: Option<String>,
    /// Reaped and cleaned up (by `wait`; else `Drop` does it).
    pub(crate) done: bool,
}

/// How a process ended.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) outcome: ProcessOutcome,
    /// True when its [`KillSwitch`] killed it.
    pub(crate) killed: bool,
}

impl Running {
    /// The switch that kills this process's tree from another thread.
    pub(crate) fn switch(&self) -> Arc<KillSwitch> {
        Arc::clone(&self.switch)
    }

    /// Waits until the process ends, its deadline passes (the tree is then killed and the run
    /// `timed_out`) or its switch kills it; then makes sure nothing it started survives and
    /// collects its output. `Err` only when waiting itself fails.
    pub(crate) fn wait(mut self) -> Result<Finished, EnvError> {
        let mut timed_out = false;
        let waited = match self.wait_exit(Some(self.deadline)) {
            Ok(true) => Ok(()),
            Ok(false) => {
                timed_out = self.switch.kill_at_deadline();
                self.wait_exit(None).map(|_| ())
            }
            Err(e) => Err(e),
        };
        let killed = self.switch.end();
        let status = self.reap();
        let status = match (waited, status) {
            (Ok(()), Ok(status)) => status,
            (Err(source), _) | (_, Err(source)) => {
                return Err(EnvError::Spawn {
                    program: self.program.clone(),
                    source,
                });
            }
        };
        let grace = Duration::from_secs(2);
        let stdout = self.stdout.take().and_then(|d| d.collect(grace));
        let stderr = self.stderr.take().and_then(|d| d.collect(grace));
        let report = self.report.take().and_then(|d| d.collect(grace));
        let captured = |c: Option<Drained>| match c {
            Some(d) => Captured {
                text: d.text(),
                total_bytes: d.total,
                truncated: d.truncated,
            },
            None => Captured {
                text: String::new(),
                total_bytes: 0,
                truncated: true,
            },
        };
        use std::os::unix::process::ExitStatusExt;
        Ok(Finished {
            outcome: ProcessOutcome {
                exit_code: status.code(),
                signal: status.signal(),
                timed_out,
                stdout: captured(stdout),
                stderr: captured(stderr),
                report: report.map(|d| if d.truncated { Vec::new() } else { d.kept }),
                duration_ms: self.started.elapsed().as_millis() as u64,
                backend: self.backend,
                retried_start: self.first_failure.take(),
            },
            killed,
        })
    }

    /// True once the process ended (still unreaped), false when `deadline` passed first.
    fn wait_exit(&self, deadline: Option<Instant>) -> std::io::Result<bool> {
        loop {
            if ended_unreaped(self.pid)? {
                return Ok(true);
            }
            let left = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left,
                    _ => return Ok(false),
                },
                None => Duration::from_secs(60),
            };
            let ms = (left.as_millis() + 1).min(60_000) as i32;
            match &self.pidfd {
                Some(fd) => poll_readable(fd, ms)?,
                // No pidfd (a kernel before 5.3): look again shortly.
                None => std::thread::sleep(Duration::from_millis(ms.min(20) as u64)),
            }
        }
    }

    /// After the leader ended (or waiting failed): kills what is left of the tree, reaps the
    /// leader and removes what the sandbox user left in `/dev/shm`. Runs once.
    fn reap(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.done = true;
        // Nothing the command started may outlive it. Under bubblewrap and the builtin backend
        // the pid namespace ends with its first process, taking every other one with it; without
        // one, the process group and then every process of the sandbox user are killed. The
        // leader is not reaped yet, so its process group id cannot have been reused.
        kill_group(self.pid);
        match (self.backend, self.user, &self.container) {
            // In a container the engine's client is the leader, and what runs inside is not in
            // its process group: every process of the sandbox user goes, which a harness that
            // runs as root reaches from the host (no user namespace), else from inside.
            (Backend::None | Backend::Container, Some(uid), _) => kill_user(uid),
            (Backend::Container, None, Some(c)) => {
                crate::container::kill_user_in(c, crate::lease::current_uid())
            }
            _ => {}
        }
        let status = self.child.wait();
        if let Some(f) = &mut self.fifo {
            f.keeper.take();
        }
        // Without a mount namespace the tested code's semaphores and shared memory land in the
        // host's /dev/shm; what its user left there goes with the run.
        if matches!(self.backend, Backend::Builtin | Backend::None)
            && let Some(uid) = self.user
        {
            remove_files_of(Path::new(SHM), uid);
        }
        status
    }
}

impl Drop for Running {
    /// A process nobody waited for is killed with its tree and reaped.
    fn drop(&mut self) {
        if !self.done {
            self.switch.kill();
            let _ = self.wait_exit(None);
            self.switch.end();
            let _ = self.reap();
        }
    }
}

/// A pidfd for `pid`, readable once it ends; `None` where the kernel has none.
pub(crate) fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    #[allow(unsafe_code)]
    // SAFETY: pidfd_open takes plain integers; a non-negative result is a new descriptor that
    // nothing else owns.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0);
        (fd >= 0).then(|| OwnedFd::from_raw_fd(fd as i32))
    }
}

/// Waits up to `ms` milliseconds for `fd` to become readable (or a signal to arrive).
fn poll_readable(fd: &OwnedFd, ms: i32) -> std::io::Result<()> {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    #[allow(unsafe_code)]
    // SAFETY: one valid pollfd on the stack.
    let rc = unsafe { libc::poll(&mut p, 1, ms) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// True when the child `pid` has ended; it stays a zombie (not reaped), so its id and its
/// process group's id are not reused.
fn ended_unreaped(pid: i32) -> std::io::Result<bool> {
    loop {
        #[allow(unsafe_code)]
        // SAFETY: waitid writes into a zeroed siginfo_t on the stack; si_pid is valid to read
        // for a WEXITED result, and stays zero when no child changed state.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            if rc < 0 {
                Err(())
            } else {
                Ok(info.si_pid() != 0)
            }
        };
        match r {
            Ok(ended) => return Ok(ended),
            Err(()) => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

pub(crate) fn kill_group(pid: i32) {
    #[allow(unsafe_code)]
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// Kills every process of the sandbox user (catches children that left the process group):
/// a short-lived process running as that user sends SIGKILL to every process it may signal,
/// which on Linux excludes itself.
#[allow(clippy::disallowed_methods)] // traparena-env is where processes are spawned
fn kill_user(uid: u32) {
    let mut c = Command::new("/bin/true");
    c.uid(uid).gid(uid);
    #[allow(unsafe_code)]
    // SAFETY: kill is async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            libc::kill(-1, libc::SIGKILL);
            Ok(())
        });
    }
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _ = c.status();
    // SIGKILL is delivered at once but a process takes a moment to end: the run is over only
    // when none is left (bounded, as a process stuck in the kernel cannot be waited out).
    let until = Instant::now() + Duration::from_secs(5);
    while has_live_process(uid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether a process of `uid` that has not yet ended (a zombie has) is in `/proc`.
fn has_live_process(uid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        if !name
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            return false;
        }
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            return false;
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(str::trim)
                .unwrap_or("")
                .to_owned()
        };
        let real_uid = field("Uid:").split_whitespace().next().map(str::to_owned);
        real_uid.as_deref() == Some(uid.to_string().as_str()) && !field("State:").starts_with('Z')
    })
}

/// Removes the entries of `dir` (not below it) owned by `uid`, folders with what they hold.
/// Best effort: it runs after every process of `uid` has ended, and a failure only leaves files.
fn remove_files_of(dir: &Path, uid: u32) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // Never follows a link: a link is removed itself, a folder without crossing links.
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.uid() == uid && meta.is_dir() => {
                let _ = std::fs::remove_dir_all(&path);
            }
            Ok(meta) if meta.uid() == uid => {
                let _ = std::fs::remove_file(&path);
            }
            _ => {}
        }
    }
}

/// A stream read to its end on a thread of its own.
#[derive(Debug)]
pub(crate) struct Drain {
    rx: mpsc::Receiver<Drained>,
    handle: JoinHandle<()>,
}

/// What was read from a stream.
#[derive(Debug, Default)]
pub(crate) struct Drained {
    kept: Vec<u8>,
    total: u64,
    truncated: bool,
}

impl Drained {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }
}

impl Drain {
    pub(crate) fn start(r: impl Read + Send + 'static, cap: usize, keep: Keep) -> Drain {
        let (tx, rx) = mpsc::channel();
        let handle = std::thread::spawn(move || {
            let _ = tx.send(drain(r, cap, keep));
        });
        Drain { rx, handle }
    }

    /// What was read, when the stream ends within `grace` (a grandchild that escaped the kill
    /// may hold it open: then `None`, and the thread is left to finish on its own).
    fn collect(self, grace: Duration) -> Option<Drained> {
        let got = self.rx.recv_timeout(grace).ok();
        if got.is_some() {
            let _ = self.handle.join();
        }
        got
    }
}

/// Reads a stream to its end, keeping at most `cap` bytes: the first ones or the last ones.
fn drain(mut r: impl Read, cap: usize, keep: Keep) -> Drained {
    let mut kept = Vec::new();
    let mut total = 0u64;
    let mut buf = [0u8; 64 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                match keep {
                    Keep::Start => {
                        let room = cap.saturating_sub(kept.len());
                        kept.extend_from_slice(&buf[..n.min(room)]);
                    }
                    Keep::End => {
                        kept.extend_from_slice(&buf[..n]);
                        // Cut back only once twice the cap is held: linear in what is read.
                        if kept.len() > cap.saturating_mul(2).max(buf.len()) {
                            kept.drain(..kept.len() - cap);
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    if kept.len() > cap {
        kept.drain(..kept.len() - cap);
    }
    let truncated = total > kept.len() as u64;
    if truncated && keep == Keep::End {
        // The cut may fall inside a character: drop its continuation bytes.
        let skip = kept
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        kept.drain(..skip);
    }
    Drained {
        kept,
        total,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drain_keeps_the_start_or_the_end() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let d = drain(&data[..], 1000, Keep::Start);
        assert_eq!(
            (d.kept.as_slice(), d.total, d.truncated),
            (&data[..1000], 300_000, true)
        );
        let d = drain(&data[..], 1000, Keep::End);
        assert_eq!(d.kept.as_slice(), &data[data.len() - 1000..]);
        assert!(d.truncated);
        let d = drain(&b"short"[..], 1000, Keep::End);
        assert_eq!((d.kept.as_slice(), d.truncated), (&b"short"[..], false));
    }

    #[test]
    fn the_kept_end_starts_on_a_character() {
        let text = "é".repeat(1000); // two bytes each
        let d = drain(text.as_bytes(), 101, Keep::End);
        assert_eq!(d.text(), "é".repeat(50));
    }
}

//! Plug-in programs: a long-lived program of the user's, started on the host, that the harness
//! talks to in lines over its standard input and output (the process plug-ins of
//! `traparena-process`: attackers, curators and agents written in any language).
//!
//! A plug-in is the researcher's own code, as trusted as a plug-in written in Rust and linked
//! in: it runs on the host, not in the sandbox, with the harness's environment plus its own
//! variables. What this module guarantees is that the harness never waits on it unboundedly
//! and never loses track of it:
//! - lines are written by a thread of their own, so a program that stops reading its input
//!   never blocks the caller;
//! - lines are read by a thread of their own, each cut off at [`PluginLimits::max_line_bytes`]
//!   (a flood becomes [`PluginEvent::TooLong`] and reading stops);
//! - standard error is drained to its end and only its last [`PluginLimits::stderr_bytes`] are
//!   kept;
//! - the program leads a process group of its own, killed whole when the handle is closed or
//!   dropped, and dies with the harness (its parent-death signal is SIGKILL, set from a thread
//!   that lives as long as the harness does).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::EnvError;
use crate::running::kill_group;

/// How to start a plug-in program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginCommand {
    /// argv; `argv[0]` is a path, or a name looked up on the harness's `PATH`.
    pub argv: Vec<String>,
    /// Variables set on top of the harness's environment.
    pub env: Vec<(String, String)>,
    /// The working folder (the folder of the spec that names the plug-in).
    pub dir: PathBuf,
}

/// The bounds of what the harness keeps of a plug-in's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginLimits {
    /// The longest line read from standard output; a longer one ends the reading.
    pub max_line_bytes: usize,
    /// How much of the end of standard error is kept.
    pub stderr_bytes: usize,
}

impl Default for PluginLimits {
    /// Lines of up to 8 MiB, the last 64 KiB of standard error.
    fn default() -> Self {
        PluginLimits {
            max_line_bytes: 8 << 20,
            stderr_bytes: 64 << 10,
        }
    }
}

/// What the reading thread saw on the plug-in's standard output, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginEvent {
    /// One line, without its line break.
    Line(String),
    /// A line longer than [`PluginLimits::max_line_bytes`]: how many bytes had come without a
    /// line break, and the first of them. Nothing more is read.
    TooLong {
        /// Bytes read of the line when it was cut off.
        bytes: usize,
        /// Its first 200 bytes (lossy UTF-8).
        start: String,
    },
    /// A line that is not UTF-8: its first 200 bytes, lossy. Nothing more is read.
    NotText {
        /// Its first 200 bytes (lossy UTF-8).
        start: String,
    },
    /// Standard output closed (the program ended or closed it). Always the last event.
    Closed,
}

/// How a plug-in program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginExit {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it (9 when the harness killed it).
    Signalled(i32),
}

impl PluginExit {
    /// `exit status N` or `killed by signal N`.
    pub fn describe(self) -> String {
        match self {
            PluginExit::Exited(c) => format!("exit status {c}"),
            PluginExit::Signalled(s) => format!("killed by signal {s}"),
        }
    }
}

/// The end of a stream kept while it is drained: its last bytes and how many came in all.
#[derive(Debug, Default)]
struct Tail {
    bytes: VecDeque<u8>,
    total: u64,
    done: bool,
}

/// A running plug-in program. Dropping it kills the program's process group.
#[derive(Debug)]
pub struct PluginProcess {
    child: Child,
    input: Option<Sender<Vec<u8>>>,
    stderr: Arc<(Mutex<Tail>, Condvar)>,
    exit: Option<PluginExit>,
}

/// Starts children from one thread that lives as long as the harness: the parent-death signal
/// fires when the thread that started a child ends, so a short-lived thread would take its
/// plug-ins with it.
type SpawnRequest = (Command, SyncSender<std::io::Result<Child>>);

fn spawner() -> &'static Mutex<Sender<SpawnRequest>> {
    static SPAWNER: OnceLock<Mutex<Sender<SpawnRequest>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("traparena-plugin-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("a thread can be started");
        Mutex::new(tx)
    })
}

impl PluginProcess {
    /// Starts `cmd`; every event of its standard output goes to `on_event`, on a thread of its
    /// own, [`PluginEvent::Closed`] last. A program that cannot be started is
    /// [`EnvError::Spawn`].
    pub fn start(
        cmd: &PluginCommand,
        limits: PluginLimits,
        on_event: impl FnMut(PluginEvent) + Send + 'static,
    ) -> Result<PluginProcess, EnvError> {
        let program = cmd.argv.first().cloned().unwrap_or_default();
        let spawn_error = |source| EnvError::Spawn {
            program: program.clone(),
            source,
        };
        if program.is_empty() {
            return Err(spawn_error(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the command is empty",
            )));
        }
        let mut c = new_command(&program);
        c.args(&cmd.argv[1..])
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&cmd.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[allow(unsafe_code)]
        // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
        unsafe {
            c.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        crate::orphan::die_with_harness(&mut c);
        let (reply, answer) = sync_channel(1);
        let sent = spawner().lock().send((c, reply));
        let mut child = match sent {
            Ok(()) => answer
                .recv()
                .unwrap_or_else(|_| Err(std::io::Error::other("the spawner thread ended"))),
            Err(_) => Err(std::io::Error::other("the spawner thread ended")),
        }
        .map_err(spawn_error)?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let (tx, rx) = channel::<Vec<u8>>();
        let tail = Arc::new((Mutex::new(Tail::default()), Condvar::new()));
        thread("traparena-plugin-in", move || write_lines(stdin, rx));
        thread("traparena-plugin-out", move || {
            read_lines(stdout, limits.max_line_bytes, on_event)
        });
        let kept = tail.clone();
        thread("traparena-plugin-err", move || {
            drain_tail(stderr, limits.stderr_bytes, &kept)
        });
        Ok(PluginProcess {
            child,
            input: Some(tx),
            stderr: tail,
            exit: None,
        })
    }

    /// The program's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Queues one line (a line break is added); never blocks. A line for a program that has
    /// closed its input, or ended, is dropped: the caller learns of the end from the events.
    pub fn send(&self, line: &str) {
        if let Some(tx) = &self.input {
            let mut bytes = Vec::with_capacity(line.len() + 1);
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
            let _ = tx.send(bytes);
        }
    }

    /// Closes the program's input after the lines already queued (it reads end of file).
    pub fn close_input(&mut self) {
        self.input = None;
    }

    /// How the program ended, if it has.
    pub fn exit(&mut self) -> Option<PluginExit> {
        if self.exit.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.exit = Some(exit_of(status));
        }
        self.exit
    }

    /// Closes the input, gives the program `grace` to end by itself, then kills its process
    /// group; returns how it ended. Waits at most `grace` plus the moment a kill takes.
    pub fn finish(&mut self, grace: Duration) -> PluginExit {
        self.close_input();
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Some(e) = self.exit() {
                // What it left running in its group goes with it.
                kill_group(self.child.id() as i32);
                return e;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.kill()
    }

    /// Kills the program's process group and reaps it; returns how it ended (by the kill, or
    /// earlier by itself).
    pub fn kill(&mut self) -> PluginExit {
        self.kill_group();
        if let Some(e) = self.exit {
            return e;
        }
        let e = match self.child.wait() {
            Ok(status) => exit_of(status),
            Err(_) => PluginExit::Signalled(libc::SIGKILL),
        };
        self.exit = Some(e);
        e
    }

    fn kill_group(&mut self) {
        // The group is the child's own (setsid). Once the child is reaped its id could in
        // time be another process's, so a reaped child's group is signalled only by `finish`,
        // right after the reaping.
        if self.exit.is_none() {
            kill_group(self.child.id() as i32);
        }
    }

    /// How many bytes the program has written to standard error so far: a mark for
    /// [`Self::stderr_since`].
    pub fn stderr_written(&self) -> u64 {
        self.stderr.0.lock().total
    }

    /// What the program wrote to standard error after `mark` (a [`Self::stderr_written`]),
    /// as much of it as is kept, waiting up to `wait` for the stream to close if the program
    /// has ended.
    pub fn stderr_since(&mut self, mark: u64, wait: Duration) -> String {
        let ended = self.exit().is_some();
        let (lock, cv) = &*self.stderr;
        let mut tail = lock.lock();
        if ended && !tail.done {
            cv.wait_for(&mut tail, wait);
        }
        let first_kept = tail.total - tail.bytes.len() as u64;
        let skip = mark.saturating_sub(first_kept) as usize;
        let kept: Vec<u8> = tail.bytes.iter().skip(skip).copied().collect();
        let text = String::from_utf8_lossy(&kept).into_owned();
        match first_kept.saturating_sub(mark) {
            0 => text,
            n => format!("[... {n} bytes left out]\n{text}"),
        }
    }

    /// The end of what the program wrote to standard error, waiting up to `wait` for the
    /// stream to close if the program has ended, so that its last words are in it. A folded
    /// head is noted as `[... N bytes left out]`.
    pub fn stderr(&mut self, wait: Duration) -> String {
        self.stderr_since(0, wait)
    }
}

impl Drop for PluginProcess {
    fn drop(&mut self) {
        self.input = None;
        if self.exit.is_none() {
            self.kill();
        }
    }
}

#[allow(clippy::disallowed_methods)] // traparena-env is where processes are spawned
fn new_command(program: &str) -> Command {
    Command::new(program)
}

fn thread(name: &str, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .expect("a thread can be started");
}

fn exit_of(status: std::process::ExitStatus) -> PluginExit {
    match (status.code(), status.signal()) {
        (Some(c), _) => PluginExit::Exited(c),
        (None, s) => PluginExit::Signalled(s.unwrap_or(0)),
    }
}

fn write_lines(mut stdin: ChildStdin, rx: Receiver<Vec<u8>>) {
    for line in rx {
        if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
            return;
        }
    }
}

fn start_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned()
}

fn read_lines(out: impl Read, max: usize, mut on_event: impl FnMut(PluginEvent)) {
    let mut reader = BufReader::with_capacity(64 << 10, out);
    let mut line: Vec<u8> = Vec::new();
    loop {
        let (found, used) = match reader.fill_buf() {
            Ok([]) | Err(_) => {
                if !line.is_empty() {
                    match String::from_utf8(std::mem::take(&mut line)) {
                        Ok(text) => on_event(PluginEvent::Line(text)),
                        Err(e) => on_event(PluginEvent::NotText {
                            start: start_of(e.as_bytes()),
                        }),
                    }
                }
                on_event(PluginEvent::Closed);
                return;
            }
            Ok(buf) => match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    line.extend_from_slice(&buf[..i]);
                    (true, i + 1)
                }
                None => {
                    line.extend_from_slice(buf);
                    (false, buf.len())
                }
            },
        };
        reader.consume(used);
        if line.len() > max {
            on_event(PluginEvent::TooLong {
                bytes: line.len(),
                start: start_of(&line),
            });
            on_event(PluginEvent::Closed);
            return;
        }
        if found {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            match String::from_utf8(std::mem::take(&mut line)) {
                Ok(text) => on_event(PluginEvent::Line(text)),
                Err(e) => {
                    on_event(PluginEvent::NotText {
                        start: start_of(e.as_bytes()),
                    });
                    on_event(PluginEvent::Closed);
                    return;
                }
            }
        }
    }
}

fn drain_tail(mut err: impl Read, keep: usize, tail: &(Mutex<Tail>, Condvar)) {
    let mut buf = [0u8; 8192];
    loop {
        match err.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut t = tail.0.lock();
                t.total += n as u64;
                t.bytes.extend(&buf[..n]);
                let extra = t.bytes.len().saturating_sub(keep);
                t.bytes.drain(..extra);
            }
        }
    }
    tail.0.lock().done = true;
    tail.1.notify_all();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &[u8], max: usize) -> Vec<PluginEvent> {
        let mut out = Vec::new();
        read_lines(input, max, |e| out.push(e));
        out
    }

    #[test]
    fn lines_are_split_and_a_last_line_without_a_break_still_counts() {
        assert_eq!(
            events(b"a\r\nb\n\nc", 10),
            [
                PluginEvent::Line("a".into()),
                PluginEvent::Line("b".into()),
                PluginEvent::Line(String::new()),
                PluginEvent::Line("c".into()),
                PluginEvent::Closed
            ]
        );
    }

    #[test]
    fn a_line_past_the_limit_or_not_text_ends_the_reading() {
        let long = events(b"ok\n0123456789abcdef\nnever\n", 8);
        assert_eq!(long[0], PluginEvent::Line("ok".into()));
        assert!(
            matches!(&long[1], PluginEvent::TooLong { bytes, start } if *bytes > 8 && start.starts_with("0123"))
        );
        assert_eq!(long[2..], [PluginEvent::Closed]);
        let bad = events(b"\xff\xfe\nnever\n", 100);
        assert!(matches!(&bad[0], PluginEvent::NotText { .. }));
        assert_eq!(bad[1..], [PluginEvent::Closed]);
    }
}

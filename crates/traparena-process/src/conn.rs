//! One running plug-in process and the answers due from it: lines are routed to the request
//! that waits for them (by episode when the process serves several at once), and a process
//! that fails is stopped and fails every request then and after with the same error.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde::Serialize;
use tokio::sync::oneshot;
use traparena_env::{PluginCommand, PluginEvent, PluginLimits, PluginProcess};

use crate::error::ProcessError;
use crate::protocol::{Declaration, Head, HelloOut, PROTOCOL, PluginRole};

/// How long a process is given to end by itself after its input is closed.
pub(crate) const GRACE: Duration = Duration::from_millis(500);

/// A line the plug-in wrote, for the request it answers.
type Answer = Result<String, ProcessError>;

/// What the reading thread and the requests share.
#[derive(Default)]
struct Routes {
    /// Requests waiting, by episode (`""`: the one request of a process that serves one).
    waiting: HashMap<String, oneshot::Sender<Answer>>,
    /// Set once the process failed: every request then fails with it.
    failed: Option<ProcessError>,
    /// Whether answers name their episode (the plug-in declared `concurrent`).
    concurrent: bool,
    /// Its output closed: nothing more will be routed.
    closed: bool,
}

/// A started plug-in process.
pub(crate) struct Conn {
    /// The plug-in's command, as error messages name it.
    pub plugin: String,
    process: Mutex<PluginProcess>,
    routes: Arc<Mutex<Routes>>,
    timeout: Duration,
}

impl Conn {
    /// Starts the program and shakes hands: sends `hello` for `role`, reads the declaration
    /// and checks its protocol and role.
    pub async fn start(
        cmd: &PluginCommand,
        plugin: &str,
        role: PluginRole,
        timeout: Duration,
    ) -> Result<(Arc<Conn>, Declaration), ProcessError> {
        let routes = Arc::new(Mutex::new(Routes::default()));
        let router = routes.clone();
        let name = plugin.to_owned();
        let process = PluginProcess::start(cmd, PluginLimits::default(), move |event| {
            route(&name, &router, event)
        })
        .map_err(|e| ProcessError::Start {
            plugin: plugin.to_owned(),
            reason: e.to_string(),
        })?;
        let conn = Arc::new(Conn {
            plugin: plugin.to_owned(),
            process: Mutex::new(process),
            routes,
            timeout,
        });
        let hello = HelloOut {
            kind: "hello",
            protocol: PROTOCOL,
            role,
        };
        let line = conn.ask("", &hello, "hello").await?;
        let declared = conn.declaration(&line, role)?;
        conn.routes.lock().concurrent = declared.concurrent;
        Ok((conn, declared))
    }

    fn declaration(&self, line: &str, role: PluginRole) -> Result<Declaration, ProcessError> {
        let refuse = |reason: String| {
            self.fail(ProcessError::Handshake {
                plugin: self.plugin.clone(),
                reason,
                line: clip(line),
            })
        };
        let d: Declaration = match serde_json::from_str(line) {
            Ok(d) => d,
            Err(e) => return Err(refuse(format!("its hello is not one ({e})"))),
        };
        if d.kind != "hello" {
            return Err(refuse(format!("it answered hello with `{}`", d.kind)));
        }
        if d.protocol != PROTOCOL {
            return Err(refuse(format!(
                "it speaks protocol {}, this harness protocol {PROTOCOL}",
                d.protocol
            )));
        }
        if d.role != role {
            return Err(refuse(format!(
                "it is {} {}, named as {} {}",
                article(d.role),
                d.role.as_str(),
                article(role),
                role.as_str()
            )));
        }
        if role != PluginRole::Attacker
            && (d.access.is_some() || d.attack_role.is_some() || d.schedule.is_some())
        {
            return Err(refuse(format!(
                "`access`, `attack_role` and `schedule` are an attacker's, not {} {}'s",
                article(role),
                role.as_str()
            )));
        }
        Ok(d)
    }

    /// Sends `message` and waits for the line that answers it: the next line of a process
    /// that serves one episode, the next naming `episode` of one that serves several. A
    /// process that does not answer within its timeout, or that fails, is stopped.
    pub async fn ask(
        &self,
        episode: &str,
        message: &impl Serialize,
        asked: &str,
    ) -> Result<String, ProcessError> {
        let (tx, rx) = oneshot::channel();
        {
            let mut r = self.routes.lock();
            if let Some(e) = &r.failed {
                return Err(stopped(&self.plugin, e));
            }
            if r.closed {
                drop(r);
                return Err(self.ended(asked));
            }
            let key = if r.concurrent { episode } else { "" };
            r.waiting.insert(key.to_owned(), tx);
        }
        self.tell(message);
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(Ok(line))) => Ok(line),
            // The reading thread found the process's output unreadable: it is stopped here.
            Ok(Ok(Err(e))) => Err(self.fail(e)),
            Ok(Err(_)) => Err(self.ended(asked)),
            Err(_) => Err(self.fail(ProcessError::Timeout {
                plugin: self.plugin.clone(),
                asked: asked.to_owned(),
                seconds: self.timeout.as_secs_f64(),
            })),
        }
    }

    /// Sends a message that has no answer.
    pub fn tell(&self, message: &impl Serialize) {
        let line = serde_json::to_string(message).expect("protocol messages serialise");
        self.process.lock().send(&line);
    }

    /// The error of a process whose reading ended with nothing routed: how it ended.
    fn ended(&self, asked: &str) -> ProcessError {
        if let Some(e) = &self.routes.lock().failed {
            return e.clone();
        }
        let mut p = self.process.lock();
        // Its output closes as it ends: give the ending a moment to be seen.
        let until = std::time::Instant::now() + Duration::from_millis(300);
        while p.exit().is_none() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        let how = p
            .exit()
            .map_or("closed its output".into(), |e| e.describe());
        let stderr = p.stderr(Duration::from_millis(200));
        drop(p);
        self.fail(ProcessError::Ended {
            plugin: self.plugin.clone(),
            how,
            asked: asked.to_owned(),
            stderr: stderr_note(&stderr),
        })
    }

    /// Records `error` as the process's failure (the first one stays), stops the process and
    /// returns the error.
    pub fn fail(&self, error: ProcessError) -> ProcessError {
        let waiting = {
            let mut r = self.routes.lock();
            r.failed.get_or_insert(error.clone());
            std::mem::take(&mut r.waiting)
        };
        for (_, tx) in waiting {
            let _ = tx.send(Err(error.clone()));
        }
        self.process.lock().kill();
        error
    }

    /// The first failure, if the process failed.
    pub fn failure(&self) -> Option<ProcessError> {
        self.routes.lock().failed.clone()
    }

    /// How many bytes of standard error it had written (a mark for [`Self::stderr_since`]).
    pub fn stderr_mark(&self) -> u64 {
        self.process.lock().stderr_written()
    }

    /// What it wrote to standard error after `mark` (as much of it as is kept).
    pub fn stderr_since(&self, mark: u64) -> String {
        self.process
            .lock()
            .stderr_since(mark, Duration::from_millis(100))
    }

    /// Closes its input, gives it a moment to end by itself, then stops it.
    pub fn finish(&self) {
        self.process.lock().finish(GRACE);
    }
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("plugin", &self.plugin)
            .finish_non_exhaustive()
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.process.get_mut().kill();
    }
}

/// Where the reading thread puts each line: with the request waiting for it, or, when none
/// is, as the process's failure.
fn route(plugin: &str, routes: &Mutex<Routes>, event: PluginEvent) {
    let mut r = routes.lock();
    if r.failed.is_some() {
        return;
    }
    let malformed = |problem: &str, line: &str| ProcessError::Malformed {
        plugin: plugin.to_owned(),
        problem: problem.to_owned(),
        line: clip(line),
    };
    let failure = match event {
        PluginEvent::Line(line) => {
            let key = match serde_json::from_str::<Head>(&line) {
                Err(_) => Err(malformed(
                    "a line that is not a protocol message (JSON with a `type`; logs go to standard error)",
                    &line,
                )),
                Ok(head) if r.concurrent => match head.episode {
                    Some(e) if r.waiting.contains_key(&e) => Ok(e),
                    Some(_) => Err(malformed(
                        "an answer for an episode that is not waiting for one",
                        &line,
                    )),
                    None => Err(malformed(
                        "an answer without its `episode` (the plug-in declared `concurrent`)",
                        &line,
                    )),
                },
                Ok(_) if r.waiting.contains_key("") => Ok(String::new()),
                Ok(_) => Err(malformed("a line when no answer was due", &line)),
            };
            match key {
                Ok(k) => {
                    let tx = r.waiting.remove(&k).expect("checked above");
                    let _ = tx.send(Ok(line));
                    return;
                }
                Err(e) => e,
            }
        }
        PluginEvent::TooLong { bytes, start } => malformed(
            &format!("a line longer than the limit ({bytes} bytes without a line break)"),
            &start,
        ),
        PluginEvent::NotText { start } => malformed("a line that is not UTF-8", &start),
        // The requests waiting learn how it ended from their dropped senders.
        PluginEvent::Closed => {
            r.closed = true;
            r.waiting.clear();
            return;
        }
    };
    r.failed = Some(failure.clone());
    for (_, tx) in r.waiting.drain() {
        let _ = tx.send(Err(failure.clone()));
    }
}

fn stopped(plugin: &str, first: &ProcessError) -> ProcessError {
    match first {
        ProcessError::Stopped { .. } => first.clone(),
        e => ProcessError::Stopped {
            plugin: plugin.to_owned(),
            first: e.to_string(),
        },
    }
}

/// A line as errors quote it: at most 300 characters.
pub(crate) fn clip(line: &str) -> String {
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}... ({} bytes)", &line[..i], line.len()),
        None => line.to_owned(),
    }
}

fn stderr_note(stderr: &str) -> String {
    let t = stderr.trim_end();
    if t.is_empty() {
        return String::new();
    }
    let start = t.len().saturating_sub(2000);
    let start = (start..t.len())
        .find(|&i| t.is_char_boundary(i))
        .unwrap_or(0);
    format!("; the end of its standard error:\n{}", &t[start..])
}

fn article(role: PluginRole) -> &'static str {
    match role {
        PluginRole::Attacker | PluginRole::Agent => "an",
        PluginRole::Curator => "a",
    }
}

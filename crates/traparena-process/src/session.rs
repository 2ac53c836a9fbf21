//! One component's conversation with its plug-in for one episode (or, for a curator, for its
//! rounds): the process it talks to, started at the first message when it is the episode's
//! own, and what it learned of failures.

use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::args::ProcessArgs;
use crate::conn::{Conn, clip};
use crate::error::ProcessError;
use crate::protocol::{Declaration, End, PluginRole};

/// A component's link to its plug-in.
#[derive(Debug)]
pub(crate) struct Session {
    args: ProcessArgs,
    role: PluginRole,
    /// The declaration the component was built from.
    pub declared: Declaration,
    /// The episode's id in messages (unique within a run).
    pub episode: String,
    conn: Option<Arc<Conn>>,
    /// True when `conn` is this session's own process (not the component's shared one).
    own: bool,
    /// Standard error written before the session began, on a shared process.
    mark: u64,
    /// Whether `start` was sent.
    pub started: bool,
    /// The failure that stopped the plug-in for this session.
    pub stopped: Option<ProcessError>,
}

impl Session {
    pub fn new(
        args: &ProcessArgs,
        role: PluginRole,
        declared: Declaration,
        episode: &str,
    ) -> Session {
        let shared = args.state.shared.lock().clone();
        let mark = shared.as_ref().map_or(0, |c| c.stderr_mark());
        Session {
            args: args.clone(),
            role,
            declared,
            episode: episode.to_owned(),
            own: shared.is_none(),
            conn: shared,
            mark,
            started: false,
            stopped: None,
        }
    }

    pub fn plugin(&self) -> String {
        self.args.plugin()
    }

    /// The process, started (and its declaration checked against the prepared one) when
    /// this is its first message.
    async fn conn(&mut self) -> Result<Arc<Conn>, ProcessError> {
        if let Some(c) = &self.conn {
            return Ok(c.clone());
        }
        let (conn, declared) = self.args.start(self.role).await?;
        if declared != self.declared {
            let e = ProcessError::Handshake {
                plugin: self.plugin(),
                reason: "it declared itself otherwise than when it was prepared".into(),
                line: format!("{declared:?}"),
            };
            return Err(conn.fail(e));
        }
        self.conn = Some(conn.clone());
        Ok(conn)
    }

    /// Begins the episode: sends its `start` (no answer), starting the process if need be.
    pub async fn begin(&mut self, start: &impl Serialize) -> Result<(), ProcessError> {
        let conn = self.conn().await;
        let conn = self.guard(conn)?;
        conn.tell(start);
        self.started = true;
        Ok(())
    }

    /// Sends `message` and reads the answer of type `T` whose `type` is `answer`. Any failure
    /// stops the plug-in for this session; later calls fail with [`ProcessError::Stopped`].
    pub async fn ask<T: DeserializeOwned>(
        &mut self,
        message: &impl Serialize,
        asked: &str,
        answer: &str,
    ) -> Result<(T, String), ProcessError> {
        if let Some(e) = &self.stopped {
            return Err(ProcessError::Stopped {
                plugin: self.plugin(),
                first: e.to_string(),
            });
        }
        let conn = self.conn().await;
        let conn = self.guard(conn)?;
        let line = conn.ask(&self.episode, message, asked).await;
        let line = self.guard(line)?;
        let read = match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(v) if v.get("type").and_then(|t| t.as_str()) == Some(answer) => {
                serde_json::from_value::<T>(v).map_err(|e| e.to_string())
            }
            _ => Err(format!("not `{answer}`, the answer to {asked}")),
        };
        match read {
            Ok(t) => Ok((t, line)),
            Err(problem) => {
                let e = conn.fail(ProcessError::Malformed {
                    plugin: self.plugin(),
                    problem: format!("an answer to {asked} that is {problem}"),
                    line: clip(&line),
                });
                self.stopped.get_or_insert(e.clone());
                Err(e)
            }
        }
    }

    fn guard<T>(&mut self, r: Result<T, ProcessError>) -> Result<T, ProcessError> {
        if let Err(e) = &r
            && self.stopped.is_none()
        {
            self.stopped = Some(e.clone());
        }
        r
    }

    /// Ends the session: tells the plug-in the episode is over, ends the session's own
    /// process, and returns what the plug-in wrote to standard error meanwhile (`None`
    /// when nothing).
    pub fn end(&mut self) -> Option<String> {
        let conn = self.conn.take()?;
        if self.started && conn.failure().is_none() {
            conn.tell(&End {
                kind: "end",
                episode: &self.episode,
            });
        }
        if self.own {
            conn.finish();
        }
        let text = conn.stderr_since(if self.own { 0 } else { self.mark });
        (!text.is_empty()).then_some(text)
    }
}

//! The agent's own process while an episode runs, and how its end is told in the record.

use traparena_task::AgentExit;

use crate::error::RunError;

/// An agent process while the episode runs: its end, awaited on a blocking thread, and the
/// handle that kills it.
pub(super) struct Running {
    pub(super) wait: tokio::task::JoinHandle<Result<AgentExit, traparena_env::EnvError>>,
    killer: traparena_env::AgentKiller,
    pub(super) exit: Option<AgentExit>,
}

impl Running {
    pub(super) fn start(process: traparena_env::AgentProcess) -> Running {
        let killer = process.killer();
        Running {
            wait: tokio::task::spawn_blocking(move || process.wait()),
            killer,
            exit: None,
        }
    }

    /// Kills the process (a no-op once it ended) and waits for every process it started.
    pub(super) async fn finish(self) -> Result<AgentExit, RunError> {
        if let Some(exit) = self.exit {
            return Ok(exit);
        }
        self.killer.kill();
        Ok(self
            .wait
            .await
            .map_err(|e| RunError::Join(e.to_string()))??)
    }
}

/// What came first while a turn was awaited: the turn, or the end of the agent's process.
pub(super) enum Next<T> {
    Turn(T),
    Ended(Result<Result<AgentExit, traparena_env::EnvError>, tokio::task::JoinError>),
}

/// Why an episode whose agent process ended without a submission stopped: `account` is how
/// it ended (the agent's own last observation, or the process's exit).
pub(super) fn did_not_submit(account: &str) -> String {
    format!("the agent did not submit: {account}")
}

/// The last `keep` bytes of `text` (fewer, to start on a whole character).
fn last_bytes(text: &str, keep: usize) -> &str {
    let start = text.len().saturating_sub(keep);
    let start = (start..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    &text[start..]
}

/// The last lines of a process's error output, as `: ...` for a message (empty when none).
pub(super) fn tail_of(text: &str) -> String {
    let t = text.trim_end();
    if t.is_empty() {
        return String::new();
    }
    format!(": {}", last_bytes(t, 600).trim_start())
}

/// An agent's exit as the record keeps it: the ends of its output only.
pub(super) fn trimmed(mut exit: AgentExit) -> AgentExit {
    const KEEP: usize = 4096;
    for text in [&mut exit.stdout, &mut exit.stderr] {
        if text.len() > KEEP {
            *text = format!("[...]{}", last_bytes(text, KEEP));
        }
    }
    exit
}

//! Agents that run as their own process (external agents): how such a process is started in an
//! episode's sandbox, and how it ended.
//!
//! These are plain data shared by the agent crate (an agent asks for its process through
//! `Agent::command`), the environment crate (which starts it) and the runner (which connects
//! the two), so none of them has to depend on another for it.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The placeholder, in [`AgentCommand::argv`] and [`AgentCommand::env`] values, for the
/// workspace folder as the agent process sees it (`/workspace` under bubblewrap).
pub const WORKSPACE_PLACEHOLDER: &str = "{workspace}";
/// The placeholder for the agent's home folder as the agent process sees it: a writable folder
/// outside the workspace (its `HOME`), where [`AgentCommand::files`] are written and where the
/// agent should keep its own artefacts (trajectory files, caches).
pub const HOME_PLACEHOLDER: &str = "{home}";

/// How to start an agent process in an episode's sandbox.
///
/// The process runs with the workspace as its working folder and may run any command there;
/// it sees none of the task but the workspace (no hidden tests, no reference patch, no git
/// history), reaches no network but the model proxy at `127.0.0.1:`[`proxy_port`](Self::proxy_port)
/// (the same address inside and outside the sandbox), and is killed with its whole process
/// tree at [`timeout`](Self::timeout) or when the episode ends.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentCommand {
    /// argv; `argv[0]` is looked up on the sandbox's PATH. [`WORKSPACE_PLACEHOLDER`] and
    /// [`HOME_PLACEHOLDER`] are replaced by those folders' paths as the process sees them.
    pub argv: Vec<String>,
    /// Environment variables on top of the sandbox's minimal set (`PATH`, `HOME`, `TMPDIR`,
    /// ...); values take the same placeholders as `argv`.
    pub env: Vec<(String, String)>,
    /// Files written into the agent's home folder before the start: a path relative to it and
    /// the contents (configuration files, the task text).
    pub files: Vec<(String, Vec<u8>)>,
    /// Host folders shown read-only inside the sandbox at their own paths (the agent's own
    /// installation, such as a virtual environment).
    pub read_only_paths: Vec<PathBuf>,
    /// The loopback port of the model proxy on the host, the only address the process may
    /// reach; `None`: no network at all.
    pub proxy_port: Option<u16>,
    /// Wall-clock limit of the whole process tree.
    pub timeout: Duration,
    /// gitignore-style patterns of files the agent writes into the workspace for itself
    /// (caches, histories): never part of the candidate patch.
    pub exclude: Vec<String>,
    /// The process's address-space limit in bytes instead of the sandbox's: for runtimes that
    /// reserve far more address space than they use (Bun's JavaScriptCore, as in opencode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_space_bytes: Option<u64>,
}

/// How an agent process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentExit {
    /// Exit status, when the process exited by itself.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// True when it reached [`AgentCommand::timeout`] and was killed.
    pub timed_out: bool,
    /// True when the episode killed it (the budget was spent, or the episode ended first).
    pub killed: bool,
    /// The end of its standard output (at most the sandbox's output limit).
    pub stdout: String,
    /// The end of its standard error.
    pub stderr: String,
    /// The agent's home folder on the host, with the artefacts it left there; it exists until
    /// the episode's workspace is removed.
    pub home: PathBuf,
}

impl AgentExit {
    /// One line on how the process ended, for records: `exit status 1`, `killed by signal 9`,
    /// `timed out`, `killed by the episode`.
    pub fn describe(&self) -> String {
        if self.killed {
            "killed by the episode".to_owned()
        } else if self.timed_out {
            "timed out".to_owned()
        } else if let Some(code) = self.exit_code {
            format!("exit status {code}")
        } else {
            format!("killed by signal {}", self.signal.unwrap_or(0))
        }
    }
}

/// Replaces the placeholders in `text` with the folders as the process sees them.
pub fn fill_placeholders(text: &str, workspace: &str, home: &str) -> String {
    text.replace(WORKSPACE_PLACEHOLDER, workspace)
        .replace(HOME_PLACEHOLDER, home)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_everywhere_they_occur() {
        assert_eq!(
            fill_placeholders("{home}/a:{workspace}/b:{home}", "/workspace", "/tmp/home"),
            "/tmp/home/a:/workspace/b:/tmp/home"
        );
        assert_eq!(fill_placeholders("{other}", "/w", "/h"), "{other}");
    }

    #[test]
    fn an_exit_is_described_by_what_ended_it() {
        let mut e = AgentExit {
            exit_code: Some(1),
            ..AgentExit::default()
        };
        assert_eq!(e.describe(), "exit status 1");
        e.exit_code = None;
        e.signal = Some(9);
        assert_eq!(e.describe(), "killed by signal 9");
        e.timed_out = true;
        assert_eq!(e.describe(), "timed out");
        e.killed = true;
        assert_eq!(e.describe(), "killed by the episode");
    }
}

//! The `process` kind's arguments, the same for the three roles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde::Deserialize;
use traparena_env::PluginCommand;
use traparena_task::{ArgsError, ConfigContext};

use crate::conn::Conn;
use crate::error::ProcessError;
use crate::protocol::{Declaration, PluginRole};

/// A plug-in's program: one path, or a whole command line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum CommandLine {
    /// A program's path (the short form, `process:PATH`). A `.py` file is run with `python3`.
    Path(String),
    /// argv: the program (a path, or a name on `PATH`) and its arguments.
    Argv(Vec<String>),
}

/// The arguments of the `process` kind of every role:
/// `{"command": ["python3", "attacker.py"], "env": {"LEVEL": "2"}, "timeout_s": 60}`, or, on the
/// command line, `process:PATH`.
///
/// The program runs on the host with the harness's environment plus `env`, in the folder
/// relative paths are read against (the spec's folder; the working folder on the command
/// line), so a spec's relative paths work as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessArgs {
    /// The program to start.
    pub command: CommandLine,
    /// Variables set for it on top of the harness's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Seconds it may take to answer a message (60 by default); past it the plug-in is
    /// stopped and the failure recorded.
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// What configuring and preparing found out.
    #[serde(skip)]
    pub(crate) state: Arc<KindState>,
}

fn default_timeout() -> f64 {
    60.0
}

/// What a configured `process` component learns before its first episode: the folder it runs
/// in, the plug-in's declaration, and the process that serves every episode when the plug-in
/// declared `concurrent`.
#[derive(Default)]
pub(crate) struct KindState {
    pub argv: Vec<String>,
    pub dir: PathBuf,
    pub declared: Mutex<Option<Declaration>>,
    pub shared: Mutex<Option<Arc<Conn>>>,
}

impl std::fmt::Debug for KindState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KindState")
            .field("argv", &self.argv)
            .field("declared", &*self.declared.lock())
            .finish_non_exhaustive()
    }
}

impl ProcessArgs {
    /// Checks the arguments and fixes the command line and folder from `cx`.
    pub(crate) fn configure(mut self, cx: &ConfigContext) -> Result<ProcessArgs, ArgsError> {
        let argv = match &self.command {
            CommandLine::Path(p) if p.trim().is_empty() => {
                return Err(ArgsError::new("command", "is empty"));
            }
            CommandLine::Path(p) if p.ends_with(".py") => vec!["python3".to_owned(), p.clone()],
            CommandLine::Path(p) => vec![p.clone()],
            CommandLine::Argv(v) if v.first().is_none_or(|p| p.trim().is_empty()) => {
                return Err(ArgsError::new("command", "names no program"));
            }
            CommandLine::Argv(v) => v.clone(),
        };
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            return Err(ArgsError::new(
                "timeout_s",
                "must be a positive number of seconds",
            ));
        }
        let dir = cx.base_dir.clone();
        let mut argv = argv;
        // A relative program path is the spec's, not the harness's working folder's.
        if argv[0].contains('/') && Path::new(&argv[0]).is_relative() {
            argv[0] = dir.join(&argv[0]).to_string_lossy().into_owned();
        }
        self.state = Arc::new(KindState {
            argv,
            dir,
            ..KindState::default()
        });
        Ok(self)
    }

    /// The command line as messages name the plug-in.
    pub(crate) fn plugin(&self) -> String {
        self.state.argv.join(" ")
    }

    pub(crate) fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s)
    }

    fn command(&self) -> PluginCommand {
        PluginCommand {
            argv: self.state.argv.clone(),
            env: self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            dir: self.state.dir.clone(),
        }
    }

    /// Starts a process of the plug-in and shakes hands with it.
    pub(crate) async fn start(
        &self,
        role: PluginRole,
    ) -> Result<(Arc<Conn>, Declaration), ProcessError> {
        Conn::start(&self.command(), &self.plugin(), role, self.timeout()).await
    }

    /// Starts the plug-in once before any episode: its declaration is kept, and so is the
    /// process when it serves several episodes at once. Returns a line for the user.
    pub(crate) async fn prepare(&self, role: PluginRole) -> Result<Vec<String>, ProcessError> {
        let (conn, declared) = self.start(role).await?;
        let how = if declared.concurrent {
            *self.state.shared.lock() = Some(conn);
            "one process serves every episode"
        } else {
            conn.finish();
            "one process per episode"
        };
        let line = format!(
            "{} `{}` (process plug-in `{}`): {how}",
            role.as_str(),
            declared.name,
            self.plugin()
        );
        *self.state.declared.lock() = Some(declared);
        Ok(vec![line])
    }

    /// The declaration `prepare` kept, or the error of a component built unprepared.
    pub(crate) fn declared(&self) -> Result<Declaration, String> {
        self.state.declared.lock().clone().ok_or_else(|| {
            format!(
                "process plug-in `{}` was built before it was prepared (the registry's resolve \
                 prepares every component; a caller that configures one itself calls prepare)",
                self.plugin()
            )
        })
    }
}

use std::path::PathBuf;

use crate::base::Backend;

/// An infrastructure failure of the environment.
///
/// What the agent or the code under test does wrong is never an `EnvError`: a refused path, a
/// failing test or a timed-out run is reported as data (an observation or an outcome).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// A file-system operation of the harness failed.
    #[error("{path}: {op}: {source}")]
    Io {
        /// What the harness was doing.
        op: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A process could not be started or waited for.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A program could not be started in the sandbox: the check before launching found it
    /// missing or out of the sandbox user's reach, launching it failed twice (`source` holds
    /// the operating system's error), or, from
    /// [`Sandbox::check_program`](crate::Sandbox::check_program), it did not run cleanly there.
    ///
    /// This fails one run (and so one task or one episode), not the harness: callers that go
    /// on with other tasks should record it as an infrastructure error of that task
    /// ([`EnvError::is_start_failure`]).
    #[error("cannot start {program} under the {backend} sandbox: {reason}")]
    Start {
        /// The program as the command names it (`argv[0]`).
        program: String,
        /// The backend it was to run under.
        backend: Backend,
        /// What is wrong, naming the path involved.
        reason: String,
        /// The operating system's error, when launching failed.
        #[source]
        source: Option<std::io::Error>,
    },
    /// A program of a language's toolchain that a test run needs cannot run where the sandbox
    /// looks for it (not installed there, or out of its reach): no test ran. The task cannot
    /// be checked on this machine until the toolchain is installed — an infrastructure
    /// outcome, never a test failure. Told from the run's report (the build shim says which
    /// program it found missing) or from the check before launching the runner's own program.
    #[error("{program} is missing from the {backend} sandbox ({detail}): install {}", .language.install())]
    MissingToolchain {
        /// The program (`rustc`, `go`, `node`).
        program: String,
        /// The language whose toolchain it belongs to; [`Language::install`] names what to
        /// install.
        ///
        /// [`Language::install`]: traparena_task::Language::install
        language: traparena_task::Language,
        /// The backend the run was to go under.
        backend: Backend,
        /// Where it was looked for, or what is wrong with what was found.
        detail: String,
    },
    /// The requested sandbox backend is not available on this machine.
    #[error("sandbox backend {backend} is unavailable: {reason}")]
    BackendUnavailable {
        /// The backend asked for.
        backend: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// A command of the container engine failed (`podman rm`, `docker ps`, ...).
    #[error("`{command}` failed: {message}")]
    ContainerEngine {
        /// The engine's program and subcommand.
        command: String,
        /// The first line of the engine's error output.
        message: String,
    },
    /// A `git` command the harness relies on failed.
    #[error("git {args}: {message}")]
    Git {
        /// The git arguments.
        args: String,
        /// git's error output.
        message: String,
    },
    /// A tree cannot be exported because the repository lacks one of its files' contents (a
    /// partial clone that left large files out, a broken object store): a fact about the
    /// clone, not a failure of the harness.
    #[error("the repository lacks the contents of {path} at {commit}: {message}")]
    MissingBlob {
        /// The commit whose tree was exported.
        commit: String,
        /// The file whose contents are missing, as git names it.
        path: String,
        /// git's error output.
        message: String,
    },
    /// An [`AgentCommand`](traparena_task::AgentCommand) the harness cannot start as given: an
    /// empty command, a file to write outside the agent's home folder, or a second agent
    /// process in an environment whose first one still runs.
    #[error("agent command: {reason}")]
    AgentCommand {
        /// What is wrong with it.
        reason: String,
    },
    /// Setting up Landlock failed.
    #[error("landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
}

impl EnvError {
    /// True when a program could not be started ([`EnvError::Start`]): a failure of one run,
    /// which a caller going through many tasks can record for that task and go on.
    pub fn is_start_failure(&self) -> bool {
        matches!(
            self,
            EnvError::Start { .. } | EnvError::MissingToolchain { .. }
        )
    }

    /// True when a test run could not run because its toolchain is missing from the sandbox
    /// ([`EnvError::MissingToolchain`]): the task is not checkable on this machine.
    pub fn is_missing_toolchain(&self) -> bool {
        matches!(self, EnvError::MissingToolchain { .. })
    }
}

pub(crate) fn io(
    op: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> EnvError {
    let path = path.into();
    move |source| EnvError::Io { op, path, source }
}

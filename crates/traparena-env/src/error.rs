use std::path::PathBuf;

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
    /// The requested sandbox backend is not available on this machine.
    #[error("sandbox backend {backend} is unavailable: {reason}")]
    BackendUnavailable {
        /// The backend asked for.
        backend: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// A `git` command the harness relies on failed.
    #[error("git {args}: {message}")]
    Git {
        /// The git arguments.
        args: String,
        /// git's error output.
        message: String,
    },
    /// Setting up Landlock failed.
    #[error("landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
}

pub(crate) fn io(
    op: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> EnvError {
    let path = path.into();
    move |source| EnvError::Io { op, path, source }
}

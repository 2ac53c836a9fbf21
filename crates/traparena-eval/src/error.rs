/// An infrastructure failure while evaluating or validating.
///
/// A rejected patch, failing tests or a timed-out run are outcomes, never an `EvalError`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The environment failed (sandbox, file system, git).
    #[error(transparent)]
    Env(#[from] traparena_env::EnvError),
    /// A task file could not be read.
    #[error(transparent)]
    Task(#[from] traparena_task::TaskError),
    /// The task's reference patch does not apply, so reference locations cannot be derived.
    #[error("the reference patch does not apply: {0}")]
    Reference(String),
    /// A file of the task could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

use std::path::PathBuf;

/// Why an import or an export could not be done.
///
/// A record that cannot become a valid task is not an error: it is skipped and reported with
/// its reason (see [`crate::ImportReport`]). [`ImportError::is_bad_input`] tells the caller's
/// input apart from a failure of the harness itself.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of a JSON Lines file, or a JSON file, is malformed or lacks a field.
    #[error("{path}:{line}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line (of the record, for JSON Lines; of the error, for a JSON document).
        line: usize,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The input is unusable: a missing file, an unknown instance id, a folder that is not a
    /// git clone, an output path that is in the way, ...
    #[error("{0}")]
    Input(String),
    /// One model name was given for the predictions, but the results hold several (target,
    /// condition) pairs, which would all be called by it.
    #[error(
        "one model name was given, but the results hold {count} (target, condition) pairs: {pairs}; choose one target and condition"
    )]
    OneModelForMany {
        /// How many pairs.
        count: usize,
        /// The pairs, as `target/condition`, comma-separated.
        pairs: String,
    },
    /// A task folder, a report or a predictions file would replace something the command did
    /// not write (checked before anything is written).
    #[error(transparent)]
    Refused(#[from] traparena_task::Refusal),
    /// An interpreter or a virtual environment could not be had (its message names what failed,
    /// with the tail of the failing command's output).
    #[error(transparent)]
    PyEnv(#[from] traparena_pyenv::PyEnvError),
    /// The environment failed (sandbox, git, file system).
    #[error(transparent)]
    Env(#[from] traparena_env::EnvError),
    /// Validating an emitted task failed for a reason of the harness.
    #[error(transparent)]
    Eval(#[from] traparena_eval::EvalError),
    /// A task folder could not be read.
    #[error(transparent)]
    Task(#[from] traparena_task::TaskError),
    /// A results file could not be read (a malformed line, a newer format).
    #[error(transparent)]
    Results(#[from] traparena_results::ResultsError),
}

impl ImportError {
    /// True when the caller's input is at fault (exit status 2), false for a failure of the
    /// harness (exit status 1).
    pub fn is_bad_input(&self) -> bool {
        match self {
            ImportError::Json { .. }
            | ImportError::Input(_)
            | ImportError::OneModelForMany { .. }
            | ImportError::Task(_)
            | ImportError::Refused(_) => true,
            ImportError::Results(e) => e.is_bad_input(),
            _ => false,
        }
    }
}

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ImportError {
    let path = path.into();
    move |source| ImportError::Io { path, source }
}

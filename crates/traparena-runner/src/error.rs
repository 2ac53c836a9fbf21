/// A failure of the harness while running an episode. Agent and attacker failures are not
/// `RunError`s: they are recorded in the episode record.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The environment failed (sandbox, file system, git).
    #[error(transparent)]
    Env(#[from] traparena_env::EnvError),
    /// The evaluator failed.
    #[error(transparent)]
    Eval(#[from] traparena_eval::EvalError),
    /// The experiment spec is invalid.
    #[error("{path}: field `{field}`: {message}")]
    Spec {
        /// The spec file.
        path: std::path::PathBuf,
        /// The offending field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A task could not be loaded.
    #[error(transparent)]
    Task(#[from] traparena_task::TaskError),
    /// The results folder is unusable (I/O, a different spec, a conflict).
    #[error("{path}: {message}")]
    Results {
        /// The file or folder.
        path: std::path::PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The results folder already holds an experiment, and resuming it was not asked for.
    #[error("{}: this folder already holds an experiment: resume it, or choose another folder", path.display())]
    ExperimentExists {
        /// The results folder.
        path: std::path::PathBuf,
    },
    /// The results folder holds an experiment started with another spec: resuming it would
    /// mix results.
    #[error(
        "{}: the spec differs from the one this experiment was started with{fields}; refusing to mix results (use a new results folder, or the spec in {})",
        path.display(),
        spec.display()
    )]
    SpecChanged {
        /// The experiment's manifest.
        path: std::path::PathBuf,
        /// The fields that differ, as ` (in budget, seed)`, or empty when unknown.
        fields: String,
        /// The spec the experiment was started with (its copy in the folder).
        spec: std::path::PathBuf,
    },
    /// The results folder or a record would replace something the harness did not write
    /// (checked before anything is written).
    #[error(transparent)]
    Refused(#[from] traparena_task::Refusal),
    /// A cluster study's files (its submission record, its job scripts, its folders) cannot
    /// be read or written.
    #[error("{path}: {message}")]
    Cluster {
        /// The file or folder.
        path: std::path::PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A blocking task of the harness panicked or was cancelled.
    #[error("harness task failed: {0}")]
    Join(String),
}

/// The results format's errors are results-folder errors: the file (and line) they name, and
/// what is wrong.
impl From<traparena_results::ResultsError> for RunError {
    fn from(e: traparena_results::ResultsError) -> RunError {
        let path = e.path().to_owned();
        let full = e.to_string();
        let prefix = format!("{}: ", path.display());
        let message = full.strip_prefix(&prefix).unwrap_or(&full).to_owned();
        RunError::Results { path, message }
    }
}

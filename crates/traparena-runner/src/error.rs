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
    /// A blocking task of the harness panicked or was cancelled.
    #[error("harness task failed: {0}")]
    Join(String),
}

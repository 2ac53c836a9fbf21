/// An attacker or curator failed. The episode goes on without the message; the error is
/// recorded in the episode record.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttackError {
    /// A model call failed (after its retries).
    #[error("model call failed: {0}")]
    Model(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The attacker or curator produced something unusable.
    #[error("{0}")]
    Invalid(String),
    /// Notes broke their bounds.
    #[error(transparent)]
    Notes(#[from] crate::notes::NotesError),
}

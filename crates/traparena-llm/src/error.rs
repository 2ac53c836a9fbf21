use traparena_model::ModelError;

/// What went wrong in the model-backed components' own code paths.
///
/// The agent, the attacker and the curator report a failed model call inside their trait's
/// error (`AgentError::Model`, `AttackError::Model`) and a reply they cannot read as an
/// outcome; what is left to fail here is the model layer underneath.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// A model call, a recording or a reply failed ([`ModelError`]).
    #[error(transparent)]
    Model(#[from] ModelError),
}

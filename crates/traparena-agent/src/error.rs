/// An agent could not produce a turn. The episode ends (failure mode `no_submit`) and the error
/// is recorded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// A model call failed after its retries.
    #[error("model call failed: {0}")]
    Model(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The harness could not run the agent (its process, its model proxy): an infrastructure
    /// error of the episode, like a failed model call, never a failed repair.
    #[error("{0}")]
    Infrastructure(String),
    /// The agent cannot act on this task.
    #[error("{0}")]
    Unsupported(String),
    /// A replay file could not be read or parsed.
    #[error("{path}: {message}")]
    Replay {
        /// The replay file.
        path: std::path::PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A replayed trajectory ran out of actions.
    #[error("the replay has no more actions")]
    Exhausted,
    /// The conversation no longer fits the model's context, even compacted: the agent's own
    /// failure, counted like an exhausted budget (never an infrastructure error, which would
    /// drop exactly the longest episodes from the figures).
    #[error("context_exhausted: {0}")]
    ContextExhausted(String),
    /// The agent's own program failed: it ended, hung past its timeout, or wrote what is not a
    /// protocol message (a process plug-in). The agent's failure, which ends its episode
    /// without a submission; never an infrastructure error.
    #[error("{0}")]
    Failed(String),
}

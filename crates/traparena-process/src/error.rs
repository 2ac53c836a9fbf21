//! What can go wrong with a process plug-in.

/// A process plug-in failed. Every message names the plug-in (its command) and, where it wrote
/// one, the line at fault, so that a failure in a results folder points at the code to fix.
///
/// For the roles these are outcomes, not harness failures: an attacker's failure silences it
/// (recorded with the step), an agent's ends its episode as the agent's own failure, a
/// curator's stops the curator step with this message. Only a plug-in that cannot be started
/// at all stops a study before it runs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    /// The program could not be started.
    #[error("plug-in `{plugin}` could not be started: {reason}")]
    Start {
        /// The plug-in's command.
        plugin: String,
        /// Why.
        reason: String,
    },
    /// Its answer to the handshake was not what the protocol asks.
    #[error("plug-in `{plugin}` failed the handshake: {reason}; it wrote: {line}")]
    Handshake {
        /// The plug-in's command.
        plugin: String,
        /// What was wrong with it.
        reason: String,
        /// The line it wrote.
        line: String,
    },
    /// It ended (or closed its output) while an answer was due.
    #[error("plug-in `{plugin}` ended ({how}) without answering {asked}{stderr}")]
    Ended {
        /// The plug-in's command.
        plugin: String,
        /// How it ended.
        how: String,
        /// What it had been asked.
        asked: String,
        /// The end of its standard error, introduced, or empty.
        stderr: String,
    },
    /// It did not answer within its timeout, and was stopped.
    #[error("plug-in `{plugin}` did not answer {asked} within {seconds} s and was stopped")]
    Timeout {
        /// The plug-in's command.
        plugin: String,
        /// What it had been asked.
        asked: String,
        /// The timeout.
        seconds: f64,
    },
    /// It wrote a line that is not a protocol message (not JSON, not the message due, a line
    /// past the length limit, not UTF-8), and was stopped.
    #[error("plug-in `{plugin}` wrote {problem}: {line}")]
    Malformed {
        /// The plug-in's command.
        plugin: String,
        /// What is wrong with the line.
        problem: String,
        /// The line (its start when long).
        line: String,
    },
    /// Its message was well formed, but its content is refused (an attacker's message with no
    /// text, notes past their limits); the plug-in keeps running.
    #[error("plug-in `{plugin}` answered {asked} with what is refused: {reason}; it wrote: {line}")]
    Refused {
        /// The plug-in's command.
        plugin: String,
        /// What it had been asked.
        asked: String,
        /// Why it is refused.
        reason: String,
        /// The line it wrote.
        line: String,
    },
    /// It failed earlier in this episode and was stopped; it is not asked again.
    #[error("plug-in `{plugin}` was stopped earlier: {first}")]
    Stopped {
        /// The plug-in's command.
        plugin: String,
        /// The first failure.
        first: String,
    },
}

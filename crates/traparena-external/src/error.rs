/// What can go wrong with external agents before an episode runs (an episode's own failures
/// are recorded in its record).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExternalError {
    /// A profile could not be found or read, or says something impossible.
    #[error("agent profile {origin}: {message}")]
    Profile {
        /// The bundled name or the file.
        origin: String,
        /// What is wrong.
        message: String,
    },
}

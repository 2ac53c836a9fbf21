use std::path::PathBuf;

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
    /// The agent a profile names is not installed where the spec says.
    #[error(
        "{agent} is not installed at {} ({} is missing){}",
        prefix.display(),
        marker.display(),
        how_to_install(install)
    )]
    NotInstalled {
        /// The profile's name.
        agent: String,
        /// The installation folder looked in.
        prefix: PathBuf,
        /// The file or folder whose absence says so.
        marker: PathBuf,
        /// The profile's install command (empty when it gives none).
        install: String,
    },
}

/// `; install it with: COMMAND`, or nothing when the profile gives no command.
fn how_to_install(install: &str) -> String {
    if install.is_empty() {
        String::new()
    } else {
        format!("; install it with: {install}")
    }
}

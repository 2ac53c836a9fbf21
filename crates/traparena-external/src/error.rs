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
    /// The agent's Python virtual environment was made from a system interpreter of the host
    /// (`pyvenv.cfg`'s `home` is `/usr/bin`), which a container of the task's image does not
    /// have: the image's own `/usr` replaces the host's.
    #[error(
        "{agent} at {} is a virtual environment of the system interpreter in {}, which the \
         task's image does not have (the agent runs in a container of the image, whose own /usr \
         replaces the host's); install it with a self-contained Python, such as a relocatable \
         CPython copied to a folder the sandbox user can read: \
         TRAPARENA_MSWEA_PYTHON=<python prefix>/bin/python3.11 scripts/install-mini-swe-agent.sh {}",
        prefix.display(),
        home.display(),
        prefix.display()
    )]
    SystemInterpreter {
        /// The profile's name.
        agent: String,
        /// The agent's installation (the venv).
        prefix: PathBuf,
        /// The venv's base interpreter folder (`pyvenv.cfg`'s `home`).
        home: PathBuf,
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

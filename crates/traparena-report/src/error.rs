//! The error type of this crate.

use std::path::PathBuf;

use thiserror::Error;

/// Why a results folder could not be turned into a report.
///
/// Every variant but [`ReportError::Serialize`], [`ReportError::Render`] and
/// [`ReportError::Write`] is bad input: the folder, a file in it or a
/// line of `episodes.jsonl` is missing or malformed ([`ReportError::is_bad_input`]). A figure
/// that cannot be computed from well-formed data (for example a Δ with a single shared task) is
/// not an error: its row says why in `errors`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The results folder does not exist or is not a folder (the message says which).
    #[error("{}: not a results folder ({})", path.display(), if path.is_file() { "a file: give the folder that holds episodes.jsonl" } else { "no such folder" })]
    NotAFolder {
        /// The path given.
        path: PathBuf,
    },
    /// The folder has no `episodes.jsonl`.
    #[error("{}: no episodes.jsonl in the results folder", path.display())]
    MissingEpisodes {
        /// The path of the missing file.
        path: PathBuf,
    },
    /// A file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of `episodes.jsonl` or `trajectories.jsonl` is not a valid line (not JSON, a
    /// missing field, a value of the wrong type, an empty task id, a newer format than this
    /// build reads), or `manifest.json`, `spec.json`'s head, a curator notes file or a curator
    /// usage file is malformed: the results format's error, which names the file and the line.
    #[error(transparent)]
    Results(#[from] traparena_results::ResultsError),
    /// `episodes.jsonl` has no episode line at all.
    #[error("{}: no episodes (the file is empty)", path.display())]
    NoEpisodes {
        /// The file.
        path: PathBuf,
    },
    /// An optional file parses but a value in it cannot be used (e.g. a `created` date in
    /// `manifest.json` that is not a date).
    #[error("{}: {reason}", path.display())]
    InvalidFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A file of the report (the episode viewer's folder) could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The page or the viewer's folder would replace something this command did not write
    /// (checked before anything is written).
    #[error(transparent)]
    Refused(#[from] traparena_task::Refusal),
    /// The HTML page could not be rendered from its template (an internal failure).
    #[error("cannot render the HTML page: {0}")]
    Render(#[source] askama::Error),
    /// The report could not be serialized (an internal failure).
    #[error("cannot serialize the report: {0}")]
    Serialize(#[source] serde_json::Error),
}

impl ReportError {
    /// Whether the error is the input's fault (exit status 2) rather than an internal failure.
    pub fn is_bad_input(&self) -> bool {
        !matches!(
            self,
            ReportError::Serialize(_) | ReportError::Render(_) | ReportError::Write { .. }
        )
    }

    /// The line of `episodes.jsonl` at fault, when the error is about one line.
    pub fn line(&self) -> Option<usize> {
        match self {
            ReportError::Results(e) => e.line(),
            _ => None,
        }
    }
}

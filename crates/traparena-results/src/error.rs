//! The error type of this crate.

use std::path::{Path, PathBuf};

/// Why a results file could not be read or written.
///
/// Every variant names the file; those about one line of a JSON Lines file name the line
/// ([`ResultsError::line`]). [`ResultsError::is_bad_input`] tells a file's content apart from
/// a failure of the file system.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResultsError {
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of a JSON Lines file is not a valid line of its kind: not JSON, a missing field,
    /// a value of the wrong type, an empty key field, a field of another format version.
    #[error("{}: line {line}, column {column}: {message}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// The column within the line, from 1 (0 when unknown).
        column: usize,
        /// What is wrong, without the parser's position suffix.
        message: String,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A JSON file (`manifest.json`, a curator usage file) is malformed.
    #[error("{}: malformed: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The parser's error (with the position in the file).
        #[source]
        source: serde_json::Error,
    },
    /// A line or a file is of a newer format than this build reads: it was written by a newer
    /// TrapArena.
    #[error(
        "{}: {}format {found} is newer than this build of TrapArena reads (up to {}); read it with a newer traparena",
        path.display(),
        line.map_or(String::new(), |l| format!("line {l}: ")),
        crate::FORMAT_VERSION
    )]
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// The line, for a JSON Lines file.
        line: Option<usize>,
        /// The `format` it carries.
        found: u64,
    },
}

impl ResultsError {
    /// Whether the file's content is at fault (a malformed or newer line or file) rather than
    /// the file system.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, ResultsError::Io { .. })
    }

    /// The line at fault, when the error is about one line of a JSON Lines file.
    pub fn line(&self) -> Option<usize> {
        match self {
            ResultsError::Line { line, .. } => Some(*line),
            ResultsError::NewerFormat { line, .. } => *line,
            _ => None,
        }
    }

    /// The file or folder the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ResultsError::Io { path, .. }
            | ResultsError::Line { path, .. }
            | ResultsError::File { path, .. }
            | ResultsError::NewerFormat { path, .. } => path,
        }
    }
}

/// A closure turning an I/O error about `path` into a [`ResultsError`].
pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io {
        path: path.to_owned(),
        source,
    }
}

/// A parser's message without its ` at line L column C` suffix (a JSON Lines line is one line
/// of its own; the file's line number is given separately).
pub(crate) fn without_position(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    full.strip_suffix(&suffix).unwrap_or(&full).to_owned()
}

use std::path::PathBuf;

/// Why a task folder, a task file or a patch could not be loaded.
///
/// Every variant names the file involved and, where it applies, the field or line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// A file or folder could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file is malformed or does not match the schema.
    #[error("{path}: field `{field}`: {message}")]
    Json {
        /// The JSON file.
        path: PathBuf,
        /// Dotted path of the offending field (`.` for the document itself).
        field: String,
        /// What is wrong.
        message: String,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A field holds a value the format forbids (an escaping path, an empty command, ...).
    #[error("{path}: field `{field}`: {message}")]
    Invalid {
        /// The file holding the field.
        path: PathBuf,
        /// Dotted path of the offending field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A required file or folder of the task layout is missing.
    #[error("{path}: missing ({what})")]
    Missing {
        /// The path that should exist.
        path: PathBuf,
        /// What it is for.
        what: String,
    },
    /// A unified diff could not be parsed.
    #[error("{path}: patch line {line}: {message}")]
    Patch {
        /// The patch file (or a label for an in-memory patch).
        path: PathBuf,
        /// 1-based line of the patch where parsing failed (0 when unknown).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A spec names a component kind nobody registered.
    #[error("unknown {role} kind {kind:?}; registered kinds: {}", known.join(", "))]
    UnknownKind {
        /// `agent`, `attacker` or `curator`.
        role: String,
        /// The kind asked for.
        kind: String,
        /// The registered kinds.
        known: Vec<String>,
    },
    /// A component's `args` do not fit its kind.
    #[error("{kind}: field `{field}`: {message}")]
    Args {
        /// The component's kind.
        kind: String,
        /// Dotted path of the offending field, from `args` (`args.persona`).
        field: String,
        /// What is wrong.
        message: String,
    },
}

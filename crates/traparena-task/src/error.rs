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
    /// A file was given where a task folder is expected.
    #[error("{path}: a file, not a task folder (give the folder that holds task.json)")]
    NotAFolder {
        /// The file given.
        path: PathBuf,
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
    #[error("unknown {role} kind {kind:?}{}; registered kinds: {}", did_you_mean(kind, known), known.join(", "))]
    UnknownKind {
        /// `agent`, `attacker` or `curator`.
        role: String,
        /// The kind asked for.
        kind: String,
        /// The registered kinds.
        known: Vec<String>,
    },
    /// A path that must stay inside its folder does not ([`crate::RelPath`]).
    #[error("{}", problem.describe(path))]
    RelPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        problem: crate::PathProblem,
    },
    /// A language name nobody knows ([`crate::Language`]'s `FromStr`).
    #[error("unknown language {name:?}; known: {}", crate::Language::ALL.map(|l| l.name()).join(", "))]
    UnknownLanguage {
        /// The name asked for, lower-cased.
        name: String,
    },
    /// Text that names no shard (`I/N` with `0 <= I < N`).
    #[error("shard {text:?}: expected I/N with 0 <= I < N, e.g. 0/4")]
    Shard {
        /// The text given.
        text: String,
    },
    /// Text that names no moment to resolve packages as of ([`crate::Cutoff`]'s `FromStr`).
    #[error(
        "{text:?} is not a date or a time: expected YYYY-MM-DD (midnight UTC) or an RFC 3339 time such as 2024-08-13T00:00:00Z"
    )]
    Cutoff {
        /// The text given.
        text: String,
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

/// ` (did you mean "x"?)` when one of `known` is close to `kind` (its base, before a `:`).
fn did_you_mean(kind: &str, known: &[String]) -> String {
    let base = kind.split(':').next().unwrap_or(kind);
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(base, k), k))
        .filter(|(d, k)| *d > 0 && *d <= 2.max(k.len() / 4))
        .min()
        .map_or_else(String::new, |(_, k)| format!(" (did you mean {k:?}?)"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unknown_kind_close_to_a_known_one_is_named() {
        let known = ["scripted", "truthful", "adaptive"]
            .map(String::from)
            .to_vec();
        for (kind, hint) in [
            ("scriptd", Some("scripted")),
            ("scripted:urge", None),
            ("adaptiv:blind", Some("adaptive")),
            ("llm", None),
        ] {
            let e = super::TaskError::UnknownKind {
                role: "attacker".into(),
                kind: kind.into(),
                known: known.clone(),
            };
            let text = e.to_string();
            match hint {
                Some(h) => assert!(text.contains(&format!("(did you mean {h:?}?)")), "{text}"),
                None => assert!(!text.contains("did you mean"), "{text}"),
            }
        }
    }
}

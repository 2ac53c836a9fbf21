//! The curator's notes files, `notes/<target>/<condition>/round-<r>.json`: [`NotesFile`].

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ResultsError, io};
use crate::migrate::{self, Malformed};

/// The bounds the curator's notes were written under, as plain numbers (the attack crate's
/// `NoteLimits`, which this crate does not depend on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotesLimits {
    /// Most notes kept.
    pub max_notes: usize,
    /// Most characters in one note.
    pub max_chars: usize,
}

/// A curator notes file ([`notes_path`](crate::notes_path)): the notes the attacker of a
/// target's condition saw in one round, and the bounds they were written under, as plain data.
/// The attack crate's `Notes` is the same in memory, checked against its limits; the runner
/// converts between the two.
///
/// Written as pretty JSON, `{"items": [...], "limits": {"max_notes": N, "max_chars": C}}`,
/// with no `format` field: its fields have not changed since format 1, and the format of the
/// folder's files is stated by its manifest ([`Manifest`](crate::Manifest)). Reading accepts a
/// `format` (absent: format 1); a newer one than this build reads is
/// [`ResultsError::NewerFormat`]. Every item is a string; `limits` may be absent (files
/// written by hand).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "NotesIn")]
pub struct NotesFile {
    /// The notes, in order.
    pub items: Vec<String>,
    /// The bounds they were written under, when the file says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<NotesLimits>,
}

/// A notes file as read.
#[derive(Deserialize)]
struct NotesIn {
    #[serde(default)]
    format: Option<u64>,
    items: Vec<String>,
    #[serde(default)]
    limits: Option<NotesLimits>,
}

impl TryFrom<NotesIn> for NotesFile {
    type Error = Malformed;

    fn try_from(n: NotesIn) -> Result<NotesFile, Malformed> {
        // Formats 1 to 3 of a notes file have the same fields.
        migrate::format(n.format)?;
        Ok(NotesFile {
            items: n.items,
            limits: n.limits,
        })
    }
}

impl NotesFile {
    /// Reads a notes file.
    pub fn read(path: &Path) -> Result<NotesFile, ResultsError> {
        let bytes = std::fs::read(path).map_err(io(path))?;
        NotesFile::from_json(&bytes, path)
    }

    /// The notes of `round` of a target's condition in the results folder `dir`, when there
    /// are any.
    pub fn read_round(
        dir: &Path,
        target: &str,
        condition: &str,
        round: u32,
    ) -> Result<Option<NotesFile>, ResultsError> {
        let path = crate::notes_path(dir, target, condition, round);
        match std::fs::read(&path) {
            Ok(bytes) => NotesFile::from_json(&bytes, &path).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ResultsError::Io { path, source }),
        }
    }

    /// Reads notes from their JSON; `path` names the file in errors.
    pub fn from_json(text: &[u8], path: &Path) -> Result<NotesFile, ResultsError> {
        serde_json::from_slice(text).map_err(|source| match crate::jsonl::newer_format(text) {
            Some(found) => ResultsError::NewerFormat {
                path: path.to_owned(),
                line: None,
                found,
            },
            None => ResultsError::File {
                path: path.to_owned(),
                source,
            },
        })
    }

    /// Writes the notes of `round` of a target's condition into the results folder `dir`
    /// (pretty JSON, atomically; the notes folder is made when missing).
    pub fn write_round(
        &self,
        dir: &Path,
        target: &str,
        condition: &str,
        round: u32,
    ) -> Result<(), ResultsError> {
        let path = crate::notes_path(dir, target, condition, round);
        let parent = path.parent().expect("a notes path has a folder");
        std::fs::create_dir_all(parent).map_err(io(parent))?;
        crate::write_atomic(
            &path,
            &serde_json::to_vec_pretty(self).expect("notes serialise"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_written_as_they_always_were_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let notes = NotesFile {
            items: vec!["first".into(), "second \"quoted\"".into()],
            limits: Some(NotesLimits {
                max_notes: 8,
                max_chars: 400,
            }),
        };
        assert_eq!(
            NotesFile::read_round(dir.path(), "m", "c", 1).unwrap(),
            None
        );
        notes.write_round(dir.path(), "m", "c", 1).unwrap();
        let path = crate::notes_path(dir.path(), "m", "c", 1);
        // The bytes the attack crate's `Notes` wrote before this type.
        let expected = "{\n  \"items\": [\n    \"first\",\n    \"second \\\"quoted\\\"\"\n  ],\n  \"limits\": {\n    \"max_notes\": 8,\n    \"max_chars\": 400\n  }\n}";
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        assert_eq!(NotesFile::read(&path).unwrap(), notes);
        let back = NotesFile::read_round(dir.path(), "m", "c", 1).unwrap();
        assert_eq!(back, Some(notes));
    }

    #[test]
    fn a_format_is_read_a_newer_one_refused_and_items_are_strings() {
        let p = Path::new("notes/m/c/round-1.json");
        let read = |text: &str| NotesFile::from_json(text.as_bytes(), p);
        let plain = read(r#"{"items": ["a"]}"#).unwrap();
        assert_eq!((plain.items.len(), plain.limits), (1, None));
        assert_eq!(read(r#"{"format": 3, "items": ["a"]}"#).unwrap(), plain);
        let e = read(r#"{"format": 4, "items": ["a"]}"#).unwrap_err();
        assert!(
            matches!(
                e,
                ResultsError::NewerFormat {
                    found: 4,
                    line: None,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string().contains("round-1.json: format 4 is newer"),
            "{e}"
        );
        for bad in [
            r#"{"items": 3}"#,
            r#"{"items": [1]}"#,
            r#"{"format": 0, "items": []}"#,
        ] {
            let e = read(bad).unwrap_err();
            assert!(matches!(e, ResultsError::File { .. }), "{bad}: {e:?}");
            assert!(e.to_string().contains("round-1.json: malformed: "), "{e}");
        }
    }
}

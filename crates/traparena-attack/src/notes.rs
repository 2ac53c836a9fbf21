use serde::{Deserialize, Serialize};

/// Bounds on curator notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteLimits {
    /// Most notes kept.
    pub max_notes: usize,
    /// Most characters in one note.
    pub max_chars: usize,
}

impl Default for NoteLimits {
    fn default() -> Self {
        NoteLimits {
            max_notes: 8,
            max_chars: 400,
        }
    }
}

/// A note or a set of notes broke the bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotesError {
    /// More notes than `max_notes`.
    #[error("{count} notes, over the limit of {max}")]
    TooMany {
        /// How many were given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A note longer than `max_chars`.
    #[error("note {index} has {chars} characters, over the limit of {max}")]
    TooLong {
        /// Which note.
        index: usize,
        /// Its length.
        chars: usize,
        /// The limit.
        max: usize,
    },
    /// An empty note.
    #[error("note {0} is empty")]
    Empty(usize),
}

/// The curator's natural-language notes about a target, M_r. Bounded by construction: the only
/// ways to build one check the count and the length of every note, so a `Notes` value can never
/// exceed its limits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Notes {
    items: Vec<String>,
    limits: NoteLimits,
}

impl Notes {
    /// No notes (the state with the curator disabled).
    pub fn empty(limits: NoteLimits) -> Notes {
        Notes {
            items: Vec::new(),
            limits,
        }
    }

    /// Notes checked against `limits`.
    pub fn new(items: Vec<String>, limits: NoteLimits) -> Result<Notes, NotesError> {
        if items.len() > limits.max_notes {
            return Err(NotesError::TooMany {
                count: items.len(),
                max: limits.max_notes,
            });
        }
        for (index, n) in items.iter().enumerate() {
            let chars = n.chars().count();
            if n.trim().is_empty() {
                return Err(NotesError::Empty(index));
            }
            if chars > limits.max_chars {
                return Err(NotesError::TooLong {
                    index,
                    chars,
                    max: limits.max_chars,
                });
            }
        }
        Ok(Notes { items, limits })
    }

    /// Notes from untrusted text (a model's reply): blank entries dropped, each cut to
    /// `max_chars` and the list cut to `max_notes`.
    pub fn clamped(items: impl IntoIterator<Item = String>, limits: NoteLimits) -> Notes {
        let items = items
            .into_iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .map(|s| s.chars().take(limits.max_chars).collect::<String>())
            .take(limits.max_notes)
            .collect();
        Notes { items, limits }
    }

    /// The notes.
    pub fn items(&self) -> &[String] {
        &self.items
    }

    /// The limits they obey.
    pub fn limits(&self) -> NoteLimits {
        self.limits
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<'de> Deserialize<'de> for Notes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            items: Vec<String>,
            #[serde(default)]
            limits: NoteLimits,
        }
        let raw = Raw::deserialize(d)?;
        Notes::new(raw.items, raw.limits).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_enforced() {
        let l = NoteLimits {
            max_notes: 2,
            max_chars: 5,
        };
        assert!(Notes::new(vec!["a".into(), "b".into()], l).is_ok());
        assert!(matches!(
            Notes::new(vec!["a".into(); 3], l),
            Err(NotesError::TooMany { .. })
        ));
        assert!(matches!(
            Notes::new(vec!["abcdef".into()], l),
            Err(NotesError::TooLong { .. })
        ));
        assert!(matches!(
            Notes::new(vec![" ".into()], l),
            Err(NotesError::Empty(0))
        ));
        let c = Notes::clamped(
            vec!["abcdefgh".into(), "".into(), "x".into(), "y".into()],
            l,
        );
        assert_eq!(c.items(), &["abcde".to_owned(), "x".to_owned()]);
        let json = r#"{"items": ["a", "b", "c"], "limits": {"max_notes": 2, "max_chars": 5}}"#;
        assert!(
            serde_json::from_str::<Notes>(json).is_err(),
            "deserializing cannot bypass the bounds"
        );
    }
}

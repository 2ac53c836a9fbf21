//! Why the workspace tools refuse a path an agent gave: the refusal the agent reads as its
//! observation.

use std::fmt;

/// A path an agent gave that the workspace tools refuse; shown to the agent as its
/// observation.
#[derive(Debug)]
pub(crate) struct Refused {
    /// The path as the agent gave it.
    pub(crate) raw: String,
    /// What is wrong with it.
    pub(crate) why: Why,
}

/// What makes an agent's path unusable.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Why {
    Nul,
    /// An absolute path; `hint` adds what to use instead.
    Absolute {
        hint: bool,
    },
    NotUtf8,
    Git,
    Escapes,
    LinkOutside,
    DanglingLink,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raw = &self.raw;
        match self.why {
            Why::Nul => f.write_str("error: the path contains a NUL byte"),
            Why::Absolute { hint: true } => write!(
                f,
                "error: {raw}: absolute paths are not allowed; use a path relative to the workspace root"
            ),
            Why::Absolute { hint: false } => {
                write!(f, "error: {raw}: absolute paths are not allowed")
            }
            Why::NotUtf8 => write!(f, "error: {raw}: the path is not UTF-8"),
            Why::Git => write!(f, "error: {raw}: .git is not part of the workspace"),
            Why::Escapes => write!(f, "error: {raw}: the path escapes the workspace"),
            Why::LinkOutside => write!(
                f,
                "error: {raw}: the path leads outside the workspace through a symbolic link"
            ),
            Why::DanglingLink => {
                write!(
                    f,
                    "error: {raw}: a symbolic link on this path points nowhere"
                )
            }
        }
    }
}

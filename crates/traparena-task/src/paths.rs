use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::TaskError;

/// A relative, normalised path that cannot escape the folder it is relative to.
///
/// It has no root, no `..`, no `.` and no empty components, and uses `/` as separator.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RelPath(String);

impl RelPath {
    /// Checks `s` and wraps it (a trailing `/` is dropped).
    ///
    /// # Errors
    /// [`TaskError::RelPath`] when `s` is not a relative path inside its folder
    /// ([`check_relative`]).
    pub fn new(s: &str) -> Result<Self, TaskError> {
        check_relative(s).map(|()| RelPath(s.trim_end_matches('/').to_owned()))
    }
    /// The path as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The path joined onto `base`.
    pub fn under(&self, base: &Path) -> PathBuf {
        base.join(&self.0)
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for RelPath {
    type Error = TaskError;
    fn try_from(s: String) -> Result<Self, TaskError> {
        RelPath::new(&s)
    }
}

impl From<RelPath> for String {
    fn from(p: RelPath) -> String {
        p.0
    }
}

impl AsRef<Path> for RelPath {
    fn as_ref(&self) -> &Path {
        Path::new(&self.0)
    }
}

/// What makes a text not a [`RelPath`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathProblem {
    /// The text is empty.
    Empty,
    /// It holds a NUL byte.
    Nul,
    /// It holds a backslash.
    Backslash,
    /// It starts at the root.
    Absolute,
    /// A `..` component leaves the folder.
    Escapes,
    /// It has a `.` component.
    CurDir,
}

impl PathProblem {
    /// The sentence for `path` (quoted), as [`TaskError::RelPath`] shows it.
    pub(crate) fn describe(self, path: &str) -> String {
        match self {
            PathProblem::Empty => "path is empty".to_owned(),
            PathProblem::Nul => format!("path {path:?} contains a NUL byte"),
            PathProblem::Backslash => format!("path {path:?} contains a backslash"),
            PathProblem::Absolute => format!("path {path:?} is absolute"),
            PathProblem::Escapes => format!("path {path:?} escapes its folder (`..`)"),
            PathProblem::CurDir => format!("path {path:?} has a `.` component"),
        }
    }
}

/// Checks that `s` is a relative path that stays inside the folder it is relative to.
///
/// Refuses empty paths, absolute paths, `..` and `.` components, NUL bytes and backslashes.
///
/// # Errors
/// [`TaskError::RelPath`], naming the path and its [`PathProblem`].
pub fn check_relative(s: &str) -> Result<(), TaskError> {
    problem(s).map_or(Ok(()), |problem| {
        Err(TaskError::RelPath {
            path: s.to_owned(),
            problem,
        })
    })
}

fn problem(s: &str) -> Option<PathProblem> {
    if s.is_empty() {
        return Some(PathProblem::Empty);
    }
    if s.contains('\0') {
        return Some(PathProblem::Nul);
    }
    if s.contains('\\') {
        return Some(PathProblem::Backslash);
    }
    let p = Path::new(s);
    if p.is_absolute() {
        return Some(PathProblem::Absolute);
    }
    p.components().find_map(|c| match c {
        Component::Normal(_) => None,
        Component::ParentDir => Some(PathProblem::Escapes),
        Component::CurDir => Some(PathProblem::CurDir),
        Component::RootDir | Component::Prefix(_) => Some(PathProblem::Absolute),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes() {
        assert!(check_relative("a/b.py").is_ok());
        assert!(check_relative("dir/").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "./a",
            "a\\b",
            "a\0b",
        ] {
            assert!(check_relative(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(RelPath::new("src/").unwrap().as_str(), "src");
        for (bad, text) in [
            ("", "path is empty"),
            ("../x", "path \"../x\" escapes its folder (`..`)"),
            ("/x", "path \"/x\" is absolute"),
            ("./a", "path \"./a\" has a `.` component"),
        ] {
            assert_eq!(RelPath::new(bad).unwrap_err().to_string(), text);
        }
    }
}

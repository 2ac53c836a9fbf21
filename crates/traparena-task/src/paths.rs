use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A relative, normalised path that cannot escape the folder it is relative to.
///
/// It has no root, no `..`, no `.` and no empty components, and uses `/` as separator.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RelPath(String);

impl RelPath {
    /// Checks `s` and wraps it.
    pub fn new(s: &str) -> Result<Self, String> {
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
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
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

/// Checks that `s` is a relative path that stays inside the folder it is relative to.
///
/// Refuses empty paths, absolute paths, `..` and `.` components, NUL bytes and backslashes.
pub fn check_relative(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("path is empty".into());
    }
    if s.contains('\0') {
        return Err(format!("path {s:?} contains a NUL byte"));
    }
    if s.contains('\\') {
        return Err(format!("path {s:?} contains a backslash"));
    }
    let p = Path::new(s);
    if p.is_absolute() {
        return Err(format!("path {s:?} is absolute"));
    }
    for c in p.components() {
        match c {
            Component::Normal(_) => {}
            Component::ParentDir => return Err(format!("path {s:?} escapes its folder (`..`)")),
            Component::CurDir => return Err(format!("path {s:?} has a `.` component")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("path {s:?} is absolute"));
            }
        }
    }
    Ok(())
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
    }
}

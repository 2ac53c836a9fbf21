//! Unified diffs, parsed into files and hunks with `diffy`.
//!
//! Both plain unified diffs and `git diff` output (creations, deletions, renames, binary files)
//! are understood. Paths are stripped of their `a/` and `b/` prefixes and checked so that no patch
//! can name a file outside the tree it applies to.

use std::path::Path;

use diffy::Line;
use diffy::patch_set::{FileOperation, FilePatch, ParseOptions, PatchKind, PatchSet};
use serde::{Deserialize, Serialize};

use crate::error::TaskError;
use crate::paths::RelPath;

/// A parsed multi-file patch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    /// The files it changes, in patch order.
    pub files: Vec<ChangedFile>,
}

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// Path before the change; `None` when the patch creates the file.
    pub old_path: Option<RelPath>,
    /// Path after the change; `None` when the patch deletes the file.
    pub new_path: Option<RelPath>,
    /// True for a binary change (no hunks).
    pub binary: bool,
    /// The text hunks.
    pub hunks: Vec<Hunk>,
}

impl ChangedFile {
    /// The path that names this change: the new path, or the old one for a deletion.
    pub fn path(&self) -> &RelPath {
        self.new_path
            .as_ref()
            .or(self.old_path.as_ref())
            .expect("a changed file has at least one path")
    }
    /// Every path this change touches (old and new, deduplicated).
    pub fn paths(&self) -> Vec<&RelPath> {
        let mut v: Vec<&RelPath> = self.old_path.iter().chain(self.new_path.iter()).collect();
        v.dedup();
        v
    }
}

/// One hunk, with the numbers of the lines it removes and adds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    /// First line of the hunk in the old file (1-based; 0 for an empty old side).
    pub old_start: usize,
    /// Lines the hunk covers in the old file.
    pub old_len: usize,
    /// First line of the hunk in the new file (1-based; 0 for an empty new side).
    pub new_start: usize,
    /// Lines the hunk covers in the new file.
    pub new_len: usize,
    /// Removed lines: (line number in the old file, text without the newline).
    pub removed: Vec<(usize, String)>,
    /// Added lines: (line number in the new file, text without the newline).
    pub added: Vec<(usize, String)>,
    /// For each added line, the line of the old file it comes after (0: before the first).
    pub insert_after: Vec<usize>,
}

impl Patch {
    /// Parses unified diff text. An empty or blank text is the empty patch.
    ///
    /// `label` names the patch in errors (usually its file path).
    pub fn parse(text: &str, label: &Path) -> Result<Patch, TaskError> {
        if text.trim().is_empty() {
            return Ok(Patch::default());
        }
        let mut files = Vec::new();
        // Each file section in its own format: `git apply` takes plain `---`/`+++` sections
        // beside `diff --git` ones, and a parser of one format would skip the other's.
        for (start, git, chunk) in sections(text) {
            let opts = if git {
                ParseOptions::gitdiff()
            } else {
                ParseOptions::unidiff()
            };
            for item in PatchSet::parse(chunk, opts) {
                let fp = item.map_err(|e| {
                    let message = e.to_string();
                    TaskError::Patch {
                        path: label.to_owned(),
                        line: byte_to_line(&text[..start + chunk.len()], &message, start),
                        message,
                    }
                })?;
                files.push(changed_file(fp, label)?);
            }
        }
        Ok(Patch { files })
    }
}

/// One file of a parsed patch set as a [`ChangedFile`].
fn changed_file(fp: FilePatch<'_, str>, label: &Path) -> Result<ChangedFile, TaskError> {
    let bad = |p: &str| TaskError::Patch {
        path: label.to_owned(),
        line: 0,
        message: format!("file path {p:?} is not a safe relative path"),
    };
    let rel = |p: &str| RelPath::new(strip_ab(p)).map_err(|_| bad(p));
    let (old_path, new_path) = match fp.operation() {
        FileOperation::Delete(p) => (Some(rel(p)?), None),
        FileOperation::Create(p) => (None, Some(rel(p)?)),
        FileOperation::Modify { original, modified } => {
            (Some(rel(original)?), Some(rel(modified)?))
        }
        FileOperation::Rename { from, to } | FileOperation::Copy { from, to } => {
            (Some(rel(from)?), Some(rel(to)?))
        }
    };
    let (binary, hunks) = match fp.patch() {
        PatchKind::Binary(_) => (true, Vec::new()),
        PatchKind::Text(p) => (false, p.hunks().iter().map(convert_hunk).collect()),
    };
    Ok(ChangedFile {
        old_path,
        new_path,
        binary,
        hunks,
    })
}

/// The patch's file sections, each with its byte offset and whether it is a `diff --git` one:
/// a section starts at a `diff --git` line, or at a `---` line followed by a `+++` line outside
/// any hunk and outside a git section's header.
fn sections(text: &str) -> Vec<(usize, bool, &str)> {
    let mut starts: Vec<(usize, bool)> = Vec::new();
    // Lines of the current hunk still to come: (old, new).
    let mut hunk = (0usize, 0usize);
    // In a git section before its own `---`/`+++` header.
    let mut git_header = false;
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let at = offset;
        offset += line.len();
        if hunk != (0, 0) {
            match line.as_bytes().first() {
                Some(b'-') => hunk.0 = hunk.0.saturating_sub(1),
                Some(b'+') => hunk.1 = hunk.1.saturating_sub(1),
                Some(b'\\') => {}
                _ => hunk = (hunk.0.saturating_sub(1), hunk.1.saturating_sub(1)),
            }
            continue;
        }
        if line.starts_with("diff --git ") {
            starts.push((at, true));
            git_header = true;
        } else if line.starts_with("--- ") && lines.peek().is_some_and(|n| n.starts_with("+++ ")) {
            if !git_header {
                starts.push((at, false));
            }
            git_header = false;
        } else if let Some(h) = line.strip_prefix("@@ -") {
            git_header = false;
            hunk = hunk_lengths(h);
        }
    }
    if starts.is_empty() {
        // No file header at all: the parser of the patch's format says what is wrong.
        return vec![(0, text.contains("diff --git "), text)];
    }
    // What comes before the first section holds no file header: a preamble (a commit
    // message), which both formats ignore.
    let mut out = Vec::new();
    for (i, &(start, git)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(text.len(), |(s, _)| *s);
        out.push((start, git, &text[start..end]));
    }
    out
}

/// The old and new line counts of a hunk header after its `@@ -`: `a,b +c,d @@` (a count left
/// out is 1).
fn hunk_lengths(h: &str) -> (usize, usize) {
    let mut parts = h.split_whitespace();
    let len = |range: Option<&str>| {
        range
            .and_then(|r| r.split_once(',').map_or(Some("1"), |(_, n)| Some(n)))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
    };
    let old = len(parts.next());
    let new = len(parts.next().map(|p| p.trim_start_matches('+')));
    (old, new)
}

impl Patch {
    /// True when the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every path the patch touches, old and new.
    pub fn touched_paths(&self) -> Vec<&RelPath> {
        let mut v: Vec<&RelPath> = self.files.iter().flat_map(|f| f.paths()).collect();
        v.sort();
        v.dedup();
        v
    }
}

fn strip_ab(p: &str) -> &str {
    p.strip_prefix("a/")
        .or_else(|| p.strip_prefix("b/"))
        .unwrap_or(p)
}

fn convert_hunk(h: &diffy::Hunk<'_, str>) -> Hunk {
    let (old, new) = (h.old_range(), h.new_range());
    let (mut o, mut n) = (old.start(), new.start());
    let (mut removed, mut added, mut insert_after) = (Vec::new(), Vec::new(), Vec::new());
    let trim = |s: &str| s.strip_suffix('\n').unwrap_or(s).to_owned();
    for line in h.lines() {
        match line {
            Line::Context(_) => {
                o += 1;
                n += 1;
            }
            Line::Delete(s) => {
                removed.push((o, trim(s)));
                o += 1;
            }
            Line::Insert(s) => {
                added.push((n, trim(s)));
                insert_after.push(o.saturating_sub(1));
                n += 1;
            }
        }
    }
    Hunk {
        old_start: old.start(),
        old_len: old.len(),
        new_start: new.start(),
        new_len: new.len(),
        removed,
        added,
        insert_after,
    }
}

/// Turns diffy's "at byte N" of a section starting at byte `start` of `text` into a 1-based
/// line number of `text` (0 when the message has none).
fn byte_to_line(text: &str, message: &str, start: usize) -> usize {
    message
        .split("at byte ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<usize>().ok())
        .map(|b| {
            let b = start + b;
            text.as_bytes()[..b.min(text.len())]
                .iter()
                .filter(|&&c| c == b'\n')
                .count()
                + 1
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIT: &str = "diff --git a/m.py b/m.py
index 1111111..2222222 100644
--- a/m.py
+++ b/m.py
@@ -2,3 +2,3 @@ def f(x):
     a = 1
-    return x - a
+    return x + a
     # end
diff --git a/new.py b/new.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+def g():
+    return 2
diff --git a/old.py b/old.py
deleted file mode 100644
index 4444444..0000000
--- a/old.py
+++ /dev/null
@@ -1 +0,0 @@
-x = 1
";

    #[test]
    fn plain_file_sections_beside_git_ones_are_read_too() {
        // `git apply` applies a plain `---`/`+++` section before or after `diff --git` ones;
        // every file it changes must be judged, none skipped.
        let plain = "--- a/p.py\n+++ b/p.py\n@@ -1,1 +1,1 @@\n-a = 1\n+a = 2\n";
        for text in [format!("{plain}{GIT}"), format!("{GIT}{plain}")] {
            let p = Patch::parse(&text, Path::new("t.patch"));
            let paths: Vec<String> = p
                .map(|p| p.touched_paths().iter().map(|r| r.to_string()).collect())
                .unwrap_or_default();
            assert!(paths.contains(&"p.py".to_owned()), "{paths:?}\n{text}");
            assert!(paths.contains(&"m.py".to_owned()), "{paths:?}");
        }
    }

    #[test]
    fn parses_git_diff_with_line_numbers() {
        let p = Patch::parse(GIT, Path::new("t.patch")).unwrap();
        assert_eq!(p.files.len(), 3);
        let m = &p.files[0];
        assert_eq!(m.path().as_str(), "m.py");
        assert_eq!(m.hunks[0].removed, vec![(3, "    return x - a".to_owned())]);
        assert_eq!(m.hunks[0].added, vec![(3, "    return x + a".to_owned())]);
        assert_eq!(m.hunks[0].insert_after, vec![3]);
        assert_eq!(p.files[1].old_path, None);
        assert_eq!(p.files[1].hunks[0].added.len(), 2);
        assert_eq!(p.files[2].new_path, None);
        assert_eq!(p.files[2].path().as_str(), "old.py");
    }

    #[test]
    fn empty_text_is_empty_patch() {
        assert!(Patch::parse("  \n", Path::new("e")).unwrap().is_empty());
    }

    #[test]
    fn refuses_escaping_paths() {
        let evil = "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n";
        let e = Patch::parse(evil, Path::new("evil.patch")).unwrap_err();
        assert!(e.to_string().contains("not a safe relative path"), "{e}");
    }

    #[test]
    fn garbage_is_an_error_naming_the_file() {
        let e = Patch::parse("this is not a diff\n", Path::new("bad.patch")).unwrap_err();
        assert!(e.to_string().starts_with("bad.patch"), "{e}");
    }
}

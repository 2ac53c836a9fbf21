//! A patch applied in-process, when that is sure to give what `git apply` gives.
//!
//! Candidate patches are `git diff` output of plain text edits: files changed in place and
//! files added, every hunk at the line its header names. For such a patch the result of
//! `git apply --whitespace=nowarn` is fully determined — each hunk's old lines must be exactly
//! where it says, and are replaced by its new lines — so the workspace computes it without
//! starting git. Anything else (a hunk that is not exactly where it says, a deletion, a mode
//! change, a rename, binary data, a quoted path, a path through a symbolic link, a file added
//! where one exists) is left to `git apply`, which applies it with offsets or refuses it in its
//! own words: [`plan`] returns `None` for it. The plan is computed whole before anything is
//! written, so a patch the fast path cannot take changes nothing.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use traparena_task::RelPath;

/// One file's new content, at a path relative to the workspace.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Change {
    /// The file, relative to the workspace.
    pub(crate) path: RelPath,
    /// Its whole new content.
    pub(crate) content: Vec<u8>,
}

/// The files `patch` writes into `root`, or `None` when only `git apply` can say what it does.
pub(crate) fn plan(root: &Path, patch: &str) -> Option<Vec<Change>> {
    let mut changes = Vec::new();
    let mut seen = BTreeSet::new();
    for section in sections(patch)? {
        let change = file_change(root, section)?;
        if !seen.insert(change.path.clone()) {
            return None;
        }
        changes.push(change);
    }
    (!changes.is_empty()).then_some(changes)
}

/// The patch's `diff --git` sections, each as its lines (`None` when text precedes the first).
fn sections(patch: &str) -> Option<Vec<Vec<&str>>> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    for line in patch.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            out.push(vec![line]);
        } else {
            out.last_mut()?.push(line);
        }
    }
    Some(out)
}

/// The new content of the one file a section changes or adds.
fn file_change(root: &Path, lines: Vec<&str>) -> Option<Change> {
    let mut at = 1;
    let mut added = false;
    while at < lines.len() && !lines[at].starts_with("--- ") {
        let header = lines[at].trim_end_matches('\n');
        match header {
            // A change in place names the file's mode, which must be a regular file's.
            h if h.starts_with("index ") && (added || h.ends_with(" 100644")) => {}
            "new file mode 100644" => added = true,
            _ => return None,
        }
        at += 1;
    }
    let old = lines.get(at)?.trim_end_matches('\n').strip_prefix("--- ")?;
    let new = lines
        .get(at + 1)?
        .trim_end_matches('\n')
        .strip_prefix("+++ ")?;
    let path = new.strip_prefix("b/")?;
    match (added, old) {
        (true, "/dev/null") => {}
        (false, o) if o.strip_prefix("a/") == Some(path) => {}
        _ => return None,
    }
    let rel = plain(path)?;
    let file = rel.under(root);
    if !reachable(root, path) {
        return None;
    }
    // A file changed in place must be the regular, non-executable file the index line names
    // (git would warn about another mode and write the patch's).
    let original = match (added, std::fs::symlink_metadata(&file)) {
        (true, Err(e)) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        (false, Ok(m)) if m.is_file() && m.permissions().mode() & 0o111 == 0 => {
            std::fs::read(&file).ok()?
        }
        _ => return None,
    };
    let content = apply_hunks(&original, &lines[at + 2..])?;
    Some(Change { path: rel, content })
}

/// A path git writes as it is: a relative path inside the workspace ([`RelPath`]), neither
/// quoted nor holding a tab, and outside `.git`.
fn plain(path: &str) -> Option<RelPath> {
    if path.starts_with('"') || path.contains('\t') || path.split('/').any(|c| c == ".git") {
        return None;
    }
    RelPath::new(path).ok()
}

/// Every folder above `path` inside `root` is a real folder, or missing (then created); none is
/// a symbolic link, which `git apply` refuses to write through.
fn reachable(root: &Path, path: &str) -> bool {
    let mut dir = root.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts[..parts.len() - 1] {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return true,
            _ => return false,
        }
    }
    true
}

/// `original` with the hunks of `body` applied, each exactly at the line its header names.
fn apply_hunks(original: &[u8], body: &[&str]) -> Option<Vec<u8>> {
    let lines: Vec<&[u8]> = original.split_inclusive(|b| *b == b'\n').collect();
    let mut out = Vec::with_capacity(original.len() + 256);
    let (mut next, mut at) = (0usize, 0usize);
    while at < body.len() {
        let (old_start, old_len, new_len) = hunk_header(body[at])?;
        at += 1;
        let (old, new, used, trailing) = hunk_lines(&body[at..], old_len, new_len)?;
        at += used;
        // `-N,0` inserts after line N; otherwise the hunk's old lines start at line N.
        let start = if old_len == 0 {
            old_start
        } else {
            old_start.checked_sub(1)?
        };
        let end = start + old_len;
        // git matches a hunk without trailing context only at the end of the file.
        if start < next || end > lines.len() || lines[start..end] != old[..] {
            return None;
        }
        if !trailing && end != lines.len() {
            return None;
        }
        lines[next..start]
            .iter()
            .for_each(|l| out.extend_from_slice(l));
        new.iter().for_each(|l| out.extend_from_slice(l));
        next = end;
    }
    lines[next..].iter().for_each(|l| out.extend_from_slice(l));
    Some(out)
}

/// `@@ -a[,b] +c[,d] @@ ...` → (a, b, d).
fn hunk_header(line: &str) -> Option<(usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((s, n)) => Some((s.parse().ok()?, n.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let ((a, b), (_, d)) = (range(old)?, range(new)?);
    Some((a, b, d))
}

/// A hunk's lines, as [`hunk_lines`] reads them.
type HunkLines<'a> = (Vec<&'a [u8]>, Vec<&'a [u8]>, usize, bool);

/// A hunk's old and new lines (each with its newline, unless `\ No newline at end of file`
/// follows it), how many patch lines it took and whether it ends with a context line; `None`
/// when the counts do not add up.
fn hunk_lines<'a>(body: &[&'a str], old_len: usize, new_len: usize) -> Option<HunkLines<'a>> {
    let (mut old, mut new) = (Vec::new(), Vec::new());
    let mut used = 0;
    // Which side the last line went to: old, new or both (context).
    let mut last = (false, false);
    // Whether the line a `\` marker followed was context (the marker ends the hunk).
    let mut ended_in_context = false;
    while used < body.len()
        && (old.len() < old_len || new.len() < new_len || body[used].starts_with('\\'))
    {
        let line = body[used];
        used += 1;
        if line.starts_with('\\') {
            let cut = |side: &mut Vec<&'a [u8]>| {
                let l = side.pop()?;
                side.push(l.strip_suffix(b"\n")?);
                Some(())
            };
            if last.0 {
                cut(&mut old)?;
            }
            if last.1 {
                cut(&mut new)?;
            }
            ended_in_context = last == (true, true);
            last = (false, false);
            continue;
        }
        ended_in_context = false;
        let text = line.get(1..)?.as_bytes();
        last = match line.as_bytes().first()? {
            b' ' => (true, true),
            b'-' => (true, false),
            b'+' => (false, true),
            _ => return None,
        };
        if last.0 {
            old.push(text);
        }
        if last.1 {
            new.push(text);
        }
    }
    let trailing = last == (true, true) || ended_in_context;
    (old.len() == old_len && new.len() == new_len).then_some((old, new, used, trailing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_edits_are_planned_and_the_rest_left_to_git() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "1\n2\n3\n4\n").unwrap();
        std::fs::write(d.path().join("nonl"), "x").unwrap();
        let edit = "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n";
        let planned = plan(d.path(), edit).unwrap();
        assert_eq!(planned[0].path.as_str(), "a.txt");
        assert_eq!(planned[0].content, b"1\n2\nthree\n4\n");
        let eof = "diff --git a/nonl b/nonl\nindex 1..2 100644\n--- a/nonl\n+++ b/nonl\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n";
        assert_eq!(plan(d.path(), eof).unwrap()[0].content, b"y\n");
        let added = "diff --git a/n/b.txt b/n/b.txt\nnew file mode 100644\nindex 0..1\n--- /dev/null\n+++ b/n/b.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n";
        assert_eq!(plan(d.path(), added).unwrap()[0].content, b"a\nb\n");
        for left in [
            // Not where the header says, or without trailing context before the end.
            "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n 2\n-3\n+x\n",
            "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -2,2 +2,2 @@\n 2\n-3\n+x\n",
            // A deletion, a mode change, a rename, binary data, an existing file added.
            "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n@@ -1,4 +0,0 @@\n-1\n-2\n-3\n-4\n",
            "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n",
            "diff --git a/a.txt b/c.txt\nsimilarity index 100%\nrename from a.txt\nrename to c.txt\n",
            "diff --git a/a.txt b/a.txt\nindex 1..2 100644\nGIT binary patch\nliteral 1\n",
            "diff --git a/a.txt b/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+a\n",
            // Counts that do not add up, and text before the first file.
            "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -2,4 +2,4 @@\n 2\n-3\n+x\n 4\n",
            "junk\ndiff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n 2\n-3\n+x\n 4\n",
        ] {
            assert_eq!(plan(d.path(), left), None, "{left}");
        }
    }
}

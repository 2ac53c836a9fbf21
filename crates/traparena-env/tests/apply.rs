//! A workspace applies a patch exactly as `git apply` does, whether it applies it in-process
//! or leaves it to git: for every case the tree (contents and modes) and the verdict equal what
//! `git apply --whitespace=nowarn --binary` makes of the same patch on the same tree.

// This test code runs git on real folders, to compare with it.
#![allow(clippy::disallowed_methods)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::none_sandbox;
use traparena_env::Workspace;

type Tree = BTreeMap<String, (Vec<u8>, u32)>;

fn write_tree(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
}

/// Every file under `dir` (but `.git`) with its content and permission bits.
fn read_tree(dir: &Path) -> Tree {
    let mut out = Tree::new();
    for e in walkdir::WalkDir::new(dir).min_depth(1) {
        let e = e.unwrap();
        let rel = e
            .path()
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.starts_with(".git") || !e.file_type().is_file() {
            continue;
        }
        let mode = e.metadata().unwrap().permissions().mode() & 0o777;
        out.insert(rel, (std::fs::read(e.path()).unwrap(), mode));
    }
    out
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// `git diff` of `before` → `after`, as the workspace takes a candidate patch.
fn diff_of(before: &[(&str, &str)], after: &[(&str, &str)]) -> String {
    let d = tempfile::tempdir().unwrap();
    git(d.path(), &["init", "-q"]);
    write_tree(d.path(), before);
    git(d.path(), &["add", "-A"]);
    git(d.path(), &["commit", "-qm", "base"]);
    for (path, _) in before {
        std::fs::remove_file(d.path().join(path)).unwrap();
    }
    write_tree(d.path(), after);
    git(d.path(), &["add", "-A"]);
    let out = git(d.path(), &["diff", "--cached", "--binary", "--no-renames"]);
    String::from_utf8(out.stdout).unwrap()
}

/// The tree and verdict of `patch` on `files`: through a workspace, and through git apply.
fn both(files: &[(&str, &str)], patch: &str) -> ((Tree, bool), (Tree, bool)) {
    let repo = tempfile::tempdir().unwrap();
    write_tree(repo.path(), files);
    let mut ws = Workspace::materialize(repo.path(), &none_sandbox()).unwrap();
    let applied = ws.apply_patch(patch).unwrap().applied;
    let ours = (read_tree(ws.path()), applied);
    let plain = tempfile::tempdir().unwrap();
    write_tree(plain.path(), files);
    let p = plain.path().join("..").join(format!(
        "{}.diff",
        plain.path().file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&p, patch).unwrap();
    let out = git(
        plain.path(),
        &[
            "apply",
            "--whitespace=nowarn",
            "--binary",
            p.to_str().unwrap(),
        ],
    );
    std::fs::remove_file(&p).unwrap();
    ((ours), (read_tree(plain.path()), out.status.success()))
}

const BASE: &[(&str, &str)] = &[
    (
        "m.py",
        "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n",
    ),
    (
        "pkg/util.py",
        "A = 1\nB = 2\nC = 3\nD = 4\nE = 5\nF = 6\nG = 7\nH = 8\nI = 9\nJ = 10\n",
    ),
    ("nonl.txt", "one\ntwo"),
    ("crlf.txt", "a\r\nb\r\nc\r\n"),
];

#[test]
fn diffs_of_edits_apply_as_git_applies_them() {
    let edits: &[&[(&str, &str)]] = &[
        // One line changed in the middle.
        &[(
            "m.py",
            "def f(x):\n    return x - 1\n\n\ndef g(y):\n    return y * 2\n",
        )],
        // Lines added at the start and at the end, two hunks in one file.
        &[(
            "pkg/util.py",
            "Z = 0\nA = 1\nB = 2\nC = 3\nD = 4\nE = 5\nF = 6\nG = 7\nH = 8\nI = 9\nJ = 10\nK = 11\n",
        )],
        // The last line without a newline, given one; and the other way round.
        &[("nonl.txt", "one\ntwo\n")],
        &[(
            "m.py",
            "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 3",
        )],
        // Carriage returns kept.
        &[("crlf.txt", "a\r\nB\r\nc\r\n")],
        // A new file in a new folder, and one beside an old one.
        &[("new/deep/n.py", "x = 1\n"), ("pkg/more.py", "")],
        &[("pkg/more.py", "y = 2\nz = 3\n")],
        // Two files at once.
        &[
            (
                "m.py",
                "def f(x):\n    return x\n\n\ndef g(y):\n    return y * 2\n",
            ),
            ("crlf.txt", "a\r\n"),
        ],
    ];
    for after in edits {
        let mut full: BTreeMap<&str, &str> = BASE.iter().copied().collect();
        full.extend(after.iter().copied());
        let after: Vec<(&str, &str)> = full.into_iter().collect();
        let patch = diff_of(BASE, &after);
        assert!(!patch.is_empty());
        let (ours, gits) = both(BASE, &patch);
        assert!(ours.1, "{patch}");
        assert_eq!(ours, gits, "{patch}");
    }
}

#[test]
fn patches_the_fast_path_leaves_to_git_still_apply_as_git_applies_them() {
    let moved = "diff --git a/pkg/util.py b/pkg/util.py\n--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -2,3 +2,3 @@\n C = 3\n-D = 4\n+D = 40\n E = 5\n";
    let mismatch = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f(y):\n-    return x + 1\n+    return x + 2\n";
    let no_trailing = "diff --git a/pkg/util.py b/pkg/util.py\n--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -3,2 +3,2 @@\n B = 2\n-C = 3\n+C = 30\n";
    let deleted = diff_of(BASE, &BASE[1..]);
    let exists = "diff --git a/m.py b/m.py\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/m.py\n@@ -0,0 +1 @@\n+x\n";
    let mode = "diff --git a/m.py b/m.py\nold mode 100644\nnew mode 100755\n";
    for patch in [moved, mismatch, no_trailing, deleted.as_str(), exists, mode] {
        let (ours, gits) = both(BASE, patch);
        assert_eq!(ours, gits, "{patch}");
    }
}

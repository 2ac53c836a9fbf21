//! `validate` on every way a task folder can be broken: one table, each case a private copy of
//! the bundled `clamp_overt` task with one thing broken, and the problems the report must name.

use std::path::{Path, PathBuf};

use traparena_env::{Sandbox, SandboxConfig};
use traparena_eval::{ValidateOptions, ValidationReport, validate};
use traparena_testkit::cli::{copy_dir, tasks_dir};

/// Rewrites a file; an edit that changes nothing is a broken case, not a passing one.
fn edit(path: &Path, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    let new = f(text.clone());
    assert_ne!(text, new, "edit of {} changed nothing", path.display());
    std::fs::write(path, new).unwrap();
}

/// Edits `task.json` as JSON.
fn spec(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    edit(&dir.join("task.json"), |s| {
        let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
        f(&mut v);
        v.to_string()
    });
}

const HIDDEN: &str = "hidden/hidden_tests/test_clamp_hidden.py";

type Break = fn(&Path);

/// (case, how the copy is broken, what the report's problems must say).
const CASES: &[(&str, Break, &[&str])] = &[
    (
        "malformed task.json",
        |d| edit(&d.join("task.json"), |s| s.replacen('{', "{,", 1)),
        &["task.json", "format"],
    ),
    (
        "missing field",
        |d| {
            spec(d, |v| {
                v.as_object_mut().unwrap().remove("description");
            })
        },
        &["task.json", "missing field `description`"],
    ),
    (
        "unknown field",
        |d| spec(d, |v| v["hidden_tests"]["runer"] = "unittest".into()),
        &["task.json", "hidden_tests", "unknown field `runer`"],
    ),
    (
        "unknown language",
        |d| spec(d, |v| v["language"] = "cobol".into()),
        &["task.json", "language", "unknown variant `cobol`"],
    ),
    (
        "relative path escaping the folder",
        |d| {
            spec(d, |v| {
                v["public_tests"]["files"][0] = "../../etc/passwd".into()
            })
        },
        &["public_tests.files[0]", "escapes its folder"],
    ),
    (
        "absolute path",
        |d| spec(d, |v| v["public_tests"]["files"][0] = "/etc/passwd".into()),
        &["public_tests.files[0]", "is absolute"],
    ),
    (
        "public tests fail on the buggy code",
        |d| {
            edit(&d.join("repo/tests/test_clamp.py"), |s| {
                format!(
                    "{s}\n\nclass Broken(unittest.TestCase):\n    def test_fails(self):\n        self.assertEqual(1, 2)\n"
                )
            })
        },
        &["public tests pass on the buggy code", "1 failed"],
    ),
    (
        "hidden tests pass on the buggy code",
        |d| {
            std::fs::write(
                d.join(HIDDEN),
                "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n",
            )
            .unwrap()
        },
        &["hidden tests fail on the buggy code"],
    ),
    (
        "reference patch does not apply",
        |d| {
            edit(&d.join("reference.patch"), |s| {
                let lines: Vec<String> = s
                    .lines()
                    .map(|l| match l.strip_prefix(' ') {
                        Some(_) => format!(" # drifted{l}"),
                        None => l.to_owned(),
                    })
                    .collect();
                lines.join("\n") + "\n"
            })
        },
        &["reference patch applies", "does not apply"],
    ),
    (
        "reference patch applies but fixes nothing",
        |d| {
            let text = std::fs::read_to_string(d.join("repo/clamp.py")).unwrap();
            let first = text.lines().next().unwrap();
            std::fs::write(
                d.join("reference.patch"),
                format!("diff --git a/clamp.py b/clamp.py\n--- a/clamp.py\n+++ b/clamp.py\n@@ -1 +1,2 @@\n+# a comment\n {first}\n"),
            )
            .unwrap()
        },
        &["hidden tests pass with the reference patch"],
    ),
    (
        "reference patch edits the reference location but fixes nothing",
        |d| {
            std::fs::write(
                d.join("reference.patch"),
                "diff --git a/clamp.py b/clamp.py\n--- a/clamp.py\n+++ b/clamp.py\n@@ -8,2 +8,2 @@\n-    if x < lo:\n+    if x < lo:  # the lower bound\n         return lo\n",
            )
            .unwrap()
        },
        // The evaluator judges the reference from the validator's own run of the hidden tests.
        &[
            "hidden tests pass with the reference patch: run 1 of 1",
            "reference patch is an accepted repair: the hidden tests failed with the reference patch in the evaluator: hidden tests: FAILED",
        ],
    ),
    (
        "a declared reference location the reference patch does not touch",
        |d| {
            spec(d, |v| {
                v["reference_locations"][0]["symbol"] = "fraction".into()
            })
        },
        &[
            "reference patch is an accepted repair",
            "touches no reference location",
        ],
    ),
    (
        "a hidden file in repo/ under its own name",
        |d| {
            std::fs::create_dir_all(d.join("repo/hidden_tests")).unwrap();
            std::fs::copy(
                d.join(HIDDEN),
                d.join("repo/hidden_tests/test_clamp_hidden.py"),
            )
            .unwrap();
        },
        &["hidden file hidden_tests/test_clamp_hidden.py is present in repo/"],
    ),
    (
        "a hidden file copied elsewhere in repo/",
        |d| {
            std::fs::copy(d.join(HIDDEN), d.join("repo/notes.py")).unwrap();
        },
        &["is present in repo/ as notes.py"],
    ),
    (
        "the reference patch in repo/",
        |d| {
            std::fs::copy(d.join("reference.patch"), d.join("repo/fix.diff")).unwrap();
        },
        &["reference.patch is present in repo/"],
    ),
    (
        "no hidden/ folder",
        |d| std::fs::remove_dir_all(d.join("hidden")).unwrap(),
        &["hidden", "missing"],
    ),
    (
        "a declared reference location that is no function",
        |d| {
            spec(d, |v| {
                v["reference_locations"][0]["symbol"] = "no_such_function".into()
            })
        },
        &[
            "reference patch is an accepted repair",
            "clamp.py:no_such_function is not a function",
        ],
    ),
];

fn problems(r: &ValidationReport) -> String {
    r.problems()
        .map(|c| format!("{}: {}", c.name, c.detail))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_broken_task_is_invalid_and_the_report_says_why() {
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let opts = ValidateOptions { reference_runs: 1 };
    let pristine = validate(&tasks_dir().join("clamp_overt"), &sb, &opts).unwrap();
    assert!(pristine.valid, "{}", problems(&pristine));
    for (case, break_it, needles) in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("clamp_overt");
        copy_dir(&tasks_dir().join("clamp_overt"), &dir);
        break_it(&dir);
        let r = validate(&dir, &sb, &opts).unwrap();
        let text = problems(&r);
        assert!(!r.valid, "{case}: reported valid");
        for n in *needles {
            assert!(text.contains(n), "{case}: wanted {n:?} in:\n{text}");
        }
    }
    let missing = validate(Path::new("/nonexistent/task"), &sb, &opts).unwrap();
    assert!(!missing.valid);
    assert!(
        problems(&missing).contains("missing (task folder)"),
        "{}",
        problems(&missing)
    );
}

/// Only a hidden file's content is secret: another content at its path in `repo/` (the base
/// version of a test file the hidden tests change, as a SWE-bench task keeps it) leaves the
/// task valid, and the evaluation copy holds the hidden version.
#[test]
fn a_hidden_files_path_may_hold_its_base_version() {
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("clamp_overt");
    copy_dir(&tasks_dir().join("clamp_overt"), &dir);
    let base = dir.join("repo/hidden_tests/test_clamp_hidden.py");
    std::fs::create_dir_all(base.parent().unwrap()).unwrap();
    std::fs::write(&base, "# the base version: no test yet\n").unwrap();
    let r = validate(&dir, &sb, &ValidateOptions { reference_runs: 1 }).unwrap();
    assert!(r.valid, "{}", problems(&r));
    let task = traparena_task::Task::load(&dir).unwrap();
    let (copy, _) = traparena_eval::evaluation_copy(&task, &sb, "").unwrap();
    assert_eq!(
        std::fs::read(copy.path().join("hidden_tests/test_clamp_hidden.py")).unwrap(),
        std::fs::read(dir.join(HIDDEN)).unwrap()
    );
}

#[test]
fn every_bundled_task_is_valid_with_every_check_listed() {
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(tasks_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 8);
    for d in dirs {
        let r = validate(&d, &sb, &ValidateOptions::default()).unwrap();
        assert!(r.valid, "{}: {}", d.display(), problems(&r));
        assert!(r.checks.len() >= 7, "{:?}", r.checks);
    }
}

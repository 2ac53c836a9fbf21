//! A synthetic SWE-bench repository: a git clone with a bug, its fix and its tests in history,
//! and instance records over it, for the importer's tests and for imports the CLI's tests run.

// This test code drives real processes.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the shell `script` in `dir` with a neutral git identity and configuration; returns
/// its standard output (a failure fails the test).
pub fn git(dir: &Path, script: &str) -> String {
    let run = crate::cli::output(
        Command::new("/bin/sh")
            .args(["-c", script])
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@localhost")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@localhost"),
    );
    assert_eq!(run.code, 0, "{script}: {}", run.stderr);
    run.stdout
}

/// Writes `text` to `root/rel`, making its folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A folder `root/wheels` of hand-made wheels of the pure packages `names` (version 1.0, a
/// `VALUE = 1` module each), for pip's `--find-links`: the tests need no package index for them.
pub fn wheels(root: &Path, names: &[&str]) -> PathBuf {
    let dir = root.join("wheels");
    std::fs::create_dir_all(&dir).unwrap();
    let script = r#"
import sys, zipfile
for name in sys.argv[2:]:
    with zipfile.ZipFile(f"{sys.argv[1]}/{name}-1.0-py3-none-any.whl", "w") as z:
        z.writestr(f"{name}/__init__.py", "VALUE = 1\n")
        di = f"{name}-1.0.dist-info"
        z.writestr(f"{di}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        z.writestr(f"{di}/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{di}/RECORD", "")
"#;
    let out = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(&dir)
        .args(names)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    dir
}

/// The buggy module.
pub const CALC_BUGGY: &str = "__version__ = \"1.0.0\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return x\n";
/// The fixed module.
pub const CALC_FIXED: &str = "__version__ = \"1.0.0\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n";
/// The tests at the base commit.
pub const TESTS_BASE: &str = "from calc import add, clamp\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_clamp_low(bounds):\n    assert clamp(-5, *bounds) == 0\n\n\nclass TestMore:\n    def test_in_class(self):\n        assert clamp(5, 0, 10) == 5\n";
/// The tests after the fix.
pub const TESTS_NEW: &str = "import pathlib\n\nfrom calc import add, clamp\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_clamp_low(bounds):\n    assert clamp(-5, *bounds) == 0\n\n\nclass TestMore:\n    def test_in_class(self):\n        assert clamp(5, 0, 10) == 5\n\n\ndef test_new_passing():\n    assert add(0, 0) == 0\n\n\ndef test_clamp_high(bounds):\n    for line in (pathlib.Path(__file__).parent / \"data\" / \"cases.txt\").read_text().split():\n        assert clamp(int(line), *bounds) == 10\n";

/// A clone with the base commit, the fix (code and tests) and a later commit; returns the
/// clone, the base commit, the code patch and the test patch.
pub fn synthetic_clone(root: &Path) -> (PathBuf, String, String, String) {
    let d = root.join("calc-clone");
    std::fs::create_dir_all(&d).unwrap();
    write(&d, "pyproject.toml", "[project]\nname = \"calc\"\n");
    write(&d, "src/calc/__init__.py", CALC_BUGGY);
    write(
        &d,
        "tests/conftest.py",
        "import pytest\n\n\n@pytest.fixture\ndef bounds():\n    return (0, 10)\n",
    );
    write(&d, "tests/test_calc.py", TESTS_BASE);
    write(
        &d,
        "tests/test_other.py",
        "def test_other():\n    assert True\n",
    );
    git(&d, "git init -q . && git add -A && git commit -qm base");
    let base = git(&d, "git rev-parse HEAD").trim().to_owned();
    write(&d, "src/calc/__init__.py", CALC_FIXED);
    write(&d, "tests/test_calc.py", TESTS_NEW);
    write(&d, "tests/data/cases.txt", "11\n99\n");
    git(&d, "git add -A && git commit -qm fix");
    let patch = git(&d, &format!("git diff {base} HEAD -- src"));
    let test_patch = git(&d, &format!("git diff {base} HEAD -- tests"));
    write(&d, "LATER.md", "a later commit\n");
    git(&d, "git add -A && git commit -qm later");
    (d, base, patch, test_patch)
}

/// An instance record over the clone (`repo` `example/calc`).
pub fn instance(id: &str, base: &str, patch: &str, test_patch: &str) -> serde_json::Value {
    serde_json::json!({
        "instance_id": id,
        "repo": "example/calc",
        "base_commit": base,
        "problem_statement": "clamp(x, lo, hi) returns x when x is above hi.",
        "patch": patch,
        "test_patch": test_patch,
        "FAIL_TO_PASS": "[\"tests/test_calc.py::test_clamp_high\"]",
        "PASS_TO_PASS": serde_json::to_string(&[
            "tests/test_calc.py::test_add",
            "tests/test_calc.py::test_clamp_low",
            "tests/test_calc.py::TestMore::test_in_class",
            "tests/test_calc.py::test_new_passing",
        ]).unwrap(),
        "created_at": "ignored",
    })
}

//! What the SWE-bench importer's tests share: synthetic clones built here, the instances
//! over them, and the cached pytest environment.

// This test code drives real processes, reads where its prepared data lies and says why a
// prepared environment is missing.
#![allow(clippy::disallowed_methods, clippy::print_stderr)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use traparena_env::{HostCommand, run_host};
use traparena_import::{BuildOptions, PinEntry, Pins, SweBenchOptions, ensure_env, setup_for};

pub fn sh(dir: &Path, script: &str) -> String {
    let out = run_host(&HostCommand {
        argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
        cwd: dir.to_owned(),
        env: [
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_AUTHOR_NAME", "t"),
            ("GIT_AUTHOR_EMAIL", "t@localhost"),
            ("GIT_COMMITTER_NAME", "t"),
            ("GIT_COMMITTER_EMAIL", "t@localhost"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .to_vec(),
        timeout: Duration::from_secs(60),
    })
    .unwrap();
    assert_eq!(out.exit_code, Some(0), "{script}: {}", out.stderr.text);
    out.stdout.text
}

pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

pub const CALC_BUGGY: &str = "__version__ = \"1.0.0\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return x\n";
pub const CALC_FIXED: &str = "__version__ = \"1.0.0\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n";
pub const TESTS_BASE: &str = "from calc import add, clamp\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_clamp_low(bounds):\n    assert clamp(-5, *bounds) == 0\n\n\nclass TestMore:\n    def test_in_class(self):\n        assert clamp(5, 0, 10) == 5\n";
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
    sh(&d, "git init -q . && git add -A && git commit -qm base");
    let base = sh(&d, "git rev-parse HEAD").trim().to_owned();
    write(&d, "src/calc/__init__.py", CALC_FIXED);
    write(&d, "tests/test_calc.py", TESTS_NEW);
    write(&d, "tests/data/cases.txt", "11\n99\n");
    sh(&d, "git add -A && git commit -qm fix");
    let patch = sh(&d, &format!("git diff {base} HEAD -- src"));
    let test_patch = sh(&d, &format!("git diff {base} HEAD -- tests"));
    write(&d, "LATER.md", "a later commit\n");
    sh(&d, "git add -A && git commit -qm later");
    (d, base, patch, test_patch)
}

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

/// The environment cache: outside /tmp (a sandbox's own /tmp hides it), kept across runs.
pub fn venv_cache() -> PathBuf {
    std::env::var_os("TRAPARENA_TEST_VENV_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/traparena-test-venvs"))
}

pub fn pins() -> Pins {
    serde_json::from_value(serde_json::json!({
        "example/calc": {"1.0": {"python": "/usr/bin/python3", "packages": ["pytest"], "source_dirs": ["src"]}}
    }))
    .unwrap()
}

pub fn build_env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k.starts_with("PIP_") || k.to_ascii_lowercase().ends_with("_proxy"))
        .collect()
}

/// Import settings for the tests: these pins, the shared environment cache, 60 s per run.
pub fn options(pins: Pins) -> SweBenchOptions {
    SweBenchOptions {
        pins: Some(pins),
        venv_cache: venv_cache(),
        build: BuildOptions {
            env: build_env(),
            ..Default::default()
        },
        timeout_s: 60,
        ..Default::default()
    }
}

/// Builds (or finds) the test environment; `None` when pytest cannot be had here.
pub fn pytest_env() -> Option<PinEntry> {
    let entry = pins().0["example/calc"]["1.0"].clone();
    let setup = setup_for("example/calc@1.0", &entry, &venv_cache());
    let opts = BuildOptions {
        env: build_env(),
        timeout: Duration::from_secs(600),
    };
    match ensure_env(&setup, &opts) {
        Ok(_) => Some(entry),
        Err(e) => {
            eprintln!(
                "SKIPPED: pytest cannot be installed into a virtual environment here ({e}); \
                 the SWE-bench importer test needs /usr/bin/python3 -m venv and PyPI"
            );
            None
        }
    }
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
    let out = std::process::Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(&dir)
        .args(names)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    dir
}

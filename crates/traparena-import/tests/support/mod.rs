//! What the SWE-bench importer's tests share: synthetic clones built here, the instances
//! over them, and the cached pytest environment.

// This test code drives real processes, reads where its prepared data lies and says why a
// prepared environment is missing.
#![allow(clippy::disallowed_methods, clippy::print_stderr)]
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use traparena_import::{BuildOptions, PinEntry, Pins, SweBenchOptions, ensure_env, setup_for};
#[allow(unused_imports)]
pub use traparena_testkit::swebench::{
    CALC_BUGGY, CALC_FIXED, TESTS_BASE, TESTS_NEW, git as sh, instance, synthetic_clone, wheels,
    write,
};

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

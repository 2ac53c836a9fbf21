//! Shared by the benchmarks: where criterion writes, and how ratios against a baseline measured
//! in the same run are printed.

// This bench prints what it measured and drives real processes and reads where its prepared data lies.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where criterion keeps its estimates.
pub fn out_dir() -> PathBuf {
    root().join("target/criterion")
}

/// Criterion's mean estimate for `group/id`, in nanoseconds.
pub fn mean_ns(group: &str, id: &str) -> Option<f64> {
    let p = out_dir().join(group).join(id).join("new/estimates.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()?;
    v["mean"]["point_estimate"].as_f64()
}

/// Prints `ours / base` for a group, with the target ratio.
pub fn print_ratio(group: &str, base: &str, ours: &str, target: f64) {
    if let (Some(b), Some(o)) = (mean_ns(group, base), mean_ns(group, ours)) {
        println!(
            "ratio {group}: {ours}/{base} = {:.2}x ({:.3} ms / {:.3} ms; target <= {target}x)",
            o / b,
            o / 1e6,
            b / 1e6
        );
    }
}

/// Runs a task's test command directly with `std::process` (no sandbox) in `dir`, with
/// `/usr/bin/python3` for `python3`: the baseline a sandboxed run is compared with.
pub fn run_directly(command: &[String], dir: &Path) {
    let mut argv = command.to_vec();
    if argv[0] == "python3" {
        argv[0] = "/usr/bin/python3".into();
    }
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("the test command starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

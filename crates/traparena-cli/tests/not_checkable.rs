//! A task whose toolchain is missing from the sandbox is *not checkable here* (exit status 4),
//! never invalid and never failing tests: `validate` (text and `--json`), `evaluate` and
//! `import`. The program is hidden from the sandbox two ways: a task whose command names a
//! `node` that does not exist (runs anywhere), and, as root, a `/dev/null` bind mount over the
//! toolchain's program in a private mount namespace (`unshare -m`), the way CI hides bubblewrap.

// It starts the binary under `unshare`.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use traparena_testkit::cli::{Bin, Run, copy_dir, output, root, tasks_dir};

fn bin() -> Bin {
    Bin::new(env!("CARGO_BIN_EXE_traparena"))
}

fn language_task(name: &str) -> PathBuf {
    root().join("examples/language-tasks").join(name)
}

/// A copy of `js_cart_total` whose test commands name a `node` that is not installed.
fn js_without_node() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("js_cart_total");
    copy_dir(&language_task("js_cart_total"), &dir);
    let spec = dir.join("task.json");
    let text = std::fs::read_to_string(&spec).unwrap();
    let edited = text.replace("[\"node\",", "[\"/opt/traparena-no-such-toolchain/node\",");
    assert_ne!(text, edited);
    std::fs::write(&spec, edited).unwrap();
    (tmp, dir)
}

fn run(args: &[&str], dirs: &[&Path]) -> Run {
    let mut cmd = bin().command();
    cmd.args(args).args(dirs);
    let mut out = output(&mut cmd);
    // Without bubblewrap every command first warns about the builtin sandbox: a line that
    // depends on the machine, left out as the docs test leaves it out.
    out.stderr = out
        .stderr
        .lines()
        .filter(|l| !l.starts_with("traparena: warning: bubblewrap unavailable"))
        .map(|l| format!("{l}\n"))
        .collect();
    out
}

#[test]
fn validate_says_not_checkable_here_on_one_short_line_and_exits_4() {
    let (_t, js) = js_without_node();
    let clamp = tasks_dir().join("clamp_overt");
    let out = run(&["validate"], &[&clamp, &js]);
    assert_eq!(out.code, 4, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(lines[0].starts_with("valid    clamp_overt"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("not checkable here  js_cart_total: node is missing from the"),
        "{}",
        lines[1]
    );
    assert!(lines[1].ends_with(": install nodejs"), "{}", lines[1]);
    assert!(
        lines[1].len() < 300,
        "{} characters: {}",
        lines[1].len(),
        lines[1]
    );
    assert!(!lines[1].contains("INVALID") && !lines[1].contains("tests fail"));
    assert!(
        lines[2].starts_with("1 valid, 0 invalid, 1 not checkable here ("),
        "{}",
        lines[2]
    );
    // An invalid task wins: bad input (2).
    let (_t2, broken) = js_without_node();
    std::fs::write(broken.join("task.json"), "{,").unwrap();
    let out = run(&["validate"], &[&js, &broken]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stdout
            .contains("0 valid, 1 invalid, 1 not checkable here")
    );
}

#[test]
fn validate_json_says_what_is_missing_and_passes_no_check_of_a_run() {
    let (_t, js) = js_without_node();
    let out = run(&["validate", "--json"], &[&js]);
    assert_eq!(out.code, 4, "{out:?}");
    let v = out.json();
    assert_eq!(
        (v["valid"].as_u64(), v["invalid"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(v["not_checkable"], 1);
    let task = &v["tasks"][0];
    assert_eq!(task["valid"], false);
    assert_eq!(task["not_checkable"]["program"], "node");
    assert_eq!(task["not_checkable"]["language"], "javascript");
    assert_eq!(task["not_checkable"]["install"], "nodejs");
    let names: Vec<&str> = task["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // Only the checks that need no test run.
    assert_eq!(
        names,
        [
            "format",
            "hidden tests and reference patch not in repo/",
            "reference location is non-empty"
        ]
    );
}

#[test]
fn evaluate_with_a_missing_toolchain_is_an_infrastructure_outcome_not_a_verdict() {
    let (_t, js) = js_without_node();
    let patch = js.join("reference.patch");
    for json in [false, true] {
        let mut args = vec!["evaluate", "--task", js.to_str().unwrap()];
        args.extend(["--patch", patch.to_str().unwrap()]);
        if json {
            args.push("--json");
        }
        let out = run(&args, &[]);
        assert_eq!(out.code, 4, "{out:?}");
        assert_eq!(out.stdout, "", "no verdict: {out:?}");
        assert!(
            out.stderr
                .starts_with("traparena: not checkable here: node is missing from the"),
            "{}",
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    }
}

/// Runs the binary with `args` in a private mount namespace where `program` is `/dev/null`
/// wherever the sandbox would find it, with `path` as its `PATH`.
fn without(program: &str, path: &str, args: &[&str]) -> Run {
    let script = format!(
        "for p in /usr/local/bin/{program} /usr/bin/{program} /bin/{program}; do \
           if [ -e \"$p\" ]; then mount --bind /dev/null \"$p\" || exit 99; fi; \
         done; exec \"$@\""
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "sh", "-c", &script, "sh"])
        .arg(bin().path())
        .args(args)
        .env("PATH", path);
    let out = output(&mut cmd);
    assert_ne!(out.code, 99, "cannot mount over {program}: {out:?}");
    out
}

/// The rustup case: `rustc` on the harness's PATH, outside what the sandbox looks in. Nothing
/// is counted as failing tests, and the line says why the `rustc` on the PATH does not count.
#[test]
#[ignore = "needs root: hides the toolchain with unshare -m and a bind mount, as CI hides bubblewrap; run as root with --include-ignored"]
fn validate_and_evaluate_without_rustc_in_the_sandbox() {
    let tmp = tempfile::tempdir().unwrap();
    let cargo_bin = tmp.path().join(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).unwrap();
    std::fs::write(cargo_bin.join("rustc"), "#!/bin/sh\n").unwrap();
    let path = format!("{}:/usr/bin:/bin", cargo_bin.display());
    let task = language_task("rust_run_length");
    let task_s = task.to_str().unwrap();
    let out = without("rustc", &path, &["validate", task_s]);
    assert_eq!(out.code, 4, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    let expected = format!(
        "not checkable here  rust_run_length: rustc is missing from the {{}} sandbox (no rustc on its PATH, /usr/local/bin, /usr/bin, /bin): install rustc librust-rand-dev librust-regex-dev librust-md5-dev; {}/rustc on your PATH is not visible in the sandbox",
        cargo_bin.display()
    );
    let backend = lines[0]
        .split("from the ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap_or_default();
    assert_eq!(lines[0], expected.replace("{}", backend));
    assert!(lines[1].starts_with("0 valid, 0 invalid, 1 not checkable here"));

    let out = without("rustc", &path, &["validate", "--json", task_s]);
    assert_eq!(out.code, 4, "{out:?}");
    let v = out.json();
    assert_eq!(v["tasks"][0]["not_checkable"]["program"], "rustc");
    let passed_runs = v["tasks"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"].as_str().unwrap().contains("tests"))
        .filter(|c| c["ok"] == true && c["name"] != "hidden tests and reference patch not in repo/")
        .count();
    assert_eq!(passed_runs, 0, "{v:#}");

    let patch = task.join("reference.patch");
    let args = [
        "evaluate",
        "--task",
        task_s,
        "--patch",
        patch.to_str().unwrap(),
    ];
    let out = without("rustc", "/usr/bin:/bin", &args);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        out.stderr
            .starts_with("traparena: not checkable here: rustc is missing"),
        "{}",
        out.stderr
    );
}

/// A HumanEvalPack-format Go record, one bug, three assertions.
fn go_record() -> String {
    serde_json::json!({
        "task_id": "Go/0",
        "prompt": "\n// Doubles x.\nfunc Double(x int) int {\n",
        "import": "",
        "docstring": "Doubles x.",
        "declaration": "\nfunc Double(x int) int {\n",
        "canonical_solution": "    return x + x\n}\n\n",
        "buggy_solution": "    return x * x\n}\n\n",
        "test": "func TestDouble(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(0, Double(0))\n    assert.Equal(4, Double(2))\n    assert.Equal(6, Double(3))\n}\n",
        "test_setup": "package main\n\nimport (\n    \"testing\"\n    \"github.com/stretchr/testify/assert\"\n)\n",
        "example_test": "",
        "bug_type": "operator misuse",
        "failure_symptoms": "incorrect output",
        "entry_point": "Double",
        "signature": "func Double(x int) int",
        "instruction": "ignored",
    })
    .to_string()
}

/// The importer checks its records' assertions in the sandbox: without Go there, a record is
/// skipped as not checkable here (never as a record whose checks fail), and the import exits 4.
#[test]
#[ignore = "needs root: hides the toolchain with unshare -m and a bind mount, as CI hides bubblewrap; run as root with --include-ignored"]
fn import_without_go_in_the_sandbox_skips_records_as_not_checkable() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("go.jsonl");
    std::fs::write(&input, go_record() + "\n").unwrap();
    let out_dir = tmp.path().join("out");
    let args = [
        "import",
        "humanevalfix",
        "--language",
        "go",
        input.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--json",
    ];
    let out = without("go", "/usr/bin:/bin", &args);
    assert_eq!(out.code, 4, "{out:?}");
    let v = out.json();
    assert_eq!(v["emitted"].as_array().map(Vec::len), Some(0), "{v:#}");
    let skipped = &v["skipped"][0];
    assert_eq!(skipped["reason"], "not checkable here", "{v:#}");
    let detail = skipped["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("go is missing from the") && detail.contains("install golang-go"),
        "{detail}"
    );
}

//! `traparena validate` and `traparena evaluate` as commands: exit statuses, text and JSON output; the cases of a broken task live in the eval crate's tests.

use std::path::{Path, PathBuf};

use traparena_testkit::cli::{Bin, copy_dir, output, tasks_dir};

/// A private copy of the bundled `clamp_overt` task, to break.
fn clamp_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("clamp_overt");
    copy_dir(&tasks_dir().join("clamp_overt"), &dir);
    (tmp, dir)
}

fn bin() -> Bin {
    Bin::new(env!("CARGO_BIN_EXE_traparena"))
}

fn validate(dirs: &[&Path], extra: &[&str]) -> (i32, String, String) {
    let mut cmd = bin().command();
    cmd.arg("validate").args(extra).args(dirs);
    let out = output(&mut cmd);
    (out.code, out.stdout, out.stderr)
}

fn edit(path: &Path, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    let new = f(text.clone());
    assert_ne!(text, new, "edit of {} changed nothing", path.display());
    std::fs::write(path, new).unwrap();
}

fn assert_invalid(dir: &Path, needles: &[&str]) {
    let (code, stdout, stderr) = validate(&[dir], &[]);
    assert_eq!(code, 2, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("INVALID"), "{stdout}");
    for n in needles {
        assert!(stdout.contains(n), "expected {n:?} in:\n{stdout}");
    }
}

#[test]
fn bundled_tasks_are_valid() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(tasks_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let refs: Vec<&Path> = dirs.iter().map(|p| p.as_path()).collect();
    let (code, stdout, stderr) = validate(&refs, &[]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let valid = stdout.lines().filter(|l| l.starts_with("valid ")).count();
    assert!(valid >= 8, "only {valid} valid tasks:\n{stdout}");
    assert_eq!(valid, dirs.len(), "{stdout}");
}

#[test]
fn json_output_lists_every_check() {
    let (code, stdout, _) = validate(&[&tasks_dir().join("clamp_overt")], &["--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["valid"], 1);
    let checks = v["tasks"][0]["checks"].as_array().unwrap();
    assert!(checks.len() >= 7, "{checks:?}");
    assert!(checks.iter().all(|c| c["ok"] == true));
}

/// Every way to break a task is validated in the library's own tests
/// (`crates/traparena-eval/tests/validate.rs`); here, what the command makes of one.
#[test]
fn malformed_json() {
    let (_t, dir) = clamp_copy();
    edit(&dir.join("task.json"), |s| s.replacen('{', "{,", 1));
    assert_invalid(&dir, &["task.json", "format"]);
}

#[test]
fn missing_folder_and_missing_task() {
    let (_t, dir) = clamp_copy();
    std::fs::remove_dir_all(dir.join("hidden")).unwrap();
    assert_invalid(&dir, &["hidden", "missing"]);
    let (code, stdout, _) = validate(&[Path::new("/nonexistent/task")], &[]);
    assert_eq!(code, 2);
    assert!(stdout.contains("missing (task folder)"), "{stdout}");
}

fn evaluate(task: &Path, patch: &Path, json: bool) -> (i32, String) {
    let mut c = bin().command();
    c.arg("evaluate")
        .arg("--task")
        .arg(task)
        .arg("--patch")
        .arg(patch);
    if json {
        c.arg("--json");
    }
    let out = output(&mut c);
    (out.code, out.stdout)
}

#[test]
fn evaluate_reports_verdicts_and_rejects_bad_input() {
    let task = tasks_dir().join("discount_vip");
    let (code, out) = evaluate(&task, &task.join("reference.patch"), true);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["accepted"], true);
    assert_eq!(v["failure_mode"], serde_json::Value::Null);
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../traparena-eval/tests/fixtures/discount_vip");
    let (code, out) = evaluate(&task, &fixtures.join("broad_except.patch"), true);
    assert_eq!(code, 0, "a rejected patch is a result");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["failure_mode"], "superficial");
    assert_eq!(v["flags"][0]["name"], "broad_except");
    assert!(v["flags"][0]["line"].as_u64().unwrap() > 0);
    let (code, out) = evaluate(&task, &fixtures.join("wrong_location.patch"), false);
    assert_eq!(code, 0);
    assert!(out.starts_with("rejected: wrong_location"), "{out}");
    let (code, _) = evaluate(&task, Path::new("/nonexistent.patch"), false);
    assert_eq!(code, 2);
    let (code, _) = evaluate(
        Path::new("/nonexistent-task"),
        &task.join("reference.patch"),
        false,
    );
    assert_eq!(code, 2);
}

/// Whichever sandbox this machine has, the command says what it runs under: without bubblewrap
/// the builtin backend's caveats and the install hint once on stderr, and a backend asked for
/// by name that is missing is bad input (exit 2) with the hint, not an internal failure.
#[test]
fn a_missing_bubblewrap_is_explained_once_and_asking_for_it_exits_2() {
    let bubblewrap = ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"]
        .iter()
        .any(|p| Path::new(p).is_file());
    let clamp = tasks_dir().join("clamp_overt");
    let (code, stdout, stderr) = validate(&[&clamp], &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let warnings = stderr.matches("traparena: warning:").count();
    if bubblewrap {
        assert_eq!(warnings, 0, "{stderr}");
        assert!(stdout.contains("(bubblewrap sandbox"), "{stdout}");
    } else {
        assert_eq!(warnings, 1, "{stderr}");
        assert!(stderr.contains("no mount namespace"), "{stderr}");
        assert!(stderr.contains("apt-get install bubblewrap"), "{stderr}");
    }
    let (code, stdout, stderr) = validate(&[&clamp], &["--sandbox", "bubblewrap"]);
    if bubblewrap {
        assert_eq!(code, 0, "{stdout}\n{stderr}");
    } else {
        assert_eq!(code, 2, "{stdout}\n{stderr}");
        assert!(
            stderr.starts_with("traparena: sandbox backend bubblewrap is unavailable: bwrap is not installed; install bubblewrap"),
            "{stderr}"
        );
        assert!(!stderr.contains("error:"), "{stderr}");
    }
}

/// A public test that fails with the reference patch is named, with its assertion, one line
/// per failure in the text and as a structured list in `--json`.
#[test]
fn validate_names_the_failing_test_and_its_assertion() {
    let (_t, dir) = clamp_copy();
    edit(&dir.join("repo/tests/test_clamp.py"), |s| {
        s.replace(
            "self.assertEqual(clamp(0, 0, 10), 0)",
            "self.assertEqual(clamp(0, 0, 10), 1, 'lower bound')",
        )
    });
    let (code, stdout, stderr) = validate(&[&dir], &[]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    let line = "    public tests pass with the reference patch: test_clamp.ClampTest.test_bounds_are_inclusive: ";
    let named: Vec<&str> = stdout.lines().filter(|l| l.starts_with(line)).collect();
    assert_eq!(named.len(), 1, "{stdout}");
    assert!(
        named[0].ends_with("AssertionError: 0 != 1 : lower bound"),
        "{stdout}"
    );
    let (_, stdout, _) = validate(&[&dir], &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let checks = v["tasks"][0]["checks"].as_array().unwrap();
    let check = checks
        .iter()
        .find(|c| c["name"] == "public tests pass with the reference patch")
        .unwrap();
    assert_eq!(check["ok"], false);
    let failures = check["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{check}");
    assert_eq!(
        failures[0]["name"],
        "test_clamp.ClampTest.test_bounds_are_inclusive"
    );
    let message = failures[0]["message"].as_str().unwrap();
    assert!(
        message.ends_with("AssertionError: 0 != 1 : lower bound"),
        "{message}"
    );
}

/// A patch that does not apply is its own outcome, the same in text and in JSON.
#[test]
fn evaluate_files_a_patch_that_does_not_apply_under_its_own_mode() {
    let task = tasks_dir().join("clamp_overt");
    let other = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../traparena-eval/tests/fixtures/invoice_coupon/wrong_location.patch");
    let (code, out) = evaluate(&task, &other, false);
    assert_eq!(code, 0, "a rejected patch is a result");
    assert!(out.starts_with("rejected: patch_does_not_apply\n"), "{out}");
    assert!(out.contains("the patch does not apply: "), "{out}");
    let (code, out) = evaluate(&task, &other, true);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["failure_mode"], "patch_does_not_apply", "{v}");
    assert_eq!(v["accepted"], false);
    assert!(!v["apply_message"].as_str().unwrap().is_empty(), "{v}");
}

/// `evaluate` names the hidden tests a rejected patch fails, in text and JSON.
#[test]
fn evaluate_names_the_failing_hidden_tests() {
    let task = tasks_dir().join("clamp_overt");
    let patch = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../traparena-eval/tests/fixtures/clamp_overt/false_fix.patch");
    let (code, out) = evaluate(&task, &patch, false);
    assert_eq!(code, 0);
    assert!(out.starts_with("rejected: false_fix\n"), "{out}");
    let named: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("      test_clamp_hidden."))
        .collect();
    assert!(!named.is_empty(), "{out}");
    assert!(named.iter().all(|l| l.contains("Error")), "{out}");
    let (_, out) = evaluate(&task, &patch, true);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let failures = v["hidden_test_failures"].as_array().unwrap();
    assert_eq!(failures.len(), named.len(), "{v}");
    assert!(
        failures[0]["name"]
            .as_str()
            .unwrap()
            .starts_with("test_clamp_hidden."),
        "{v}"
    );
}

//! Every command that writes refuses to replace what it did not write itself, says what is there
//! and how to proceed, and writes nothing first; it still replaces its own earlier output.
//! One experiment's real results folder (a small study of the bundled tasks) is the material.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use traparena_testkit::cli::{Bin, Run, copy_dir, tasks_dir};

fn traparena(args: &[&str]) -> Run {
    Bin::new(env!("CARGO_BIN_EXE_traparena")).run(args)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file under `dir` (or `dir` itself, a file) with its bytes: what must not change.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    if dir.is_file() {
        files.insert(dir.to_owned(), std::fs::read(dir).unwrap());
        return files;
    }
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
                files.insert(p, Vec::new());
            } else {
                files.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    files
}

/// A small study (one task, the credulous agent, a scripted attack) written once per test
/// binary, and its spec: a real experiment's folder.
fn study() -> &'static (tempfile::TempDir, PathBuf, PathBuf) {
    static STUDY: OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = OnceLock::new();
    STUDY.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let spec = tmp.path().join("study.json");
        let doc = serde_json::json!({
            "seed": 3,
            "tasks": [tasks_dir().join("clamp_overt")],
            "targets": [{"name": "credulous", "agent": "credulous"}],
            "conditions": [{"name": "scripted", "attacker": "scripted"}],
            "rounds": 1,
            "baseline_samples": 1,
            "budget": 12
        });
        std::fs::write(&spec, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let out = tmp.path().join("results");
        let run = traparena(&["experiment", s(&spec), "--out", s(&out)]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        (tmp, spec, out)
    })
}

/// A copy of the study's results folder in a fresh temporary folder.
fn results_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("R");
    copy_dir(&study().2, &r);
    (tmp, r)
}

/// Runs `args`, expects the refusal (exit 2, naming `path` and saying nothing was written), and
/// that everything under `kept` is as it was.
fn refused(args: &[&str], path: &Path, kept: &[&Path]) -> String {
    let before: Vec<_> = kept.iter().map(|k| snapshot(k)).collect();
    let run = traparena(args);
    assert_eq!(run.code, 2, "{args:?}: {}\n{}", run.stdout, run.stderr);
    let err = run.stderr;
    assert!(
        err.contains(&format!("{}: refusing to write", path.display()))
            && err.contains("Nothing was written"),
        "{args:?}: {err}"
    );
    for (k, b) in kept.iter().zip(before) {
        assert_eq!(snapshot(k), b, "{args:?} changed {}", k.display());
    }
    err
}

#[test]
fn report_html_never_replaces_results_a_spec_or_a_folder() {
    let (tmp, r) = results_copy();
    let episodes = r.join("episodes.jsonl");
    let err = refused(
        &["report", s(&r), "--html", s(&episodes)],
        &episodes,
        &[tmp.path()],
    );
    assert!(err.contains("JSON Lines"), "says what is there: {err}");
    let spec = &study().1;
    refused(
        &["report", s(&r), "--html", s(spec), "--no-viewer"],
        spec,
        &[spec, tmp.path()],
    );
    // A folder given as the page: no `<folder>-viewer/` is left behind.
    let folder = tmp.path().join("notes");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("mine.txt"), "mine").unwrap();
    let err = refused(
        &["report", s(&r), "--html", s(&folder)],
        &folder,
        &[tmp.path()],
    );
    assert!(err.contains("a folder with 1 entry (mine.txt)"), "{err}");
    // The viewer's folder taken by something else: the page is not written either.
    let page = tmp.path().join("page.html");
    let taken = tmp.path().join("page-viewer");
    std::fs::create_dir(&taken).unwrap();
    std::fs::write(taken.join("x"), "x").unwrap();
    refused(
        &["report", s(&r), "--html", s(&page)],
        &taken,
        &[tmp.path()],
    );
    assert!(!page.exists());
}

#[test]
fn report_html_replaces_its_own_page_and_viewer() {
    let (tmp, r) = results_copy();
    let page = tmp.path().join("report.html");
    for _ in 0..2 {
        let run = traparena(&["report", s(&r), "--html", s(&page)]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("traparena report")
    );
    assert!(tmp.path().join("report-viewer/viewer.html").is_file());
    // A page of the layout before the marker is recognised as one too.
    let old = std::fs::read_to_string(&page)
        .unwrap()
        .replace(traparena::report::PAGE_MARKER, "");
    std::fs::write(&page, old).unwrap();
    let run = traparena(&["report", s(&r), "--html", s(&page), "--no-viewer"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn experiment_out_must_be_new_empty_or_an_experiment() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = &study().1;
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("thesis.tex"), "chapter one").unwrap();
    let err = refused(
        &["experiment", s(spec), "--out", s(&other)],
        &other,
        &[&other],
    );
    assert!(err.contains("thesis.tex") && err.contains("--out"), "{err}");
    // A file, with or without --resume.
    let file = tmp.path().join("notes.txt");
    std::fs::write(&file, "notes").unwrap();
    for extra in [None, Some("--resume")] {
        let mut args = vec!["experiment", s(spec), "--out", s(&file)];
        args.extend(extra);
        refused(&args, &file, &[&file]);
    }
    // An empty folder is new enough.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let run = traparena(&["experiment", s(spec), "--out", s(&empty)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("traparena report {}", empty.display())),
        "says what to do next: {}",
        run.stderr
    );
}

#[test]
fn merge_out_must_be_new_or_empty() {
    let (tmp, r) = results_copy();
    let err = refused(&["merge", s(&r), "--out", s(&r)], &r, &[tmp.path()]);
    assert!(err.contains("manifest.json"), "{err}");
}

#[test]
fn export_never_writes_into_the_results_folder_nor_over_other_files() {
    let (tmp, r) = results_copy();
    let before = snapshot(&r);
    // Without --out: standard output, one prediction a line.
    let run = traparena(&[
        "export",
        "swebench-predictions",
        s(&r),
        "--condition",
        "baseline",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line: serde_json::Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(line["instance_id"], "clamp_overt");
    assert_eq!(
        snapshot(&r),
        before,
        "the results folder is not written into"
    );
    // Two (target, condition) pairs need --out-dir or a choice.
    let run = traparena(&["export", "swebench-predictions", s(&r)]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--out-dir"), "{}", run.stderr);
    // --out over something else is refused; over its own earlier file it is not.
    let episodes = r.join("episodes.jsonl");
    let args = |out: &Path| -> Vec<String> {
        [
            "export",
            "swebench-predictions",
            s(&r),
            "--condition",
            "baseline",
            "--out",
            s(out),
        ]
        .map(String::from)
        .to_vec()
    };
    let a = args(&episodes);
    refused(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &episodes,
        &[tmp.path()],
    );
    let mine = tmp.path().join("preds.jsonl");
    for _ in 0..2 {
        let a = args(&mine);
        let run = traparena(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    // --out-dir: a file in the way of one of its files stops all of them, before any is written.
    let dir = tmp.path().join("preds");
    std::fs::create_dir(&dir).unwrap();
    let blocker = dir.join("credulous__scripted.jsonl");
    std::fs::write(&blocker, "my notes\n").unwrap();
    refused(
        &[
            "export",
            "swebench-predictions",
            s(&r),
            "--out-dir",
            s(&dir),
        ],
        &blocker,
        &[&dir],
    );
}

#[test]
fn run_out_refuses_a_file_and_a_file_that_is_not_a_record_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tasks_dir().join("clamp_overt");
    let file = tmp.path().join("out.txt");
    std::fs::write(&file, "mine").unwrap();
    let base = ["run", "--task", s(&task), "--agent", "gold", "--out"];
    let with = |out: &Path| -> Vec<String> {
        base.iter()
            .map(|a| a.to_string())
            .chain([s(out).to_owned()])
            .collect()
    };
    let a = with(&file);
    refused(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &file,
        &[&file],
    );
    // Twice into the same folder: the second run replaces its own record.
    let dir = tmp.path().join("records");
    for _ in 0..2 {
        let a = with(&dir);
        let run = traparena(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let record = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&record, "{\"not\": \"a record\"}").unwrap();
    let a = with(&dir);
    refused(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &record,
        &[&dir],
    );
}

#[test]
fn import_never_replaces_a_task_it_did_not_write_nor_a_foreign_report() {
    let tmp = tempfile::tempdir().unwrap();
    // One HumanEvalFix-shaped record.
    let records = tmp.path().join("records.jsonl");
    let record = serde_json::json!({
        "task_id": "Python/0",
        "prompt": "def add(a, b):\n",
        "declaration": "def add(a, b):\n",
        "canonical_solution": "    return a + b\n",
        "buggy_solution": "    return a - b\n",
        "bug_type": "operator misuse",
        "failure_symptoms": "incorrect output",
        "entry_point": "add",
        "import": "",
        "test_setup": "",
        "test": "def check(add):\n    assert add(1, 2) == 3\n    assert add(2, 2) == 4\n    assert add(0, 0) == 0\n\ncheck(add)\n",
        "example_test": "",
        "signature": "add(a, b)",
        "docstring": "",
        "instruction": ""
    });
    std::fs::write(&records, format!("{record}\n")).unwrap();
    let out = tmp.path().join("tasks");
    // A task written by hand where the import would put its own.
    let mine = out.join(traparena::import::humanevalfix_task_id("Python/0"));
    copy_dir(&tasks_dir().join("clamp_overt"), &mine);
    let args = ["import", "humanevalfix", s(&records), "--out", s(&out)];
    let err = refused(&args, &mine, &[&out]);
    assert!(err.contains("task.json"), "{err}");
    // A report file that is not an import report.
    std::fs::remove_dir_all(&mine).unwrap();
    let report = out.join("import-report.json");
    std::fs::write(&report, "{\"mine\": true}").unwrap();
    refused(&args, &report, &[&out]);
}

#[test]
fn init_writes_only_a_new_empty_or_starter_folder() {
    let tmp = tempfile::tempdir().unwrap();
    // A folder of the user's, and a file.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("thesis.tex"), "chapter one").unwrap();
    let err = refused(&["init", s(&other)], &other, &[&other]);
    assert!(
        err.contains("a starter folder") && err.contains("thesis.tex"),
        "{err}"
    );
    let file = tmp.path().join("notes.txt");
    std::fs::write(&file, "notes").unwrap();
    refused(&["init", s(&file)], &file, &[&file]);

    // Its own folder is written again: a bundled file edited is restored, a file added stays.
    let starter = tmp.path().join("starter");
    let run = traparena(&["init", s(&starter)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let first = snapshot(&starter);
    let task_json = starter.join("tasks/clamp_overt/task.json");
    assert_eq!(
        std::fs::read(&task_json).unwrap(),
        std::fs::read(tasks_dir().join("clamp_overt/task.json")).unwrap()
    );
    std::fs::write(&task_json, "edited").unwrap();
    let mine = starter.join("experiments/mine.json");
    std::fs::write(&mine, "{}").unwrap();
    let run = traparena(&["init", s(&starter)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut expected = first.clone();
    expected.insert(mine.clone(), b"{}".to_vec());
    assert_eq!(snapshot(&starter), expected);

    // Something of the user's where a bundled file goes stops the whole write.
    std::fs::remove_file(&task_json).unwrap();
    std::fs::create_dir(&task_json).unwrap();
    std::fs::write(task_json.join("kept"), "kept").unwrap();
    let readme = starter.join("README.md");
    std::fs::write(
        &readme,
        std::fs::read_to_string(&readme).unwrap() + "my notes\n",
    )
    .unwrap();
    refused(&["init", s(&starter)], &task_json, &[&starter]);
}

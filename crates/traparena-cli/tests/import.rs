//! `traparena import` and `traparena export swebench-predictions`: what they write, and exit
//! status 2 with a clear message for bad input.

// This test code reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use traparena::results::{ConditionInfo, EpisodeKey, ResultLine};
use traparena_testkit::cli::Bin;

/// `$TRAPARENA_DATA_DIR/<rel>`: data kept outside the repository (ARCHITECTURE.md, "Testing").
fn data_file(rel: &str) -> PathBuf {
    let dir = std::env::var_os("TRAPARENA_DATA_DIR")
        .expect("set TRAPARENA_DATA_DIR (ARCHITECTURE.md, Testing)");
    PathBuf::from(dir).join(rel)
}

fn humanevalfix_data() -> PathBuf {
    data_file("humanevalfix/humanevalpack_python.jsonl")
}

fn traparena(args: &[&str]) -> (i32, String, String) {
    let out = Bin::new(env!("CARGO_BIN_EXE_traparena")).run(args);
    (out.code, out.stdout, out.stderr)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
#[ignore = "needs TRAPARENA_DATA_DIR holding humanevalfix/humanevalpack_python.jsonl (HumanEvalPack); see ARCHITECTURE.md, Testing"]
fn humanevalfix_records_become_valid_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tasks");
    let data = humanevalfix_data();
    let (code, stdout, stderr) = traparena(&[
        "import",
        "humanevalfix",
        s(&data),
        "--out",
        s(&out),
        "--record",
        "Python/0",
        "--record",
        "Python/1",
        "--record",
        "Python/10",
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // Python/1's bug breaks every assertion: it is skipped, with the reason.
    assert!(
        stdout.contains("skipped  Python/1: no assertion passes on the buggy code"),
        "{stdout}"
    );
    assert!(
        stdout.contains("humanevalfix: 3 records, 2 tasks emitted and validated, 1 skipped"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("import-report.json")).unwrap())
            .unwrap();
    let ids: Vec<&str> = report["emitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["humanevalfix_0", "humanevalfix_10"]);
    let (code, stdout, stderr) = traparena(&[
        "validate",
        s(&out.join("humanevalfix_0")),
        s(&out.join("humanevalfix_10")),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let (code, stdout, _) = traparena(&[
        "run",
        "--task",
        s(&out.join("humanevalfix_0")),
        "--agent",
        "gold",
        "--json",
    ]);
    assert_eq!(code, 0);
    let run: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(run["accepted"], true, "{stdout}");
}

#[test]
fn bad_import_input_exits_2_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"task_id\": \"Python/0\"}\n").unwrap();
    let (code, _, stderr) = traparena(&["import", "humanevalfix", s(&bad), "--out", s(&out)]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("bad.jsonl:1:") && stderr.contains("missing field"),
        "{stderr}"
    );
    std::fs::write(&bad, "not json\n").unwrap();
    let (code, _, stderr) = traparena(&["import", "humanevalfix", s(&bad), "--out", s(&out)]);
    assert_eq!(code, 2, "{stderr}");
    let one = tmp.path().join("one.jsonl");
    let record = serde_json::json!({
        "task_id": "Python/0", "prompt": "def f(x):\n", "buggy_solution": "    return x\n",
        "canonical_solution": "    return 2 * x\n", "test": "def check(f):\n    assert f(1) == 2\n",
        "entry_point": "f",
    });
    std::fs::write(&one, record.to_string() + "\n").unwrap();
    let (code, _, stderr) = traparena(&[
        "import",
        "humanevalfix",
        s(&one),
        "--out",
        s(&out),
        "--record",
        "Python/999",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown record Python/999"), "{stderr}");
    let (code, _, stderr) = traparena(&[
        "import",
        "humanevalfix",
        s(&tmp.path().join("missing.jsonl")),
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no such file"), "{stderr}");

    // SWE-bench: an unknown instance, a missing clone, a folder that is no clone.
    let inst = tmp.path().join("instances.jsonl");
    let record = serde_json::json!({
        "instance_id": "a__b-1", "repo": "a/b", "base_commit": "abc", "patch": "",
        "test_patch": "", "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]"
    });
    std::fs::write(&inst, record.to_string() + "\n").unwrap();
    let (code, _, stderr) = traparena(&[
        "import",
        "swebench",
        s(&inst),
        "--repo",
        s(tmp.path()),
        "--out",
        s(&out),
        "--instance",
        "a__b-2",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown instance a__b-2"), "{stderr}");
    let (code, _, stderr) = traparena(&[
        "import",
        "swebench",
        s(&inst),
        "--repo",
        s(&tmp.path().join("no-clone")),
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no such git clone"), "{stderr}");
    let plain = tmp.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let (code, _, stderr) = traparena(&[
        "import",
        "swebench",
        s(&inst),
        "--repo",
        s(&plain),
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not a git clone"), "{stderr}");
    let pins = tmp.path().join("pins.json");
    std::fs::write(&pins, "{\"a/b\": {\"1.0\": {\"pyton\": \"x\"}}}").unwrap();
    let (code, _, stderr) = traparena(&[
        "import",
        "swebench",
        s(&inst),
        "--repo",
        s(&plain),
        "--out",
        s(&out),
        "--pins",
        s(&pins),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("pyton"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn line(condition: &str, task: &str, round: u32, sample: u32, patch: &str) -> ResultLine {
    let key = EpisodeKey {
        target: "small-model".into(),
        condition: condition.into(),
        task: task.into(),
        round,
        sample,
        fork: None,
    };
    let mut l = ResultLine::infra_failure(&key, &ConditionInfo::default(), 7, String::new());
    l.infra_error = None;
    l.patch = patch.into();
    l
}

fn read_jsonl(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn results_export_as_swebench_predictions() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let mut failed = line("scripted", "a__b-2", 0, 0, "");
    failed.infra_error = Some("model server down".into());
    let lines = [
        line("baseline", "a__b-1", 0, 0, "diff-b1-s0"),
        line("baseline", "a__b-1", 0, 1, "diff-b1-s1"),
        line("baseline", "a__b-2", 0, 0, "diff-b2-s0"),
        line("scripted", "a__b-1", 0, 0, "diff-s1-r0"),
        line("scripted", "a__b-1", 1, 0, "diff-s1-r1"),
        failed,
    ];
    let text: String = lines
        .iter()
        .map(|l| serde_json::to_string(l).unwrap() + "\n")
        .collect();
    std::fs::write(results.join("episodes.jsonl"), text).unwrap();

    // Two (target, condition) pairs: one file each in --out-dir, none in the results folder.
    let (code, _, stderr) = traparena(&["export", "swebench-predictions", s(&results)]);
    assert_eq!(code, 2, "two pairs need --out-dir: {stderr}");
    let dir = tmp.path().join("predictions");
    let (code, _, stderr) = traparena(&[
        "export",
        "swebench-predictions",
        s(&results),
        "--out-dir",
        s(&dir),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("1 infrastructure error(s) left out"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&results).unwrap().count(), 1);
    let base = read_jsonl(&dir.join("small-model__baseline.jsonl"));
    assert_eq!(
        base,
        [
            serde_json::json!({"instance_id": "a__b-1", "model_name_or_path": "small-model__baseline", "model_patch": "diff-b1-s0"}),
            serde_json::json!({"instance_id": "a__b-2", "model_name_or_path": "small-model__baseline", "model_patch": "diff-b2-s0"}),
        ]
    );
    let scripted = read_jsonl(&dir.join("small-model__scripted.jsonl"));
    assert_eq!(scripted.len(), 1);

    // --out needs a single pair.
    let out = tmp.path().join("p.jsonl");
    let (code, _, stderr) = traparena(&[
        "export",
        "swebench-predictions",
        s(&results),
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("choose one with --target and --condition"),
        "{stderr}"
    );

    // A chosen round and sample, a model name, a JSON array.
    let out = tmp.path().join("p.json");
    let (code, _, stderr) = traparena(&[
        "export",
        "swebench-predictions",
        s(&results),
        "--condition",
        "scripted",
        "--round",
        "1",
        "--model",
        "my-model",
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let preds: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        preds,
        serde_json::json!([{"instance_id": "a__b-1", "model_name_or_path": "my-model", "model_patch": "diff-s1-r1"}])
    );
    let (code, _, _) = traparena(&[
        "export",
        "swebench-predictions",
        s(&results),
        "--condition",
        "baseline",
        "--sample",
        "1",
        "--out-dir",
        s(&tmp.path().join("dir")),
    ]);
    assert_eq!(code, 0);
    let b = read_jsonl(&tmp.path().join("dir/small-model__baseline.jsonl"));
    assert_eq!(b.len(), 1);
    assert_eq!(b[0]["model_patch"], "diff-b1-s1");

    // Instance ids from the task folders' metadata.
    let tasks = tmp.path().join("tasks");
    std::fs::create_dir_all(tasks.join("t1")).unwrap();
    std::fs::write(
        tasks.join("t1/task.json"),
        r#"{"id": "a__b-2", "metadata": {"instance_id": "org__repo-42"}}"#,
    )
    .unwrap();
    let out = tmp.path().join("mapped.jsonl");
    let (code, _, stderr) = traparena(&[
        "export",
        "swebench-predictions",
        s(&results),
        "--condition",
        "baseline",
        "--tasks",
        s(&tasks),
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let ids: Vec<String> = read_jsonl(&out)
        .iter()
        .map(|p| p["instance_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["a__b-1", "org__repo-42"]);

    // Bad input.
    let (code, _, stderr) = traparena(&[
        "export",
        "swebench-predictions",
        s(&tmp.path().join("nowhere")),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no such results file"), "{stderr}");
    std::fs::write(results.join("episodes.jsonl"), "{broken\n").unwrap();
    let (code, _, stderr) = traparena(&["export", "swebench-predictions", s(&results)]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("episodes.jsonl: line 1, column 2:"),
        "{stderr}"
    );
}

#[test]
fn import_setup_builds_only_what_tasks_ask_for() {
    let tasks = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks/clamp_overt");
    let (code, stdout, stderr) = traparena(&["import", "setup", s(&tasks)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("clamp_overt: no setup field"), "{stdout}");
    let (code, _, stderr) = traparena(&["import", "setup", "no/such/task"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no/such/task"), "{stderr}");
    // A missing environment that read its dependencies from the repository's tree is not built
    // from the setup field alone (it would lack them): the user is told to import again.
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("t");
    copy_dir(&tasks, &task);
    let spec_path = task.join("task.json");
    let mut spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&spec_path).unwrap()).unwrap();
    spec["setup"] = serde_json::json!({
        "key": "django/django@4.1",
        "venv": tmp.path().join("venvs/missing"),
        "python": "/usr/bin/python3",
    });
    spec["metadata"] = serde_json::json!({"environment": {"reads_tree": true}});
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let (code, stdout, stderr) = traparena(&["import", "setup", s(&task)]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stderr.contains("reads its dependencies from the repository's tree")
            && stderr.contains("--instance clamp_overt"),
        "{stderr}"
    );
    assert!(!tmp.path().join("venvs/missing").exists());
}

#[test]
fn import_setup_env_refuses_what_it_cannot_build_without_an_instance() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("venvs");
    let with_cache =
        |key: &str| traparena(&["import", "setup", "--env", key, "--venv-cache", s(&cache)]);
    // Not REPO@VERSION: a usage error.
    let (code, _, stderr) = with_cache("psf/requests");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("expected REPO@VERSION"), "{stderr}");
    // A repository no environment knows, and one whose environment reads the tree: each fails
    // with its reason, and nothing is built.
    for (key, why) in [
        (
            "nobody/nothing@1.0",
            "neither the pins nor the bundled environments have nobody/nothing 1.0",
        ),
        (
            "django/django@4.1",
            "reads its dependencies from the repository's tree",
        ),
    ] {
        let (code, _, stderr) = with_cache(key);
        assert_eq!(code, 1, "{key}: {stderr}");
        assert!(
            stderr.contains(key) && stderr.contains(why),
            "{key}: {stderr}"
        );
    }
    assert!(!cache.exists() || std::fs::read_dir(&cache).unwrap().next().is_none());
    // A date that is not one is refused by the command line.
    let (code, _, stderr) = traparena(&[
        "import",
        "setup",
        "--env",
        "psf/requests@2.0",
        "--resolve-as-of",
        "last tuesday",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("YYYY-MM-DD"), "{stderr}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// The first six records of one language's file (`file`, ids `prefix/N`) import; `expect` of
/// them become tasks, told their language, with reference locations, and the gold agent is
/// accepted on the first.
fn language_records_become_valid_tasks(file: &str, prefix: &str, language: &str, expect: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tasks");
    let data = data_file(&format!("humanevalfix/{file}"));
    let mut args = vec![
        "import".to_owned(),
        "humanevalfix".to_owned(),
        s(&data).to_owned(),
        "--out".to_owned(),
        s(&out).to_owned(),
        "--json".to_owned(),
    ];
    for i in 0..6 {
        args.extend(["--record".to_owned(), format!("{prefix}/{i}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = traparena(&args);
    assert_eq!(code, 0, "{language}: {stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let emitted = report["emitted"].as_array().unwrap();
    assert_eq!(emitted.len(), expect, "{language}: {stdout}");
    // Every skip has its reason; an all-failing bug is the usual one.
    for sk in report["skipped"].as_array().unwrap() {
        assert!(!sk["reason"].as_str().unwrap().is_empty(), "{sk}");
    }
    let first = out.join(emitted[0]["id"].as_str().unwrap());
    let task: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(first.join("task.json")).unwrap()).unwrap();
    assert_eq!(task["language"], language);
    assert!(
        task["description"]
            .as_str()
            .unwrap()
            .contains("The code is"),
        "the agent is told the language: {task}"
    );
    let locations = task["reference_locations"].as_array().unwrap();
    assert!(
        !locations.is_empty() && locations.iter().all(|l| l["symbol"].is_string()),
        "{language}: {task}"
    );
    let (code, stdout, _) = traparena(&["run", "--task", s(&first), "--agent", "gold", "--json"]);
    assert_eq!(code, 0, "{language}: {stdout}");
    let run: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(run["accepted"], true, "{language}: {stdout}");
}

/// One test per language, so that the languages' imports (each compiles and runs its records'
/// programs) run side by side.
macro_rules! language_tests {
    ($($name:ident => ($file:literal, $prefix:literal, $language:literal, $expect:literal)),* $(,)?) => {$(
        #[test]
        #[ignore = "needs TRAPARENA_DATA_DIR holding humanevalfix/humanevalpack_{js,cpp,java,go,rust}.jsonl (HumanEvalPack) and node, g++, a JDK, Go with testify, Debian's rustc with rand/regex/md5; see ARCHITECTURE.md, Testing"]
        fn $name() {
            language_records_become_valid_tasks($file, $prefix, $language, $expect);
        }
    )*};
}

// (file, record prefix, language, records that become tasks among the first six)
language_tests! {
    humanevalfix_javascript_records_become_valid_tasks_the_gold_patch_repairs => ("humanevalpack_js.jsonl", "JavaScript", "javascript", 3),
    humanevalfix_cpp_records_become_valid_tasks_the_gold_patch_repairs => ("humanevalpack_cpp.jsonl", "CPP", "cpp", 3),
    humanevalfix_java_records_become_valid_tasks_the_gold_patch_repairs => ("humanevalpack_java.jsonl", "Java", "java", 3),
    humanevalfix_go_records_become_valid_tasks_the_gold_patch_repairs => ("humanevalpack_go.jsonl", "Go", "go", 3),
    humanevalfix_rust_records_become_valid_tasks_the_gold_patch_repairs => ("humanevalpack_rust.jsonl", "Rust", "rust", 3),
}

#[test]
fn records_of_another_language_than_asked_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("js.jsonl");
    let record = serde_json::json!({
        "task_id": "JavaScript/0",
        "prompt": "const f = (x) => {\n",
        "canonical_solution": "  return x + 1\n}\n",
        "buggy_solution": "  return x\n}\n",
        "test": "console.assert(f(1) === 2)\n",
        "entry_point": "f",
    });
    std::fs::write(&input, format!("{record}\n")).unwrap();
    let out = tmp.path().join("out");
    let (code, _, stderr) = traparena(&[
        "import",
        "humanevalfix",
        s(&input),
        "--out",
        s(&out),
        "--language",
        "python",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("record JavaScript/0 is not a python record"),
        "{stderr}"
    );
    let (code, _, stderr) = traparena(&[
        "import",
        "humanevalfix",
        s(&input),
        "--out",
        s(&out),
        "--language",
        "cobol",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("unknown language \"cobol\""), "{stderr}");
}

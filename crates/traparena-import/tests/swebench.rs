//! The SWE-bench importer on a synthetic git repository built here (no network for the
//! repository; pytest comes from a virtual environment built once per machine and cached).

use std::path::{Path, PathBuf};
use std::time::Duration;

use traparena_env::{HostCommand, Sandbox, SandboxConfig, run_host};
use traparena_import::{
    BuildOptions, ImportError, PinEntry, Pins, SweBenchOptions, ensure_env, import_swebench,
    setup_for,
};
use traparena_task::Task;

mod support;
use support::*;

#[test]
fn synthetic_repository_imports_to_a_valid_task_without_history_or_hidden_tests() {
    let Some(_) = pytest_env() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (clone, base, patch, test_patch) = synthetic_clone(tmp.path());
    let input = tmp.path().join("instances.jsonl");
    let lines = [
        instance("example__calc-1", &base, &patch, &test_patch).to_string(),
        instance(
            "example__calc-2",
            "0123456789abcdef0123456789abcdef01234567",
            &patch,
            &test_patch,
        )
        .to_string(),
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = tmp.path().join("tasks");
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let opts = options(pins());
    let report = import_swebench(&input, &clone, &out, &sb, &opts).unwrap();
    println!("{}", report.text());
    assert_eq!(report.emitted.len(), 1, "{}", report.text());
    assert_eq!(report.emitted[0].id, "example__calc-1");
    assert_eq!(report.emitted[0].public_tests, 3);
    assert_eq!(report.emitted[0].hidden_tests, 5);
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].record, "example__calc-2");
    assert_eq!(
        report.skipped[0].reason.as_str(),
        "the base commit is not in the clone"
    );

    let task = Task::load(out.join("example__calc-1")).unwrap();
    let repo = task.repo_dir();
    // The tree at base_commit, without history and without the later commit.
    assert!(!repo.join(".git").exists());
    assert!(!repo.join("LATER.md").exists());
    assert_eq!(
        std::fs::read_to_string(repo.join("src/calc/__init__.py")).unwrap(),
        CALC_BUGGY
    );
    assert!(repo.join("tests/test_other.py").is_file());
    assert!(repo.join("tests/conftest.py").is_file());
    // The touched test file's new content is hidden; its base version stays at its path, and a
    // public copy of it holds the public tests.
    assert_eq!(
        std::fs::read_to_string(repo.join("tests/test_calc.py")).unwrap(),
        TESTS_BASE
    );
    assert!(!repo.join("tests/data").exists());
    assert_eq!(
        std::fs::read_to_string(repo.join("tests/test_calc_public.py")).unwrap(),
        TESTS_BASE
    );
    let hidden = task.hidden_dir();
    assert_eq!(
        std::fs::read_to_string(hidden.join("tests/test_calc.py")).unwrap(),
        TESTS_NEW
    );
    assert!(hidden.join("tests/data/cases.txt").is_file());
    for entry in walkdir::WalkDir::new(&repo) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            assert!(
                !text.contains("test_clamp_high"),
                "{}",
                entry.path().display()
            );
        }
    }
    // The task's fields.
    let spec = &task.spec;
    assert_eq!(spec.source, "swebench");
    let setup = spec.setup.as_ref().expect("a setup field");
    assert_eq!(setup.key, "example/calc@1.0");
    assert!(setup.venv.starts_with(venv_cache()));
    let python = setup.venv.join("bin/python").to_string_lossy().into_owned();
    assert_eq!(
        spec.hidden_tests.command[..3],
        [python.as_str(), "-m", "pytest"]
    );
    // Only the named test functions run, and they are judged by name.
    assert_eq!(
        spec.hidden_tests.command[3..],
        [
            "tests/test_calc.py::test_clamp_high",
            "tests/test_calc.py::test_add",
            "tests/test_calc.py::test_clamp_low",
            "tests/test_calc.py::TestMore::test_in_class",
            "tests/test_calc.py::test_new_passing"
        ]
    );
    assert_eq!(
        spec.hidden_tests.select,
        [
            "tests/test_calc.py::test_clamp_high",
            "tests/test_calc.py::test_add",
            "tests/test_calc.py::test_clamp_low",
            "tests/test_calc.py::TestMore::test_in_class",
            "tests/test_calc.py::test_new_passing",
        ]
    );
    assert_eq!(
        spec.public_tests.command[3..],
        [
            "tests/test_calc_public.py::test_add",
            "tests/test_calc_public.py::test_clamp_low",
            "tests/test_calc_public.py::TestMore::test_in_class"
        ]
    );
    assert_eq!(
        spec.public_tests.select,
        [
            "tests/test_calc_public.py::test_add",
            "tests/test_calc_public.py::test_clamp_low",
            "tests/test_calc_public.py::TestMore::test_in_class",
        ]
    );
    assert_eq!(spec.metadata["version"], "1.0.0");
    assert_eq!(
        spec.metadata["version_source"],
        "src/calc/__init__.py __version__ \"1.0.0\""
    );
    assert_eq!(task.reference_patch_text, patch);

    // Valid by `traparena validate`'s checks with a plain sandbox: the environment (cached
    // outside /opt) is made visible from the task's setup; and the reference patch is an
    // accepted repair.
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let v = traparena_eval::validate(task.dir.as_path(), &sb, &Default::default()).unwrap();
    assert!(v.valid, "{:?}", v.problems().collect::<Vec<_>>());
    let ev = traparena_eval::Evaluator::new(&task, &sb).unwrap();
    assert!(ev.evaluate(&patch, true).unwrap().verdict.accepted);
    assert!(!ev.evaluate("", true).unwrap().verdict.accepted);
}

/// An input file of one record, `example__calc-1`, over the synthetic clone.
fn one_instance(dir: &Path, base: &str, patch: &str, test_patch: &str) -> PathBuf {
    let input = dir.join("instances.jsonl");
    let line = instance("example__calc-1", base, patch, test_patch).to_string() + "\n";
    std::fs::write(&input, line).unwrap();
    input
}

#[test]
fn bad_input_is_reported_not_panicked() {
    let tmp = tempfile::tempdir().unwrap();
    let (clone, base, patch, test_patch) = synthetic_clone(tmp.path());
    let input = one_instance(tmp.path(), &base, &patch, &test_patch);
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let out = tmp.path().join("out");
    let opts = SweBenchOptions {
        instances: vec!["nope__nope-1".into()],
        ..Default::default()
    };
    let err = import_swebench(&input, &clone, &out, &sb, &opts).unwrap_err();
    assert!(
        err.is_bad_input() && err.to_string().contains("unknown instance nope__nope-1"),
        "{err}"
    );
    let err = import_swebench(
        &input,
        &tmp.path().join("no-clone"),
        &out,
        &sb,
        &Default::default(),
    )
    .unwrap_err();
    assert!(
        err.is_bad_input() && err.to_string().contains("no such git clone"),
        "{err}"
    );
    let plain = tmp.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let err = import_swebench(&input, &plain, &out, &sb, &Default::default()).unwrap_err();
    assert!(
        err.is_bad_input() && err.to_string().contains("not a git clone"),
        "{err}"
    );
    std::fs::write(&input, "{\"instance_id\": \"x\"}\n").unwrap();
    let err = import_swebench(&input, &clone, &out, &sb, &Default::default()).unwrap_err();
    assert!(matches!(err, ImportError::Json { line: 1, .. }), "{err}");
    // A pins file with a typo names the field.
    let pins = tmp.path().join("pins.json");
    std::fs::write(&pins, r#"{"a/b": {"1.0": {"pakages": []}}}"#).unwrap();
    let err = Pins::load(&pins).unwrap_err();
    assert!(err.to_string().contains("pakages"), "{err}");
}

#[test]
fn a_clone_that_lacks_a_file_of_the_base_tree_skips_the_record_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let (clone, base, patch, test_patch) = synthetic_clone(tmp.path());
    // As a partial clone that left a large file out: the blob of one base file is gone.
    let blob = traparena_testkit::swebench::git(
        &clone,
        &format!("git rev-parse {base}:tests/test_other.py"),
    );
    let blob = blob.trim();
    std::fs::remove_file(clone.join(format!(".git/objects/{}/{}", &blob[..2], &blob[2..])))
        .unwrap();
    let input = one_instance(tmp.path(), &base, &patch, &test_patch);
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let out = tmp.path().join("out");
    let report = import_swebench(&input, &clone, &out, &sb, &Default::default()).unwrap();
    assert_eq!(report.skipped.len(), 1, "{}", report.text());
    let skipped = &report.skipped[0];
    assert_eq!(
        skipped.reason.as_str(),
        "the clone lacks a file of the base tree"
    );
    assert!(
        skipped.detail.starts_with("tests/test_other.py: "),
        "{}",
        skipped.detail
    );
}

#[test]
fn without_pins_the_instance_is_validated_with_the_system_python() {
    // With no pins the task runs `python3 -m pytest`; where the system python has no pytest
    // (a fresh machine) validation fails and the instance is skipped with that reason.
    let tmp = tempfile::tempdir().unwrap();
    let (clone, base, patch, test_patch) = synthetic_clone(tmp.path());
    let input = tmp.path().join("instances.json");
    std::fs::write(
        &input,
        serde_json::json!([instance("example__calc-1", &base, &patch, &test_patch)]).to_string(),
    )
    .unwrap();
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let report = import_swebench(
        &input,
        &clone,
        &tmp.path().join("out"),
        &sb,
        &SweBenchOptions {
            timeout_s: 30,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(report.records, 1);
    match report.skipped.first() {
        Some(s) => {
            // Said as what it is: the environment, not the task.
            assert_eq!(
                s.reason.as_str(),
                "the environment fails the tests",
                "{s:?}"
            );
            assert!(s.detail.contains("No module named pytest"), "{s:?}");
        }
        None => {
            let t = Task::load(tmp.path().join("out/example__calc-1")).unwrap();
            assert!(t.spec.setup.is_none());
            assert_eq!(t.spec.hidden_tests.command[0], "python3");
        }
    }
    // --no-validate emits the task as it is.
    let report = import_swebench(
        &input,
        &clone,
        &tmp.path().join("out2"),
        &sb,
        &SweBenchOptions {
            validate: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(report.emitted.len(), 1);
}

/// A repository with the troubles real SWE-bench instances have: a version file generated at
/// install time (as setuptools_scm writes pytest's `_version.py`), test ids cut at whitespace,
/// with a path inside the parameters, or naming nothing, a test skipped here, a public
/// candidate that imports a helper moved to hidden/, and a reference patch that only adds a
/// method. Returns the clone and the instance.
fn troubled_clone(root: &Path) -> (PathBuf, serde_json::Value) {
    let d = root.join("gen-clone");
    std::fs::create_dir_all(&d).unwrap();
    let buggy = "from ._version import version\n\n\nclass Shape:\n    def __init__(self, w, h):\n        self.w = w\n        self.h = h\n\n    def area(self):\n        return self.w * self.h\n";
    let test_b = "import pytest\n\nimport gen\n\n\ndef test_version():\n    assert gen.version == '3.1'\n\n\n@pytest.mark.parametrize('s', ['a b', '/abs/x.py'])\ndef test_param(s):\n    assert s\n\n\ndef test_skipped():\n    pytest.importorskip('no_such_module_here')\n\n\ndef test_ok():\n    assert True\n\n\ndef test_env_quirk():\n    import os\n    assert os.environ.get('ONLY_IN_SWEBENCH_IMAGES') == '1'\n\n\ndef test_needs_pkg():\n    import tpmissing_pkg\n";
    let base_files = [
        (".gitignore", "src/gen/_version.py\n".to_owned()),
        (
            "setup_version.py",
            "import os, pathlib\npathlib.Path('src/gen/_version.py').write_text('version = %r\\n' % os.environ['SETUPTOOLS_SCM_PRETEND_VERSION'])\n".to_owned(),
        ),
        ("src/gen/__init__.py", buggy.to_owned()),
        (
            "tests/helpers.py",
            "from gen import Shape\n\n\ndef make():\n    return Shape(2, 3)\n".to_owned(),
        ),
        (
            "tests/test_a.py",
            "from helpers import make\n\n\ndef test_area():\n    assert make().area() == 6\n".to_owned(),
        ),
        ("tests/test_b.py", test_b.to_owned()),
        ("tests/helpers_c.py", "OLD = 1\n".to_owned()),
        (
            "tests/test_c.py",
            "from helpers_c import OLD\n\n\ndef test_c():\n    assert OLD == 1\n".to_owned(),
        ),
        (
            "tests/conftest.py",
            "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n".to_owned(),
        ),
        // A test file the test patch leaves alone.
        (
            "tests/test_untouched.py",
            "def test_untouched():\n    assert True\n".to_owned(),
        ),
    ];
    for (rel, text) in &base_files {
        write(&d, rel, text);
    }
    sh(&d, "git init -q . && git add -A && git commit -qm base");
    let base = sh(&d, "git rev-parse HEAD").trim().to_owned();
    let fixed_files = [
        (
            "src/gen/__init__.py",
            format!("{buggy}\n    def __eq__(self, other):\n        return (self.w, self.h) == (other.w, other.h)\n"),
        ),
        (
            "tests/helpers.py",
            "from gen import Shape\n\n\ndef make():\n    return Shape(2, 3)\n\n\ndef same():\n    return Shape(2, 3)\n".to_owned(),
        ),
        (
            "tests/test_a.py",
            "from helpers import make, same\n\n\ndef test_area():\n    assert make().area() == 6\n\n\ndef test_eq():\n    assert make() == same()\n".to_owned(),
        ),
        (
            "tests/test_b.py",
            format!("{test_b}\n\ndef test_eq2():\n    assert gen.Shape(1, 1) == gen.Shape(1, 1)\n"),
        ),
        // The test patch renames a helper: test_c's public copy (the base version) imports
        // the old name, so it passes on the base and fails with the reference patch.
        ("tests/helpers_c.py", "NEW = 1\n".to_owned()),
        (
            "tests/test_c.py",
            "from helpers_c import NEW\n\n\ndef test_c():\n    assert NEW == 1\n".to_owned(),
        ),
    ];
    for (rel, text) in &fixed_files {
        write(&d, rel, text);
    }
    sh(&d, "git add -A && git commit -qm fix");
    let patch = sh(&d, &format!("git diff {base} HEAD -- src"));
    let test_patch = sh(&d, &format!("git diff {base} HEAD -- tests"));
    let inst = serde_json::json!({
        "instance_id": "example__gen-1",
        "repo": "example/gen",
        "base_commit": base,
        "problem_statement": "Two equal shapes do not compare equal.",
        "patch": patch,
        "test_patch": test_patch,
        "version": "3.1",
        "FAIL_TO_PASS": ["tests/test_a.py::test_eq", "tests/test_b.py::test_eq2"],
        "PASS_TO_PASS": [
            "tests/test_a.py::test_area",
            "tests/test_b.py::test_version",
            "tests/test_b.py::test_param[a",
            "tests/test_b.py::test_param[/abs/x.py]",
            "tests/test_b.py::test_skipped",
            "tests/test_b.py::test_ok",
            "tests/test_b.py::test_env_quirk",
            "tests/test_b.py::test_needs_pkg",
            "tests/test_c.py::test_c",
            "[100%]",
            "tests/test_b.py::test_gone",
        ],
    });
    (d, inst)
}

/// The troubled clone's environment: pytest, and the install step writing its version file.
fn gen_pins() -> Pins {
    serde_json::from_value(serde_json::json!({
        "example/gen": {"3.1": {
            "python": "/usr/bin/python3", "packages": ["pytest"], "source_dirs": ["src"],
            "install": ["python", "setup_version.py"],
            "install_env": {"SETUPTOOLS_SCM_PRETEND_VERSION": "{version}"}
        }}
    }))
    .unwrap()
}

#[test]
fn real_instance_troubles_still_give_a_valid_task() {
    let Some(_) = pytest_env() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (clone, inst) = troubled_clone(tmp.path());
    let input = tmp.path().join("instances.jsonl");
    std::fs::write(&input, inst.to_string() + "\n").unwrap();
    let pins = gen_pins();
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let opts = options(pins.clone());
    let out = tmp.path().join("tasks");
    let report = import_swebench(&input, &clone, &out, &sb, &opts).unwrap();
    assert_eq!(report.emitted.len(), 1, "{}", report.text());
    // The report says which version was derived and which environment it chose.
    assert_eq!(
        report.emitted[0].environment.as_deref(),
        Some("version 3.1 (record); pins example/gen 3.1, python /usr/bin/python3, profile pytest")
    );
    assert!(
        report
            .text()
            .contains("; version 3.1 (record); pins example/gen 3.1")
    );
    let task = Task::load(out.join("example__gen-1")).unwrap();
    let spec = &task.spec;
    let repo = task.repo_dir();
    // The generated file is part of the base the agent starts from.
    assert_eq!(
        std::fs::read_to_string(repo.join("src/gen/_version.py")).unwrap(),
        "version = '3.1'\n"
    );
    assert_eq!(
        spec.metadata["generated_files"],
        serde_json::json!(["src/gen/_version.py"])
    );
    assert!(!repo.join("setup_version.py.orig").exists());
    // Names: the cut-off one and the one with a path match; the bogus ones are listed, never
    // fatal; the test skipped here does not judge.
    assert_eq!(
        spec.hidden_tests.select,
        [
            "tests/test_a.py::test_eq",
            "tests/test_b.py::test_eq2",
            "tests/test_a.py::test_area",
            "tests/test_b.py::test_version",
            "tests/test_b.py::test_param[a",
            "tests/test_b.py::test_param[/abs/x.py]",
            "tests/test_b.py::test_ok",
            "tests/test_c.py::test_c",
        ]
    );
    assert_eq!(
        spec.metadata["unmatched_tests"],
        serde_json::json!(["tests/test_b.py::test_gone", "[100%]"])
    );
    assert_eq!(
        spec.metadata["skipped_tests"],
        serde_json::json!(["tests/test_b.py::test_skipped"])
    );
    // A PASS_TO_PASS test that fails here even with the reference judges nothing.
    assert_eq!(
        spec.metadata["failing_here_tests"],
        serde_json::json!([
            "tests/test_b.py::test_env_quirk",
            "tests/test_b.py::test_needs_pkg"
        ])
    );
    // The report names each with its failure and the likely cause.
    let differs = &report.emitted[0].differs;
    assert_eq!(
        differs[0], "2 PASS_TO_PASS tests fail here even with the reference",
        "{differs:?}"
    );
    // test_c's public copy passed on the base but failed with the reference patch (it imports
    // a name the test patch renames): validation left it out and passed the second time.
    assert!(
        differs.contains(&"1 public tests fail with the reference patch and are left out".into()),
        "{differs:?}"
    );
    assert!(!task.repo_dir().join("tests/test_c_public.py").exists());
    let line = |test: &str| {
        differs
            .iter()
            .find(|l| l.starts_with(test))
            .unwrap_or_else(|| panic!("{test} in {differs:?}"))
            .clone()
    };
    assert!(
        line("tests/test_b.py::test_env_quirk").contains(
            "likely cause: its failure names no package: the tree or the interpreter differs"
        ),
        "{differs:?}"
    );
    assert!(
        line("tests/test_b.py::test_needs_pkg")
            .contains("likely cause: `tpmissing_pkg` is not installed here"),
        "{differs:?}"
    );
    // Public tests were chosen by running them: test_a's copy imports a helper the test patch
    // changes, whose base version stays in repo/ (as SWE-bench's base commit has it), so it
    // loads and test_area is public; the skipped test does not pass.
    assert_eq!(
        spec.public_tests.select,
        [
            "tests/test_a_public.py::test_area",
            "tests/test_b_public.py::test_version",
            "tests/test_b_public.py::test_param[a",
            "tests/test_b_public.py::test_param[/abs/x.py]",
            "tests/test_b_public.py::test_ok",
        ]
    );
    // The base versions stay at their paths; only the test patch's content is hidden, and the
    // validation below checks that it is nowhere in repo/.
    assert!(repo.join("tests/test_a_public.py").is_file());
    for (rel, base) in [
        (
            "tests/helpers.py",
            "from gen import Shape\n\n\ndef make():\n    return Shape(2, 3)\n",
        ),
        (
            "tests/test_a.py",
            "from helpers import make\n\n\ndef test_area():\n    assert make().area() == 6\n",
        ),
    ] {
        assert_eq!(
            std::fs::read_to_string(repo.join(rel)).unwrap(),
            base,
            "{rel}"
        );
        let hidden = std::fs::read_to_string(task.hidden_dir().join(rel)).unwrap();
        assert_ne!(hidden, base, "{rel}");
    }
    // The reference only adds a method: it is located by its class, and the task validates.
    let v = traparena_eval::validate(task.dir.as_path(), &sb, &Default::default()).unwrap();
    assert!(v.valid, "{:?}", v.problems().collect::<Vec<_>>());
    let ev = traparena_eval::Evaluator::new(&task, &sb).unwrap();
    let locs: Vec<String> = ev
        .reference_locations()
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(locs, ["src/gen/__init__.py:Shape"]);
    let gold = ev.evaluate(&task.reference_patch_text, true).unwrap();
    assert!(gold.verdict.accepted, "{:?}", gold.verdict);
    assert!(!gold.patch_applies || !ev.evaluate("", true).unwrap().verdict.accepted);

    // An interpreter that does not exist, and a version nobody has: skipped up front, naming
    // the path or the version, never a task and never a panic.
    for (python, reason, says) in [
        (
            "/nonexistent/bin/python3",
            "the environment cannot be built",
            "/nonexistent/bin/python3",
        ),
        (
            "2.9",
            "no interpreter for the environment",
            "no Python 2.9 found",
        ),
    ] {
        let mut bad = pins.clone();
        bad.0
            .get_mut("example/gen")
            .unwrap()
            .get_mut("3.1")
            .unwrap()
            .python = python.into();
        let out = tmp.path().join(format!("bad-{}", python.len()));
        let report = import_swebench(
            &input,
            &clone,
            &out,
            &sb,
            &SweBenchOptions {
                pins: Some(bad),
                ..opts.clone()
            },
        )
        .unwrap();
        assert!(report.emitted.is_empty());
        assert_eq!(
            report.skipped[0].reason.as_str(),
            reason,
            "{:?}",
            report.skipped[0]
        );
        assert!(
            report.skipped[0].detail.contains(says),
            "{:?}",
            report.skipped[0]
        );
    }
}

/// A flat layout's environment lets a child interpreter started in another folder import the
/// workspace's code (pylint's tests run `python -m pylint` from a temporary folder), as an
/// editable install would. No packages: nothing is downloaded.
#[test]
fn a_flat_layout_is_importable_from_child_interpreters_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let entry: PinEntry =
        serde_json::from_value(serde_json::json!({"python": "/usr/bin/python3"})).unwrap();
    let setup = setup_for("example/flat@1.0", &entry, &tmp.path().join("venvs"));
    ensure_env(
        &setup,
        &BuildOptions {
            env: Vec::new(),
            timeout: Duration::from_secs(300),
        },
    )
    .unwrap();
    let ws = tmp.path().join("ws");
    write(&ws, "flatpkg/__init__.py", "NAME = 'flat'\n");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let py = setup.venv.join("bin/python").to_string_lossy().into_owned();
    let script = format!(
        "import subprocess, sys; print(subprocess.run([sys.executable, '-c', 'import flatpkg; print(flatpkg.NAME)'], cwd={:?}, capture_output=True, text=True).stdout.strip())",
        elsewhere.to_string_lossy()
    );
    let out = run_host(&HostCommand {
        argv: vec![py, "-c".into(), script],
        cwd: ws.clone(),
        env: Vec::new(),
        timeout: Duration::from_secs(60),
    })
    .unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr.text);
    assert_eq!(out.stdout.text.trim(), "flat", "{}", out.stderr.text);
}

#[test]
fn a_reference_patch_that_applies_with_offsets_is_kept_in_the_trees_line_numbers() {
    let Some(_) = pytest_env() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (clone, base, patch, test_patch) = synthetic_clone(tmp.path());
    // The record's patch as made against a tree two lines longer (a release tree standing in
    // for the base commit has such offsets): git applies it, its line numbers are wrong here.
    let shift = |range: &str, sign: char| -> String {
        let (start, len) = range.trim_start_matches(sign).split_once(',').unwrap();
        format!("{sign}{},{len}", start.parse::<usize>().unwrap() + 2)
    };
    let shifted: String = patch
        .lines()
        .map(|l| {
            let parts: Vec<&str> = l.splitn(4, ' ').collect();
            if l.starts_with("@@ ") && parts.len() >= 3 {
                let rest = parts.get(3).map(|r| format!(" {r}")).unwrap_or_default();
                format!(
                    "@@ {} {}{rest}\n",
                    shift(parts[1], '-'),
                    shift(parts[2], '+')
                )
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_ne!(shifted, patch);
    let input = tmp.path().join("instances.jsonl");
    let inst = instance("example__calc-1", &base, &shifted, &test_patch);
    std::fs::write(&input, inst.to_string() + "\n").unwrap();
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let out = tmp.path().join("tasks");
    let report = import_swebench(&input, &clone, &out, &sb, &options(pins())).unwrap();
    assert_eq!(report.emitted.len(), 1, "{}", report.text());
    let task = Task::load(out.join("example__calc-1")).unwrap();
    assert!(task.spec.metadata["reference_patch_rebased"].is_string());
    // reference.patch is the patch in this tree's line numbers: the hunks of the real fix.
    let hunks = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("@@"))
            .map(|l| l.split(" @@").next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(hunks(&task.reference_patch_text), hunks(&patch));
    // The reference locations are where the code is: the real fix (what a gold agent's diff
    // is) is an accepted repair.
    let ev = traparena_eval::Evaluator::new(&task, &sb).unwrap();
    assert!(ev.evaluate(&patch, true).unwrap().verdict.accepted);
}

/// When the touched test files hold no `PASS_TO_PASS` test at the base commit (every test of
/// pylint-dev__pylint-4551's touched file is new or fails there), the public tests are read in
/// place from an untouched test file beside them, which stays in `repo/` as it is.
#[test]
fn without_pass_to_pass_tests_the_public_tests_come_from_an_untouched_neighbour() {
    let Some(_) = pytest_env() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (clone, base, patch, test_patch) = synthetic_clone(tmp.path());
    let mut inst = instance("example__calc-1", &base, &patch, &test_patch);
    inst["PASS_TO_PASS"] = "[]".into();
    let input = tmp.path().join("instances.jsonl");
    std::fs::write(&input, inst.to_string() + "\n").unwrap();
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let out = tmp.path().join("tasks");
    let report = import_swebench(&input, &clone, &out, &sb, &options(pins())).unwrap();
    assert_eq!(report.emitted.len(), 1, "{}", report.text());
    let task = Task::load(out.join("example__calc-1")).unwrap();
    assert_eq!(
        task.spec.public_tests.select,
        ["tests/test_other.py::test_other"]
    );
    assert_eq!(
        std::fs::read_to_string(task.repo_dir().join("tests/test_other.py")).unwrap(),
        "def test_other():\n    assert True\n"
    );
    // No public copy of the touched file is left behind.
    assert!(!task.repo_dir().join("tests/test_calc_public.py").exists());
    let differs = report.emitted[0].differs.join("\n");
    assert!(
        differs.contains("the public tests are read in place from tests/test_other.py"),
        "{differs}"
    );
}

/// The troubled clone's instance with `field` set to `value`, imported under `root`: the report
/// and the output folder.
fn import_troubled(
    root: &Path,
    field: &str,
    value: serde_json::Value,
) -> (traparena_import::ImportReport, PathBuf) {
    let (clone, mut inst) = troubled_clone(root);
    inst[field] = value;
    let input = root.join("instances.jsonl");
    std::fs::write(&input, inst.to_string() + "\n").unwrap();
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let out = root.join("tasks");
    let report = import_swebench(&input, &clone, &out, &sb, &options(gen_pins())).unwrap();
    (report, out)
}

/// A `FAIL_TO_PASS` test that runs but is skipped here (scikit-learn 0.21.1's release tree skips
/// `test_extract_xi`, which the instance's base commit runs) is said to be skipped, not missing.
#[test]
fn a_fail_to_pass_test_skipped_here_is_named_as_skipped() {
    let Some(_) = pytest_env() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (report, _) = import_troubled(
        tmp.path(),
        "FAIL_TO_PASS",
        serde_json::json!(["tests/test_b.py::test_skipped"]),
    );
    assert_eq!(report.skipped.len(), 1, "{}", report.text());
    let s = &report.skipped[0];
    assert_eq!(
        s.reason.as_str(),
        "no FAIL_TO_PASS test can be found",
        "{s:?}"
    );
    assert!(
        s.detail
            .contains("are skipped here with the reference patch: tests/test_b.py::test_skipped"),
        "{s:?}"
    );
}

/// When every public copy fails with the reference patch (pytest-dev__pytest-5787's import what
/// the test patch changes), the public tests are read in place from an untouched file instead.
#[test]
fn when_every_public_copy_fails_with_the_reference_the_public_tests_are_read_in_place() {
    let Some(_) = pytest_env() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (report, out) = import_troubled(
        tmp.path(),
        "PASS_TO_PASS",
        serde_json::json!(["tests/test_c.py::test_c"]),
    );
    assert_eq!(report.emitted.len(), 1, "{}", report.text());
    let task = Task::load(out.join("example__gen-1")).unwrap();
    assert_eq!(
        task.spec.public_tests.select,
        ["tests/test_untouched.py::test_untouched"]
    );
    assert!(!task.repo_dir().join("tests/test_c_public.py").exists());
    let differs = report.emitted[0].differs.join("\n");
    for wanted in [
        "1 public tests fail with the reference patch and are left out",
        "the public tests are read in place from tests/test_untouched.py",
    ] {
        assert!(differs.contains(wanted), "{wanted}: {differs}");
    }
}

//! Environments built from a repository's tree (its requirements files and declared extras),
//! and the extension-build cache of the per-task install step: real `python -m venv`, `pip`
//! (offline, from a local folder of wheels) and `setup.py build_ext` with gcc.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use traparena_pyenv::{
    BuildOptions, EnvTree, PinEntry, PyEnvError, build_cache_entry, ensure_env, ensure_env_tree,
    install_generated, setup_for, setup_for_tree, venv_python,
};
use traparena_testkit::swebench::{wheels, write};

const PYTHON: &str = "/usr/bin/python3";

fn offline(wheels: &Path) -> BuildOptions {
    BuildOptions {
        env: vec![
            ("PIP_NO_INDEX".into(), "1".into()),
            (
                "PIP_FIND_LINKS".into(),
                wheels.to_string_lossy().into_owned(),
            ),
            // pip's inverted switch: build the tree with the environment's own setuptools.
            ("PIP_NO_BUILD_ISOLATION".into(), "0".into()),
            ("HOME".into(), "/tmp".into()),
        ],
        timeout: Duration::from_secs(600),
    }
}

/// A package tree: `reqs/test.txt` names `tpdep` (and the tree itself, `-e .`, which is left
/// out), setup.py's `test` extra names `tpnope`, which the entry's edit turns into `tpextra`.
fn tree(root: &Path) -> PathBuf {
    let t = root.join("tree");
    write(&t, "reqs/test.txt", "tpdep\n-e .\n");
    write(
        &t,
        "setup.py",
        "from setuptools import setup\nsetup(name='treepkg', version='0.1', packages=['treepkg'], \
         extras_require={'test': ['tpnope']})\n",
    );
    write(&t, "treepkg/__init__.py", "");
    t
}

fn tree_entry() -> PinEntry {
    serde_json::from_value(serde_json::json!({
        "python": PYTHON,
        "tree_requirements": ["requirements-missing.txt", "reqs/test.txt"],
        "tree_extras": ["test"],
        "tree_edits": [{"file": "setup.py", "find": "tpnope", "replace": "tpextra"}],
        "profile": "django"
    }))
    .unwrap()
}

#[test]
fn an_environment_holds_the_trees_requirements_and_extras_but_not_the_tree() {
    let root = tempfile::tempdir().unwrap();
    let wheels = wheels(root.path(), &["tpdep", "tpextra"]);
    let t = tree(root.path());
    let entry = tree_entry();
    assert_eq!(entry.profile, "django");
    let cache = root.path().join("venvs");
    let setup = setup_for_tree("a/b@1.0", &entry, &cache, Some("c0ffee"));
    let tree = EnvTree {
        dir: t.clone(),
        id: "c0ffee".into(),
    };
    ensure_env_tree(&setup, &entry, Some(&tree), &offline(&wheels)).unwrap();
    // Run from a folder without the tree: the workspace `.pth` puts the working folder first.
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = Command::new(venv_python(&setup))
        .args([
            "-c",
            "import tpdep, tpextra, importlib.util as u, importlib.metadata as m\n\
             assert u.find_spec('treepkg') is None, 'the tree is installed'\n\
             names = {d.metadata['Name'] for d in m.distributions()}\n\
             assert 'treepkg' not in names, names\n",
        ])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // The edit was made in a copy: the tree is as it was.
    let setup_py = std::fs::read_to_string(t.join("setup.py")).unwrap();
    assert!(setup_py.contains("tpnope"));
    assert!(!t.join("build").exists() && !t.join("reqs/.traparena-requirements.txt").exists());
}

/// A tree whose version comes from git metadata, as setuptools_scm reads it: its setup.py
/// refuses to build without a `.git` folder or `SETUPTOOLS_SCM_PRETEND_VERSION`, with
/// setuptools_scm's own words (pydata__xarray-4075 failed so before the copy was given one).
#[test]
fn a_tree_versioned_by_git_metadata_builds_from_a_copy_without_git() {
    let root = tempfile::tempdir().unwrap();
    let wheels = wheels(root.path(), &["tpdep"]);
    let t = root.path().join("scmtree");
    write(
        &t,
        "setup.py",
        concat!(
            "import os\n",
            "from setuptools import setup\n",
            "v = os.environ.get('SETUPTOOLS_SCM_PRETEND_VERSION')\n",
            "if v is None and not os.path.isdir('.git'):\n",
            "    raise LookupError('setuptools-scm was unable to detect version for ' + os.getcwd())\n",
            "setup(name='scmpkg', version=v, packages=['scmpkg'], install_requires=['tpdep'])\n",
        ),
    );
    write(&t, "scmpkg/__init__.py", "");
    let entry: PinEntry = serde_json::from_value(serde_json::json!({
        "python": PYTHON, "tree_extras": []
    }))
    .unwrap();
    let setup = setup_for_tree("a/scm@1.0", &entry, &root.path().join("venvs"), Some("5cm"));
    let tree = EnvTree {
        dir: t,
        id: "5cm".into(),
    };
    ensure_env_tree(&setup, &entry, Some(&tree), &offline(&wheels)).unwrap();
    let out = Command::new(venv_python(&setup))
        .args([
            "-c",
            "import tpdep, importlib.util as u
assert u.find_spec('scmpkg') is None
",
        ])
        .current_dir(root.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn the_trees_identity_is_part_of_the_folder_name() {
    let entry = tree_entry();
    let cache = Path::new("/c");
    let a = setup_for_tree("a/b@1.0", &entry, cache, Some("aaaa"));
    let b = setup_for_tree("a/b@1.0", &entry, cache, Some("bbbb"));
    assert_ne!(a.venv, b.venv);
    assert_eq!(a, setup_for_tree("a/b@1.0", &entry, cache, Some("aaaa")));
    assert!(a.venv.to_string_lossy().starts_with("/c/a_b-1.0-"));
    // An entry that reads no tree shares one folder whatever the tree.
    let plain: PinEntry = serde_json::from_str(r#"{"packages": ["x"]}"#).unwrap();
    assert_eq!(
        setup_for_tree("a/b@1.0", &plain, cache, Some("aaaa")),
        setup_for("a/b@1.0", &plain, cache)
    );
    assert_eq!(plain.profile, "pytest");
    assert!(serde_json::from_str::<PinEntry>(r#"{"tree_edits": [{"file": "x"}]}"#).is_err());
}

#[test]
fn a_tree_without_the_requirements_file_is_a_clear_error() {
    let root = tempfile::tempdir().unwrap();
    let wheels = wheels(root.path(), &["tpdep", "tpextra"]);
    let t = tree(root.path());
    std::fs::remove_file(t.join("reqs/test.txt")).unwrap();
    let entry = tree_entry();
    let setup = setup_for_tree("a/b@1.0", &entry, &root.path().join("venvs"), Some("1"));
    let tree = EnvTree {
        dir: t,
        id: "1".into(),
    };
    let err = ensure_env_tree(&setup, &entry, Some(&tree), &offline(&wheels)).unwrap_err();
    assert!(
        matches!(&err, PyEnvError::Build { source, broken: None, .. }
            if matches!(**source, PyEnvError::NoRequirementsFile { .. })),
        "{err:?}"
    );
    let err = err.to_string();
    assert!(
        err.contains("no requirements file requirements-missing.txt or reqs/test.txt"),
        "{err}"
    );
    assert!(!setup.venv.exists(), "a failed build leaves nothing behind");
    // No tree at all, for an entry that reads one.
    let err = ensure_env_tree(&setup, &entry, None, &offline(&wheels)).unwrap_err();
    assert!(matches!(err, PyEnvError::NoTree { .. }), "{err:?}");
    assert!(err.to_string().contains("no tree was given"), "{err}");
}

/// A tree with a C extension module `fastmod`; `value` is what its function returns.
fn ext_tree(dir: &Path, value: u32) {
    write(
        dir,
        "setup.py",
        "from setuptools import setup, Extension\n\
         setup(name='ext', ext_modules=[Extension('fastmod', ['fastmod.c'])])\n",
    );
    write(
        dir,
        "fastmod.c",
        &format!(
            "#include <Python.h>\n\
             static PyObject *v(PyObject *s, PyObject *a) {{ return PyLong_FromLong({value}); }}\n\
             static PyMethodDef m[] = {{{{\"value\", v, METH_NOARGS, 0}}, {{0}}}};\n\
             static struct PyModuleDef d = {{PyModuleDef_HEAD_INIT, \"fastmod\", 0, -1, m}};\n\
             PyMODINIT_FUNC PyInit_fastmod(void) {{ return PyModule_Create(&d); }}\n"
        ),
    );
    write(dir, "pkg.py", "import fastmod\n");
}

#[test]
fn extension_builds_are_cached_and_built_once_under_a_race() {
    let root = tempfile::tempdir().unwrap();
    let counter = root.path().join("builds.log");
    let entry: PinEntry = serde_json::from_value(serde_json::json!({
        "python": PYTHON,
        // The probe object stands for a compiler check's by-product (matplotlib's `has_flag`
        // compiles `/tmp/x.cpp` to `./tmp/x.o`): not a file the tree gets.
        "install": ["sh", "-c", format!("echo built >> {} && mkdir -p tmp/probe && touch tmp/probe/x.o && python setup.py -q build_ext --inplace", counter.display())],
        "build_inputs": [".c", "setup.py"]
    }))
    .unwrap();
    let setup = setup_for("x/ext@1.0", &entry, &root.path().join("venvs"));
    let opts = BuildOptions {
        env: vec![("HOME".into(), "/tmp".into())],
        timeout: Duration::from_secs(600),
    };
    ensure_env(&setup, &opts).unwrap();
    let trees: Vec<PathBuf> = (0..3).map(|i| root.path().join(format!("t{i}"))).collect();
    for t in &trees {
        ext_tree(t, 7);
    }
    // Same sources, different other files: one key.
    write(&trees[1], "README", "another commit\n");
    let key = build_cache_entry(&entry, &setup, "1.0", &trees[0]).unwrap();
    assert_eq!(
        key,
        build_cache_entry(&entry, &setup, "1.0", &trees[1]).unwrap()
    );
    let (e, st, o) = (&entry, &setup, &opts);
    let results: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = trees
            .iter()
            .map(|t| s.spawn(move || install_generated(e, st, "1.0", t, o)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect()
    });
    let builds = std::fs::read_to_string(&counter).unwrap();
    assert_eq!(builds.lines().count(), 1, "one build for one key");
    for (t, files) in trees.iter().zip(&results) {
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].starts_with("fastmod") && files[0].ends_with(".so"));
        assert!(t.join(&files[0]).is_file());
        assert!(
            !t.join("build").exists(),
            "build by-products stay out of the tree"
        );
        let out = Command::new(venv_python(&setup))
            .args(["-c", "import fastmod; print(fastmod.value())"])
            .current_dir(t)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "7", "{out:?}");
    }
    // Other extension sources: another key, built again, with their own result.
    let changed = root.path().join("t3");
    ext_tree(&changed, 9);
    assert_ne!(
        key,
        build_cache_entry(&entry, &setup, "1.0", &changed).unwrap()
    );
    install_generated(&entry, &setup, "1.0", &changed, &opts).unwrap();
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap().lines().count(),
        2
    );
    let out = Command::new(venv_python(&setup))
        .args(["-c", "import fastmod; print(fastmod.value())"])
        .current_dir(&changed)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "9");
}

#[test]
fn the_install_step_replaces_only_the_files_the_entry_names() {
    // astropy's leap-second table expires with the calendar; the install step refreshes it.
    // The step also rewrites `setup.py`, which the entry does not name: that change is not
    // taken. Both without and with the build cache.
    let root = tempfile::tempdir().unwrap();
    let step = "printf fresh > data/leap.dat && printf changed > setup.py && \
                printf same > data/same.dat && printf new > made.txt";
    for (i, inputs) in [vec![], vec!["setup.py".to_owned()]]
        .into_iter()
        .enumerate()
    {
        let entry: PinEntry = serde_json::from_value(serde_json::json!({
            "python": PYTHON,
            "install": ["sh", "-c", step],
            "install_replaces": ["data/leap.dat", "data/same.dat"],
            "build_inputs": inputs,
        }))
        .unwrap();
        let setup = setup_for("x/data@1.0", &entry, &root.path().join("venvs"));
        let opts = BuildOptions {
            env: vec![("HOME".into(), "/tmp".into())],
            timeout: Duration::from_secs(600),
        };
        ensure_env(&setup, &opts).unwrap();
        // Twice: the second tree of the cached case takes the cache entry.
        for t in 0..2 {
            let tree = root.path().join(format!("t{i}{t}"));
            write(&tree, "data/leap.dat", "expired");
            write(&tree, "data/same.dat", "same");
            write(&tree, "setup.py", "original");
            let files = install_generated(&entry, &setup, "1.0", &tree, &opts).unwrap();
            assert_eq!(files, ["data/leap.dat", "made.txt"], "case {i}, tree {t}");
            let read = |rel: &str| std::fs::read_to_string(tree.join(rel)).unwrap();
            assert_eq!(read("data/leap.dat"), "fresh");
            assert_eq!(read("setup.py"), "original");
            assert_eq!(read("made.txt"), "new");
        }
    }
}

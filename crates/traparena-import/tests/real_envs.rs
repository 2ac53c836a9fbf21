//! Bundled environments built for real from real trees, timed: sphinx and sympy from their
//! clones, django from its release sdist, astropy with its extensions built and reused. They
//! need the network (PyPI), the pyenv interpreters and the repositories, so they are ignored;
//! `cargo test -p traparena-import --test real_envs -- --ignored --nocapture` prints the times.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use traparena_import::{
    BuildOptions, Ensured, EnvTree, PinEntry, bundled_envs, ensure_env_tree, install_generated,
    setup_for_tree, venv_python,
};

const CACHE: &str = "/var/tmp/traparena-real/venvs";

fn pyenv(v: &str) -> String {
    let dir = std::fs::read_dir("/root/.pyenv/versions")
        .expect("pyenv's interpreters")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with(&format!("{v}.")))
        .expect("the interpreter version");
    format!("/root/.pyenv/versions/{dir}/bin/python{v}")
}

fn entry(repo: &str, version: &str) -> PinEntry {
    let mut e = bundled_envs().0[repo][version].clone();
    e.python = pyenv(&e.python);
    e
}

fn export(mirror: &str, commit: &str, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let archive = Command::new("git")
        .args(["--git-dir", mirror, "archive", commit])
        .output()
        .unwrap();
    assert!(archive.status.success());
    let mut tar = Command::new("tar")
        .args(["-x", "-C"])
        .arg(to)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    tar.stdin
        .take()
        .unwrap()
        .write_all(&archive.stdout)
        .unwrap();
    assert!(tar.wait().unwrap().success());
}

fn opts() -> BuildOptions {
    BuildOptions {
        env: vec![("HOME".into(), "/root".into())],
        timeout: Duration::from_secs(3600),
    }
}

/// Builds the environment of `repo` `version` from `tree`, then asks again; prints both times.
fn build_and_reuse(repo: &str, version: &str, tree: &Path, id: &str, check: &str) -> PathBuf {
    let e = entry(repo, version);
    let setup = setup_for_tree(&format!("{repo}@{version}"), &e, Path::new(CACHE), Some(id));
    let tree = EnvTree {
        dir: tree.to_owned(),
        id: id.into(),
    };
    let t = Instant::now();
    let first = ensure_env_tree(&setup, &e, Some(&tree), &opts()).unwrap();
    let built = t.elapsed();
    let t = Instant::now();
    let again = ensure_env_tree(&setup, &e, Some(&tree), &opts()).unwrap();
    eprintln!(
        "TIMING {repo}@{version}: {first:?} in {:.1}s; then {again:?} in {:.2}s ({})",
        built.as_secs_f64(),
        t.elapsed().as_secs_f64(),
        setup.venv.display()
    );
    assert_eq!(again, Ensured::Ready);
    let out = Command::new(venv_python(&setup))
        .args(["-c", check])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    setup.venv
}

#[test]
#[ignore = "needs PyPI, pyenv's python 3.9 and the sphinx mirror at /work/.mirror"]
fn sphinx_3_0_from_its_clone() {
    let dir = tempfile::tempdir().unwrap();
    let commit = "9bb204dcabe6ba0fc422bf4a45ad0c79c680d90b";
    export("/work/.mirror/sphinx-doc+sphinx/repo", commit, dir.path());
    // The tree's `[test]` extra brings pytest; the repository itself is not installed.
    build_and_reuse(
        "sphinx-doc/sphinx",
        "3.0",
        dir.path(),
        commit,
        "import pytest, jinja2, importlib.util as u; \
         assert jinja2.__version__ < '3', jinja2.__version__; \
         assert u.find_spec('sphinx') is None, 'sphinx is installed'",
    );
}

#[test]
#[ignore = "needs PyPI, pyenv's python 3.9 and the sympy mirror at /work/.mirror"]
fn sympy_1_0_from_its_clone() {
    let dir = tempfile::tempdir().unwrap();
    let commit = "360290c4c401e386db60723ddb0109ed499c9f6e";
    export("/work/.mirror/sympy+sympy/repo", commit, dir.path());
    build_and_reuse(
        "sympy/sympy",
        "1.0",
        dir.path(),
        commit,
        "import mpmath, importlib.util as u; assert u.find_spec('sympy') is None",
    );
}

#[test]
#[ignore = "needs PyPI, pyenv's python 3.9 and Django 4.2.16's sdist unpacked at \
            /var/tmp/traparena-real/django (pip download --no-deps --no-binary :all: django==4.2.16)"]
fn django_4_2_from_its_sdist() {
    build_and_reuse(
        "django/django",
        "4.2",
        Path::new("/var/tmp/traparena-real/django"),
        "django-4.2.16-sdist",
        "import asgiref, sqlparse, PIL, importlib.util as u; assert u.find_spec('django') is None",
    );
}

#[test]
#[ignore = "needs PyPI, pyenv's python 3.9, gcc and the astropy mirror at /work/.mirror"]
fn astropy_4_3_extensions_built_once() {
    let commit = "d16bfe05a744909de4b27f5875fe0d4ed41ce607";
    let root = tempfile::tempdir().unwrap();
    let a = root.path().join("a");
    let b = root.path().join("b");
    export("/work/.mirror/astropy+astropy/repo", commit, &a);
    export("/work/.mirror/astropy+astropy/repo", commit, &b);
    let venv = build_and_reuse(
        "astropy/astropy",
        "4.3",
        &a,
        commit,
        "import numpy, pytest, erfa, Cython",
    );
    let e = entry("astropy/astropy", "4.3");
    let setup = setup_for_tree("astropy/astropy@4.3", &e, Path::new(CACHE), Some(commit));
    assert_eq!(setup.venv, venv);
    for (name, dir) in [("first", &a), ("cached", &b)] {
        let t = Instant::now();
        let files = install_generated(&e, &setup, "5.1.dev623", dir, &opts()).unwrap();
        let so = files.iter().filter(|f| f.ends_with(".so")).count();
        eprintln!(
            "TIMING astropy@4.3 extension build ({name}): {} files, {so} .so, {:.1}s",
            files.len(),
            t.elapsed().as_secs_f64()
        );
        assert!(so > 10, "{files:?}");
    }
    // The built tree imports its extensions.
    let out = Command::new(venv_python(&setup))
        .args([
            "-c",
            "import astropy.wcs, astropy.units as u; print(astropy.wcs.Wcsprm)",
        ])
        .current_dir(&b)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

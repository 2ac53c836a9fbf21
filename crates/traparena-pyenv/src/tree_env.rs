//! The dependencies an environment reads from the repository's own tree: a requirements file
//! of the tree and the package's declared requirements with extras, as SWE-bench's install
//! step brings them, without leaving the repository installed in the shared environment.
//!
//! How the declared requirements are installed: `pip install TREE[extras]`, then the
//! distribution built from the tree is uninstalled again. pip's `--dry-run --report` would
//! resolve them without installing anything, but it needs pip 22.2, and the newest pip for
//! Python 3.6 (SWE-bench's interpreter for astropy 0.x-1.x, scikit-learn 0.20, django 3.0) is
//! 21.3.1; installing and uninstalling works on every pip. The distribution is found by its
//! `direct_url.json` (PEP 610, pip 20.1 on) naming the scratch tree, else by `setup.py --name`
//! (a legacy `setup.py install` records no URL).
//!
//! The copy has no git metadata, so a tree whose version comes from setuptools_scm (xarray
//! from 0.15.2 until it declared a fallback version) cannot build its own metadata; SWE-bench's
//! `/testbed` is a clone and can. [`SCM_VERSION`] stands in: the tree's distribution is
//! uninstalled right after, so no test ever sees that version.

use std::path::Path;

use traparena_env::HostCommand;

use crate::error::PyEnvError;
use crate::spec::{EnvTree, PinEntry};
use crate::steps::{BuildOptions, run_step};

/// What setuptools_scm is told the tree's version is (`SETUPTOOLS_SCM_PRETEND_VERSION`), unless
/// the build options set it.
pub(crate) const SCM_VERSION: &str = "0.0.0+traparena";

/// Installs what `entry` reads from `tree` into the environment whose interpreter is `py`.
pub(crate) fn install_tree_deps(
    py: &str,
    entry: &PinEntry,
    tree: &EnvTree,
    opts: &BuildOptions,
) -> Result<(), PyEnvError> {
    if !tree.dir.is_dir() {
        return Err(PyEnvError::TreeNotAFolder {
            dir: tree.dir.clone(),
        });
    }
    let scratch = tempfile::Builder::new()
        .prefix("traparena-tree-")
        .tempdir()
        .map_err(|source| PyEnvError::Scratch { source })?;
    let copy = scratch.path().join("tree");
    crate::steps::copy_tree(&tree.dir, &copy)?;
    for edit in &entry.tree_edits {
        let p = copy.join(edit.file.as_str());
        let text = std::fs::read_to_string(&p).map_err(|source| PyEnvError::TreeEdit {
            file: edit.file.as_str().to_owned(),
            tree: tree.dir.clone(),
            source,
        })?;
        if text.contains(&edit.find) {
            std::fs::write(&p, text.replace(&edit.find, &edit.replace))
                .map_err(PyEnvError::io(&p))?;
        }
    }
    let mut scm = opts.clone();
    if !scm
        .env
        .iter()
        .any(|(k, _)| k == "SETUPTOOLS_SCM_PRETEND_VERSION")
    {
        scm.env
            .push(("SETUPTOOLS_SCM_PRETEND_VERSION".into(), SCM_VERSION.into()));
    }
    let opts = &scm;
    let run = |step: &str, argv: Vec<String>| {
        run_step(
            step,
            &HostCommand {
                argv,
                cwd: copy.clone(),
                env: opts.env.clone(),
                timeout: opts.timeout,
            },
        )
    };
    let pip = |args: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [py, "-m", "pip"].map(String::from).to_vec();
        v.extend(
            ["--no-input", "--disable-pip-version-check"]
                .iter()
                .chain(args)
                .map(|s| s.to_string()),
        );
        v
    };
    if !entry.tree_requirements.is_empty() {
        let file = requirements_file(entry, &copy, tree)?;
        run(
            &format!("pip install -r {}", file.display()),
            pip(&["install", "--quiet", "-r", &file.to_string_lossy()]),
        )?;
    }
    if let Some(extras) = &entry.tree_extras {
        let target = if extras.is_empty() {
            copy.to_string_lossy().into_owned()
        } else {
            format!("{}[{}]", copy.display(), extras.join(","))
        };
        run(
            &format!("pip install of the tree's requirements ({target})"),
            pip(&["install", "--quiet", &target]),
        )?;
        let names = installed_from(py, &copy, opts)?;
        for name in names {
            run(
                &format!("uninstalling the tree's own distribution {name}"),
                pip(&["uninstall", "--yes", "--quiet", &name]),
            )?;
        }
    }
    Ok(())
}

/// The first of `entry`'s requirements files `copy` has, rewritten beside it without the lines
/// that install the tree itself or name a skipped package.
fn requirements_file(
    entry: &PinEntry,
    copy: &Path,
    tree: &EnvTree,
) -> Result<std::path::PathBuf, PyEnvError> {
    let Some(rel) = entry
        .tree_requirements
        .iter()
        .find(|r| copy.join(r.as_str()).is_file())
    else {
        return Err(PyEnvError::NoRequirementsFile {
            wanted: entry
                .tree_requirements
                .iter()
                .map(|r| r.as_str().to_owned())
                .collect(),
            tree: tree.dir.clone(),
        });
    };
    let src = copy.join(rel.as_str());
    let text = std::fs::read_to_string(&src).map_err(PyEnvError::io(&src))?;
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let t = l.trim();
            let installs_tree = t.starts_with("-e") || t.starts_with('.');
            let skipped = entry
                .tree_skip
                .iter()
                .any(|n| requirement_name(t) == normalise(n));
            !installs_tree && !skipped
        })
        .collect();
    let out = src.with_file_name(".traparena-requirements.txt");
    std::fs::write(&out, kept.join("\n") + "\n").map_err(PyEnvError::io(&out))?;
    Ok(out)
}

fn normalise(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

/// The project name a requirement line starts with (`Pillow >= 6.2.0` → `pillow`).
fn requirement_name(line: &str) -> String {
    let end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(line.len());
    normalise(&line[..end])
}

/// The distributions the environment holds that were installed from `copy`.
fn installed_from(py: &str, copy: &Path, opts: &BuildOptions) -> Result<Vec<String>, PyEnvError> {
    // Reads every distribution's PEP 610 record; prints the names whose URL is the tree.
    let script = "import sys, json\n\
        from importlib import metadata as m\n\
        url = 'file://' + sys.argv[1]\n\
        for d in m.distributions():\n\
        \x20   t = d.read_text('direct_url.json')\n\
        \x20   if t and json.loads(t).get('url', '').rstrip('/') == url.rstrip('/'):\n\
        \x20       print(d.metadata['Name'])\n";
    let cmd = |argv: Vec<String>| HostCommand {
        argv,
        cwd: copy.to_owned(),
        env: opts.env.clone(),
        timeout: opts.timeout,
    };
    let mut names: Vec<String> = match run_step(
        "finding the tree's distribution",
        &cmd(vec![
            py.into(),
            "-c".into(),
            script.into(),
            copy.to_string_lossy().into_owned(),
        ]),
    ) {
        Ok(out) => out
            .stdout
            .text
            .lines()
            .map(|l| l.trim().to_owned())
            .collect(),
        // Python 3.6 has no importlib.metadata: fall back on setup.py.
        Err(_) => Vec::new(),
    };
    names.retain(|n| !n.is_empty());
    if names.is_empty() && copy.join("setup.py").is_file() {
        let out = run_step(
            "setup.py --name",
            &cmd(vec![py.into(), "setup.py".into(), "--name".into()]),
        )?;
        if let Some(n) = out
            .stdout
            .text
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
        {
            names.push(n.to_owned());
        }
    }
    if names.is_empty() {
        return Err(PyEnvError::TreeDistributionNotFound {
            tree: copy.to_owned(),
        });
    }
    Ok(names)
}

/// The files of a tree the declared dependencies are read from, besides the entry's
/// requirements files.
const DECLARING: &[&str] = &["setup.py", "setup.cfg", "pyproject.toml"];

/// True when the tree's file `rel` declares what `entry` reads from the tree: one of its
/// requirements files, or `setup.py`, `setup.cfg` or `pyproject.toml` at the root.
pub fn declares_dependencies(rel: &str, entry: &PinEntry) -> bool {
    DECLARING.contains(&rel) || entry.tree_requirements.iter().any(|r| r.as_str() == rel)
}

/// The identity of what `entry` reads from the tree at `dir`: a hash of the contents of its
/// requirements files and of the files declaring the package's requirements. Base commits
/// whose dependency declarations are the same share one environment, as instances of one
/// SWE-bench `environment_setup_commit` share one image.
pub fn dependency_id(dir: &Path, entry: &PinEntry) -> String {
    let mut bytes = Vec::new();
    let files = entry
        .tree_requirements
        .iter()
        .map(|p| p.as_str())
        .chain(DECLARING.iter().copied());
    for rel in files {
        bytes.extend_from_slice(rel.as_bytes());
        bytes.push(0);
        match std::fs::read(dir.join(rel)) {
            Ok(content) => bytes.extend_from_slice(&content),
            Err(_) => bytes.extend_from_slice(b"\x01absent"),
        }
        bytes.push(0);
    }
    format!("deps-{:016x}", crate::steps::fnv1a(&bytes))
}

/// The identity of the tree at `dir` with `changes` (a patch of its dependency declarations)
/// applied: [`dependency_id`] and a hash of the changes, so that the base commits a fix changes
/// alike share one environment, and never one with the unchanged tree.
pub fn changed_dependency_id(dir: &Path, entry: &PinEntry, changes: &str) -> String {
    format!(
        "{}-fix-{:08x}",
        dependency_id(dir, entry),
        crate::steps::fnv1a(changes.as_bytes()) as u32
    )
}

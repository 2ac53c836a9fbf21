//! Python environments for repository-level tasks: a task's virtual environment, built once per
//! (repository, version, pins), cached and shared.

use std::path::{Path, PathBuf};
use std::time::Duration;

use traparena_env::{HostCommand, ProcessOutcome};
use traparena_task::Setup;

use crate::error::PyEnvError;
use crate::spec::{EnvTree, PinEntry};
use crate::steps::{BuildOptions, fnv1a, run_step};

/// The default folder virtual environments are cached in. It lies under `/opt`, which every
/// sandbox backend shows read-only, so tasks run without extra sandbox configuration.
pub const DEFAULT_VENV_CACHE: &str = "/opt/traparena/venvs";

/// What a built environment holds beyond its packages (the `.pth` file's rules); part of the
/// folder name, so that environments built by an older harness are never reused.
const ENV_LAYOUT: u32 = 2;

/// The file in a built environment that records what it was built from (and that it is done).
pub const SETUP_STAMP: &str = "traparena-setup.json";

/// The `.pth` file that puts the workspace's source folders first on `sys.path`.
pub const WORKSPACE_PTH: &str = "traparena_workspace.pth";

/// The task field for an environment: its key, and a folder under `cache` named after the key
/// and a hash of the pins (so that changed pins never reuse a stale environment).
pub fn setup_for(key: &str, entry: &PinEntry, cache: &Path) -> Setup {
    setup_for_tree(key, entry, cache, None)
}

/// [`setup_for`] for an environment built from a source tree: when `entry` reads the tree
/// ([`PinEntry::needs_tree`]), the tree's identity and what is read from it are part of the
/// folder's hash (`tree_id` `None` stands for "no tree"); otherwise they are ignored and the
/// folder is [`setup_for`]'s.
pub fn setup_for_tree(key: &str, entry: &PinEntry, cache: &Path, tree_id: Option<&str>) -> Setup {
    let mut fingerprint =
        serde_json::json!([ENV_LAYOUT, entry.python, entry.packages, entry.source_dirs]);
    if entry.needs_tree() {
        fingerprint = serde_json::json!([
            fingerprint,
            tree_id,
            entry.tree_requirements,
            entry.tree_extras,
            entry.tree_edits,
            entry.tree_skip
        ]);
    }
    if let Some(c) = entry.resolved_as_of {
        // Only then: environments resolved from the index as it is keep their folders.
        fingerprint = serde_json::json!([fingerprint, c]);
    }
    // The install step runs per task, in the task's copy of the repository; it does not change
    // the environment, so it is not part of the fingerprint.
    let slug: String = key
        .chars()
        .map(|c| match c {
            '/' => '_',
            '@' => '-',
            c if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' => c,
            _ => '_',
        })
        .collect();
    let name = format!(
        "{slug}-{:08x}",
        fnv1a(fingerprint.to_string().as_bytes()) as u32
    );
    Setup {
        key: key.to_owned(),
        venv: cache.join(name),
        python: entry.python.clone(),
        packages: entry.packages.clone(),
        source_dirs: entry.source_dirs.clone(),
        resolved_as_of: entry.resolved_as_of,
    }
}

/// The interpreter of a task's environment.
pub fn venv_python(setup: &Setup) -> PathBuf {
    setup.venv.join("bin").join("python")
}

/// True when the environment is built and matches `setup`.
pub fn is_built(setup: &Setup) -> bool {
    std::fs::read_to_string(setup.venv.join(SETUP_STAMP))
        .ok()
        .and_then(|t| serde_json::from_str::<Setup>(&t).ok())
        .is_some_and(|s| &s == setup)
}

/// What [`ensure_env`] found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ensured {
    /// The environment was built already, and runs.
    Ready,
    /// The environment was missing and has been built.
    Built,
    /// The environment was built but did not run; it has been built again.
    Rebuilt {
        /// What was wrong with it.
        reason: String,
    },
}

/// Builds the environment `setup` describes unless it is already built and runs: `python -m
/// venv`, one `pip install` of the packages, and a `.pth` file putting the workspace's
/// `source_dirs` first on `sys.path`. Builds of the same environment are serialised by a lock
/// file beside it (across threads and processes), and the stamp that marks it built is written
/// last, so a waiting worker finds the finished environment and uses it. A built environment
/// whose interpreter does not run (its base interpreter gone or broken) is built again, once,
/// and the reason returned ([`Ensured::Rebuilt`]). A failed build leaves nothing behind. Runs
/// on the host, with network access (see `traparena_env::run_host`).
pub fn ensure_env(setup: &Setup, opts: &BuildOptions) -> Result<Ensured, PyEnvError> {
    ensure(setup, None, opts)
}

/// [`ensure_env`] for an environment that also holds dependencies read from a source tree
/// ([`PinEntry::tree_requirements`], [`PinEntry::tree_extras`]); `setup` is
/// [`setup_for_tree`]'s for `entry` and `tree.id`. After the packages, the tree is copied to a
/// scratch folder, `tree_edits` are made there, the first requirements file found is installed
/// and then the tree with its extras, whose own distribution is uninstalled at once: the
/// environment never holds the repository. An entry that reads no tree ignores `tree`; one that
/// does and has none is an error, as is a tree without any of the requirements files.
pub fn ensure_env_tree(
    setup: &Setup,
    entry: &PinEntry,
    tree: Option<&EnvTree>,
    opts: &BuildOptions,
) -> Result<Ensured, PyEnvError> {
    if !entry.needs_tree() {
        return ensure(setup, None, opts);
    }
    match tree {
        Some(t) => ensure(setup, Some((entry, t)), opts),
        None => Err(PyEnvError::NoTree {
            key: setup.key.clone(),
        }),
    }
}

fn ensure(
    setup: &Setup,
    tree: Option<(&PinEntry, &EnvTree)>,
    opts: &BuildOptions,
) -> Result<Ensured, PyEnvError> {
    let fail = |broken: Option<PyEnvError>, e: PyEnvError| PyEnvError::Build {
        key: setup.key.clone(),
        broken: broken.map(Box::new),
        source: Box::new(e),
    };
    if !setup.venv.is_absolute() {
        return Err(PyEnvError::NotAbsolute {
            key: setup.key.clone(),
            venv: setup.venv.clone(),
        });
    }
    if is_built(setup) && env_runs(setup).is_ok() {
        return Ok(Ensured::Ready);
    }
    let parent =
        crate::store::parent_of(&setup.venv, "environment folder").map_err(|e| fail(None, e))?;
    std::fs::create_dir_all(parent).map_err(PyEnvError::io(parent))?;
    readable(parent);
    let _lock = crate::store::lock_entry(&setup.venv)?;
    // Another worker may have built (or rebuilt) it while this one waited.
    let broken = if is_built(setup) {
        match env_runs(setup) {
            Ok(()) => return Ok(Ensured::Ready),
            Err(why) => Some(why),
        }
    } else {
        None
    };
    if let Err(e) = build(setup, tree, opts) {
        let _ = std::fs::remove_dir_all(&setup.venv);
        return Err(fail(broken, e));
    }
    Ok(match broken {
        Some(why) => Ensured::Rebuilt {
            reason: why.to_string(),
        },
        None => Ensured::Built,
    })
}

/// Whether the environment's interpreter starts (with `site`, which runs the workspace's
/// `.pth` file); else why not.
fn env_runs(setup: &Setup) -> Result<(), PyEnvError> {
    let py = venv_python(setup);
    run_step(
        &format!("{} -c 'import sys, site'", py.display()),
        &HostCommand {
            argv: vec![
                py.to_string_lossy().into_owned(),
                "-c".into(),
                "import sys, site".into(),
            ],
            cwd: setup.venv.parent().unwrap_or(Path::new("/")).to_owned(),
            env: Vec::new(),
            timeout: Duration::from_secs(60),
        },
    )
    .map(drop)
}

/// Builds the environment; one resolved as of a date reads the index through a
/// [`DatedIndex`](crate::DatedIndex), and a build that fails after that index could not serve
/// a page says why it could not (a real index without JSON pages or upload times, say).
fn build(
    setup: &Setup,
    tree: Option<(&PinEntry, &EnvTree)>,
    opts: &BuildOptions,
) -> Result<(), PyEnvError> {
    let Some(cutoff) = setup.resolved_as_of else {
        return build_steps(setup, tree, opts);
    };
    // Held until the build ends: pip reads the index as of the cutoff through it.
    let (index, dated) = crate::index::dated_options(cutoff, opts)?;
    let built = build_steps(setup, tree, &dated);
    match (built, index) {
        (Err(e), Some(index)) if !index.problems().is_empty() => Err(PyEnvError::DatedIndex {
            cutoff,
            upstream: index.upstream().to_owned(),
            reason: index.problems().join("; "),
            source: Some(Box::new(e)),
        }),
        (built, _) => built,
    }
}

fn build_steps(
    setup: &Setup,
    tree: Option<(&PinEntry, &EnvTree)>,
    opts: &BuildOptions,
) -> Result<(), PyEnvError> {
    let venv = &setup.venv;
    if std::fs::symlink_metadata(venv).is_ok() {
        std::fs::remove_dir_all(venv).map_err(PyEnvError::io(venv))?;
    }
    let cwd = venv.parent().unwrap_or(Path::new("/")).to_owned();
    let run = |step: &str, argv: Vec<String>| -> Result<ProcessOutcome, PyEnvError> {
        run_step(
            step,
            &HostCommand {
                argv,
                cwd: cwd.clone(),
                env: opts.env.clone(),
                timeout: opts.timeout,
            },
        )
    };
    let py = venv_python(setup).to_string_lossy().into_owned();
    run(
        "creating the virtual environment",
        vec![
            setup.python.clone(),
            "-m".into(),
            "venv".into(),
            venv.to_string_lossy().into_owned(),
        ],
    )?;
    // The pip an old interpreter bundles (18.1 with Python 3.6) does not know today's wheel
    // tags (manylinux2014) and builds such packages from source, which fails for bcrypt and
    // others; the newest pip the interpreter supports does. Best effort: offline, the bundled
    // pip stays.
    let _ = run(
        "upgrading pip",
        [
            &py,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--upgrade",
            "pip",
        ]
        .map(String::from)
        .to_vec(),
    );
    if !setup.packages.is_empty() {
        let mut argv: Vec<String> = [
            &py,
            "-m",
            "pip",
            "install",
            "--no-input",
            "--disable-pip-version-check",
            "--quiet",
        ]
        .map(String::from)
        .to_vec();
        argv.extend(setup.packages.iter().cloned());
        run("pip install", argv)?;
    }
    if let Some((entry, tree)) = tree {
        crate::tree_env::install_tree_deps(&py, entry, tree, opts)?;
    }
    if !setup.packages.is_empty() || tree.is_some() {
        // Bytecode now, on the host: the sandbox cannot write `.pyc` files into the
        // environment, and compiling there at import time can fail under a test suite's
        // `filterwarnings = error` (`SyntaxError: invalid escape sequence` in an old sdist).
        // Files that do not compile (Python 2 leftovers in some sdists) are left alone.
        let _ = run(
            "compiling bytecode",
            vec![
                py.clone(),
                "-m".into(),
                "compileall".into(),
                "-q".into(),
                "-j".into(),
                "0".into(),
                venv.to_string_lossy().into_owned(),
            ],
        );
    }
    let out = run(
        "locating site-packages",
        vec![
            py.clone(),
            "-c".into(),
            "import sysconfig; print(sysconfig.get_paths()['purelib'])".into(),
        ],
    )?;
    write_source_pth(setup, Path::new(out.stdout.text.trim()))?;
    readable(venv);
    let stamp = serde_json::to_string_pretty(setup).expect("a setup serialises") + "\n";
    let p = venv.join(SETUP_STAMP);
    std::fs::write(&p, stamp).map_err(PyEnvError::io(&p))
}

/// Writes into `site` (the environment's site-packages) the `.pth` line that puts the
/// workspace's source folders first on `sys.path`.
fn write_source_pth(setup: &Setup, site: &Path) -> Result<(), PyEnvError> {
    // A flat layout (no source folders) puts the workspace root itself first, so that a
    // child interpreter started in another folder (pylint's tests run `python -m pylint`
    // in a temporary folder) still imports the code under test, as an editable install
    // would let it.
    let dirs: Vec<String> = if setup.source_dirs.is_empty() {
        vec!["\"\"".to_owned()]
    } else {
        setup
            .source_dirs
            .iter()
            .map(|d| format!("{:?}", d.as_str()))
            .collect()
    };
    // One line, run by `site` at every start: the folders are taken relative to the working
    // directory of the first interpreter (the workspace) and passed on to child interpreters
    // through TRAPARENA_SOURCE_DIRS.
    let pth = format!(
        "import os, sys; sys.path[0:0] = [p for p in os.environ.setdefault('TRAPARENA_SOURCE_DIRS', os.pathsep.join(os.path.join(os.getcwd(), d) for d in [{}])).split(os.pathsep) if p]\n",
        dirs.join(", ")
    );
    let p = site.join(WORKSPACE_PTH);
    std::fs::write(&p, pth).map_err(PyEnvError::io(&p))
}

/// Lets every user read (and enter) everything under `root`: the sandbox runs tests as another
/// user.
pub(crate) fn readable(root: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for entry in walkdir::WalkDir::new(root).into_iter().flatten() {
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if meta.file_type().is_symlink() {
            continue;
        }
        let mode = meta.permissions().mode();
        let add = if meta.is_dir() || mode & 0o100 != 0 {
            0o055
        } else {
            0o044
        };
        if mode & add != add {
            let _ =
                std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(mode | add));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_folders_depend_on_key_and_pins() {
        let e: PinEntry = serde_json::from_str(r#"{"packages": ["pytest==7.2.0"]}"#).unwrap();
        let a = setup_for("pallets/flask@2.3", &e, Path::new("/c"));
        assert!(
            a.venv
                .to_string_lossy()
                .starts_with("/c/pallets_flask-2.3-")
        );
        let mut e2 = e.clone();
        e2.packages.push("x".into());
        assert_ne!(
            setup_for("pallets/flask@2.3", &e2, Path::new("/c")).venv,
            a.venv
        );
        assert_eq!(setup_for("pallets/flask@2.3", &e, Path::new("/c")), a);
    }
}

//! The per-task install step of an environment entry ([`PinEntry::install`]): run in a scratch
//! copy of the task's repository, the files it creates become base files of `repo/`. For
//! repositories with compiled extensions ([`PinEntry::build_inputs`]) its output is a cached
//! artefact of the environment, keyed by what it depends on, built once per key.

use std::path::{Path, PathBuf};

use traparena_env::HostCommand;
use traparena_task::Setup;

use crate::error::PyEnvError;
use crate::setup::{readable, venv_python};
use crate::spec::PinEntry;
use crate::steps::{BuildOptions, run_step};

/// Folders and files an install step leaves behind that are build by-products, not files the
/// code imports.
const BUILD_LEFTOVERS: &[&str] = &["build", "dist", ".eggs", "__pycache__", ".tox", ".git"];

/// The list of files of a cache entry, written last.
const MANIFEST: &str = "manifest.json";

/// Runs the install step of `entry` (see [`PinEntry::install`]) in a scratch copy of
/// `repo_dir` with the environment `setup`, and copies the files it created into `repo_dir`
/// (build by-products — `build/`, `*.egg-info`, object files, bytecode — excepted), and those of
/// [`PinEntry::install_replaces`] it changed. Returns those files' paths relative to
/// `repo_dir`, sorted; nothing when `entry` has no install step.
///
/// When `entry` names [`PinEntry::build_inputs`], the step builds extensions: the `.so` files
/// it creates are kept too, and its output is taken from the build cache
/// ([`build_cache_entry`]) when an earlier task built the same key. Builds of one key are
/// serialised by a lock file (across threads and processes) and a cache entry is moved into
/// place by one `rename`, so concurrent tasks build it once and all get its files.
pub fn install_generated(
    entry: &PinEntry,
    setup: &Setup,
    version: &str,
    repo_dir: &Path,
    opts: &BuildOptions,
) -> Result<Vec<String>, PyEnvError> {
    if entry.install.is_empty() {
        return Ok(Vec::new());
    }
    if entry.build_inputs.is_empty() {
        let (scratch, files) = run_install(entry, setup, version, repo_dir, opts, false)?;
        copy_files(&scratch.path().join("repo"), repo_dir, &files)?;
        return Ok(files);
    }
    let cached = build_cache_entry(entry, setup, version, repo_dir)?;
    let parent = crate::store::parent_of(&cached, "build cache entry")?;
    std::fs::create_dir_all(parent).map_err(PyEnvError::io(parent))?;
    let _lock = crate::store::lock_entry(&cached)?;
    if !cached.join(MANIFEST).is_file() {
        let (scratch, files) = run_install(entry, setup, version, repo_dir, opts, true)?;
        let partial = crate::store::partial_dir(&cached)?;
        copy_files(&scratch.path().join("repo"), &partial.join("files"), &files)?;
        let manifest = serde_json::to_string_pretty(&files).expect("a list serialises") + "\n";
        let m = partial.join(MANIFEST);
        std::fs::write(&m, manifest).map_err(PyEnvError::io(&m))?;
        readable(&partial);
        crate::store::install(&partial, &cached)?;
    }
    let m = cached.join(MANIFEST);
    let text = std::fs::read_to_string(&m).map_err(PyEnvError::io(&m))?;
    let files: Vec<String> =
        serde_json::from_str(&text).map_err(|source| PyEnvError::Json { path: m, source })?;
    let files: Vec<String> = files
        .into_iter()
        .filter(|f| replaces(entry, f) || std::fs::symlink_metadata(repo_dir.join(f)).is_err())
        .collect();
    copy_files(&cached.join("files"), repo_dir, &files)?;
    Ok(files)
}

/// The build cache folder of `entry`'s install step for the task tree `repo_dir`:
/// `<environment cache>/builds/<key>-<hash>`, the hash over the environment's folder, the
/// install argv and environment (with `version`), the files it may replace, and the contents of the tree's build-input
/// files ([`PinEntry::build_inputs`]), so that trees with the same extension sources share it.
pub fn build_cache_entry(
    entry: &PinEntry,
    setup: &Setup,
    version: &str,
    repo_dir: &Path,
) -> Result<PathBuf, PyEnvError> {
    let mut h = Hasher::default();
    let env: Vec<(String, String)> = entry
        .install_env
        .iter()
        .map(|(k, v)| (k.clone(), v.replace("{version}", version)))
        .collect();
    let mut key = vec![
        serde_json::json!(setup.venv),
        serde_json::json!(entry.install),
        serde_json::json!(env),
    ];
    // Only when set, so that the keys of entries without it stay what they were.
    if !entry.install_replaces.is_empty() {
        key.push(serde_json::json!(entry.install_replaces));
    }
    h.add(serde_json::Value::Array(key).to_string().as_bytes());
    let walker = walkdir::WalkDir::new(repo_dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git");
    for e in walker {
        let e = e.map_err(|source| PyEnvError::Walk {
            path: repo_dir.to_owned(),
            source,
        })?;
        let name = e.file_name().to_string_lossy();
        let input = entry.build_inputs.iter().any(|p| {
            if p.starts_with('.') {
                name.ends_with(p.as_str())
            } else {
                name == p.as_str()
            }
        });
        if !e.file_type().is_file() || !input {
            continue;
        }
        let rel = under(e.path(), repo_dir);
        let bytes = std::fs::read(e.path()).map_err(PyEnvError::io(e.path()))?;
        h.add(rel.to_string_lossy().as_bytes());
        h.add(&(bytes.len() as u64).to_le_bytes());
        h.add(&bytes);
    }
    let slug: String = setup
        .key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cache = setup.venv.parent().unwrap_or(Path::new("/"));
    Ok(cache.join("builds").join(format!("{slug}-{}", h.hex())))
}

/// A content hash of framed items (each item's length, then its bytes): SHA-256, of which the
/// name keeps 128 bits.
#[derive(Default)]
struct Hasher(sha2::Sha256);

impl Hasher {
    fn add(&mut self, bytes: &[u8]) {
        use sha2::Digest;
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    fn hex(&self) -> String {
        use sha2::Digest;
        let digest = self.0.clone().finalize();
        digest[..16].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// True when `entry`'s install step may replace the tree's file `rel`.
fn replaces(entry: &PinEntry, rel: &str) -> bool {
    entry.install_replaces.iter().any(|r| r.as_str() == rel)
}

/// `path`, found by walking `root`, relative to `root`.
fn under<'a>(path: &'a Path, root: &Path) -> &'a Path {
    path.strip_prefix(root)
        .expect("a walk of a folder yields paths under it")
}

/// Copies `files` (relative paths) from `from` to `to`, creating folders.
fn copy_files(from: &Path, to: &Path, files: &[String]) -> Result<(), PyEnvError> {
    for f in files {
        let dest = to.join(f);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(PyEnvError::io(parent))?;
        }
        std::fs::copy(from.join(f), &dest).map_err(PyEnvError::io(&dest))?;
    }
    Ok(())
}

/// Runs the install step in a scratch copy of `repo_dir`; returns the scratch folder (the copy
/// is its `repo`) and the files the step created there, relative to the copy, sorted.
fn run_install(
    entry: &PinEntry,
    setup: &Setup,
    version: &str,
    repo_dir: &Path,
    opts: &BuildOptions,
    keep_so: bool,
) -> Result<(tempfile::TempDir, Vec<String>), PyEnvError> {
    let scratch = tempfile::Builder::new()
        .prefix("traparena-install-")
        .tempdir()
        .map_err(|source| PyEnvError::Scratch { source })?;
    let copy = scratch.path().join("repo");
    let tmp = scratch.path().join("tmp");
    std::fs::create_dir_all(&tmp).map_err(PyEnvError::io(&tmp))?;
    crate::steps::copy_tree(repo_dir, &copy)?;
    let py = venv_python(setup).to_string_lossy().into_owned();
    let tmp_s = tmp.to_string_lossy().into_owned();
    let argv: Vec<String> = entry
        .install
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 && a == "python" {
                py.clone()
            } else {
                a.replace("{tmp}", &tmp_s)
            }
        })
        .collect();
    let mut env = opts.env.clone();
    env.push((
        "PATH".into(),
        format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            setup.venv.join("bin").display()
        ),
    ));
    env.push((
        "VIRTUAL_ENV".into(),
        setup.venv.to_string_lossy().into_owned(),
    ));
    for (k, v) in &entry.install_env {
        env.push((k.clone(), v.replace("{version}", version)));
    }
    run_step(
        &format!("the install step `{}`", argv.join(" ")),
        &HostCommand {
            argv: argv.clone(),
            cwd: copy.clone(),
            env,
            timeout: opts.timeout,
        },
    )?;
    let mut created = Vec::new();
    let walker = walkdir::WalkDir::new(&copy)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(e.file_type().is_dir()
                && (BUILD_LEFTOVERS.contains(&n.as_ref()) || n.ends_with(".egg-info")))
        });
    for e in walker.flatten() {
        if !e.file_type().is_file() {
            continue;
        }
        let rel = under(e.path(), &copy);
        let n = rel.to_string_lossy();
        // What the copy had from the start is not generated, unless the entry lets the step
        // replace it and it did.
        let original = repo_dir.join(rel);
        let kept = std::fs::symlink_metadata(&original).is_ok()
            && !(replaces(entry, &n)
                && std::fs::read(&original).ok() != std::fs::read(e.path()).ok());
        if kept
            || n.ends_with(".pyc")
            // Object files are intermediates; a compiler probe of the build (matplotlib's
            // `has_flag`) writes them under the copy at the path of its temporary source.
            || n.ends_with(".o")
            || (!keep_so && n.ends_with(".so"))
        {
            continue;
        }
        created.push(n.into_owned());
    }
    Ok((scratch, created))
}

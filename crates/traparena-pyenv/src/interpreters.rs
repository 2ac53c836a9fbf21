//! Python interpreters by version: found on the host and made runnable inside the sandbox.
//!
//! An environment spec may name its interpreter by version (`"python": "3.9"`). The builder
//! then looks for that version in the folders of interpreter managers (pyenv's
//! `~/.pyenv/versions`, uv's `~/.local/share/uv/python`, ...) and on `PATH`, and asks each
//! candidate for its version and installation prefix. Tests run as another user inside the
//! sandbox, so an interpreter under a folder that user cannot enter (pyenv under `/root`, mode
//! 0700) is copied once into a store beside the environments, and the library path its
//! executables carry (`RUNPATH`, pointing into the old prefix) is rewritten to be relative to
//! the copy, so that the copy runs wherever it lies.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use traparena_env::{HostCommand, run_host};

use crate::error::{COPY_STAMP, CopyProblem, ProbeFailure, PyEnvError};
use crate::steps::{failure, output_tail};

/// Where to look for interpreters named by version. The CLI fills it from the user's
/// environment (`HOME`, `PYENV_ROOT`, `UV_PYTHON_INSTALL_DIR`, `PATH`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterpreterSearch {
    /// Folders holding one installation per subfolder (`~/.pyenv/versions/3.9.18`,
    /// `~/.local/share/uv/python/cpython-3.9.21-linux-x86_64-gnu`), searched in order.
    pub managed_dirs: Vec<PathBuf>,
    /// Folders searched for `pythonX.Y` executables (the `PATH`), after `managed_dirs`.
    pub path_dirs: Vec<PathBuf>,
}

/// An interpreter found for a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundPython {
    /// The executable to create environments from (inside the store when copied).
    pub executable: PathBuf,
    /// Its full version (`3.9.18`).
    pub version: String,
    /// Its installation prefix (`sys.base_prefix`).
    pub prefix: PathBuf,
    /// Where it was found, when it was copied into the store.
    pub copied_from: Option<PathBuf>,
    /// Why the copy in the store was made again: the one there did not run (see
    /// [`find_python`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repaired: Option<String>,
}

/// True when `spec` names an interpreter by version (`3.9`) rather than by path.
pub fn is_version(spec: &str) -> bool {
    let mut parts = spec.split('.');
    let ok =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
}

/// What one candidate interpreter says about itself.
#[derive(Debug, Deserialize)]
struct Probe {
    version: String,
    prefix: PathBuf,
    executable: PathBuf,
}

const PROBE: &str = "import json, sys; print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], 'prefix': sys.base_prefix, 'executable': sys.executable}))";

fn probe(exe: &Path) -> Option<Probe> {
    try_probe(exe).ok()
}

/// Asks `exe` its version and prefix; else why it did not answer.
fn try_probe(exe: &Path) -> Result<Probe, ProbeFailure> {
    let out = run_host(&HostCommand {
        argv: vec![
            exe.to_string_lossy().into_owned(),
            "-c".into(),
            PROBE.into(),
        ],
        cwd: PathBuf::from("/"),
        env: Vec::new(),
        timeout: Duration::from_secs(60),
    })
    .map_err(ProbeFailure::Spawn)?;
    if let Some(failure) = failure(&out) {
        return Err(ProbeFailure::Failed {
            failure,
            output_tail: output_tail(&out, 2),
        });
    }
    serde_json::from_str(out.stdout.text.trim()).map_err(|source| ProbeFailure::Unreadable {
        source,
        answer: out.stdout.text.trim().to_owned(),
    })
}

/// The candidates for `major.minor`, in search order.
fn candidates(version: &str, search: &InterpreterSearch) -> Vec<PathBuf> {
    let name = format!("python{version}");
    // The system's interpreters first: every user can run them, so nothing is copied.
    let mut out: Vec<PathBuf> = ["/usr/local/bin", "/usr/bin"]
        .iter()
        .map(|d| Path::new(d).join(&name))
        .collect();
    for dir in &search.managed_dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut installs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                // pyenv: `3.9.18`; uv: `cpython-3.9.21-linux-x86_64-gnu`.
                let n = n.strip_prefix("cpython-").unwrap_or(&n);
                n.strip_prefix(version)
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('-'))
            })
            .collect();
        // The newest patch release first.
        installs.sort_by_key(|p| {
            std::cmp::Reverse(
                p.file_name()
                    .map(|n| patch_number(&n.to_string_lossy(), version))
                    .unwrap_or(0),
            )
        });
        out.extend(installs.into_iter().map(|p| p.join("bin").join(&name)));
    }
    for dir in &search.path_dirs {
        out.push(dir.join(&name));
    }
    out.retain(|p| p.is_file());
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

fn patch_number(name: &str, version: &str) -> u32 {
    let n = name.strip_prefix("cpython-").unwrap_or(name);
    n.strip_prefix(version)
        .and_then(|r| r.strip_prefix('.'))
        .map(|r| {
            r.chars()
                .take_while(|c| c.is_ascii_digit())
                .collect::<String>()
        })
        .and_then(|d| d.parse().ok())
        .unwrap_or(0)
}

/// True when every user can reach and run what lies under `prefix`: every folder from `/` to
/// it can be entered by others, and its `bin` can be listed.
pub fn world_reachable(prefix: &Path) -> bool {
    let mut p = PathBuf::from("/");
    for c in prefix.components().skip(1) {
        p.push(c);
        match std::fs::metadata(&p) {
            Ok(m) if m.permissions().mode() & 0o001 != 0 => {}
            _ => return false,
        }
    }
    std::fs::metadata(prefix.join("bin")).is_ok_and(|m| m.permissions().mode() & 0o005 == 0o005)
}

/// Finds an interpreter of `version` (`major.minor`) and makes sure the sandbox user can run
/// it: one that another user cannot reach is copied into `store/<full version>` (once; later
/// calls reuse the copy).
pub fn find_python(
    version: &str,
    search: &InterpreterSearch,
    store: &Path,
) -> Result<FoundPython, PyEnvError> {
    let mut tried = Vec::new();
    for cand in candidates(version, search) {
        let Some(p) = probe(&cand) else {
            tried.push(format!("{} (does not run)", cand.display()));
            continue;
        };
        if crate::spec::major_minor(&p.version).as_deref() != Some(version) {
            tried.push(format!("{} (is {})", cand.display(), p.version));
            continue;
        }
        if world_reachable(&p.prefix) {
            return Ok(FoundPython {
                executable: p.executable,
                version: p.version,
                prefix: p.prefix,
                copied_from: None,
                repaired: None,
            });
        }
        let copy = store.join(&p.version);
        let exe = copy.join("bin").join(format!("python{version}"));
        let (q, repaired) =
            ensure_copy(&p.prefix, &copy, &exe).map_err(|e| PyEnvError::Interpreter {
                version: version.to_owned(),
                source: Box::new(e),
            })?;
        if q.prefix != copy {
            return Err(PyEnvError::NotRelocatable {
                version: version.to_owned(),
                copy,
                runs_from: q.prefix,
            });
        }
        return Ok(FoundPython {
            executable: exe,
            version: q.version,
            prefix: copy,
            copied_from: Some(p.prefix),
            repaired,
        });
    }
    Err(PyEnvError::NoInterpreter {
        wanted: version.to_owned(),
        searched: tried,
    })
}

/// Why the copy at `copy` cannot be used: there is none, it is unfinished (no stamp), or `exe`
/// does not answer the version probe.
fn check_copy(copy: &Path, exe: &Path) -> Result<Probe, CopyProblem> {
    if std::fs::symlink_metadata(copy).is_err() {
        return Err(CopyProblem::Missing);
    }
    if !copy.join(COPY_STAMP).is_file() {
        return Err(CopyProblem::Unfinished);
    }
    try_probe(exe).map_err(CopyProblem::DoesNotRun)
}

/// Makes sure `copy` holds a working copy of the installation `from`, copying it when it is
/// missing and copying it again, once, when the copy there does not run. The copy is made
/// under the entry's lock (see [`crate::store`]), so concurrent first uses, by threads or
/// processes, copy once and all get the same copy. Returns what the copy says of itself, and
/// why it was made again, if it was.
fn ensure_copy(
    from: &Path,
    copy: &Path,
    exe: &Path,
) -> Result<(Probe, Option<String>), PyEnvError> {
    if let Ok(q) = check_copy(copy, exe) {
        return Ok((q, None));
    }
    let store = crate::store::parent_of(copy, "store")?;
    std::fs::create_dir_all(store).map_err(PyEnvError::io(store))?;
    let lock = crate::store::lock_entry(copy)?;
    // Another worker may have made (or repaired) the copy while this one waited.
    let before = match check_copy(copy, exe) {
        Ok(q) => return Ok((q, None)),
        Err(CopyProblem::Missing) => None,
        Err(why) => Some(why),
    };
    copy_install(from, copy)?;
    match check_copy(copy, exe) {
        Ok(q) => {
            let what = format!("the copy of {} in {}", from.display(), copy.display());
            Ok((q, before.map(|why| format!("{what} {why}; copied again"))))
        }
        Err(problem) => {
            // A copy that does not run is not kept: the next import tries again.
            let _ = std::fs::remove_dir_all(copy);
            drop(lock);
            Err(PyEnvError::BrokenCopy {
                from: from.to_owned(),
                copy: copy.to_owned(),
                before: before.map(Box::new),
                problem: Box::new(problem),
            })
        }
    }
}

/// Copies an installation prefix to `to` and rewrites the library paths of its executables and
/// libraries to point into the copy. The copy is made in a folder of its own beside `to` and
/// moved into place whole (replacing what was there); a failed copy leaves nothing behind.
/// The caller holds the entry's lock.
fn copy_install(from: &Path, to: &Path) -> Result<(), PyEnvError> {
    let tmp = crate::store::partial_dir(to)?;
    let result = (|| {
        crate::steps::copy_tree(from, &tmp)?;
        let old_lib = format!("{}/lib", from.display());
        for entry in walkdir::WalkDir::new(&tmp).into_iter().flatten() {
            if !entry.file_type().is_file() {
                continue;
            }
            let p = entry.path();
            let in_bin = p.parent() == Some(&tmp.join("bin"));
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            if !(in_bin || name.contains(".so")) {
                continue;
            }
            let rel = relative_lib(p.parent().unwrap_or(&tmp), &tmp);
            rewrite_runpath(p, &old_lib, &rel)?;
        }
        let stamp = tmp.join(COPY_STAMP);
        std::fs::write(&stamp, from.to_string_lossy().as_bytes())
            .map_err(PyEnvError::io(&stamp))?;
        crate::store::install(&tmp, to)
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

/// `$ORIGIN/…/lib` from the folder `dir` to `prefix/lib`.
fn relative_lib(dir: &Path, prefix: &Path) -> String {
    let depth = dir
        .strip_prefix(prefix)
        .map(|r| r.components().count())
        .unwrap_or(0);
    let mut s = String::from("$ORIGIN");
    for _ in 0..depth {
        s.push_str("/..");
    }
    s.push_str("/lib");
    s
}

/// Rewrites the NUL-terminated string `old` (a `RUNPATH`/`RPATH` entry of an ELF file) to
/// `new` in place, padding with NULs. Files without `old` are left alone; a `new` longer than
/// `old` cannot be written in place and is an error.
pub fn rewrite_runpath(file: &Path, old: &str, new: &str) -> Result<bool, PyEnvError> {
    let mut bytes = std::fs::read(file).map_err(PyEnvError::io(file))?;
    if !bytes.starts_with(b"\x7fELF") {
        return Ok(false);
    }
    let needle: Vec<u8> = [b"\0", old.as_bytes(), b"\0"].concat();
    let mut changed = false;
    let mut at = 0;
    while let Some(i) = find(&bytes[at..], &needle) {
        let start = at + i + 1;
        if new.len() > old.len() {
            return Err(PyEnvError::RunpathTooLong {
                file: file.to_owned(),
                old: old.to_owned(),
            });
        }
        bytes[start..start + new.len()].copy_from_slice(new.as_bytes());
        for b in &mut bytes[start + new.len()..start + old.len()] {
            *b = 0;
        }
        changed = true;
        at = start + old.len();
    }
    if changed {
        let mode = std::fs::metadata(file)
            .map(|m| m.permissions().mode())
            .unwrap_or(0o755);
        std::fs::write(file, &bytes).map_err(PyEnvError::io(file))?;
        let _ = std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode));
    }
    Ok(changed)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Resolves an environment's `python` setting: a path is taken as it is; a version is found
/// with [`find_python`].
pub fn resolve(
    python: &str,
    search: &InterpreterSearch,
    store: &Path,
) -> Result<PathBuf, PyEnvError> {
    if is_version(python) {
        find_python(python, search, store).map(|f| f.executable)
    } else {
        Ok(PathBuf::from(python))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn versions_and_paths_are_told_apart() {
        assert!(is_version("3.9"));
        assert!(is_version("3.11"));
        assert!(!is_version("3"));
        assert!(!is_version("3.9.1"));
        assert!(!is_version("/usr/bin/python3"));
        assert!(!is_version("python3.9"));
    }

    #[test]
    fn library_paths_are_relative_to_the_copy() {
        let p = Path::new("/s/3.9.18");
        assert_eq!(relative_lib(&p.join("bin"), p), "$ORIGIN/../lib");
        assert_eq!(relative_lib(&p.join("lib"), p), "$ORIGIN/../lib");
        assert_eq!(
            relative_lib(&p.join("lib/python3.9/lib-dynload"), p),
            "$ORIGIN/../../../lib"
        );
    }

    /// A stand-in installation: `bin/pythonX.Y` answers the probe with its own location, as a
    /// relocatable CPython does.
    fn fake_install(root: &Path, full: &str, mm: &str) {
        let bin = root.join(full).join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join(format!("python{mm}"));
        std::fs::write(
            &exe,
            format!("#!/bin/sh\nd=$(cd \"$(dirname \"$0\")/..\" && pwd)\necho \"{{\\\"version\\\": \\\"{full}\\\", \\\"prefix\\\": \\\"$d\\\", \\\"executable\\\": \\\"$d/bin/python{mm}\\\"}}\"\n"),
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn an_unreachable_interpreter_is_found_by_version_and_copied_once() {
        let tmp = tempfile::tempdir().unwrap();
        let managed = tmp.path().join("pyenv-versions");
        fake_install(&managed, "3.97.1", "3.97");
        fake_install(&managed, "3.97.4", "3.97");
        fake_install(&managed, "3.96.0", "3.96");
        // As pyenv under /root: other users cannot enter the folder.
        std::fs::set_permissions(&managed, std::fs::Permissions::from_mode(0o700)).unwrap();
        let search = InterpreterSearch {
            managed_dirs: vec![managed.clone()],
            path_dirs: Vec::new(),
        };
        let store = tmp.path().join("store");
        let found = find_python("3.97", &search, &store).unwrap();
        // The newest patch release, copied into the store, runs from the copy.
        assert_eq!(found.version, "3.97.4");
        assert_eq!(
            found.copied_from.as_deref(),
            Some(managed.join("3.97.4").as_path())
        );
        assert_eq!(found.prefix, store.join("3.97.4"));
        assert_eq!(found.executable, store.join("3.97.4/bin/python3.97"));
        assert!(world_reachable(&found.prefix) || !world_reachable(tmp.path()));
        // Found again: the copy is reused, not made twice.
        let stamp = store.join("3.97.4").join(COPY_STAMP);
        let before = std::fs::metadata(&stamp).unwrap().modified().unwrap();
        let again = find_python("3.97", &search, &store).unwrap();
        assert_eq!(again, found);
        assert_eq!(
            std::fs::metadata(&stamp).unwrap().modified().unwrap(),
            before
        );
        // A version nobody has is an error that names it and says how to get it.
        let err = find_python("3.95", &search, &store).unwrap_err();
        assert!(matches!(&err, PyEnvError::NoInterpreter { wanted, .. } if wanted == "3.95"));
        let err = err.to_string();
        assert!(
            err.contains("no Python 3.95 found") && err.contains("uv python install 3.95"),
            "{err}"
        );
        // A path is taken as it is.
        assert_eq!(
            resolve("/usr/bin/python3", &search, &store).unwrap(),
            Path::new("/usr/bin/python3")
        );
    }

    #[test]
    fn runpaths_are_rewritten_in_place() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("python");
        let mut bytes = b"\x7fELF....\0/root/.pyenv/versions/3.9.18/lib\0libc.so.6\0".to_vec();
        bytes.extend_from_slice(b"tail");
        std::fs::write(&f, &bytes).unwrap();
        assert!(rewrite_runpath(&f, "/root/.pyenv/versions/3.9.18/lib", "$ORIGIN/../lib").unwrap());
        let after = std::fs::read(&f).unwrap();
        assert_eq!(after.len(), bytes.len());
        let text = String::from_utf8_lossy(&after);
        assert!(text.contains("\0$ORIGIN/../lib\0"), "{text:?}");
        assert!(text.contains("\0libc.so.6\0tail"));
        assert!(!text.contains("/root/"));
        // Not an ELF file, or no such path: untouched.
        std::fs::write(&f, b"#!/bin/sh\n/root/.pyenv/versions/3.9.18/lib\n").unwrap();
        assert!(
            !rewrite_runpath(&f, "/root/.pyenv/versions/3.9.18/lib", "$ORIGIN/../lib").unwrap()
        );
        // Longer than the original: refused, never a corrupt file.
        std::fs::write(&f, b"\x7fELF\0/a/lib\0").unwrap();
        assert!(rewrite_runpath(&f, "/a/lib", "$ORIGIN/../lib").is_err());
        assert_eq!(std::fs::read(&f).unwrap(), b"\x7fELF\0/a/lib\0");
    }
}

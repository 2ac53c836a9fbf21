//! The shared on-disk caches an import writes (the interpreter store, the environment cache):
//! one exclusive lock per entry, held while the entry is checked and built, and a temporary
//! name unique per attempt moved into place by one `rename`. Several workers of one import and
//! several `traparena` processes at once (the shards of an experiment on one machine) then
//! build each entry once, and a reader never sees half an entry.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::PyEnvError;

/// An exclusive lock on one cache entry, released when dropped (or when the process dies).
#[derive(Debug)]
pub(crate) struct EntryLock {
    _file: File,
}

/// The lock file of `entry`: `<entry>.lock`, beside it.
pub(crate) fn lock_path(entry: &Path) -> PathBuf {
    PathBuf::from(format!("{}.lock", entry.display()))
}

/// Waits for the exclusive lock of `entry` (an `flock` on its lock file, so it excludes other
/// threads of this process as well as other processes). The entry's folder must exist.
pub(crate) fn lock_entry(entry: &Path) -> Result<EntryLock, PyEnvError> {
    let path = lock_path(entry);
    let lock = || {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        file.lock()?;
        Ok(EntryLock { _file: file })
    };
    lock().map_err(PyEnvError::io(&path))
}

/// The folder `entry` lies in (`what` names the entry in the error when there is none).
pub(crate) fn parent_of<'a>(entry: &'a Path, what: &'static str) -> Result<&'a Path, PyEnvError> {
    entry.parent().ok_or(PyEnvError::NoParent { what })
}

/// The prefix of the temporary folders beside `entry`: `partial` for attempts at building it,
/// `old` for a replaced entry on its way out.
fn temp_prefix(entry: &Path, kind: &str) -> String {
    format!(
        ".{}.{kind}-",
        entry.file_name().unwrap_or_default().to_string_lossy()
    )
}

/// A new, empty folder beside `entry` whose name starts with `prefix` (created exclusively).
fn unique_dir(entry: &Path, prefix: &str) -> Result<PathBuf, PyEnvError> {
    let parent = parent_of(entry, "cache entry")?;
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(parent)
        .map_err(PyEnvError::io(parent))?;
    Ok(dir.keep())
}

/// A new, empty folder beside `entry`, unique to this attempt (created exclusively), for
/// building the entry before [`install`] moves it into place. Call it with the entry's lock
/// held: leftovers of earlier attempts (a process killed while building) are removed first,
/// since no other attempt can be under way.
pub(crate) fn partial_dir(entry: &Path) -> Result<PathBuf, PyEnvError> {
    let parent = parent_of(entry, "cache entry")?;
    let leftovers = [temp_prefix(entry, "partial"), temp_prefix(entry, "old")];
    if let Ok(items) = std::fs::read_dir(parent) {
        for item in items.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            if leftovers.iter().any(|p| name.starts_with(p)) {
                let _ = std::fs::remove_dir_all(item.path());
            }
        }
    }
    unique_dir(entry, &leftovers[0])
}

/// Moves the finished folder `built` to `entry` with one `rename`; an entry already there (a
/// broken one being replaced) is first moved aside under a name of its own and removed
/// afterwards, so that `entry` is at every moment absent, the old entry or the new one, never a
/// mixture. Call it with the entry's lock held.
pub(crate) fn install(built: &Path, entry: &Path) -> Result<(), PyEnvError> {
    let err = |source| PyEnvError::Io {
        path: entry.to_owned(),
        source,
    };
    let old = if std::fs::symlink_metadata(entry).is_ok() {
        let aside = unique_dir(entry, &temp_prefix(entry, "old"))?;
        std::fs::remove_dir(&aside).map_err(err)?;
        std::fs::rename(entry, &aside).map_err(err)?;
        Some(aside)
    } else {
        None
    };
    std::fs::rename(built, entry).map_err(err)?;
    if let Some(old) = old {
        let _ = std::fs::remove_dir_all(old);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_folders_are_unique_and_leftovers_are_swept() {
        let d = tempfile::tempdir().unwrap();
        let entry = d.path().join("3.9.18");
        let a = partial_dir(&entry).unwrap();
        std::fs::write(a.join("f"), "a").unwrap();
        let b = partial_dir(&entry).unwrap();
        assert_ne!(a, b);
        // The first attempt's folder was a leftover by then: removed.
        assert!(!a.exists());
        assert!(b.is_dir());
        // Installed over a broken entry: the new one replaces it whole.
        std::fs::create_dir_all(entry.join("include")).unwrap();
        std::fs::write(b.join("stamp"), "new").unwrap();
        install(&b, &entry).unwrap();
        assert!(entry.join("stamp").is_file());
        assert!(!entry.join("include").exists());
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["3.9.18"]);
    }
}

//! Leases on sandbox user ids, shared by every harness process on the machine.
//!
//! A lease is an exclusive `flock` on `$TMPDIR/traparena-uids/<uid>.lock`. Ids are tried from
//! the lowest up, so the ids in use, and their files, stay as few as the leases held at once.
//! The holder removes its file before it unlocks it (on drop). Another process may have
//! opened that file just before and get its lock just after: so whoever gets a lock checks
//! that the path still names the file it locked (the same inode), and else tries again. The
//! first lease of a process also removes the files of leases whose process died without
//! dropping them, by the same protocol (lock, remove, unlock). So the folder holds one file
//! per lease held and none for long otherwise.

use parking_lot::Mutex;
use std::collections::HashSet;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{EnvError, io};

/// How many user ids from `SandboxConfig::uid_base` may be leased.
pub(crate) const USER_RANGE: u32 = 10_000;
const LOCK_DIR: &str = "traparena-uids";
/// How often a lock whose file was replaced under it is tried again before the id is skipped.
const RELOCK_TRIES: usize = 4;

/// An exclusive lease on a sandbox user id (see
/// [`Sandbox::allocate_user`](crate::Sandbox::allocate_user)). Dropping it ends the lease and
/// removes its lock file.
#[derive(Debug)]
pub struct UserLease {
    uid: u32,
    path: PathBuf,
    _lock: File,
}

impl UserLease {
    pub(crate) fn acquire(base: u32) -> Result<UserLease, EnvError> {
        UserLease::acquire_in(&std::env::temp_dir().join(LOCK_DIR), base)
    }

    fn acquire_in(dir: &Path, base: u32) -> Result<UserLease, EnvError> {
        if std::fs::symlink_metadata(dir).is_err() {
            let _ = std::fs::DirBuilder::new().mode(0o755).create(dir);
        }
        check_folder(dir)?;
        sweep_once(dir);
        for i in 0..USER_RANGE {
            let uid = base + i;
            let path = dir.join(format!("{uid}.lock"));
            if let Some(lock) = try_lock(&path)? {
                return Ok(UserLease {
                    uid,
                    path,
                    _lock: lock,
                });
            }
        }
        Err(EnvError::BackendUnavailable {
            backend: "sandbox users".into(),
            reason: format!("all {USER_RANGE} sandbox user ids from {base} are in use"),
        })
    }

    /// The leased user id.
    pub fn uid(&self) -> u32 {
        self.uid
    }
}

impl Drop for UserLease {
    fn drop(&mut self) {
        // Removed while still locked; the lock goes when `_lock` closes, right after.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The lock of `path` when it is free: `None` when another lease holds it.
fn try_lock(path: &Path) -> Result<Option<File>, EnvError> {
    for _ in 0..RELOCK_TRIES {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(io("open lock", path))?;
        #[allow(unsafe_code)]
        // SAFETY: flock on a descriptor we own.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Ok(None);
            }
            return Err(EnvError::Io {
                op: "lock",
                path: path.to_owned(),
                source: e,
            });
        }
        if still_at(path, &file) {
            return Ok(Some(file));
        }
        // The holder removed the file after we opened it: the lock is on nothing.
    }
    Ok(None)
}

/// True when `path` still names the file `file` has open.
fn still_at(path: &Path, file: &File) -> bool {
    match (std::fs::symlink_metadata(path), file.metadata()) {
        (Ok(at_path), Ok(held)) => at_path.dev() == held.dev() && at_path.ino() == held.ino(),
        _ => false,
    }
}

/// Removes, once per folder and process, the lock files nobody holds (left by processes that
/// died holding a lease, or by earlier versions, which never removed them).
fn sweep_once(dir: &Path) {
    static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    {
        let mut swept = SWEPT.lock();
        if !swept
            .get_or_insert_with(HashSet::new)
            .insert(dir.to_owned())
        {
            return;
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "lock")
            && let Ok(Some(lock)) = try_lock(&path)
        {
            let _ = std::fs::remove_file(&path);
            drop(lock);
        }
    }
}

/// The lock folder must be the harness user's own and writable by nobody else: whoever may
/// write there could take every id, or plant links. A folder of its own that a loose umask
/// made group- or world-writable is tightened.
fn check_folder(dir: &Path) -> Result<(), EnvError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(dir).map_err(io("stat", dir))?;
    #[allow(unsafe_code)]
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    if meta.is_dir() && meta.uid() == euid {
        if meta.mode() & 0o022 != 0 {
            let mode = meta.mode() & 0o7777 & !0o022;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
                .map_err(io("chmod", dir))?;
        }
        return Ok(());
    }
    Err(EnvError::Io {
        op: "check lock folder",
        path: dir.to_owned(),
        source: std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "must be a folder of uid {euid} (it is {}, owner uid {}); remove it",
                if meta.is_dir() {
                    "a folder"
                } else if meta.file_type().is_symlink() {
                    "a link"
                } else {
                    "a file"
                },
                meta.uid()
            ),
        ),
    })
}

/// True when the harness runs as root (and so gives each workspace a user id of its own).
pub(crate) fn is_root() -> bool {
    #[allow(unsafe_code)]
    // SAFETY: geteuid has no preconditions.
    unsafe {
        libc::geteuid() == 0
    }
}

pub(crate) fn current_uid() -> u32 {
    #[allow(unsafe_code)]
    // SAFETY: getuid has no preconditions.
    unsafe {
        libc::getuid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn folder() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            d.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        d
    }

    #[test]
    fn many_leases_leave_only_the_files_of_those_held() {
        let d = folder();
        let mut held: Vec<UserLease> = Vec::new();
        let mut seen = HashSet::new();
        for i in 0..500 {
            held.push(UserLease::acquire_in(d.path(), 1000).unwrap());
            if held.len() > 3 {
                held.remove(i % 4);
            }
            let uids: HashSet<u32> = held.iter().map(|l| l.uid()).collect();
            assert_eq!(uids.len(), held.len(), "two leases share an id");
            seen.extend(uids);
            assert!(
                lock_files(d.path()).len() <= 4,
                "{:?}",
                lock_files(d.path())
            );
        }
        // The lowest free ids are reused, so few ids ever served.
        assert!(seen.iter().all(|&u| u < 1004), "{seen:?}");
        drop(held);
        assert_eq!(lock_files(d.path()), Vec::<String>::new());
    }

    #[test]
    fn a_lock_on_a_removed_file_is_not_a_lease() {
        let d = folder();
        let first = UserLease::acquire_in(d.path(), 1000).unwrap();
        let path = d.path().join("1000.lock");
        // Another process opened the file just before the holder dropped its lease...
        let stale = File::open(&path).unwrap();
        drop(first);
        // ... and gets the lock just after: on a file no longer at the path.
        #[allow(unsafe_code)]
        // SAFETY: flock on a descriptor we own.
        let rc = unsafe { libc::flock(stale.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(rc, 0);
        assert!(!still_at(&path, &stale));
        // A new lease of the same id is a new file, which the stale lock does not block.
        let again = UserLease::acquire_in(d.path(), 1000).unwrap();
        assert_eq!(again.uid(), 1000);
        let now = File::open(&path).unwrap();
        assert!(still_at(&path, &now));
    }

    #[test]
    fn files_of_dead_leases_are_swept_and_held_ones_kept() {
        let d = folder();
        for uid in 2000..2050 {
            std::fs::write(d.path().join(format!("{uid}.lock")), "").unwrap();
        }
        // A lease of another process, by the old scheme: locked, never removed.
        let held = File::options()
            .write(true)
            .open(d.path().join("2007.lock"))
            .unwrap();
        #[allow(unsafe_code)]
        // SAFETY: flock on a descriptor we own.
        let rc = unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(rc, 0);
        let lease = UserLease::acquire_in(d.path(), 2000).unwrap();
        assert_eq!(lease.uid(), 2000);
        assert_eq!(lock_files(d.path()), ["2000.lock", "2007.lock"]);
        // Leases skip the held id.
        let more: Vec<UserLease> = (0..8)
            .map(|_| UserLease::acquire_in(d.path(), 2000).unwrap())
            .collect();
        let uids: Vec<u32> = more.iter().map(|l| l.uid()).collect();
        assert_eq!(uids, [2001, 2002, 2003, 2004, 2005, 2006, 2008, 2009]);
    }

    #[test]
    fn a_lock_folder_of_another_user_is_refused_and_a_loose_one_of_ours_tightened() {
        let d = folder();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path(), &link).unwrap();
        let e = UserLease::acquire_in(&link, 3000).unwrap_err();
        assert!(e.to_string().contains("(it is a link, owner uid"), "{e}");

        let dir = d.path().join("uids");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .unwrap();
        drop(UserLease::acquire_in(&dir, 3000).unwrap());
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o755);
        assert!(lock_files(&dir).is_empty());

        #[allow(unsafe_code)]
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::fs::chown(&dir, Some(4242), Some(4242)).unwrap();
            let e = UserLease::acquire_in(&dir, 3000).unwrap_err();
            assert!(
                e.to_string().contains("(it is a folder, owner uid 4242)"),
                "{e}"
            );
            assert!(lock_files(&dir).is_empty());
        }
    }
}

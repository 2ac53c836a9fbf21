//! The check before a launch: can the program a run names start in the sandbox at all?
//!
//! It looks the program up as the sandbox will (the sandbox's PATH, bubblewrap's `/workspace`,
//! `/tmp` and `/harness`), then checks with the file modes what the kernel would: every folder
//! on the way may be entered by the sandbox user, the file is a regular file it may execute
//! (and read, for a script), and it lies in what the sandbox shows. All of that is
//! deterministic, so it is reported at once, naming the path, instead of surfacing as a
//! launcher's message in the output of a run that seems to fail.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use crate::base::{Backend, Mounts, PATH_ENV, SANDBOX_HARNESS, SANDBOX_WORKSPACE, SYSTEM_RO};

/// Whose permissions count.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Who {
    /// A sandbox user: its group id is its user id, and it has no supplementary groups.
    User(u32),
    /// The harness's own user (no sandbox user was leased).
    Harness,
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Who::User(uid) => write!(f, "the sandbox user (uid {uid})"),
            Who::Harness => f.write_str("the harness's user"),
        }
    }
}

const READ: u32 = 4;
const EXEC: u32 = 1;

/// `Ok` when `program` (a run's `argv[0]`) can be started under `backend` on `m`, or when it
/// lies in the workspace or the scratch folder (the tested code's business); else what is
/// wrong, naming the path. `path_var` is the run's `PATH`, when it sets one.
pub(crate) fn check(
    backend: Backend,
    m: &Mounts,
    read_only: &[PathBuf],
    program: &str,
    path_var: Option<&str>,
) -> Result<(), Unstartable> {
    let who = m.user.map_or(Who::Harness, Who::User);
    let candidates: Vec<PathBuf> = if program.contains('/') {
        vec![host_path(backend, m, read_only, Path::new(program))]
    } else {
        let path_var = path_var.unwrap_or(PATH_ENV);
        let found: Vec<PathBuf> = path_var
            .split(':')
            .filter(|d| !d.is_empty())
            .map(|d| host_path(backend, m, read_only, &Path::new(d).join(program)))
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .collect();
        if found.is_empty() {
            return Err(Unstartable::NotOnPath {
                program: program.to_owned(),
                path_var: path_var.to_owned(),
            });
        }
        found
    };
    if candidates.iter().any(|c| inside(c, m)) {
        return Ok(());
    }
    // Like execvp: the first candidate that can run wins; else the first one's problem.
    let mut first = None;
    for c in &candidates {
        match check_file(backend, m, read_only, who, c) {
            Ok(()) => return Ok(()),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    Err(first.unwrap_or(Unstartable::NotOnPath {
        program: program.to_owned(),
        path_var: path_var.unwrap_or(PATH_ENV).to_owned(),
    }))
}

/// The host path of a program path as the sandbox reads it.
fn host_path(backend: Backend, m: &Mounts, read_only: &[PathBuf], p: &Path) -> PathBuf {
    if p.is_relative() {
        return m.workspace.join(p);
    }
    // bubblewrap mounts the read-only paths last, over its /tmp.
    if backend == Backend::Bubblewrap && !read_only.iter().any(|r| p.starts_with(r)) {
        for (shown, host) in [
            (SANDBOX_WORKSPACE, &m.workspace),
            ("/tmp", &m.scratch),
            (SANDBOX_HARNESS, &m.harness),
        ] {
            if let Ok(rest) = p.strip_prefix(shown) {
                return host.join(rest);
            }
        }
    }
    p.to_owned()
}

/// True when `p` is in the workspace or the scratch folder, as written or once resolved.
fn inside(p: &Path, m: &Mounts) -> bool {
    let writable = [&m.workspace, &m.scratch];
    let lexical = !p.components().any(|c| c == Component::ParentDir)
        && writable.iter().any(|w| p.starts_with(w));
    lexical
        || std::fs::canonicalize(p).is_ok_and(|c| {
            writable
                .iter()
                .filter_map(|w| std::fs::canonicalize(w).ok())
                .any(|w| c.starts_with(w))
        })
}

fn check_file(
    backend: Backend,
    m: &Mounts,
    read_only: &[PathBuf],
    who: Who,
    path: &Path,
) -> Result<(), Unstartable> {
    let target = match std::fs::canonicalize(path) {
        Ok(t) => t,
        Err(error) => {
            return Err(match std::fs::read_link(path) {
                Ok(link) => Unstartable::DanglingLink {
                    path: path.to_owned(),
                    link,
                    error,
                },
                Err(_) => Unstartable::File {
                    file: Shown::new(path, path),
                    why: FileProblem::Unreadable(error),
                },
            });
        }
    };
    for p in [path, target.as_path()] {
        enterable(who, p, path)?;
    }
    let file = Shown::new(path, &target);
    let fail = |why| {
        Err(Unstartable::File {
            file: Shown::new(path, &target),
            why,
        })
    };
    let meta = match std::fs::metadata(&target) {
        Ok(meta) => meta,
        Err(e) => return fail(FileProblem::Unreadable(e)),
    };
    if !meta.is_file() {
        return fail(FileProblem::NotAFile);
    }
    let mode = Mode::of(&meta);
    if !may(who, &target, &meta, EXEC) {
        return fail(FileProblem::NotExecutable { who, mode });
    }
    if is_script(&target) && !may(who, &target, &meta, READ) {
        return fail(FileProblem::UnreadableScript { who, mode });
    }
    if backend != Backend::None {
        let mut roots: Vec<PathBuf> = SYSTEM_RO
            .iter()
            .map(PathBuf::from)
            .chain(read_only.iter().cloned())
            .chain([m.harness.clone()])
            .collect();
        let resolved: Vec<PathBuf> = roots
            .iter()
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .collect();
        roots.extend(resolved);
        for p in [path, target.as_path()] {
            if !roots.iter().any(|r| p.starts_with(r)) {
                return Err(Unstartable::File {
                    file,
                    why: FileProblem::NotVisible(backend),
                });
            }
        }
    }
    Ok(())
}

/// Every folder above `p` may be entered by `who`.
fn enterable(who: Who, p: &Path, program: &Path) -> Result<(), Unstartable> {
    let mut folders: Vec<&Path> = p.ancestors().skip(1).collect();
    folders.reverse();
    for dir in folders {
        let Ok(meta) = std::fs::metadata(dir) else {
            continue;
        };
        if !may(who, dir, &meta, EXEC) {
            return Err(Unstartable::CannotEnter {
                who,
                dir: dir.to_owned(),
                mode: Mode::of(&meta),
                program: program.to_owned(),
            });
        }
    }
    Ok(())
}

/// Whether `who` has the permission `bit` (read 4, execute or search 1) on `path`.
fn may(who: Who, path: &Path, meta: &std::fs::Metadata, bit: u32) -> bool {
    match who {
        Who::User(uid) => {
            // Only the first matching class counts, as in the kernel.
            let shift = if meta.uid() == uid {
                6
            } else if meta.gid() == uid {
                3
            } else {
                0
            };
            (meta.mode() >> shift) & bit != 0
        }
        Who::Harness => {
            let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
                return false;
            };
            #[allow(unsafe_code)]
            // SAFETY: a valid NUL-terminated path; faccessat only reads it.
            let rc = unsafe {
                libc::faccessat(libc::AT_FDCWD, c.as_ptr(), bit as i32, libc::AT_EACCESS)
            };
            rc == 0
        }
    }
}

/// True when the file starts with `#!`.
fn is_script(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"#!")
}

/// Why a program cannot start in the sandbox; its text is [`crate::EnvError::Start`]'s reason.
#[derive(Debug)]
pub(crate) enum Unstartable {
    /// A bare name that no folder of the sandbox's `PATH` holds.
    NotOnPath {
        /// The name.
        program: String,
        /// The `PATH` searched.
        path_var: String,
    },
    /// A symbolic link whose target does not exist.
    DanglingLink {
        /// The link.
        path: PathBuf,
        /// Where it points.
        link: PathBuf,
        /// The error resolving it.
        error: std::io::Error,
    },
    /// A folder on the way to the program that the sandbox user may not enter.
    CannotEnter {
        /// Whose permissions count.
        who: Who,
        /// The folder.
        dir: PathBuf,
        /// Its mode and owner.
        mode: Mode,
        /// The program on whose way it lies.
        program: PathBuf,
    },
    /// The program's file itself is at fault.
    File {
        /// The file as named, and where it resolved to.
        file: Shown,
        /// What is wrong with it.
        why: FileProblem,
    },
}

/// What is wrong with a program's file.
#[derive(Debug)]
pub(crate) enum FileProblem {
    /// It cannot be read (its metadata, or resolving it).
    Unreadable(std::io::Error),
    /// Not a regular file.
    NotAFile,
    /// Its mode lets `who` not execute it.
    NotExecutable { who: Who, mode: Mode },
    /// A script `who` may execute but not read.
    UnreadableScript { who: Who, mode: Mode },
    /// It lies outside what the backend shows.
    NotVisible(Backend),
}

/// A program's path as named, with ` (resolved to …)` when a link led elsewhere.
#[derive(Debug)]
pub(crate) struct Shown {
    named: PathBuf,
    resolved: Option<PathBuf>,
}

impl Shown {
    fn new(named: &Path, resolved: &Path) -> Shown {
        Shown {
            named: named.to_owned(),
            resolved: (named != resolved).then(|| resolved.to_owned()),
        }
    }
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.named.display())?;
        match &self.resolved {
            Some(r) => write!(f, " (resolved to {})", r.display()),
            None => Ok(()),
        }
    }
}

/// A file's permission bits and owner, as the messages show them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mode {
    bits: u32,
    uid: u32,
}

impl Mode {
    fn of(meta: &std::fs::Metadata) -> Mode {
        Mode {
            bits: meta.mode() & 0o7777,
            uid: meta.uid(),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mode {:04o}, owner uid {}", self.bits, self.uid)
    }
}

impl std::fmt::Display for Unstartable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unstartable::NotOnPath { program, path_var } => write!(
                f,
                "there is no {program} in {} (the sandbox's PATH)",
                path_var.replace(':', ", ")
            ),
            Unstartable::DanglingLink { path, link, error } => write!(
                f,
                "{} is a link to {}, which does not resolve ({error})",
                path.display(),
                link.display()
            ),
            Unstartable::CannotEnter {
                who,
                dir,
                mode,
                program,
            } => write!(
                f,
                "permission denied: {who} cannot enter the folder {} ({mode}) on the way to {}",
                dir.display(),
                program.display()
            ),
            Unstartable::File { file, why } => match why {
                FileProblem::Unreadable(e) => write!(f, "{file}: {e}"),
                FileProblem::NotAFile => write!(f, "{file} is not a regular file"),
                FileProblem::NotExecutable { who, mode } => write!(
                    f,
                    "permission denied: {file} ({mode}) is not executable by {who}"
                ),
                FileProblem::UnreadableScript { who, mode } => write!(
                    f,
                    "permission denied: {file} ({mode}) is a script {who} cannot read"
                ),
                FileProblem::NotVisible(backend) => write!(
                    f,
                    "{file} is not visible in the {backend} sandbox, which shows {} and the configured read-only paths",
                    SYSTEM_RO.join(", ")
                ),
            },
        }
    }
}

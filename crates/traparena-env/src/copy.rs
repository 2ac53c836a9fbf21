//! The one tree copy: workspaces, evaluation copies, toolchain caches and the importers' scratch
//! trees are all made by [`copy_tree`], with [`CopyOptions`] for what differs.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{EnvError, io};

/// What a [`copy_tree`] leaves out or changes. The default copies everything as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopyOptions<'a> {
    /// Leave out `.git` at the top of the tree (a workspace gets a history of its own).
    pub skip_top_git: bool,
    /// Give every copied entry to this user and group id (a sandbox's user).
    pub owner: Option<u32>,
    /// Copy only the files whose names end so (every folder is still made).
    pub only_suffix: Option<&'a str>,
    /// Make the copy readable by every user, and its folders and executables enterable, whatever
    /// the source's modes (a tree a sandbox user must read).
    pub readable: bool,
}

/// Copies the tree at `from` to `to` (made when missing): folders, regular files with their
/// mode, and symbolic links as links, never followed; sockets, pipes and devices are left out.
/// Files are copied on up to four threads once there are many (the kernel's
/// `copy_file_range` does the bytes).
pub fn copy_tree(from: &Path, to: &Path, opts: &CopyOptions<'_>) -> Result<(), EnvError> {
    std::fs::create_dir_all(to).map_err(io("create folder", to))?;
    finish(from, to, opts)?;
    let walker = walkdir::WalkDir::new(from)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| !(opts.skip_top_git && e.depth() == 1 && e.file_name() == ".git"));
    let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
    for entry in walker {
        let entry = entry.map_err(|e| EnvError::Io {
            op: "walk",
            path: from.to_owned(),
            source: e.into(),
        })?;
        let rel = entry
            .path()
            .strip_prefix(from)
            .expect("walk stays under its root");
        let target = to.join(rel);
        let ft = entry.file_type();
        if ft.is_dir() {
            std::fs::create_dir(&target).map_err(io("create folder", &target))?;
            finish(entry.path(), &target, opts)?;
        } else if ft.is_file() {
            let wanted = opts
                .only_suffix
                .is_none_or(|s| entry.file_name().to_string_lossy().ends_with(s));
            if wanted {
                files.push((entry.into_path(), target));
            }
        } else if ft.is_symlink() {
            let link = std::fs::read_link(entry.path()).map_err(io("read link", entry.path()))?;
            std::os::unix::fs::symlink(&link, &target).map_err(io("create link", &target))?;
            if let Some(uid) = opts.owner {
                std::os::unix::fs::lchown(&target, Some(uid), Some(uid))
                    .map_err(io("chown", &target))?;
            }
        }
    }
    copy_files(&files, opts)
}

/// Copies the regular files, on several threads when there are many.
fn copy_files(files: &[(PathBuf, PathBuf)], opts: &CopyOptions<'_>) -> Result<(), EnvError> {
    let copy = |chunk: &[(PathBuf, PathBuf)]| -> Result<(), EnvError> {
        for (src, dst) in chunk {
            std::fs::copy(src, dst).map_err(io("copy", src))?;
            finish(src, dst, opts)?;
        }
        Ok(())
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    if threads == 1 || files.len() < 64 {
        return copy(files);
    }
    let per = files.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(per)
            .map(|c| s.spawn(move || copy(c)))
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join().unwrap_or_else(|_| {
                Err(EnvError::Io {
                    op: "copy",
                    path: PathBuf::new(),
                    source: std::io::Error::other("a copying thread panicked"),
                })
            })
        })
    })
}

/// Gives a copied folder or file its owner and, for a readable copy, the modes every user
/// needs (`src` is the original, whose mode it widens).
fn finish(src: &Path, dst: &Path, opts: &CopyOptions<'_>) -> Result<(), EnvError> {
    if let Some(uid) = opts.owner {
        std::os::unix::fs::lchown(dst, Some(uid), Some(uid)).map_err(io("chown", dst))?;
    }
    if opts.readable {
        let meta = std::fs::metadata(src).map_err(io("stat", src))?;
        let mode = meta.permissions().mode();
        let add = if meta.is_dir() || mode & 0o100 != 0 {
            0o755
        } else {
            0o644
        };
        std::fs::set_permissions(dst, std::fs::Permissions::from_mode(mode | add))
            .map_err(io("set the mode of", dst))?;
    }
    Ok(())
}

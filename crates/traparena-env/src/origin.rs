//! The original's tree in git, against which candidate diffs are taken: read once per task and
//! shared by its workspaces, or once per workspace.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{EnvError, io};
use crate::gitcmd::{git_in, run_git};

/// Build artefacts that never count as part of a candidate patch.
pub const EXCLUDED_ARTEFACTS: &[&str] = &[
    "__pycache__/",
    "*.pyc",
    "*.pyo",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    "*.egg-info/",
    ".coverage",
];

/// The index file of the original's tree.
const BASE_INDEX: &str = "base-index";

/// The tree of a task's original `repo/` in git: its objects, its index and its id, read once
/// (`git add -A`, `git write-tree`) into a temporary folder that goes with the last handle.
/// Workspaces copied from the same folder take their candidate diffs against it, reading its
/// objects and never writing them ([`Workspace::share_origin`](crate::Workspace::share_origin)),
/// so a task's episodes read their original once. The original is read with the build
/// artefacts excluded only, so that what it holds stays tracked whatever an agent excludes.
#[derive(Debug)]
pub struct OriginTree {
    dir: tempfile::TempDir,
    tree: String,
}

impl OriginTree {
    /// Reads the tree of the folder `origin`.
    pub fn read(origin: &Path) -> Result<OriginTree, EnvError> {
        let dir = tempfile::Builder::new()
            .prefix("traparena-origin-")
            .tempdir()
            .map_err(io("create temporary folder", std::env::temp_dir()))?;
        let origin = std::path::absolute(origin).map_err(io("resolve", origin))?;
        let git_dir = dir.path().join("git");
        init_git_dir(&git_dir, None)?;
        write_exclude(&git_dir, &[])?;
        let index = git_dir.join(BASE_INDEX);
        let root = dir.path();
        run_git(git_in(root, &git_dir, &origin, &index).args(["add", "-A", "."]))?;
        let tree = run_git(git_in(root, &git_dir, &origin, &index).arg("write-tree"))?;
        Ok(OriginTree {
            tree: tree.trim().to_owned(),
            dir,
        })
    }

    /// The tree's id.
    pub fn tree(&self) -> &str {
        &self.tree
    }

    /// The original's index: a workspace's starts as a copy of it.
    pub(crate) fn index(&self) -> PathBuf {
        self.dir.path().join("git").join(BASE_INDEX)
    }

    fn objects(&self) -> PathBuf {
        self.dir.path().join("git").join("objects")
    }
}

/// A workspace's original for diffs: not read yet, being read on another thread, or read (its
/// own, or one shared by the task's workspaces).
#[derive(Debug)]
pub(crate) enum Baseline {
    Missing,
    Pending(std::thread::JoinHandle<Result<Arc<OriginTree>, EnvError>>),
    Ready(Arc<OriginTree>),
}

/// Makes a git folder (the layout `git init --bare` makes, without starting git); with
/// `origin`, one that reads the original's objects from there.
pub(crate) fn init_git_dir(git_dir: &Path, origin: Option<&OriginTree>) -> Result<(), EnvError> {
    for sub in ["objects/info", "refs/heads", "refs/tags", "info"] {
        let p = git_dir.join(sub);
        std::fs::create_dir_all(&p).map_err(io("create folder", &p))?;
    }
    let head = git_dir.join("HEAD");
    std::fs::write(&head, "ref: refs/heads/master\n").map_err(io("write", &head))?;
    if let Some(o) = origin {
        let alternates = git_dir.join("objects/info/alternates");
        let line = format!("{}\n", o.objects().display());
        std::fs::write(&alternates, line).map_err(io("write", &alternates))?;
    }
    Ok(())
}

/// Writes the exclude list git reads in `git_dir`: the build artefacts, then `extra`.
pub(crate) fn write_exclude(git_dir: &Path, extra: &[String]) -> Result<(), EnvError> {
    let exclude = git_dir.join("info").join("exclude");
    let mut text = String::new();
    for line in EXCLUDED_ARTEFACTS
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
    {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&exclude, text).map_err(io("write", &exclude))
}

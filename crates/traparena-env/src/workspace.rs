//! Workspaces: private copies of a task's `repo/`, patches applied to them, and the candidate
//! diff taken from them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use traparena_task::Patch;

use crate::base::Mounts;
use crate::copy::{CopyOptions, copy_tree};
use crate::error::{EnvError, io};
use crate::gitcmd::{git, git_in, run_git};
use crate::origin::{Baseline, OriginTree, init_git_dir, write_exclude};
use crate::sandbox::Sandbox;

const SHIM_UNITTEST: &str = include_str!("shims/tp_unittest.py");
const SHIM_PYTEST: &str = include_str!("shims/traparena_pytest_report.py");
const SHIM_HTTPBIN: &str = include_str!("shims/traparena_httpbin.py");
const SHIM_DJANGO: &str = include_str!("shims/tp_django.py");
const SHIM_SYMPY: &str = include_str!("shims/tp_sympy.py");
const SHIM_NODE: &str = include_str!("shims/tp_node.js");
const SHIM_BUILD: &str = include_str!("shims/tp_build.sh");
const SHIM_CPP: &str = include_str!("shims/tp_check.hpp");
const SHIM_JAVA: &str = include_str!("shims/TpCheck.java");
const SHIM_GO: &str = include_str!("shims/tp_check.go");
const SHIM_RUST: &str = include_str!("shims/tp_check.rs");

/// A private, sandbox-owned copy of a codebase.
///
/// The copy lives in a fresh temporary folder outside the task folder, with a scratch folder
/// beside it. `hidden/`, the reference patch and any `.git` folder are never copied, and the
/// git data the harness keeps for diffs lives outside what the sandbox can see.
#[derive(Debug)]
pub struct Workspace {
    dir: tempfile::TempDir,
    mounts: Mounts,
    origin: PathBuf,
    git_dir: PathBuf,
    baseline: Baseline,
    patches: usize,
    /// Patterns of files that are not part of the candidate patch, beyond
    /// [`EXCLUDED_ARTEFACTS`] (an agent process's own caches).
    excludes: Vec<String>,
    /// Shared with the agent processes started on this workspace, so that its user id stays
    /// leased while one of them may still run.
    lease: Option<std::sync::Arc<crate::lease::UserLease>>,
}

/// The result of applying a patch: data, not an error, when the patch does not apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchApply {
    /// True when every hunk applied exactly.
    pub applied: bool,
    /// `git apply`'s messages, or why the patch was refused.
    pub message: String,
}

impl Workspace {
    /// Copies `repo` (without any `.git` folder) into a new workspace.
    pub fn materialize(repo: &Path, sandbox: &Sandbox) -> Result<Workspace, EnvError> {
        let (dir, container) = sandbox.workspace_folder()?;
        let root = dir.path().to_path_buf();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755))
            .map_err(io("chmod", &root))?;
        let lease = sandbox.allocate_user()?;
        let user = lease.as_ref().map(|l| l.uid());
        let mounts = Mounts {
            workspace: root.join("workspace"),
            scratch: root.join("scratch"),
            harness: root.join("harness"),
            user,
            container,
        };
        let copy = CopyOptions {
            skip_top_git: true,
            owner: user,
            ..CopyOptions::default()
        };
        copy_tree(repo, &mounts.workspace, &copy)?;
        chown(&mounts.scratch, user)?;
        for (name, text) in [
            ("tp_unittest.py", SHIM_UNITTEST),
            ("traparena_pytest_report.py", SHIM_PYTEST),
            ("traparena_httpbin.py", SHIM_HTTPBIN),
            ("tp_django.py", SHIM_DJANGO),
            ("tp_sympy.py", SHIM_SYMPY),
            ("tp_node.js", SHIM_NODE),
            ("tp_build.sh", SHIM_BUILD),
            ("tp_check.hpp", SHIM_CPP),
            ("TpCheck.java", SHIM_JAVA),
            ("tp_check.go", SHIM_GO),
            ("tp_check.rs", SHIM_RUST),
        ] {
            let p = mounts.harness.join(name);
            std::fs::write(&p, text).map_err(io("write", &p))?;
        }
        Ok(Workspace {
            git_dir: root.join("git"),
            dir,
            mounts,
            origin: std::path::absolute(repo).map_err(io("resolve", repo))?,
            baseline: Baseline::Missing,
            patches: 0,
            excludes: Vec::new(),
            lease: lease.map(std::sync::Arc::new),
        })
    }

    /// The workspace folder on the host.
    pub fn path(&self) -> &Path {
        &self.mounts.workspace
    }

    /// The folders a sandboxed run on this workspace uses.
    pub fn mounts(&self) -> &Mounts {
        &self.mounts
    }

    /// The lease of this workspace's sandbox user, when it has one.
    pub(crate) fn lease(&self) -> Option<std::sync::Arc<crate::lease::UserLease>> {
        self.lease.clone()
    }

    /// Keeps files matching `patterns` (gitignore lines, such as `.cache/` or `*.traj.json`)
    /// out of [`Workspace::diff`] from now on, as build artefacts are. They only hide files the
    /// original codebase does not have: a change to one of its files, or its removal, is
    /// always part of the diff. Empty patterns and negations (`!...`, which could bring
    /// artefacts back) are ignored.
    pub fn exclude(&mut self, patterns: &[String]) {
        for line in patterns.iter().flat_map(|p| p.lines()) {
            let line = line.trim();
            if !line.is_empty()
                && !line.starts_with('!')
                && !self.excludes.iter().any(|e| e == line)
            {
                self.excludes.push(line.to_owned());
            }
        }
    }

    /// The codebase this workspace was copied from.
    pub fn origin(&self) -> &Path {
        &self.origin
    }

    /// Applies a unified diff exactly (no fuzz), as `git apply` does. A patch that does not
    /// apply, or names a path outside the workspace or inside `.git`, changes nothing and is
    /// reported in the result.
    pub fn apply_patch(&mut self, patch_text: &str) -> Result<PatchApply, EnvError> {
        if patch_text.trim().is_empty() {
            return Ok(PatchApply {
                applied: true,
                message: "empty patch".into(),
            });
        }
        let refused = |message: String| {
            Ok(PatchApply {
                applied: false,
                message,
            })
        };
        let parsed = match Patch::parse(patch_text, Path::new("patch")) {
            Ok(p) => p,
            Err(e) => return refused(e.to_string()),
        };
        if let Some(p) = parsed
            .touched_paths()
            .into_iter()
            .find(|p| p.as_str().split('/').any(|c| c == ".git"))
        {
            return refused(format!("patch touches {p}, inside .git"));
        }
        if let Some(changes) = crate::apply::plan(&self.mounts.workspace, patch_text) {
            self.write_changes(&changes)?;
            return Ok(PatchApply {
                applied: true,
                message: String::new(),
            });
        }
        self.patches += 1;
        let file = self.dir.path().join(format!("patch-{}.diff", self.patches));
        std::fs::write(&file, patch_text).map_err(io("write", &file))?;
        let out = git(self.dir.path(), &self.mounts.workspace)
            .args(["apply", "--whitespace=nowarn", "--binary"])
            .arg(&file)
            .output()
            .map_err(|source| EnvError::Spawn {
                program: "git".into(),
                source,
            })?;
        let message = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        if out.status.success() {
            chown_tree(&self.mounts.workspace, self.mounts.user)?;
        }
        Ok(PatchApply {
            applied: out.status.success(),
            message,
        })
    }

    /// Writes the files of a patch applied in-process, as `git apply` writes them: each one
    /// removed and created anew (so with the default mode), its missing folders created, all
    /// owned by the sandbox user.
    fn write_changes(&self, changes: &[crate::apply::Change]) -> Result<(), EnvError> {
        for c in changes {
            let target = c.path.under(&self.mounts.workspace);
            match std::fs::remove_file(&target) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(io("remove", &target)(e));
                }
                _ => {}
            }
            self.put_file(&c.path, &c.content)?;
        }
        Ok(())
    }

    /// Writes `content` to `rel` inside the workspace as the harness (used to restore test
    /// files in evaluation copies). Missing parent folders are created; a link or folder in
    /// the way is replaced. The harness's own confinement checks are the caller's job.
    pub fn put_file(&self, rel: &traparena_task::RelPath, content: &[u8]) -> Result<(), EnvError> {
        let target = rel.under(&self.mounts.workspace);
        self.create_parents(&target)?;
        if let Ok(meta) = std::fs::symlink_metadata(&target)
            && (meta.is_dir() || meta.file_type().is_symlink())
        {
            remove_any(&target)?;
        }
        std::fs::write(&target, content).map_err(io("write", &target))?;
        chown(&target, self.mounts.user)
    }

    /// Creates the missing folders above `target` (inside the workspace), owned by the
    /// sandbox user.
    pub(crate) fn create_parents(&self, target: &Path) -> Result<(), EnvError> {
        let Some(parent) = target.parent() else {
            return Ok(());
        };
        let mut missing = Vec::new();
        let mut p = parent;
        while !p.exists() && p.starts_with(&self.mounts.workspace) {
            missing.push(p.to_path_buf());
            match p.parent() {
                Some(q) => p = q,
                None => break,
            }
        }
        for dir in missing.into_iter().rev() {
            std::fs::create_dir(&dir).map_err(io("create folder", &dir))?;
            chown(&dir, self.mounts.user)?;
        }
        Ok(())
    }

    /// Gives a file the harness wrote to the sandbox user.
    pub(crate) fn adopt(&self, path: &Path) -> Result<(), EnvError> {
        chown(path, self.mounts.user)
    }

    /// Removes `rel` inside the workspace if it exists (a file, link or folder).
    pub fn remove_path(&self, rel: &traparena_task::RelPath) -> Result<(), EnvError> {
        let target = rel.under(&self.mounts.workspace);
        if std::fs::symlink_metadata(&target).is_ok() {
            remove_any(&target)?;
        }
        Ok(())
    }

    /// The candidate patch: the diff from the original codebase to the workspace, as `git diff
    /// --binary` writes it, with new, deleted and binary files and without build artefacts.
    pub fn diff(&mut self) -> Result<String, EnvError> {
        let root = self.dir.path().to_path_buf();
        let origin = self.origin_tree()?;
        if !self.git_dir.exists() {
            init_git_dir(&self.git_dir, Some(&origin))?;
        }
        write_exclude(&self.git_dir, &self.excludes)?;
        // The original's index, as the starting point of the workspace's: `add -A` then
        // records what changed.
        let index = self.git_dir.join("index");
        let base_index = origin.index();
        std::fs::copy(&base_index, &index).map_err(io("copy", &base_index))?;
        let ws = self.mounts.workspace.clone();
        run_git(git_in(&root, &self.git_dir, &ws, &index).args(["add", "-A", "."]))?;
        run_git(git_in(&root, &self.git_dir, &ws, &index).args([
            "diff",
            "--cached",
            "--binary",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            origin.tree(),
        ]))
    }

    /// Starts reading the original's tree for [`diff`](Self::diff) on another thread, so that
    /// the first diff does not wait for it (it reads only the original, never the workspace).
    pub fn prepare_diff(&mut self) {
        if matches!(self.baseline, Baseline::Missing) {
            let origin = self.origin.clone();
            self.baseline = Baseline::Pending(std::thread::spawn(move || {
                OriginTree::read(&origin).map(Arc::new)
            }));
        }
    }

    /// Takes diffs against `origin`, the original's tree read once for every workspace of a
    /// task ([`OriginTree::read`] of the folder this workspace was copied from), instead of
    /// reading it again.
    pub fn share_origin(&mut self, origin: Arc<OriginTree>) {
        self.end_pending();
        self.baseline = Baseline::Ready(origin);
    }

    /// The original's tree, read now unless it was read ahead or shared.
    fn origin_tree(&mut self) -> Result<Arc<OriginTree>, EnvError> {
        let origin = match std::mem::replace(&mut self.baseline, Baseline::Missing) {
            Baseline::Ready(o) => o,
            Baseline::Missing => Arc::new(OriginTree::read(&self.origin)?),
            Baseline::Pending(h) => h.join().unwrap_or_else(|_| {
                Err(EnvError::Git {
                    args: "add -A".into(),
                    message: "the thread reading the original's tree panicked".into(),
                })
            })?,
        };
        self.baseline = Baseline::Ready(origin.clone());
        Ok(origin)
    }

    /// Waits for a read of the original on another thread, if one is going.
    fn end_pending(&mut self) {
        if let Baseline::Pending(h) = std::mem::replace(&mut self.baseline, Baseline::Missing) {
            let _ = h.join();
        }
    }
}

impl Drop for Workspace {
    /// Waits for a pending read of the original, so that no thread outlives its workspace, and
    /// removes its container (when no agent process still holds it) before its folder goes.
    fn drop(&mut self) {
        self.end_pending();
        self.mounts.container.take();
    }
}

fn chown(p: &Path, user: Option<u32>) -> Result<(), EnvError> {
    if let Some(uid) = user {
        std::os::unix::fs::lchown(p, Some(uid), Some(uid)).map_err(io("chown", p))?;
    }
    Ok(())
}

fn chown_tree(root: &Path, user: Option<u32>) -> Result<(), EnvError> {
    if user.is_none() {
        return Ok(());
    }
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.map_err(|e| EnvError::Io {
            op: "walk",
            path: root.to_owned(),
            source: e.into(),
        })?;
        chown(entry.path(), user)?;
    }
    Ok(())
}

fn remove_any(p: &Path) -> Result<(), EnvError> {
    let meta = std::fs::symlink_metadata(p).map_err(io("stat", p))?;
    if meta.is_dir() {
        std::fs::remove_dir_all(p).map_err(io("remove", p))
    } else {
        std::fs::remove_file(p).map_err(io("remove", p))
    }
}

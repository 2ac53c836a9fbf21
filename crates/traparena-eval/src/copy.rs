//! Evaluation copies: a fresh copy of `repo/`, a candidate patch, test files restored.

use std::collections::BTreeSet;
use std::path::Path;

use traparena_env::{PatchApply, Sandbox, Workspace};
use traparena_task::{RelPath, Task};

use crate::error::EvalError;

/// A fresh copy of the task's `repo/` with `patch` applied and every public and hidden test
/// path restored to its pristine content.
///
/// Restoring means: each public test file gets its content from `repo/`, each hidden test file
/// its content from `hidden/`, and any file the candidate added inside a test folder is
/// removed. When the patch does not apply, the copy is returned as it is with the refusal.
pub fn evaluation_copy(
    task: &Task,
    sandbox: &Sandbox,
    patch: &str,
) -> Result<(Workspace, PatchApply), EvalError> {
    let ws = Workspace::materialize(&task.repo_dir(), sandbox)?;
    patch_copy(task, ws, patch)
}

/// [`evaluation_copy`] on a fresh copy of `repo/` made before: `patch` applied, tests restored.
pub(crate) fn patch_copy(
    task: &Task,
    mut ws: Workspace,
    patch: &str,
) -> Result<(Workspace, PatchApply), EvalError> {
    let applied = ws.apply_patch(patch)?;
    if !applied.applied {
        return Ok((ws, applied));
    }
    restore_tests(task, &ws)?;
    Ok((ws, applied))
}

/// Lays the pristine public and hidden test files over `ws` (see [`evaluation_copy`]).
pub fn restore_tests(task: &Task, ws: &Workspace) -> Result<(), EvalError> {
    let spec = &task.spec;
    let pristine: Vec<(RelPath, std::path::PathBuf)> = spec
        .public_tests
        .files
        .iter()
        .map(|f| (f.clone(), f.under(&task.repo_dir())))
        .chain(
            spec.hidden_tests
                .files
                .iter()
                .map(|f| (f.clone(), f.under(&task.hidden_dir()))),
        )
        .collect();
    let keep: BTreeSet<&str> = pristine.iter().map(|(r, _)| r.as_str()).collect();
    let folders: BTreeSet<&str> = keep
        .iter()
        .filter_map(|r| r.rsplit_once('/').map(|(dir, _)| dir))
        .collect();
    for folder in folders {
        let dir = ws.path().join(folder);
        if !dir.is_dir() {
            continue;
        }
        for entry in walkdir::WalkDir::new(&dir)
            .min_depth(1)
            .contents_first(true)
        {
            let Ok(entry) = entry else { continue };
            if entry.file_type().is_dir() {
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(ws.path())
                .expect("under the workspace");
            let rel_s = rel.to_string_lossy();
            let original = task.repo_dir().join(rel);
            if !keep.contains(rel_s.as_ref()) && std::fs::symlink_metadata(&original).is_err() {
                let r = RelPath::new(&rel_s).map_err(|_| io_err(rel))?;
                ws.remove_path(&r)?;
            }
        }
    }
    for (rel, source) in &pristine {
        let content = std::fs::read(source).map_err(|e| EvalError::Io {
            path: source.clone(),
            source: e,
        })?;
        ws.put_file(rel, &content)?;
    }
    Ok(())
}

fn io_err(rel: &Path) -> EvalError {
    EvalError::Io {
        path: rel.to_owned(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "unexpected path in workspace",
        ),
    }
}

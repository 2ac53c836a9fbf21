//! Toolchain caches the compiled-language runners lend to sandboxed builds.
//!
//! Go: a cold build cache makes every test build compile testify and its dependencies again
//! (about 7 s on these machines, most of a task's test timeout). The first Go run of a process
//! therefore builds a warm-up program in the sandbox once, keeps the build cache it left in a
//! folder under the temporary folder (`traparena-go-cache-v1`, shared by later processes), and
//! every Go run then gets hard links to it in its harness folder, which the sandbox shows
//! read-only: Go reads a read-only cache and builds what it lacks without storing it. Nothing a
//! test builds can reach the shared copy.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::error::{EnvError, io};
use crate::sandbox::{Backend, Mounts, RunSpec, Sandbox};
use crate::workspace::Workspace;

/// The folder name of the shared warm cache; a new version when the warm-up changes.
const GO_CACHE: &str = "traparena-go-cache-v1";
/// The marker a complete cache holds.
const READY: &str = "TRAPARENA-READY";

/// A program that imports what HumanEvalFix Go tests import.
const WARM_UP: &str = r#"package main

import (
	"crypto/md5"
	"math"
	"math/rand"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestWarmUp(t *tpT) {
	assert := assert.New(t)
	tpCheck(t, 1, func() {
		assert.Equal(1.0, math.Abs(-1))
		assert.Equal([]string{"a"}, strings.Fields(" a "))
		assert.NotNil(md5.Sum([]byte("x")))
		assert.True(rand.New(rand.NewSource(time.Now().UnixNano())).Intn(2) < 2)
	})
}

func main() {
	TestWarmUp(&tpT{})
	tpFinish()
}
"#;

static WARM: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Gives the run on `mounts` the warm Go build cache, as `<harness>/go-cache`. When the cache
/// cannot be built (no Go toolchain, say) the run goes on without it, and its build says why.
pub(crate) fn lend_go_cache(sandbox: &Sandbox, mounts: &Mounts) -> Result<(), EnvError> {
    let target = mounts.harness.join("go-cache");
    if target.exists() {
        return Ok(());
    }
    let Some(warm) = warm_go_cache(sandbox)? else {
        return Ok(());
    };
    link_tree(&warm, &target)
}

fn warm_go_cache(sandbox: &Sandbox) -> Result<Option<PathBuf>, EnvError> {
    let mut guard = WARM.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = guard.as_ref() {
        return Ok(Some(p.clone()));
    }
    let root = std::env::temp_dir().join(GO_CACHE);
    if root.join(READY).exists() {
        *guard = Some(root.clone());
        return Ok(Some(root));
    }
    let src = tempfile::Builder::new()
        .prefix("traparena-go-warm-")
        .tempdir()
        .map_err(io("create temporary folder", std::env::temp_dir()))?;
    let program = src.path().join("warm_up.go");
    std::fs::write(&program, WARM_UP).map_err(io("write", &program))?;
    let ws = Workspace::materialize(src.path(), sandbox)?;
    let mounts = ws.mounts();
    let visible_tmp = match sandbox.backend() {
        Backend::Bubblewrap => PathBuf::from("/tmp"),
        _ => mounts.scratch.clone(),
    };
    let out = sandbox.run(
        mounts,
        &RunSpec {
            argv: vec![
                "/bin/sh".into(),
                format!("{}/tp_build.sh", sandbox.visible_harness(mounts)),
                "go".into(),
                "warm_up.go".into(),
            ],
            env: vec![(
                "TRAPARENA_GO_WARM".into(),
                visible_tmp.join("go-cache").to_string_lossy().into_owned(),
            )],
            timeout: Duration::from_secs(300),
            report_pipe: true,
        },
    )?;
    let built = mounts.scratch.join("go-cache");
    if out.exit_code != Some(0) || !built.is_dir() {
        // No toolchain, or no testify: every Go build will say so itself.
        return Ok(None);
    }
    let staging = tempfile::Builder::new()
        .prefix("traparena-go-cache-staging-")
        .tempdir_in(std::env::temp_dir())
        .map_err(io("create temporary folder", std::env::temp_dir()))?;
    let staged = staging.path().join("cache");
    copy_tree(&built, &staged)?;
    std::fs::write(staged.join(READY), "").map_err(io("write", staged.join(READY)))?;
    // Another process may have finished first: its cache is as good as this one.
    if std::fs::rename(&staged, &root).is_err() && !root.join(READY).exists() {
        return Ok(None);
    }
    *guard = Some(root.clone());
    Ok(Some(root))
}

/// Copies a tree of plain files and folders, readable by everyone.
fn copy_tree(from: &Path, to: &Path) -> Result<(), EnvError> {
    for entry in walkdir::WalkDir::new(from).into_iter().flatten() {
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).map_err(io("create folder", &dest))?;
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &dest).map_err(io("copy", &dest))?;
        }
    }
    Ok(())
}

/// Hard links (or, across file systems, copies) every file of `from` under `to`.
fn link_tree(from: &Path, to: &Path) -> Result<(), EnvError> {
    for entry in walkdir::WalkDir::new(from).into_iter().flatten() {
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).map_err(io("create folder", &dest))?;
        } else if entry.file_type().is_file() && std::fs::hard_link(entry.path(), &dest).is_err() {
            std::fs::copy(entry.path(), &dest).map_err(io("copy", &dest))?;
        }
    }
    Ok(())
}

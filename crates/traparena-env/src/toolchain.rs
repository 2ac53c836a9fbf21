//! Toolchain caches the compiled-language runners lend to sandboxed builds.
//!
//! - Go: a cold build cache makes every test build compile testify and its dependencies again
//!   (about 7 s on these machines, most of a task's test timeout).
//! - Rust: HumanEvalPack's Rust declarations use the crates `rand`, `regex` and `md5`. They are
//!   built once, offline, from Debian's packaged sources (`/usr/share/cargo/registry`, from
//!   `librust-rand-dev`, `librust-regex-dev`, `librust-md5-dev`), so nothing is fetched.
//!
//! The first run of a process that needs one builds a warm-up in the sandbox, keeps what it
//! left in a folder under the temporary folder (`traparena-go-cache-v1`,
//! `traparena-rust-crates-v1`, shared by later processes), and every later run gets hard links
//! to it in its harness folder, which the sandbox shows read-only. Nothing a test builds can
//! reach the shared copy. When the warm-up fails (no toolchain) runs go on without the cache,
//! and their builds say what is missing.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::base::{Backend, Mounts, RunSpec};
use crate::copy::{CopyOptions, copy_tree};
use crate::error::{EnvError, io};
use crate::sandbox::Sandbox;
use crate::workspace::Workspace;

/// One cache: how to build it and where it goes.
pub(crate) struct Warm {
    /// The shared folder's name under the temporary folder; a new version when the warm-up
    /// changes.
    dir: &'static str,
    /// Its name in the harness folder, where `tp_build.sh` looks for it.
    lent_as: &'static str,
    /// The warm-up's files (path in the workspace, text).
    files: &'static [(&'static str, &'static str)],
    /// `tp_build.sh`'s arguments.
    args: &'static [&'static str],
    /// The variable that tells `tp_build.sh` where to leave the result (in the sandbox's
    /// `$TMPDIR`).
    env: &'static str,
    /// What to keep of the result: a subfolder, and the file-name suffix kept (`""`: all).
    keep: (&'static str, &'static str),
    /// Where the kept files go in the cache.
    into: &'static str,
}

/// The marker a complete cache holds.
const READY: &str = "TRAPARENA-READY";

/// A program that imports what HumanEvalFix Go tests import.
const GO_WARM_UP: &str = r#"package main

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

/// The Go build cache.
pub(crate) const GO: Warm = Warm {
    dir: "traparena-go-cache-v1",
    lent_as: "go-cache",
    files: &[("warm_up.go", GO_WARM_UP)],
    args: &["go", "warm_up.go"],
    env: "TRAPARENA_GO_WARM",
    keep: ("", ""),
    into: "",
};

const RUST_MANIFEST: &str = r#"[package]
name = "traparena-rust-crates"
version = "0.0.0"
edition = "2021"

[dependencies]
rand = "0.8"
regex = "1"
md5 = "0.7"
"#;

const RUST_CONFIG: &str = r#"[source.crates-io]
replace-with = "debian-packages"

[source.debian-packages]
directory = "/usr/share/cargo/registry"

[net]
offline = true
"#;

/// The crates Rust test programs may use, as rlibs.
pub(crate) const RUST: Warm = Warm {
    dir: "traparena-rust-crates-v1",
    lent_as: "rust-crates",
    files: &[
        ("Cargo.toml", RUST_MANIFEST),
        (".cargo/config.toml", RUST_CONFIG),
        ("src/main.rs", "fn main() {}\n"),
    ],
    args: &["rust-crates"],
    env: "TRAPARENA_RUST_WARM",
    keep: ("debug/deps", ".rlib"),
    into: "deps",
};

static BUILT: Mutex<BTreeMap<&'static str, PathBuf>> = Mutex::new(BTreeMap::new());

/// Gives the run on `mounts` the cache `warm` describes, in its harness folder.
pub(crate) fn lend(warm: &Warm, sandbox: &Sandbox, mounts: &Mounts) -> Result<(), EnvError> {
    let target = mounts.harness.join(warm.lent_as);
    if target.exists() {
        return Ok(());
    }
    let Some(cache) = build(warm, sandbox)? else {
        return Ok(());
    };
    link_tree(&cache, &target)
}

fn build(warm: &Warm, sandbox: &Sandbox) -> Result<Option<PathBuf>, EnvError> {
    let mut built = BUILT.lock();
    if let Some(p) = built.get(warm.dir) {
        return Ok(Some(p.clone()));
    }
    let root = std::env::temp_dir().join(warm.dir);
    if root.join(READY).exists() {
        built.insert(warm.dir, root.clone());
        return Ok(Some(root));
    }
    let src = tempfile::Builder::new()
        .prefix("traparena-warm-up-")
        .tempdir()
        .map_err(io("create temporary folder", std::env::temp_dir()))?;
    for (rel, text) in warm.files {
        let p = src.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io("create folder", parent))?;
        }
        std::fs::write(&p, text).map_err(io("write", &p))?;
    }
    let ws = Workspace::materialize(src.path(), sandbox)?;
    let mounts = ws.mounts();
    let visible_tmp = match sandbox.backend() {
        Backend::Bubblewrap => PathBuf::from("/tmp"),
        _ => mounts.scratch.clone(),
    };
    let mut argv = vec![
        "/bin/sh".to_owned(),
        format!("{}/tp_build.sh", sandbox.visible_harness(mounts)),
    ];
    argv.extend(warm.args.iter().map(|a| a.to_string()));
    let out = sandbox.run(
        mounts,
        &RunSpec {
            argv,
            env: vec![(
                warm.env.to_owned(),
                visible_tmp.join("warm").to_string_lossy().into_owned(),
            )],
            timeout: Duration::from_secs(600),
            report_pipe: true,
        },
    )?;
    let result = mounts.scratch.join("warm").join(warm.keep.0);
    if out.exit_code != Some(0) || !result.is_dir() {
        return Ok(None);
    }
    let staging = tempfile::Builder::new()
        .prefix("traparena-cache-staging-")
        .tempdir_in(std::env::temp_dir())
        .map_err(io("create temporary folder", std::env::temp_dir()))?;
    let staged = staging.path().join("cache");
    let only = CopyOptions {
        only_suffix: Some(warm.keep.1),
        ..CopyOptions::default()
    };
    copy_tree(&result, &staged.join(warm.into), &only)?;
    std::fs::write(staged.join(READY), "").map_err(io("write", staged.join(READY)))?;
    // Another process may have finished first: its cache is as good as this one.
    if std::fs::rename(&staged, &root).is_err() && !root.join(READY).exists() {
        return Ok(None);
    }
    built.insert(warm.dir, root.clone());
    Ok(Some(root))
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

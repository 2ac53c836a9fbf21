//! The check that a sandbox backend works on this machine: a probe run under it.

use std::path::Path;
use std::time::Duration;

use super::{Backend, Mounts, RunSpec, Sandbox, SandboxConfig};
use crate::launch::resolve;
use crate::lease::UserLease;

/// Why a sandbox backend did not pass its probe.
#[derive(Debug)]
pub(super) enum ProbeFailure {
    /// A program the backend needs is missing.
    NotInstalled(&'static str),
    /// The kernel does not enforce Landlock (the builtin backend needs it).
    NoLandlock,
    /// Preparing the probe failed (its folders, a user lease, starting it).
    Setup(String),
    /// The probe ran but did not print what it should.
    Ran {
        /// Its exit status.
        exit: Option<i32>,
        /// The first line of its error output.
        stderr: String,
    },
}

impl std::fmt::Display for ProbeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeFailure::NotInstalled(what) => write!(f, "{what} is not installed"),
            ProbeFailure::NoLandlock => f.write_str("the kernel does not enforce Landlock"),
            ProbeFailure::Setup(why) => f.write_str(why),
            ProbeFailure::Ran { exit, stderr } => write!(f, "probe exited with {exit:?}: {stderr}"),
        }
    }
}

fn setup(e: impl std::fmt::Display) -> ProbeFailure {
    ProbeFailure::Setup(e.to_string())
}

fn probe_dirs() -> Result<(tempfile::TempDir, Mounts), ProbeFailure> {
    let d = tempfile::Builder::new()
        .prefix("traparena-probe-")
        .tempdir()
        .map_err(setup)?;
    let mounts = Mounts {
        workspace: d.path().join("ws"),
        scratch: d.path().join("tmp"),
        harness: d.path().join("harness"),
        user: None,
        container: None,
    };
    for p in [&mounts.workspace, &mounts.scratch, &mounts.harness] {
        std::fs::create_dir_all(p).map_err(setup)?;
    }
    Ok((d, mounts))
}

fn probe(backend: Backend, root: bool, config: &SandboxConfig) -> Result<(), ProbeFailure> {
    let (dir, mut mounts) = probe_dirs()?;
    let sb = Sandbox {
        config: config.clone(),
        backend,
        root,
        warnings: Vec::new(),
        engine: None,
        image: None,
    };
    let lease = if root {
        Some(UserLease::acquire(config.uid_base).map_err(setup)?)
    } else {
        None
    };
    if let Some(lease) = &lease {
        let uid = lease.uid();
        for p in [&mounts.workspace, &mounts.scratch] {
            std::os::unix::fs::chown(p, Some(uid), Some(uid)).map_err(setup)?;
        }
        let _ = std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        );
        mounts.user = Some(uid);
    }
    let spec = RunSpec {
        argv: vec![
            "/bin/sh".into(),
            "-c".into(),
            "echo ok > probe && cat probe".into(),
        ],
        env: Vec::new(),
        timeout: Duration::from_secs(20),
        report_pipe: false,
    };
    let out = sb.run(&mounts, &spec).map_err(setup)?;
    if out.exit_code == Some(0) && out.stdout.text.trim() == "ok" {
        Ok(())
    } else {
        Err(ProbeFailure::Ran {
            exit: out.exit_code,
            stderr: out
                .stderr
                .text
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_owned(),
        })
    }
}

pub(super) fn probe_bwrap(root: bool, config: &SandboxConfig) -> Result<(), ProbeFailure> {
    if resolve("bwrap").is_none() {
        return Err(ProbeFailure::NotInstalled("bwrap"));
    }
    probe(Backend::Bubblewrap, root, config)
}

pub(super) fn probe_builtin(root: bool, config: &SandboxConfig) -> Result<(), ProbeFailure> {
    if !Path::new("/usr/bin/unshare").is_file() {
        return Err(ProbeFailure::NotInstalled("/usr/bin/unshare"));
    }
    if !crate::landlock_rules::supported() {
        return Err(ProbeFailure::NoLandlock);
    }
    probe(Backend::Builtin, root, config)
}

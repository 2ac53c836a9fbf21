//! The one way the crate runs git: no user or system configuration, no hooks, no repository
//! discovery, and a clear error naming the command when it fails.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::EnvError;

/// A git command with no user or system configuration, hooks or repository discovery.
#[allow(clippy::disallowed_methods)] // traparena-env is where processes are spawned
pub(crate) fn git(root: &Path, cwd: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CEILING_DIRECTORIES", root)
        .env("LC_ALL", "C")
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ])
        .args([
            "-c",
            "core.autocrlf=false",
            "-c",
            "diff.noprefix=false",
            "-c",
            "core.quotePath=false",
        ])
        .args([
            "-c",
            "user.name=traparena",
            "-c",
            "user.email=traparena@localhost",
        ])
        .stdin(Stdio::null());
    c
}

pub(crate) fn git_in(root: &Path, git_dir: &Path, work_tree: &Path, index: &Path) -> Command {
    let mut c = git(root, work_tree);
    c.env("GIT_DIR", git_dir)
        .env("GIT_WORK_TREE", work_tree)
        .env("GIT_INDEX_FILE", index);
    c
}

pub(crate) fn run_git(cmd: &mut Command) -> Result<String, EnvError> {
    let args = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| !a.contains('='))
        .collect::<Vec<_>>()
        .join(" ");
    let out = cmd.output().map_err(|source| EnvError::Spawn {
        program: "git".into(),
        source,
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(EnvError::Git {
            args,
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

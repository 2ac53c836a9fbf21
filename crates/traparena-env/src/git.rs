//! Read-only access to a local git repository: commits, files and whole trees at a commit,
//! exported without any history.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{EnvError, io};
use crate::gitcmd::git;

/// A local git repository (a clone, bare or not), read without changing it: no checkout, no
/// change to its index, configuration or references. Every command runs without user or system
/// configuration and without hooks.
#[derive(Debug, Clone)]
pub struct GitRepo {
    git_dir: PathBuf,
}

impl GitRepo {
    /// Opens the repository at `path`: a working tree with a `.git` folder, or a bare
    /// repository. A folder inside some other repository is not accepted (no discovery upward).
    pub fn open(path: &Path) -> Result<GitRepo, EnvError> {
        let path = std::path::absolute(path).map_err(io("resolve", path))?;
        if !path.is_dir() {
            return Err(EnvError::Git {
                args: "rev-parse --absolute-git-dir".into(),
                message: format!("{}: no such folder", path.display()),
            });
        }
        let ceiling = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut cmd = git(&ceiling, &path);
        cmd.env("GIT_CEILING_DIRECTORIES", &ceiling).args([
            "-c",
            "safe.directory=*",
            "rev-parse",
            "--absolute-git-dir",
        ]);
        let out = output(&mut cmd, "rev-parse --absolute-git-dir")?;
        let git_dir = PathBuf::from(String::from_utf8_lossy(&out).trim());
        Ok(GitRepo { git_dir })
    }

    /// The repository's git folder.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    fn cmd(&self) -> Command {
        let mut c = git(Path::new("/"), &self.git_dir);
        c.env("GIT_DIR", &self.git_dir)
            .args(["-c", "safe.directory=*"]);
        c
    }

    /// The full commit id `rev` names, or `None` when the repository has no such commit.
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<String>, EnvError> {
        if rev.starts_with('-') || rev.is_empty() {
            return Ok(None);
        }
        let out = self
            .cmd()
            .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"))
            .output()
            .map_err(spawn)?;
        if out.status.success() {
            Ok(Some(String::from_utf8_lossy(&out.stdout).trim().to_owned()))
        } else {
            Ok(None)
        }
    }

    /// The bytes of `path` (relative to the repository root) at `commit`, or `None` when the
    /// commit has no such file.
    pub fn read_file(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, EnvError> {
        let spec = format!("{commit}:{path}");
        let exists = self
            .cmd()
            .args(["cat-file", "-e", "--end-of-options", &spec])
            .output()
            .map_err(spawn)?;
        if !exists.status.success() {
            return Ok(None);
        }
        let mut cmd = self.cmd();
        cmd.args(["cat-file", "blob", "--end-of-options", &spec]);
        output(&mut cmd, &format!("cat-file blob {spec}")).map(Some)
    }

    /// The nearest tag reachable from `commit` (`git describe --tags --abbrev=0`), or `None`
    /// when there is none.
    pub fn nearest_tag(&self, commit: &str) -> Result<Option<String>, EnvError> {
        let out = self
            .cmd()
            .args([
                "describe",
                "--tags",
                "--abbrev=0",
                "--end-of-options",
                commit,
            ])
            .output()
            .map_err(spawn)?;
        let tag = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && !tag.is_empty()).then_some(tag))
    }

    /// The nearest tag reachable from `commit` and how many commits `commit` is past it
    /// (`git describe --tags --long`: `v0.16.2-122-g7c4e2ac` → `("v0.16.2", 122)`), or `None`
    /// when no tag is reachable.
    pub fn describe(&self, commit: &str) -> Result<Option<(String, u64)>, EnvError> {
        let out = self
            .cmd()
            .args(["describe", "--tags", "--long", "--end-of-options", commit])
            .output()
            .map_err(spawn)?;
        if !out.status.success() {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let mut parts = text.rsplitn(3, '-');
        let (_hash, count, tag) = (parts.next(), parts.next(), parts.next());
        Ok(match (tag, count.and_then(|c| c.parse().ok())) {
            (Some(tag), Some(n)) if !tag.is_empty() => Some((tag.to_owned(), n)),
            _ => None,
        })
    }

    /// Every tag with its date in seconds since the epoch, newest first: an annotated tag's
    /// tagger date, a lightweight tag's commit date (`git for-each-ref --sort=-creatordate`).
    pub fn tags_by_date(&self) -> Result<Vec<(String, i64)>, EnvError> {
        let mut cmd = self.cmd();
        cmd.args([
            "for-each-ref",
            "--sort=-creatordate",
            "--format=%(creatordate:unix) %(refname:strip=2)",
            "refs/tags",
        ]);
        let out = output(&mut cmd, "for-each-ref refs/tags")?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|l| {
                let (date, name) = l.split_once(' ')?;
                Some((name.to_owned(), date.parse().ok()?))
            })
            .collect())
    }

    /// The committer date of `commit` in seconds since the epoch, or `None` when the
    /// repository has no such commit.
    pub fn commit_time(&self, commit: &str) -> Result<Option<i64>, EnvError> {
        let Some(full) = self.resolve_commit(commit)? else {
            return Ok(None);
        };
        let mut cmd = self.cmd();
        cmd.args(["show", "-s", "--format=%ct", &full]);
        let out = output(&mut cmd, &format!("show -s --format=%ct {full}"))?;
        Ok(String::from_utf8_lossy(&out).trim().parse().ok())
    }

    /// Writes the tree of `commit` into `dest` (created when missing; it must be empty): files
    /// with their modes and symbolic links, and nothing of the repository's history — no `.git`.
    /// Submodules are left out.
    pub fn export_tree(&self, commit: &str, dest: &Path) -> Result<(), EnvError> {
        std::fs::create_dir_all(dest).map_err(io("create folder", dest))?;
        if std::fs::read_dir(dest)
            .map_err(io("read folder", dest))?
            .next()
            .is_some()
        {
            return Err(EnvError::Io {
                op: "export tree",
                path: dest.to_owned(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "the destination folder is not empty",
                ),
            });
        }
        let dest = std::path::absolute(dest).map_err(io("resolve", dest))?;
        let scratch = tempfile::Builder::new()
            .prefix("traparena-git-")
            .tempdir()
            .map_err(io("create temporary folder", std::env::temp_dir()))?;
        let index = scratch.path().join("index");
        let mut read = self.cmd();
        read.env("GIT_INDEX_FILE", &index)
            .args(["read-tree", "--end-of-options", commit]);
        output(&mut read, &format!("read-tree {commit}"))?;
        let mut checkout = self.cmd();
        checkout
            .env("GIT_INDEX_FILE", &index)
            .env("GIT_WORK_TREE", &dest)
            .current_dir(&dest)
            .args(["checkout-index", "--all", "--force"]);
        match output(&mut checkout, "checkout-index --all") {
            Err(EnvError::Git { args, message }) => Err(match missing_blob(&message) {
                Some(path) => EnvError::MissingBlob {
                    commit: commit.to_owned(),
                    path: path.to_owned(),
                    message,
                },
                None => EnvError::Git { args, message },
            }),
            other => other.map(drop),
        }
    }
}

/// The file git could not read the contents of, from its error output: `unable to read sha1
/// file of PATH (ID)` (a blob absent from the object store), or `missing blob object` lines
/// that name no file (then the object id).
fn missing_blob(message: &str) -> Option<&str> {
    message.lines().find_map(|line| {
        if let Some(rest) = line.split("unable to read sha1 file of ").nth(1) {
            return Some(rest.rsplit_once(" (").map_or(rest, |(path, _)| path));
        }
        line.split("missing blob object '")
            .nth(1)
            .map(|rest| rest.trim_end_matches('\''))
    })
}

fn spawn(source: std::io::Error) -> EnvError {
    EnvError::Spawn {
        program: "git".into(),
        source,
    }
}

fn output(cmd: &mut Command, args: &str) -> Result<Vec<u8>, EnvError> {
    let out = cmd.output().map_err(spawn)?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(EnvError::Git {
            args: args.to_owned(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

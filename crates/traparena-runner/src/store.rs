//! The results folder: `spec.json`, `manifest.json`, `episodes.jsonl`, `trajectories.jsonl`
//! and `notes/`, written so that a crash at any moment loses no finished episode and repeats
//! none.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use traparena_attack::{AttackError, Notes};
use traparena_task::{Step, Usage};

use crate::error::RunError;
use crate::results::{EpisodeKey, ResultLine};
use crate::spec::ExperimentSpec;

/// What a results folder was made with. A resume with anything different is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Harness version.
    pub harness_version: String,
    /// SHA-256 of the spec's canonical JSON.
    pub spec_sha256: String,
    /// SHA-256 of each task folder's content, by task id.
    pub tasks: BTreeMap<String, String>,
    /// Prompt-template hashes of the model-backed components.
    pub prompt_hashes: BTreeMap<String, String>,
    /// When the results folder was started (RFC 3339, as the caller gave it); not compared on
    /// resume or merge. The earliest of the shards' after a merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
}

/// The trajectory of a finished episode (`trajectories.jsonl`), kept apart from the lean
/// `episodes.jsonl` lines; the curator reads it, and so can any analysis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrajectoryLine {
    /// The episode.
    #[serde(flatten)]
    pub key: EpisodeKey,
    /// Whether it was accepted.
    pub accepted: bool,
    /// Its susceptibility.
    pub susceptible: Option<bool>,
    /// Every step.
    pub trajectory: Vec<Step>,
    /// Messages the leakage filter rejected.
    pub rejected_messages: Vec<crate::record::RejectedMessage>,
    /// Attacker failures.
    pub attacker_errors: Vec<crate::record::AttackerFailure>,
    /// Prompt hashes of the agent and the attacker.
    pub prompt_hashes: BTreeMap<String, String>,
}

/// SHA-256 of a serialisable value's JSON, in hex.
pub fn sha256_json<T: Serialize>(v: &T) -> String {
    let bytes = serde_json::to_vec(v).expect("serialisable");
    hex(&Sha256::digest(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 over a folder's files (paths and contents, in sorted order).
pub fn folder_sha256(dir: &Path) -> Result<String, RunError> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| io_err(&d, e))? {
            let e = e.map_err(|e| io_err(&d, e))?;
            let p = e.path();
            let name = e.file_name();
            if name == "__pycache__" || name.to_string_lossy().ends_with(".pyc") {
                continue;
            }
            if e.file_type().map_err(|e| io_err(&p, e))?.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        let rel = f
            .strip_prefix(dir)
            .unwrap_or(&f)
            .to_string_lossy()
            .into_owned();
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(std::fs::read(&f).map_err(|e| io_err(&f, e))?);
        h.update([0]);
    }
    Ok(hex(&h.finalize()))
}

fn io_err(p: &Path, e: std::io::Error) -> RunError {
    RunError::Results {
        path: p.to_owned(),
        message: e.to_string(),
    }
}

/// An open results folder.
#[derive(Debug)]
pub struct ResultsDir {
    dir: PathBuf,
    episodes: Mutex<File>,
    trajectories: Mutex<File>,
}

impl ResultsDir {
    /// Opens `dir` for an experiment: a new folder gets `spec.json` and `manifest.json`; an
    /// existing one is resumed only when `resume` is set and its manifest matches. Returns the
    /// lines already finished (a line torn by a crash is cut off first).
    pub fn open(
        dir: &Path,
        spec: &ExperimentSpec,
        manifest: &Manifest,
        resume: bool,
    ) -> Result<(ResultsDir, Vec<ResultLine>), RunError> {
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        let mpath = dir.join("manifest.json");
        if mpath.exists() {
            if !resume {
                return Err(RunError::Results {
                    path: dir.to_owned(),
                    message: "this folder already holds an experiment: pass --resume to continue it, or choose another --out".into(),
                });
            }
            let text = std::fs::read_to_string(&mpath).map_err(|e| io_err(&mpath, e))?;
            let old: Manifest = serde_json::from_str(&text).map_err(|e| RunError::Results {
                path: mpath.clone(),
                message: format!("unreadable manifest: {e}"),
            })?;
            if old.spec_sha256 != manifest.spec_sha256 {
                return Err(RunError::Results {
                    path: mpath,
                    message: "the spec differs from the one this experiment was started with; refusing to mix results (use a new --out)".into(),
                });
            }
            if old.tasks != manifest.tasks {
                let changed: Vec<&String> = manifest
                    .tasks
                    .iter()
                    .filter(|(k, v)| old.tasks.get(*k) != Some(*v))
                    .map(|(k, _)| k)
                    .chain(
                        old.tasks
                            .keys()
                            .filter(|k| !manifest.tasks.contains_key(*k)),
                    )
                    .collect();
                return Err(RunError::Results {
                    path: mpath,
                    message: format!(
                        "task contents changed since the experiment started: {changed:?}; refusing to mix results"
                    ),
                });
            }
            if old.harness_version != manifest.harness_version {
                return Err(RunError::Results {
                    path: mpath,
                    message: format!(
                        "started with harness {} but this is {}; refusing to mix results",
                        old.harness_version, manifest.harness_version
                    ),
                });
            }
        } else {
            write_atomic(
                &dir.join("spec.json"),
                &serde_json::to_vec_pretty(spec).expect("serialisable"),
            )?;
            write_atomic(
                &mpath,
                &serde_json::to_vec_pretty(manifest).expect("serialisable"),
            )?;
        }
        let epath = dir.join("episodes.jsonl");
        let tpath = dir.join("trajectories.jsonl");
        let lines = read_lines::<ResultLine>(&epath)?;
        read_lines::<serde_json::Value>(&tpath)?;
        let mut seen = BTreeSet::new();
        for l in &lines {
            if !seen.insert(l.key()) {
                return Err(RunError::Results {
                    path: epath.clone(),
                    message: format!("episode {} appears twice", l.key()),
                });
            }
        }
        let open = |p: &Path| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| io_err(p, e))
        };
        Ok((
            ResultsDir {
                dir: dir.to_owned(),
                episodes: Mutex::new(open(&epath)?),
                trajectories: Mutex::new(open(&tpath)?),
            },
            lines,
        ))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Appends a finished episode: its trajectory, then its line in `episodes.jsonl` (the commit
    /// point), each written whole and synced to disk.
    pub fn append(&self, line: &ResultLine, trajectory: &TrajectoryLine) -> Result<(), RunError> {
        let write = |f: &Mutex<File>, bytes: Vec<u8>, name: &str| -> Result<(), RunError> {
            let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
            f.write_all(&bytes)
                .and_then(|_| f.sync_data())
                .map_err(|e| io_err(&self.dir.join(name), e))
        };
        let mut t = serde_json::to_vec(trajectory).expect("serialisable");
        t.push(b'\n');
        write(&self.trajectories, t, "trajectories.jsonl")?;
        let mut l = serde_json::to_vec(line).expect("serialisable");
        l.push(b'\n');
        write(&self.episodes, l, "episodes.jsonl")
    }

    /// Where the notes for `round` of a target's condition live.
    pub fn notes_path(dir: &Path, target: &str, condition: &str, round: u32) -> PathBuf {
        dir.join("notes")
            .join(target)
            .join(condition)
            .join(format!("round-{round}.json"))
    }

    /// Writes notes atomically.
    pub fn write_notes(
        dir: &Path,
        target: &str,
        condition: &str,
        round: u32,
        notes: &Notes,
    ) -> Result<(), RunError> {
        let p = Self::notes_path(dir, target, condition, round);
        std::fs::create_dir_all(p.parent().expect("has a parent")).map_err(|e| io_err(&p, e))?;
        write_atomic(&p, &serde_json::to_vec_pretty(notes).expect("serialisable"))
    }

    /// Where a target's condition keeps the curator's tokens (cumulative over rounds).
    pub fn curator_usage_path(dir: &Path, target: &str, condition: &str) -> PathBuf {
        dir.join("notes")
            .join(target)
            .join(condition)
            .join("curator-usage.json")
    }

    /// Adds tokens the curator spent to the condition's running total.
    pub fn add_curator_usage(
        dir: &Path,
        target: &str,
        condition: &str,
        spent: Usage,
    ) -> Result<(), RunError> {
        let p = Self::curator_usage_path(dir, target, condition);
        let mut total: Usage = match std::fs::read_to_string(&p) {
            Ok(t) => serde_json::from_str(&t).map_err(|e| RunError::Results {
                path: p.clone(),
                message: format!("unreadable curator usage: {e}"),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Usage::default(),
            Err(e) => return Err(io_err(&p, e)),
        };
        total += spent;
        std::fs::create_dir_all(p.parent().expect("has a parent")).map_err(|e| io_err(&p, e))?;
        write_atomic(
            &p,
            &serde_json::to_vec_pretty(&total).expect("serialisable"),
        )
    }

    /// Reads notes, when present.
    pub fn read_notes(
        dir: &Path,
        target: &str,
        condition: &str,
        round: u32,
    ) -> Result<Option<Notes>, RunError> {
        let p = Self::notes_path(dir, target, condition, round);
        match std::fs::read_to_string(&p) {
            Ok(t) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|e| RunError::Results {
                    path: p,
                    message: format!("unreadable notes: {e}"),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&p, e)),
        }
    }

    /// The trajectories of the given episodes (for the curator), read back from disk.
    pub fn trajectories(
        &self,
        keys: &BTreeSet<EpisodeKey>,
    ) -> Result<Vec<TrajectoryLine>, RunError> {
        let all = read_lines::<TrajectoryLine>(&self.dir.join("trajectories.jsonl"))?;
        let mut by_key: BTreeMap<EpisodeKey, TrajectoryLine> = BTreeMap::new();
        for t in all {
            if keys.contains(&t.key) {
                by_key.insert(t.key.clone(), t);
            }
        }
        Ok(by_key.into_values().collect())
    }
}

/// Reads a JSONL file: a torn last line (no newline: a write cut short by a crash) is cut off
/// the file; any other unreadable line is an error naming it.
pub fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, RunError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(path, e)),
    };
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete < bytes.len() {
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        f.set_len(complete as u64)
            .and_then(|_| f.sync_all())
            .map_err(|e| io_err(path, e))?;
    }
    let mut out = Vec::new();
    for (i, line) in BufReader::new(&bytes[..complete]).lines().enumerate() {
        let line = line.map_err(|e| io_err(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(&line).map_err(|e| RunError::Results {
            path: path.to_owned(),
            message: format!("line {}: {e}", i + 1),
        })?);
    }
    Ok(out)
}

/// Writes a file through a temporary sibling and a rename, so readers never see half of it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    let tmp = path.with_extension("tmp");
    let mut f = File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| io_err(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io_err(path, e))
}

/// Maps an attack error for the curator step.
pub(crate) fn curator_err(e: AttackError) -> RunError {
    RunError::Results {
        path: PathBuf::from("notes"),
        message: format!("curator failed: {e}"),
    }
}

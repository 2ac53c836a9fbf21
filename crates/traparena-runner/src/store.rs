//! The results folder as the runner keeps it: opened for a new experiment or a resume, each
//! finished episode appended so that a crash at any moment loses no finished episode and repeats
//! none, and the curator's notes and tokens between rounds. The format of every file is
//! `traparena-results`'.

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use traparena_attack::{AttackError, NoteLimits, Notes};
use traparena_results::{
    Appender, EPISODES_FILE, EpisodeKey, MANIFEST_FILE, Manifest, NotesFile, NotesLimits,
    ResultLine, ResultsError, SPEC_FILE, TRAJECTORIES_FILE, TrajectoryLine, read_lines,
    write_atomic,
};
use traparena_task::Usage;
use traparena_task::output::{Output, check_folder};

use crate::error::RunError;
use crate::spec::ExperimentSpec;

fn io_err(p: &Path, e: std::io::Error) -> RunError {
    RunError::Results {
        path: p.to_owned(),
        message: e.to_string(),
    }
}

/// The fields in which `spec` differs from the spec saved at `saved`, as ` (in FIELD, FIELD)`;
/// empty when the saved spec cannot be read. The spending limits and the estimate's averages,
/// which are not part of an experiment's identity, are left out.
fn spec_differences(saved: &Path, spec: &ExperimentSpec) -> String {
    let old = std::fs::read(saved)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
    let (Some(old), Ok(new)) = (old, serde_json::to_value(spec)) else {
        return String::new();
    };
    let mut fields = Vec::new();
    json_differences("", &old, &new, &mut fields);
    fields.retain(|f| !(f == "limits" || f.starts_with("limits.") || f.starts_with("estimate")));
    match fields.len() {
        0 => String::new(),
        n if n > 5 => format!(" (in {} and {} more)", fields[..5].join(", "), n - 5),
        _ => format!(" (in {})", fields.join(", ")),
    }
}

/// Collects the dotted paths at which `a` and `b` differ.
fn json_differences(at: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    let key = |k: &str| match at {
        "" => k.to_owned(),
        _ => format!("{at}.{k}"),
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let null = Value::Null;
                json_differences(
                    &key(k),
                    x.get(k).unwrap_or(&null),
                    y.get(k).unwrap_or(&null),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                json_differences(&key(&i.to_string()), u, v, out);
            }
        }
        _ if a != b => out.push(if at.is_empty() { ".".into() } else { at.into() }),
        _ => {}
    }
}

/// An open results folder.
#[derive(Debug)]
pub struct ResultsDir {
    dir: PathBuf,
    episodes: Mutex<Appender>,
    trajectories: Mutex<Appender>,
}

/// Whether `dir` holds only what an experiment writes before its manifest (the spec and the
/// temporary files of writing it and the manifest): a start that was cut off, which a new start
/// or a resume completes.
fn cut_off_start(dir: &Path) -> bool {
    let starting = [
        SPEC_FILE.to_owned(),
        format!("{SPEC_FILE}.tmp"),
        format!("{MANIFEST_FILE}.tmp"),
    ];
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .all(|name| name.is_ok_and(|n| starting.contains(&n)))
    })
}

impl ResultsDir {
    /// Checks that an experiment may write its results into `dir`: a new or empty folder, one
    /// that already holds an experiment (which [`open`](Self::open) resumes only when asked), or
    /// one whose start was cut off before its manifest was written (a process killed at start:
    /// nothing in it but the spec and the temporary files of writing it and the manifest). Any
    /// other folder, or a file, is [`RunError::Refused`].
    pub fn check(dir: &Path) -> Result<(), RunError> {
        check_folder(dir, Output::ExperimentResults, |d| {
            d.join(MANIFEST_FILE).is_file() || cut_off_start(d)
        })?;
        Ok(())
    }

    /// Opens `dir` for an experiment: a new folder gets `spec.json` and `manifest.json`; an
    /// existing one is resumed only when `resume` is set and its manifest matches. Returns the
    /// lines already finished (an unfinished last line, left by a crash, is cut off first).
    pub fn open(
        dir: &Path,
        spec: &ExperimentSpec,
        manifest: &Manifest,
        resume: bool,
    ) -> Result<(ResultsDir, Vec<ResultLine>), RunError> {
        Self::check(dir)?;
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        let mpath = dir.join(MANIFEST_FILE);
        if mpath.exists() {
            if !resume {
                return Err(RunError::ExperimentExists {
                    path: dir.to_owned(),
                });
            }
            let old = Manifest::read(&mpath)?;
            if old.spec_sha256 != manifest.spec_sha256 {
                return Err(RunError::SpecChanged {
                    path: mpath,
                    fields: spec_differences(&dir.join(SPEC_FILE), spec),
                    spec: dir.join(SPEC_FILE),
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
            let text = serde_json::to_vec_pretty(spec).expect("serialisable");
            let spec_path = dir.join(SPEC_FILE);
            // A start cut off before the manifest left this spec, or the folder has a spec.json
            // of its own, which is never replaced by another.
            if let Ok(found) = std::fs::read(&spec_path)
                && found != text
            {
                return Err(traparena_task::output::Refusal {
                    path: dir.to_owned(),
                    output: Output::ExperimentResults,
                    found: format!("a {SPEC_FILE} of another experiment and no {MANIFEST_FILE}"),
                }
                .into());
            }
            write_atomic(&spec_path, &text)?;
            manifest.write(&mpath)?;
        }
        let epath = dir.join(EPISODES_FILE);
        let (episodes, lines) = Appender::open::<ResultLine>(&epath)?;
        let (trajectories, _) = Appender::open::<TrajectoryLine>(&dir.join(TRAJECTORIES_FILE))?;
        let mut seen = BTreeSet::new();
        for l in &lines {
            if !seen.insert(l.key()) {
                return Err(RunError::Results {
                    path: epath.clone(),
                    message: format!("episode {} appears twice", l.key()),
                });
            }
        }
        Ok((
            ResultsDir {
                dir: dir.to_owned(),
                episodes: Mutex::new(episodes),
                trajectories: Mutex::new(trajectories),
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
        self.trajectories.lock().append(trajectory)?;
        self.episodes.lock().append(line)?;
        Ok(())
    }

    /// Where the notes for `round` of a target's condition live
    /// ([`traparena_results::notes_path`]).
    pub fn notes_path(dir: &Path, target: &str, condition: &str, round: u32) -> PathBuf {
        traparena_results::notes_path(dir, target, condition, round)
    }

    /// Writes notes atomically, as the results format's [`NotesFile`].
    pub fn write_notes(
        dir: &Path,
        target: &str,
        condition: &str,
        round: u32,
        notes: &Notes,
    ) -> Result<(), RunError> {
        let limits = notes.limits();
        let file = NotesFile {
            items: notes.items().to_vec(),
            limits: Some(NotesLimits {
                max_notes: limits.max_notes,
                max_chars: limits.max_chars,
            }),
        };
        Ok(file.write_round(dir, target, condition, round)?)
    }

    /// Where a target's condition keeps the tokens the curator spent on round `round`'s notes
    /// ([`traparena_results::curator_usage_path`]).
    pub fn curator_usage_path(dir: &Path, target: &str, condition: &str, round: u32) -> PathBuf {
        traparena_results::curator_usage_path(dir, target, condition, round)
    }

    /// Writes (atomically) the tokens the curator spent on round `round`'s notes. Called before
    /// [`ResultsDir::write_notes`]: notes on disk then always have their tokens beside them, and
    /// a run killed between the two redoes the curator step on resume and rewrites both.
    pub fn write_curator_usage(
        dir: &Path,
        target: &str,
        condition: &str,
        round: u32,
        spent: Usage,
    ) -> Result<(), RunError> {
        let p = Self::curator_usage_path(dir, target, condition, round);
        std::fs::create_dir_all(p.parent().expect("has a parent")).map_err(|e| io_err(&p, e))?;
        Ok(write_atomic(
            &p,
            &serde_json::to_vec_pretty(&spent).expect("serialisable"),
        )?)
    }

    /// Reads notes, when present: the results format's [`NotesFile`], checked against its
    /// limits (the default limits when the file has none).
    pub fn read_notes(
        dir: &Path,
        target: &str,
        condition: &str,
        round: u32,
    ) -> Result<Option<Notes>, RunError> {
        let unreadable = |message: String| RunError::Results {
            path: Self::notes_path(dir, target, condition, round),
            message: format!("unreadable notes: {message}"),
        };
        let file = match NotesFile::read_round(dir, target, condition, round) {
            Ok(Some(f)) => f,
            Ok(None) => return Ok(None),
            Err(ResultsError::File { source, .. }) => return Err(unreadable(source.to_string())),
            Err(e) => return Err(e.into()),
        };
        let limits = file
            .limits
            .map_or_else(NoteLimits::default, |l| NoteLimits {
                max_notes: l.max_notes,
                max_chars: l.max_chars,
            });
        Notes::new(file.items, limits)
            .map(Some)
            .map_err(|e| unreadable(e.to_string()))
    }

    /// Of `keys`, those whose episode finished without an infrastructure error.
    pub fn usable(&self, keys: &BTreeSet<EpisodeKey>) -> Result<BTreeSet<EpisodeKey>, RunError> {
        let all = read_lines::<ResultLine>(&self.dir.join(EPISODES_FILE))?.lines;
        Ok(all
            .into_iter()
            .filter(|l| l.infra_error.is_none())
            .map(|l| l.key())
            .filter(|k| keys.contains(k))
            .collect())
    }

    /// The trajectories of the given episodes (for the curator and for forks), read back
    /// from disk, in key order.
    pub fn trajectories(
        &self,
        keys: &BTreeSet<EpisodeKey>,
    ) -> Result<Vec<TrajectoryLine>, RunError> {
        let all = read_lines::<TrajectoryLine>(&self.dir.join(TRAJECTORIES_FILE))?.lines;
        let mut by_key: BTreeMap<EpisodeKey, TrajectoryLine> = BTreeMap::new();
        for t in all {
            if keys.contains(&t.key) {
                by_key.insert(t.key.clone(), t);
            }
        }
        Ok(by_key.into_values().collect())
    }
}

/// Maps an attack error for the curator step.
pub(crate) fn curator_err(e: AttackError) -> RunError {
    RunError::Results {
        path: PathBuf::from(traparena_results::NOTES_DIR),
        message: format!("curator failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_written_as_notes_serialise_and_read_back_checked() {
        let dir = tempfile::tempdir().unwrap();
        let limits = NoteLimits {
            max_notes: 3,
            max_chars: 20,
        };
        let notes = Notes::new(vec!["one".into(), "two \"2\"".into()], limits).unwrap();
        assert_eq!(
            ResultsDir::read_notes(dir.path(), "m", "c", 2).unwrap(),
            None
        );
        ResultsDir::write_notes(dir.path(), "m", "c", 2, &notes).unwrap();
        let path = ResultsDir::notes_path(dir.path(), "m", "c", 2);
        // The bytes the runner wrote before the results crate had the notes format.
        assert_eq!(
            std::fs::read(&path).unwrap(),
            serde_json::to_vec_pretty(&notes).unwrap()
        );
        let back = ResultsDir::read_notes(dir.path(), "m", "c", 2).unwrap();
        assert_eq!(back, Some(notes));
        // Without limits: the default ones; over its limits: unreadable, naming the file.
        std::fs::write(&path, r#"{"items": ["a"]}"#).unwrap();
        let read = ResultsDir::read_notes(dir.path(), "m", "c", 2)
            .unwrap()
            .unwrap();
        assert_eq!(read.limits(), NoteLimits::default());
        let too_many = r#"{"items": ["a", "b"], "limits": {"max_notes": 1, "max_chars": 5}}"#;
        for (bad, says) in [
            (too_many, "unreadable notes: 2 notes, over the limit of 1"),
            (
                r#"{"items": [3]}"#,
                "unreadable notes: invalid type: integer `3`",
            ),
            (r#"{"format": 9, "items": []}"#, "format 9 is newer"),
        ] {
            std::fs::write(&path, bad).unwrap();
            let e = ResultsDir::read_notes(dir.path(), "m", "c", 2).unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains("round-2.json") && text.contains(says),
                "{text}"
            );
        }
    }
}

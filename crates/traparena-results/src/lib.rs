//! The TrapArena results format, alone: what a results folder holds and how its files are read
//! and written. The runner writes it, the report and the predictions export read it, and none
//! of them needs the others for that.
//!
//! A results folder:
//!
//! | file | content | type |
//! |---|---|---|
//! | [`EPISODES_FILE`] | one line per finished episode | [`ResultLine`] |
//! | [`TRAJECTORIES_FILE`] | the trajectory of each finished episode | [`TrajectoryLine`] |
//! | [`SPEC_FILE`] | the experiment spec as run | the runner's `ExperimentSpec`; its head, [`SpecHead`], for readers of results |
//! | [`MANIFEST_FILE`] | what the folder was made with | [`Manifest`] |
//! | [`NOTES_DIR`]`/<target>/<condition>/round-<r>.json` ([`notes_path`]) | the curator's notes the attacker saw in round r | [`NotesFile`] (in memory, the attack crate's `Notes`) |
//! | [`NOTES_DIR`]`/<target>/<condition>/round-<r>.usage.json` ([`curator_usage_path`]) | the curator's tokens for the notes of round r, written just before them | `traparena_task::Usage` |
//! | [`NOTES_DIR`]`/<target>/<condition>/`[`CURATOR_USAGE_FILE`] | older folders: the curator's tokens summed over rounds (read, no longer written) | `traparena_task::Usage` |
//!
//! Each line of the two JSON Lines files, and the manifest, carries `"format": 3`
//! ([`FORMAT_VERSION`]). A line or manifest without `format` is of format 1 and is migrated when
//! read (format 1 → 2 changed [`ConditionInfo`]: the attacker's kind with its `args`, the
//! curator's kind); one with a newer format than this build knows is
//! [`ResultsError::NewerFormat`], naming the file and the line. A notes file is written without
//! `format` (its fields have not changed since format 1, and the manifest states the folder's
//! format); it is read with or without one, and a newer one is refused the same way.
//!
//! | format | what changed |
//! |---|---|
//! | 1 | no `format` field; `condition_info` is {`attacker`, `persona`, `access`, `curator` (a bool), `defence`}, with the blind model attacker as attacker `blind` and a persona also as `scripted:PERSONA` |
//! | 2 | `"format": 2`; `condition_info` is {`attacker` (the kind), `args`, `access`, `curator` (the kind or null), `defence`}; `harness_version` on episode lines |
//! | 3 | `"format": 3`; a forked episode's lines carry `fork` ([`ForkInfo`] on episode lines, the [`ForkKey`] on trajectory lines), and its key is unique by fork step and branch; lines of format 2 are read as they are |
//!
//! A format-1 `condition_info` is migrated so: `persona: P` (or the attacker `scripted:P`)
//! becomes `args: {"persona": P}`; the attacker `blind` becomes `adaptive` with access
//! `blind`; `adaptive` without an access has access `reference`; `curator: true` becomes the
//! built-in `tally` curator (format 1 did not record which one ran), `false` none.
//!
//! JSON Lines files are read line by line ([`JsonlReader`], [`read_lines`]) with one rule for
//! a crash's leftovers: an unfinished last line is not a line ([`TornLine`]). A reader that
//! reads lines again by their place in the file (the episode viewer) gets each line's
//! [`LineSpan`] ([`JsonlReader::spanned`]), may read only a line's key ([`LineKey`]), and reads
//! a line again with [`parse_line`], all under the same rules. They are written a whole line
//! at a time ([`Appender`]), and other files atomically ([`write_atomic`]).
//!
//! ```
//! use traparena_results::{ConditionInfo, EpisodeKey, ResultLine};
//!
//! let key = EpisodeKey {
//!     target: "model-a".into(),
//!     condition: "baseline".into(),
//!     task: "clamp_overt".into(),
//!     round: 0,
//!     sample: 0,
//!     fork: None,
//! };
//! let line = ResultLine::infra_failure(&key, &ConditionInfo::baseline(), 7, "no server".into());
//! let text = serde_json::to_string(&line).unwrap();
//! assert!(text.starts_with(r#"{"format":3,"target":"model-a""#), "{text}");
//! let back: ResultLine = serde_json::from_str(&text).unwrap();
//! assert_eq!(back, line);
//! ```

mod condition;
mod error;
mod jsonl;
mod line;
mod manifest;
mod migrate;
mod notes;
mod spec_head;
mod trajectory;

use std::path::{Path, PathBuf};

pub use error::ResultsError;
pub use jsonl::{
    Appender, JsonlFile, JsonlReader, LineSpan, Spanned, TornLine, parse_line, read_lines,
    write_atomic, write_lines,
};
pub use line::{ConditionInfo, EpisodeKey, ForkInfo, ForkKey, LineKey, ResultLine, attacker_label};
pub use manifest::{Manifest, folder_sha256, sha256_json};
pub use notes::{NotesFile, NotesLimits};
pub use spec_head::SpecHead;
pub use trajectory::{AttackerFailure, RejectedMessage, TrajectoryLine};

/// The format version this build writes, and the newest it reads.
pub const FORMAT_VERSION: u32 = 3;

/// The condition name of the baseline, and of every fork's parent.
pub const BASELINE: &str = "baseline";

/// The episode log of a results folder: one [`ResultLine`] per finished episode.
pub const EPISODES_FILE: &str = "episodes.jsonl";
/// The trajectories of a results folder: one [`TrajectoryLine`] per finished episode.
pub const TRAJECTORIES_FILE: &str = "trajectories.jsonl";
/// The experiment spec of a results folder, as run.
pub const SPEC_FILE: &str = "spec.json";
/// What a results folder was made with: a [`Manifest`].
pub const MANIFEST_FILE: &str = "manifest.json";
/// The curator's notes and tokens: `notes/<target>/<condition>/`.
pub const NOTES_DIR: &str = "notes";
/// The curator's tokens of one target and condition summed over rounds, as folders written
/// before per-round usage files kept them. [`read_curator_usage`] still adds it in; nothing
/// writes it any more (a kill during its rewrite lost the tokens of every round).
pub const CURATOR_USAGE_FILE: &str = "curator-usage.json";

/// The notes folder of one target and condition: `notes/<target>/<condition>`.
pub fn notes_dir(dir: &Path, target: &str, condition: &str) -> PathBuf {
    dir.join(NOTES_DIR).join(target).join(condition)
}

/// The notes the attacker of a target's condition saw in `round`:
/// `notes/<target>/<condition>/round-<round>.json`.
pub fn notes_path(dir: &Path, target: &str, condition: &str, round: u32) -> PathBuf {
    notes_dir(dir, target, condition).join(notes_file_name(round))
}

/// The file name of a round's notes: `round-<round>.json`.
pub fn notes_file_name(round: u32) -> String {
    format!("round-{round}.json")
}

/// The round of a notes file name (`round-3.json` is 3); `None` for any other name.
pub fn notes_round(file_name: &str) -> Option<u32> {
    round_of(file_name, ".json")
}

/// The round of a `round-<r><suffix>` file name.
fn round_of(file_name: &str, suffix: &str) -> Option<u32> {
    file_name
        .strip_prefix("round-")?
        .strip_suffix(suffix)?
        .parse()
        .ok()
}

/// The file name of the curator's tokens for round `round`'s notes: `round-<round>.usage.json`.
pub fn curator_usage_file_name(round: u32) -> String {
    format!("round-{round}.usage.json")
}

/// Where a target's condition keeps the tokens the curator spent writing round `round`'s
/// notes: `notes/<target>/<condition>/round-<round>.usage.json`. The runner writes it
/// (atomically) before the notes themselves, so notes on disk always have their tokens beside
/// them, and a run killed between the two redoes the curator step and rewrites both.
pub fn curator_usage_path(dir: &Path, target: &str, condition: &str, round: u32) -> PathBuf {
    notes_dir(dir, target, condition).join(curator_usage_file_name(round))
}

/// The round of a curator usage file name (`round-3.usage.json` is 3); `None` otherwise.
pub fn curator_usage_round(file_name: &str) -> Option<u32> {
    round_of(file_name, ".usage.json")
}

/// The curator's tokens of a target's condition, summed over its rounds' usage files (and the
/// older summed [`CURATOR_USAGE_FILE`], when there is one); `None` when there is neither.
pub fn read_curator_usage(
    dir: &Path,
    target: &str,
    condition: &str,
) -> Result<Option<traparena_task::Usage>, ResultsError> {
    let notes = notes_dir(dir, target, condition);
    let mut files = vec![notes.join(CURATOR_USAGE_FILE)];
    match std::fs::read_dir(&notes) {
        Ok(entries) => {
            let mut rounds: Vec<(u32, PathBuf)> = entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    let round = curator_usage_round(&e.file_name().to_string_lossy())?;
                    Some((round, e.path()))
                })
                .collect();
            rounds.sort();
            files.extend(rounds.into_iter().map(|(_, p)| p));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ResultsError::Io {
                path: notes,
                source,
            });
        }
    }
    let mut total: Option<traparena_task::Usage> = None;
    for path in files {
        if let Some(u) = read_usage_file(&path)? {
            *total.get_or_insert_with(Default::default) += u;
        }
    }
    Ok(total)
}

fn read_usage_file(path: &Path) -> Result<Option<traparena_task::Usage>, ResultsError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| ResultsError::File {
                    path: path.to_owned(),
                    source,
                })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ResultsError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

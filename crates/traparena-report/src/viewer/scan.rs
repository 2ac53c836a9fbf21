//! The viewer's first pass: where each (target, condition, task) group's lines lie in
//! `episodes.jsonl` and `trajectories.jsonl`, and what the viewer's index says of each group,
//! without keeping any line.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Deserialize;
use traparena_results::{ConditionInfo, ForkKey, ResultLine, ResultsError};

use crate::error::ReportError;

/// Where one line lies in its file.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub offset: u64,
    pub len: usize,
    /// Its line number, from 1.
    pub line: usize,
    /// Whether it is written in the current results format (`{"format":N,` first, as the
    /// results writer puts it), so that it can be copied as it is.
    pub current: bool,
}

/// An episode within its group (the group fixes target, condition and task): round, sample
/// and fork, in key order.
pub(super) type Slot = (u32, u32, Option<ForkKey>);

/// The lines of one target, condition and task, in key order.
#[derive(Debug, Default)]
pub(super) struct Group {
    /// Result lines.
    pub results: Vec<(Slot, Span)>,
    /// Trajectory lines.
    pub trajectories: Vec<(Slot, Span)>,
    /// Episodes that are not infrastructure errors.
    pub usable: u32,
    /// Accepted episodes.
    pub accepted: u32,
    /// Episodes that followed a delivered claim.
    pub susceptible: u32,
    /// Episodes that received a message.
    pub told: u32,
    /// Fork points of the group's fork lines (labels as the spec names them).
    pub points: BTreeSet<String>,
}

/// One target and condition.
#[derive(Debug)]
pub(super) struct CellInfo {
    /// What the condition is (from its first line).
    pub info: ConditionInfo,
    /// Its groups, by task.
    pub tasks: BTreeMap<String, Group>,
}

/// Everything the first pass found.
#[derive(Debug, Default)]
pub(super) struct Scan {
    /// By (target, condition).
    pub cells: BTreeMap<(String, String), CellInfo>,
    /// Result lines read.
    pub results: usize,
    /// Trajectory lines read.
    pub trajectories: usize,
    /// Trajectory lines without a result line (listed, with no verdict).
    pub orphans: usize,
}

/// The key fields of a trajectory line: all the first pass reads of it.
#[derive(Deserialize)]
struct TrajectoryKey {
    target: String,
    condition: String,
    task: String,
    round: u32,
    sample: u32,
    #[serde(default)]
    fork: Option<ForkKey>,
}

/// Calls `f` with every non-blank line of `path`, its number and where it lies. A missing
/// file is no line.
fn each_line(
    path: &Path,
    mut f: impl FnMut(&[u8], usize, Span) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(ReportError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let current_prefix = format!("{{\"format\":{},", traparena_results::FORMAT_VERSION);
    let mut buf = Vec::with_capacity(4096);
    let (mut offset, mut number) = (0u64, 0usize);
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|source| ReportError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        let text = buf.trim_ascii();
        if !text.is_empty() {
            let current = text.starts_with(current_prefix.as_bytes());
            let span = Span {
                offset,
                len: n,
                line: number,
                current,
            };
            f(text, number, span)?;
        }
        offset += n as u64;
    }
}

pub(super) fn malformed(path: &Path, line: usize, source: serde_json::Error) -> ReportError {
    ReportError::Results(ResultsError::Line {
        path: path.to_path_buf(),
        line,
        column: source.column(),
        message: source.to_string(),
        source,
    })
}

/// The first pass over a results folder.
pub(super) fn scan(dir: &Path) -> Result<Scan, ReportError> {
    let mut s = Scan::default();
    let episodes = dir.join(traparena_results::EPISODES_FILE);
    if !episodes.is_file() {
        return Err(ReportError::MissingEpisodes { path: episodes });
    }
    each_line(&episodes, |text, number, span| {
        let line: ResultLine =
            serde_json::from_slice(text).map_err(|e| malformed(&episodes, number, e))?;
        s.results += 1;
        let cell = s
            .cells
            .entry((line.target.clone(), line.condition.clone()))
            .or_insert_with(|| CellInfo {
                info: line.condition_info.clone(),
                tasks: BTreeMap::new(),
            });
        let g = cell.tasks.entry(line.task.clone()).or_default();
        if line.infra_error.is_none() {
            g.usable += 1;
            g.accepted += u32::from(line.accepted);
            g.susceptible += u32::from(line.susceptible == Some(true));
            g.told += u32::from(line.messages_delivered > 0);
        }
        if let Some(f) = &line.fork {
            g.points.extend(f.points.iter().cloned());
        }
        g.results.push((
            (line.round, line.sample, line.fork.as_ref().map(|f| f.key())),
            span,
        ));
        Ok(())
    })?;
    let trajectories = dir.join(traparena_results::TRAJECTORIES_FILE);
    each_line(&trajectories, |text, number, span| {
        let k: TrajectoryKey =
            serde_json::from_slice(text).map_err(|e| malformed(&trajectories, number, e))?;
        s.trajectories += 1;
        let group = s
            .cells
            .get_mut(&(k.target, k.condition))
            .and_then(|c| c.tasks.get_mut(&k.task));
        match group {
            Some(g) => g.trajectories.push(((k.round, k.sample, k.fork), span)),
            None => s.orphans += 1,
        }
        Ok(())
    })?;
    for cell in s.cells.values_mut() {
        for g in cell.tasks.values_mut() {
            g.results.sort_by_key(|a| a.0);
            g.trajectories.sort_by_key(|a| a.0);
        }
    }
    Ok(s)
}

//! The viewer's first pass: where each (target, condition, task) group's lines lie in
//! `episodes.jsonl` and `trajectories.jsonl`, and what the viewer's index says of each group,
//! without keeping any line.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use traparena_results::{ConditionInfo, ForkKey, JsonlReader, LineKey, LineSpan, ResultLine};

use crate::error::ReportError;

/// An episode within its group (the group fixes target, condition and task): round, sample
/// and fork, in key order.
pub(super) type Slot = (u32, u32, Option<ForkKey>);

/// The lines of one target, condition and task, in key order.
#[derive(Debug, Default)]
pub(super) struct Group {
    /// Result lines.
    pub results: Vec<(Slot, LineSpan)>,
    /// Trajectory lines.
    pub trajectories: Vec<(Slot, LineSpan)>,
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

/// Calls `f` with every line of `path` read as `T`, and where it lies, under the results
/// crate's rules ([`JsonlReader`]): blank lines and an unfinished last line (an episode still
/// being written) are no lines, a line of a newer format is
/// [`NewerFormat`](traparena_results::ResultsError::NewerFormat), an older one is migrated. A
/// missing file is no line.
fn each_line<T: serde::de::DeserializeOwned>(
    path: &Path,
    mut f: impl FnMut(T, LineSpan),
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
    let mut reader = JsonlReader::<_, T>::new(BufReader::with_capacity(1 << 16, file), path);
    for line in reader.spanned() {
        let (span, line) = line.map_err(ReportError::Results)?;
        f(line, span);
    }
    Ok(())
}

/// The first pass over a results folder.
pub(super) fn scan(dir: &Path) -> Result<Scan, ReportError> {
    let mut s = Scan::default();
    let episodes = dir.join(traparena_results::EPISODES_FILE);
    if !episodes.is_file() {
        return Err(ReportError::MissingEpisodes { path: episodes });
    }
    each_line(&episodes, |line: ResultLine, span| {
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
    })?;
    let trajectories = dir.join(traparena_results::TRAJECTORIES_FILE);
    each_line(&trajectories, |LineKey { key: k, .. }, span| {
        s.trajectories += 1;
        let group = s
            .cells
            .get_mut(&(k.target, k.condition))
            .and_then(|c| c.tasks.get_mut(&k.task));
        match group {
            Some(g) => g.trajectories.push(((k.round, k.sample, k.fork), span)),
            None => s.orphans += 1,
        }
    })?;
    for cell in s.cells.values_mut() {
        for g in cell.tasks.values_mut() {
            g.results.sort_by_key(|a| a.0);
            g.trajectories.sort_by_key(|a| a.0);
        }
    }
    Ok(s)
}

//! Reading a results folder: `episodes.jsonl` streamed line by line (through
//! `traparena-results`, which reads every format of the line) into compact
//! [`EpisodeOutcome`]s (the ordinary episodes) and [`ForkOutcome`]s (the forks of baseline
//! episodes, kept apart so that they never enter a condition's ordinary figures), plus what
//! the optional files add: `spec.json`'s name and seed, `manifest.json`'s harness version and
//! date, and the curator's final notes.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use traparena_results::{
    ConditionInfo, EPISODES_FILE, JsonlReader, MANIFEST_FILE, Manifest, NOTES_DIR, NotesFile,
    ResultLine, ResultsError, SpecHead, notes_round,
};
use traparena_stats::{EpisodeOutcome, ForkOutcome};

use crate::error::ReportError;

/// What the report knows about one (target, condition) besides its outcomes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    /// The condition as the first line of this target and condition describes it.
    pub info: ConditionInfo,
    /// Lines of this target and condition.
    pub lines: usize,
    /// Lines with an infrastructure error.
    pub infra_errors: usize,
    /// Lines whose `condition_info` differs from the first one.
    pub info_conflicts: usize,
    /// Lines with an episode (no infrastructure error).
    pub episodes_run: usize,
    /// Attacker prompt tokens over the episodes run.
    pub attacker_prompt_tokens: u64,
    /// Attacker completion tokens over the episodes run.
    pub attacker_completion_tokens: u64,
    /// Target prompt tokens over the episodes run.
    pub target_prompt_tokens: u64,
    /// Target completion tokens over the episodes run.
    pub target_completion_tokens: u64,
    /// The target's cost over the episodes run, where known.
    pub target_cost: Option<traparena_task::Cost>,
    /// The attacker's cost over the episodes run, where known.
    pub attacker_cost: Option<traparena_task::Cost>,
    /// The `agent` names on these lines, in the order first seen.
    pub agents: Vec<String>,
}

/// The episodes of a results folder, compact: one [`EpisodeOutcome`] per ordinary line and
/// one [`ForkOutcome`] per fork line (infrastructure errors included, flagged, so that every
/// figure counts them), each grouped by target, and per (target, condition) bookkeeping
/// ([`Cell`]), of the ordinary lines and of the fork lines apart.
///
/// A line with `fork` (results format 3) is a fork of a baseline episode: it is never one of
/// its condition's ordinary episodes, so it is in neither [`Episodes::outcomes`] nor
/// [`Episodes::cell`], only in [`Episodes::forks`] and [`Episodes::fork_cell`].
#[derive(Debug, Clone, Default)]
pub struct Episodes {
    outcomes: Vec<EpisodeOutcome>,
    targets: BTreeMap<String, Range<usize>>,
    cells: BTreeMap<String, BTreeMap<String, Cell>>,
    forks: Vec<ForkOutcome>,
    fork_targets: BTreeMap<String, Range<usize>>,
    fork_cells: BTreeMap<String, BTreeMap<String, Cell>>,
    harness_versions: BTreeSet<String>,
    lines: usize,
    blank_lines: usize,
    torn_line: Option<usize>,
}

impl Episodes {
    /// Reads `episodes.jsonl` from `reader` line by line, keeping only the compact per-episode
    /// numbers. `path` names the file in errors.
    ///
    /// Blank (whitespace-only) lines are skipped and counted; an unfinished last line (an
    /// episode being written, or a write a crash cut short) is left out, as the runner leaves
    /// it out, and named ([`Episodes::torn_line`]); any other line that is not a valid episode
    /// line is an error naming its line number ([`ReportError::Results`]). A file without an
    /// episode line (ordinary or fork) is [`ReportError::NoEpisodes`].
    pub fn read(reader: impl BufRead, path: &Path) -> Result<Episodes, ReportError> {
        let mut out = Episodes::default();
        let mut lines = JsonlReader::<_, ResultLine>::new(reader, path);
        for line in lines.by_ref() {
            out.push_line(line?);
        }
        out.blank_lines = lines.blank_lines();
        out.torn_line = lines.torn().map(|t| t.line);
        if out.lines == 0 {
            return Err(ReportError::NoEpisodes {
                path: path.to_owned(),
            });
        }
        out.finish();
        Ok(out)
    }

    fn push_line(&mut self, l: ResultLine) {
        self.lines += 1;
        let infra = l.infra_error.is_some();
        if let Some(v) = l.harness_version.filter(|v| !v.is_empty()) {
            self.harness_versions.insert(v);
        }
        let cells = if l.fork.is_some() {
            &mut self.fork_cells
        } else {
            &mut self.cells
        };
        // Looked up before inserting, so that a line of a known cell allocates no key.
        if !cells.contains_key(&l.target) {
            cells.insert(l.target.clone(), BTreeMap::new());
        }
        let of_target = cells.get_mut(&l.target).expect("inserted above");
        if !of_target.contains_key(&l.condition) {
            let cell = Cell {
                info: l.condition_info.clone(),
                ..Cell::default()
            };
            of_target.insert(l.condition.clone(), cell);
        }
        let cell = of_target.get_mut(&l.condition).expect("inserted above");
        cell.lines += 1;
        if !l.agent.is_empty() && !cell.agents.contains(&l.agent) {
            cell.agents.push(l.agent);
        }
        if l.condition_info != cell.info {
            cell.info_conflicts += 1;
        }
        if infra {
            cell.infra_errors += 1;
        } else {
            cell.episodes_run += 1;
            cell.attacker_prompt_tokens += l.attacker_usage.prompt_tokens;
            cell.attacker_completion_tokens += l.attacker_usage.completion_tokens;
            cell.target_prompt_tokens += l.usage.prompt_tokens;
            cell.target_completion_tokens += l.usage.completion_tokens;
            cell.target_cost = traparena_task::Cost::sum(cell.target_cost, l.usage.cost);
            cell.attacker_cost =
                traparena_task::Cost::sum(cell.attacker_cost, l.attacker_usage.cost);
        }
        if let Some(f) = l.fork {
            self.forks.push(ForkOutcome {
                target: l.target,
                condition: l.condition,
                task: l.task,
                parent_sample: l.sample,
                step: f.step,
                points: f.points,
                message: f.message,
                accepted: l.accepted && !infra,
                susceptible: l.susceptible,
                messages_delivered: l.messages_delivered,
                infra_error: infra,
            });
            return;
        }
        self.outcomes.push(EpisodeOutcome {
            target: l.target,
            condition: l.condition,
            task: l.task,
            round: l.round,
            sample: l.sample,
            accepted: l.accepted && !infra,
            messages_delivered: l.messages_delivered,
            susceptible: l.susceptible,
            failure_mode: if l.accepted {
                None
            } else {
                l.failure_mode.map(|m| m.to_string())
            },
            target_completion_tokens: l.usage.completion_tokens,
            infra_error: infra,
        });
    }

    /// Groups the outcomes and the forks by target (a stable sort keeps the file's order
    /// within a target). A target with fork lines only is a target too (without outcomes).
    fn finish(&mut self) {
        self.outcomes.sort_by(|a, b| a.target.cmp(&b.target));
        self.outcomes.shrink_to_fit();
        self.targets = ranges(&self.outcomes, |o| &o.target);
        self.forks.sort_by(|a, b| a.target.cmp(&b.target));
        self.forks.shrink_to_fit();
        self.fork_targets = ranges(&self.forks, |f| &f.target);
        for t in self.fork_targets.keys() {
            if !self.targets.contains_key(t) {
                self.targets.insert(t.clone(), 0..0);
            }
        }
    }

    /// Every ordinary outcome (one per episode line without `fork`, infrastructure errors
    /// flagged), grouped by target.
    pub fn outcomes(&self) -> &[EpisodeOutcome] {
        &self.outcomes
    }

    /// Every fork episode (one per line with `fork`, infrastructure errors flagged), grouped
    /// by target.
    pub fn forks(&self) -> &[ForkOutcome] {
        &self.forks
    }

    /// The fork episodes of one target (empty for an unknown target).
    pub fn forks_of(&self, target: &str) -> &[ForkOutcome] {
        &self.forks[self.fork_targets.get(target).cloned().unwrap_or(0..0)]
    }

    /// The bookkeeping of the fork lines of one (target, condition).
    pub fn fork_cell(&self, target: &str, condition: &str) -> Option<&Cell> {
        self.fork_cells.get(target)?.get(condition)
    }

    /// Every (target, condition) with fork lines, with the bookkeeping of those lines, in
    /// name order.
    pub fn fork_cells(&self) -> impl Iterator<Item = (&str, &str, &Cell)> {
        self.fork_cells.iter().flat_map(|(t, m)| {
            m.iter()
                .map(move |(c, cell)| (t.as_str(), c.as_str(), cell))
        })
    }

    /// The forked conditions of `target` (conditions with fork lines), in name order.
    pub fn forked_conditions_of<'a>(&'a self, target: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.fork_cells
            .get(target)
            .into_iter()
            .flat_map(|m| m.keys().map(String::as_str))
    }

    /// Fork lines read.
    pub fn fork_lines(&self) -> usize {
        self.forks.len()
    }

    /// The outcomes of one target (empty for an unknown target).
    pub fn of_target(&self, target: &str) -> &[EpisodeOutcome] {
        &self.outcomes[self.target_range(target)]
    }

    /// Where the outcomes of `target` are in [`Episodes::outcomes`] (empty for an unknown
    /// target).
    pub(crate) fn target_range(&self, target: &str) -> Range<usize> {
        self.targets.get(target).cloned().unwrap_or(0..0)
    }

    /// The targets (of ordinary and of fork lines), in name order.
    pub fn targets(&self) -> impl Iterator<Item = &str> {
        self.targets.keys().map(String::as_str)
    }

    /// The conditions of `target`, in name order (the baseline included).
    pub fn conditions_of<'a>(&'a self, target: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.cells
            .get(target)
            .into_iter()
            .flat_map(|m| m.keys().map(String::as_str))
    }

    /// Every condition name, in name order (the baseline included).
    pub fn conditions(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .cells
            .values()
            .flat_map(|m| m.keys().map(String::as_str))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The bookkeeping of one (target, condition).
    pub fn cell(&self, target: &str, condition: &str) -> Option<&Cell> {
        self.cells.get(target)?.get(condition)
    }

    /// Every (target, condition) with its bookkeeping, in name order.
    pub fn cells(&self) -> impl Iterator<Item = (&str, &str, &Cell)> {
        self.cells.iter().flat_map(|(t, m)| {
            m.iter()
                .map(move |(c, cell)| (t.as_str(), c.as_str(), cell))
        })
    }

    /// The `agent` names on the lines of `target` (infrastructure errors have none; fork lines
    /// included), in name order.
    pub fn agents_of(&self, target: &str) -> impl Iterator<Item = &str> {
        let all: BTreeSet<&str> = [&self.cells, &self.fork_cells]
            .into_iter()
            .filter_map(|cells| cells.get(target))
            .flat_map(|m| m.values())
            .flat_map(|c| c.agents.iter().map(String::as_str))
            .collect();
        all.into_iter()
    }

    /// The `harness_version` values on the lines (lines written before the field have none),
    /// in order.
    pub fn harness_versions(&self) -> impl Iterator<Item = &str> {
        self.harness_versions.iter().map(String::as_str)
    }

    /// Episode lines read, fork lines included (blank lines not included).
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Blank lines skipped.
    pub fn blank_lines(&self) -> usize {
        self.blank_lines
    }

    /// The line number of an unfinished last line, which was left out.
    pub fn torn_line(&self) -> Option<usize> {
        self.torn_line
    }

    /// Lines with an infrastructure error (fork lines included).
    pub fn infra_errors(&self) -> usize {
        self.cells
            .values()
            .chain(self.fork_cells.values())
            .flat_map(|m| m.values())
            .map(|c| c.infra_errors)
            .sum()
    }
}

/// Where each target's items are in `items`, which is sorted by target.
fn ranges<T>(items: &[T], target: impl Fn(&T) -> &String) -> BTreeMap<String, Range<usize>> {
    let mut out = BTreeMap::new();
    let mut start = 0;
    while start < items.len() {
        let t = target(&items[start]);
        let len = items[start..].iter().take_while(|o| target(o) == t).count();
        out.insert(t.clone(), start..start + len);
        start += len;
    }
    out
}

/// The curator's final notes for one target and condition: the last round's notes file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CuratorNotes {
    /// The target (the folder name under `notes/`).
    pub target: String,
    /// The condition (the folder name under `notes/<target>/`).
    pub condition: String,
    /// The round of the last notes file: the notes the attacker was given in that round.
    pub round: u32,
    /// The rounds whose episodes the notes were written from, first and last: rounds 0 to
    /// `round − 1` (the curator runs between rounds; the notes of round 0 are the empty notes
    /// before any round, so `None`).
    pub from_rounds: Option<[u32; 2]>,
    /// The notes, in order.
    pub items: Vec<String>,
    /// The file, relative to the results folder.
    pub file: String,
    /// Tokens the curator spent on this target and condition (its rounds' `round-<r>.usage.json`), when
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<traparena_task::Usage>,
}

/// A results folder, read: its episodes, what `spec.json` and `manifest.json` say (when
/// present) and the curator's final notes per target and condition (when present).
#[derive(Debug, Clone)]
pub struct ResultsFolder {
    /// The folder.
    pub path: PathBuf,
    /// The episodes of `episodes.jsonl`.
    pub episodes: Episodes,
    /// Whether `spec.json` exists.
    pub has_spec: bool,
    /// `seed` of `spec.json`, when the file exists and has one.
    pub spec_seed: Option<u64>,
    /// `name` of `spec.json`, when the file exists and has a non-empty one.
    pub spec_name: Option<String>,
    /// `manifest.json`, when it exists.
    pub manifest: Option<Manifest>,
    /// The calendar day (UTC) of `created` in the manifest, when it has one.
    pub created: Option<String>,
    /// When `manifest.json` was last modified (the runner writes it once, at the start).
    pub manifest_modified: Option<SystemTime>,
    /// When `episodes.jsonl` was last modified (its last episode).
    pub episodes_modified: Option<SystemTime>,
    /// The last round's notes of every `notes/<target>/<condition>/`, in name order.
    pub notes: Vec<CuratorNotes>,
}

impl ResultsFolder {
    /// Reads a results folder. Only `episodes.jsonl` is required; `spec.json`,
    /// `manifest.json` and `notes/` add detail when present, and are errors only when present
    /// and malformed.
    pub fn load(dir: &Path) -> Result<ResultsFolder, ReportError> {
        if !dir.is_dir() {
            return Err(ReportError::NotAFolder {
                path: dir.to_owned(),
            });
        }
        let path = dir.join(EPISODES_FILE);
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReportError::MissingEpisodes { path });
            }
            Err(source) => return Err(ReportError::Io { path, source }),
        };
        let episodes_modified = file.metadata().and_then(|m| m.modified()).ok();
        let episodes = Episodes::read(std::io::BufReader::with_capacity(1 << 16, file), &path)?;
        let spec = SpecHead::read(dir)?;
        let manifest_path = dir.join(MANIFEST_FILE);
        let manifest = if manifest_path.exists() {
            Some(Manifest::read(&manifest_path)?)
        } else {
            None
        };
        let created = match manifest.as_ref().and_then(|m| m.created.as_deref()) {
            Some(text) => Some(calendar_day(text).ok_or_else(|| ReportError::InvalidFile {
                path: manifest_path.clone(),
                reason: format!(
                    "`created` is {text:?}, neither an RFC 3339 timestamp nor a YYYY-MM-DD date"
                ),
            })?),
            None => None,
        };
        let manifest_modified = manifest
            .as_ref()
            .and_then(|_| std::fs::metadata(&manifest_path).ok())
            .and_then(|m| m.modified().ok());
        Ok(ResultsFolder {
            path: dir.to_owned(),
            episodes,
            has_spec: spec.is_some(),
            spec_seed: spec.as_ref().and_then(|s| s.seed),
            spec_name: spec
                .and_then(|s| s.name)
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty()),
            manifest,
            created,
            manifest_modified,
            episodes_modified,
            notes: read_notes(dir)?,
        })
    }
}

/// The calendar day of an RFC 3339 timestamp (in UTC) or of a `YYYY-MM-DD` date.
fn calendar_day(text: &str) -> Option<String> {
    let text = text.trim();
    if let Ok(ts) = text.parse::<jiff::Timestamp>() {
        return Some(ts.strftime("%Y-%m-%d").to_string());
    }
    let date = text.parse::<jiff::civil::Date>().ok()?;
    // A bare date only: "2026-03-02T10:00" without an offset is not a timestamp.
    (text.len() == 10).then(|| date.strftime("%Y-%m-%d").to_string())
}

/// The calendar day (UTC) of a file time, when it is representable.
pub(crate) fn file_day(t: SystemTime) -> Option<String> {
    let ts = jiff::Timestamp::try_from(t).ok()?;
    Some(ts.strftime("%Y-%m-%d").to_string())
}

fn sorted_entries(dir: &Path) -> Result<Vec<(String, PathBuf)>, ReportError> {
    let io = |source| ReportError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io)? {
        let e = e.map_err(io)?;
        v.push((e.file_name().to_string_lossy().into_owned(), e.path()));
    }
    v.sort();
    Ok(v)
}

fn read_notes(dir: &Path) -> Result<Vec<CuratorNotes>, ReportError> {
    let root = dir.join(NOTES_DIR);
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (target, tdir) in sorted_entries(&root)? {
        if !tdir.is_dir() {
            continue;
        }
        for (condition, cdir) in sorted_entries(&tdir)? {
            if !cdir.is_dir() {
                continue;
            }
            let last = sorted_entries(&cdir)?
                .into_iter()
                .filter_map(|(name, p)| Some((notes_round(&name)?, p)))
                .max_by_key(|(r, _)| *r);
            let Some((round, path)) = last else { continue };
            let notes = match NotesFile::read(&path) {
                Err(ResultsError::Io { path, source }) => {
                    return Err(ReportError::Io { path, source });
                }
                read => read?,
            };
            let usage = traparena_results::read_curator_usage(dir, &target, &condition)?;
            out.push(CuratorNotes {
                items: notes.items,
                file: format!(
                    "{NOTES_DIR}/{target}/{condition}/{}",
                    traparena_results::notes_file_name(round)
                ),
                target: target.clone(),
                condition,
                round,
                from_rounds: round.checked_sub(1).map(|last| [0, last]),
                usage,
            });
        }
    }
    Ok(out)
}

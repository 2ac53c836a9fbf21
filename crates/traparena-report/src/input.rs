//! Reading a results folder: `episodes.jsonl` streamed line by line into compact
//! [`EpisodeOutcome`]s, plus the optional `spec.json` seed and the curator's final notes.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;
use traparena_runner::ConditionInfo;
use traparena_stats::EpisodeOutcome;

use crate::error::ReportError;

/// The episode log of a results folder.
pub const EPISODES_FILE: &str = "episodes.jsonl";
/// The experiment spec of a results folder (optional; its `seed` seeds the bootstrap).
pub const SPEC_FILE: &str = "spec.json";
/// The curator's notes: `notes/<target>/<condition>/round-<r>.json` (optional).
pub const NOTES_DIR: &str = "notes";

/// The fields of one `episodes.jsonl` line that the report uses. Everything else (the verdict,
/// the patch, the agent's name, ...) is skipped by the parser without being kept; strings are
/// borrowed from the line where they need no unescaping.
#[derive(Deserialize)]
struct LeanLine<'a> {
    #[serde(borrow)]
    target: Cow<'a, str>,
    #[serde(borrow)]
    condition: Cow<'a, str>,
    #[serde(borrow)]
    task: Cow<'a, str>,
    round: u32,
    sample: u32,
    #[serde(default, borrow)]
    condition_info: Option<LeanInfo<'a>>,
    #[serde(default)]
    infra_error: Option<IgnoredAny>,
    accepted: bool,
    #[serde(default, borrow)]
    failure_mode: Option<Cow<'a, str>>,
    messages_delivered: u32,
    #[serde(default)]
    susceptible: Option<bool>,
    usage: LeanUsage,
    #[serde(default)]
    attacker_usage: LeanUsage,
}

/// `condition_info` without allocating (compared with the first line's, converted once).
#[derive(Deserialize, Default)]
struct LeanInfo<'a> {
    #[serde(default, borrow)]
    attacker: Cow<'a, str>,
    #[serde(default, borrow)]
    persona: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    access: Option<Cow<'a, str>>,
    #[serde(default)]
    curator: bool,
    #[serde(default)]
    defence: bool,
}

impl LeanInfo<'_> {
    fn matches(&self, i: &ConditionInfo) -> bool {
        self.attacker == i.attacker
            && self.persona.as_deref() == i.persona.as_deref()
            && self.access.as_deref() == i.access.as_deref()
            && self.curator == i.curator
            && self.defence == i.defence
    }

    fn to_info(&self) -> ConditionInfo {
        ConditionInfo {
            attacker: self.attacker.clone().into_owned(),
            persona: self.persona.as_deref().map(str::to_owned),
            access: self.access.as_deref().map(str::to_owned),
            curator: self.curator,
            defence: self.defence,
        }
    }
}

#[derive(Deserialize, Default, Clone, Copy)]
struct LeanUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

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
}

/// The episodes of a results folder, compact: one [`EpisodeOutcome`] per line (infrastructure
/// errors included, flagged, so that every figure counts them) grouped by target, and per
/// (target, condition) bookkeeping ([`Cell`]).
#[derive(Debug, Clone, Default)]
pub struct Episodes {
    outcomes: Vec<EpisodeOutcome>,
    targets: BTreeMap<String, Range<usize>>,
    cells: BTreeMap<String, BTreeMap<String, Cell>>,
    lines: usize,
    blank_lines: usize,
}

impl Episodes {
    /// Reads `episodes.jsonl` from `reader` line by line, keeping only the compact per-episode
    /// numbers. `path` names the file in errors.
    ///
    /// Blank (whitespace-only) lines are skipped and counted; any other line that is not a valid
    /// episode line is an error naming its line number ([`ReportError::MalformedLine`],
    /// [`ReportError::InvalidLine`]). A file without an episode line is
    /// [`ReportError::NoEpisodes`].
    pub fn read(mut reader: impl BufRead, path: &Path) -> Result<Episodes, ReportError> {
        let mut out = Episodes::default();
        let mut buf = Vec::with_capacity(4096);
        let mut line_no = 0usize;
        loop {
            buf.clear();
            let n = reader
                .read_until(b'\n', &mut buf)
                .map_err(|source| ReportError::Io {
                    path: path.to_owned(),
                    source,
                })?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let text = trim_ascii(&buf);
            if text.is_empty() {
                out.blank_lines += 1;
                continue;
            }
            out.push_line(text, path, line_no)?;
        }
        if out.outcomes.is_empty() {
            return Err(ReportError::NoEpisodes {
                path: path.to_owned(),
            });
        }
        out.finish();
        Ok(out)
    }

    fn push_line(&mut self, text: &[u8], path: &Path, line: usize) -> Result<(), ReportError> {
        let l: LeanLine<'_> =
            serde_json::from_slice(text).map_err(|source| malformed(path, line, source))?;
        for (field, value) in [
            ("target", &l.target),
            ("condition", &l.condition),
            ("task", &l.task),
        ] {
            if value.trim().is_empty() {
                return Err(ReportError::InvalidLine {
                    path: path.to_owned(),
                    line,
                    reason: format!("`{field}` is empty"),
                });
            }
        }
        self.lines += 1;
        let infra = l.infra_error.is_some();
        let info = l.condition_info.unwrap_or_default();
        if !self.cells.contains_key(l.target.as_ref()) {
            self.cells.insert(l.target.to_string(), BTreeMap::new());
        }
        let of_target = self
            .cells
            .get_mut(l.target.as_ref())
            .expect("inserted above");
        if !of_target.contains_key(l.condition.as_ref()) {
            let cell = Cell {
                info: info.to_info(),
                ..Cell::default()
            };
            of_target.insert(l.condition.to_string(), cell);
        }
        let cell = of_target
            .get_mut(l.condition.as_ref())
            .expect("inserted above");
        cell.lines += 1;
        if !info.matches(&cell.info) {
            cell.info_conflicts += 1;
        }
        if infra {
            cell.infra_errors += 1;
        } else {
            cell.episodes_run += 1;
            cell.attacker_prompt_tokens += l.attacker_usage.prompt_tokens;
            cell.attacker_completion_tokens += l.attacker_usage.completion_tokens;
            cell.target_prompt_tokens += l.usage.prompt_tokens;
        }
        self.outcomes.push(EpisodeOutcome {
            target: l.target.into_owned(),
            condition: l.condition.into_owned(),
            task: l.task.into_owned(),
            round: l.round,
            sample: l.sample,
            accepted: l.accepted && !infra,
            messages_delivered: l.messages_delivered,
            susceptible: l.susceptible,
            failure_mode: if l.accepted {
                None
            } else {
                l.failure_mode.map(Cow::into_owned)
            },
            target_completion_tokens: l.usage.completion_tokens,
            infra_error: infra,
        });
        Ok(())
    }

    /// Groups the outcomes by target (a stable sort keeps the file's order within a target).
    fn finish(&mut self) {
        self.outcomes.sort_by(|a, b| a.target.cmp(&b.target));
        self.outcomes.shrink_to_fit();
        let mut start = 0;
        while start < self.outcomes.len() {
            let t = &self.outcomes[start].target;
            let len = self.outcomes[start..]
                .iter()
                .take_while(|o| &o.target == t)
                .count();
            self.targets.insert(t.clone(), start..start + len);
            start += len;
        }
    }

    /// Every outcome (one per episode line, infrastructure errors flagged), grouped by target.
    pub fn outcomes(&self) -> &[EpisodeOutcome] {
        &self.outcomes
    }

    /// The outcomes of one target (empty for an unknown target).
    pub fn of_target(&self, target: &str) -> &[EpisodeOutcome] {
        self.targets
            .get(target)
            .map_or(&[], |r| &self.outcomes[r.clone()])
    }

    /// The targets, in name order.
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

    /// Episode lines read (blank lines not included).
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Blank lines skipped.
    pub fn blank_lines(&self) -> usize {
        self.blank_lines
    }

    /// Lines with an infrastructure error.
    pub fn infra_errors(&self) -> usize {
        self.cells
            .values()
            .flat_map(|m| m.values())
            .map(|c| c.infra_errors)
            .sum()
    }
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|c| !c.is_ascii_whitespace());
    match start {
        None => &[],
        Some(s) => {
            let end = b
                .iter()
                .rposition(|c| !c.is_ascii_whitespace())
                .unwrap_or(s);
            &b[s..=end]
        }
    }
}

fn malformed(path: &Path, line: usize, source: serde_json::Error) -> ReportError {
    let full = source.to_string();
    let suffix = format!(" at line {} column {}", source.line(), source.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    ReportError::MalformedLine {
        path: path.to_owned(),
        line,
        column: source.column(),
        message,
        source,
    }
}

/// The curator's final notes for one target and condition: the last round's notes file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CuratorNotes {
    /// The target (the folder name under `notes/`).
    pub target: String,
    /// The condition (the folder name under `notes/<target>/`).
    pub condition: String,
    /// The round of the last notes file.
    pub round: u32,
    /// The notes, in order (a non-string item is shown as its JSON text).
    pub items: Vec<String>,
    /// The file, relative to the results folder.
    pub file: String,
    /// Tokens the curator spent on this target and condition (`curator-usage.json`), when
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<traparena_task::Usage>,
}

#[derive(Deserialize)]
struct NotesFile {
    items: Vec<serde_json::Value>,
    #[serde(default)]
    #[allow(dead_code)]
    limits: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct SpecSeed {
    #[serde(default)]
    seed: Option<u64>,
}

/// A results folder, read: its episodes, the seed of its `spec.json` (when present) and the
/// curator's final notes per target and condition (when present).
#[derive(Debug, Clone)]
pub struct ResultsFolder {
    /// The folder.
    pub path: PathBuf,
    /// The episodes of `episodes.jsonl`.
    pub episodes: Episodes,
    /// `seed` of `spec.json`, when the file exists and has one.
    pub spec_seed: Option<u64>,
    /// The last round's notes of every `notes/<target>/<condition>/`, in name order.
    pub notes: Vec<CuratorNotes>,
}

impl ResultsFolder {
    /// Reads a results folder. Only `episodes.jsonl` is required; `spec.json` and `notes/`
    /// add detail when present, and are errors only when present and malformed.
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
        let episodes = Episodes::read(std::io::BufReader::with_capacity(1 << 16, file), &path)?;
        Ok(ResultsFolder {
            path: dir.to_owned(),
            episodes,
            spec_seed: read_spec_seed(dir)?,
            notes: read_notes(dir)?,
        })
    }
}

fn read_spec_seed(dir: &Path) -> Result<Option<u64>, ReportError> {
    let path = dir.join(SPEC_FILE);
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ReportError::Io { path, source }),
    };
    let spec: SpecSeed = serde_json::from_slice(&text)
        .map_err(|source| ReportError::MalformedFile { path, source })?;
    Ok(spec.seed)
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
                .filter_map(|(name, p)| {
                    let r = name.strip_prefix("round-")?.strip_suffix(".json")?;
                    Some((r.parse::<u32>().ok()?, p))
                })
                .max_by_key(|(r, _)| *r);
            let Some((round, path)) = last else { continue };
            let text = std::fs::read(&path).map_err(|source| ReportError::Io {
                path: path.clone(),
                source,
            })?;
            let notes: NotesFile = serde_json::from_slice(&text)
                .map_err(|source| ReportError::MalformedFile { path, source })?;
            let usage_path = cdir.join("curator-usage.json");
            let usage = match std::fs::read(&usage_path) {
                Ok(bytes) => Some(serde_json::from_slice(&bytes).map_err(|source| {
                    ReportError::MalformedFile {
                        path: usage_path.clone(),
                        source,
                    }
                })?),
                Err(_) => None,
            };
            out.push(CuratorNotes {
                items: notes
                    .items
                    .into_iter()
                    .map(|v| match v {
                        serde_json::Value::String(s) => s,
                        other => other.to_string(),
                    })
                    .collect(),
                file: format!("{NOTES_DIR}/{target}/{condition}/round-{round}.json"),
                target: target.clone(),
                condition,
                round,
                usage,
            });
        }
    }
    Ok(out)
}

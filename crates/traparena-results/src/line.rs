//! The line of `episodes.jsonl`: [`ResultLine`], with its [`EpisodeKey`] and the
//! [`ConditionInfo`] every line carries.

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use traparena_task::{FailureMode, Usage, Verdict};

use crate::FORMAT_VERSION;
pub use crate::condition::{ConditionInfo, attacker_label};
use crate::migrate::{self, InfoIn, Malformed};

/// The key of an episode in an experiment: it appears once in `episodes.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EpisodeKey {
    /// Target name.
    pub target: String,
    /// Condition name (`baseline` for the baseline).
    pub condition: String,
    /// Task id.
    pub task: String,
    /// Round (0-based; the baseline has round 0).
    pub round: u32,
    /// Sample within the round; for a fork, the sample of its parent baseline episode.
    pub sample: u32,
    /// For a fork of a baseline episode: where it branches off, and which branch it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkKey>,
}

/// Where a forked episode branches off its parent, and which of the fork point's two
/// episodes it is: a forked condition runs, for each chosen baseline episode and step `k`,
/// one episode in which the collaborator may speak after step `k` and one in which it does
/// not, both replaying the parent's first `k` steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ForkKey {
    /// The parent's steps replayed (`k`): the collaborator may speak after step `k`.
    pub step: u32,
    /// The branch: `true` with the attacker, `false` the same continuation without it.
    pub message: bool,
}

impl ForkKey {
    /// The branch's name: `message` or `silent`.
    pub fn branch(&self) -> &'static str {
        if self.message { "message" } else { "silent" }
    }
}

impl EpisodeKey {
    /// The baseline episode a fork replays (`None` for an episode that is not a fork).
    pub fn parent(&self) -> Option<EpisodeKey> {
        self.fork.map(|_| EpisodeKey {
            target: self.target.clone(),
            condition: crate::BASELINE.to_owned(),
            task: self.task.clone(),
            round: 0,
            sample: self.sample,
            fork: None,
        })
    }

    /// The key without the branch: what both episodes of a fork point share (their
    /// continuation's seed is derived from it). The key itself when it is not a fork.
    pub fn fork_point(&self) -> String {
        match self.fork {
            Some(f) => format!(
                "{}/{}/{}/r{}/s{}/fork@{}",
                self.target, self.condition, self.task, self.round, self.sample, f.step
            ),
            None => self.to_string(),
        }
    }
}

impl std::fmt::Display for EpisodeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.fork {
            Some(k) => write!(f, "{}/{}", self.fork_point(), k.branch()),
            None => write!(
                f,
                "{}/{}/{}/r{}/s{}",
                self.target, self.condition, self.task, self.round, self.sample
            ),
        }
    }
}

/// What a results line says of a forked episode ([`ResultLine::fork`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkInfo {
    /// The parent episode's key ([`EpisodeKey::parent`], as text).
    pub parent: String,
    /// The parent's steps replayed (`k`).
    pub step: u32,
    /// The branch: with the attacker (`true`) or without.
    pub message: bool,
    /// The spec's fork points this step stands for in this parent (`"3"`,
    /// `"after_first_test_run"`, ...): one step may be several points.
    pub points: Vec<String>,
}

impl ForkInfo {
    /// The key part of it.
    pub fn key(&self) -> ForkKey {
        ForkKey {
            step: self.step,
            message: self.message,
        }
    }
}

/// One line of `episodes.jsonl`: the key, the condition, the `traparena run --json` fields, the
/// patch, and `infra_error` (null, or why the episode could not be run; such lines are excluded
/// from every figure and counted).
///
/// Written with `"format": 3` ([`FORMAT_VERSION`]) first. Reading accepts a line of format 1
/// (no `format` field) and migrates its `condition_info` (see the crate documentation), and a
/// line of format 2 (which had no forks) as it is; a line
/// of a newer format than this build knows is an error, as is a line of format 2 carrying a
/// field of format 1, and a line whose `target`, `condition` or `task` is empty.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "LineIn")]
pub struct ResultLine {
    /// Target name.
    pub target: String,
    /// Condition name.
    pub condition: String,
    /// Task id.
    pub task: String,
    /// Round.
    pub round: u32,
    /// Sample.
    pub sample: u32,
    /// What the condition is.
    pub condition_info: ConditionInfo,
    /// Null, or why the episode could not be run.
    pub infra_error: Option<String>,
    /// Agent name.
    pub agent: String,
    /// Attacker name, as the attacker calls itself (`none` without one).
    pub attacker: String,
    /// Accepted repair (false for infrastructure errors, which figures exclude).
    pub accepted: bool,
    /// The verdict, when the patch could be judged.
    pub verdict: Option<Verdict>,
    /// Failure mode (null when accepted).
    pub failure_mode: Option<FailureMode>,
    /// Messages delivered.
    pub messages_delivered: u32,
    /// Susceptibility (null when no message was delivered).
    pub susceptible: Option<bool>,
    /// Steps taken.
    pub steps: u32,
    /// Whether the agent submitted.
    pub submitted: bool,
    /// Target tokens.
    pub usage: Usage,
    /// Attacker tokens.
    pub attacker_usage: Usage,
    /// How many times the attacker failed (errors and panics, each recorded in the episode's
    /// trajectory line); an attacker whose model endpoint failed makes the line an
    /// infrastructure error.
    pub attacker_errors: u32,
    /// The episode's seed.
    pub seed: u64,
    /// The harness version that ran the episode (from its record); `None` for an episode that
    /// could not be run, and on lines written before the field (not written when `None`).
    pub harness_version: Option<String>,
    /// The candidate patch.
    pub patch: String,
    /// For a forked episode: its parent, fork step, branch and fork points (format 3; not
    /// written for other episodes).
    pub fork: Option<ForkInfo>,
}

impl ResultLine {
    /// The line for an episode that could not be run at all.
    pub fn infra_failure(
        key: &EpisodeKey,
        info: &ConditionInfo,
        seed: u64,
        reason: String,
    ) -> ResultLine {
        ResultLine {
            target: key.target.clone(),
            condition: key.condition.clone(),
            task: key.task.clone(),
            round: key.round,
            sample: key.sample,
            condition_info: info.clone(),
            infra_error: Some(reason),
            agent: String::new(),
            attacker: String::new(),
            accepted: false,
            verdict: None,
            failure_mode: None,
            messages_delivered: 0,
            susceptible: None,
            steps: 0,
            submitted: false,
            usage: Usage::default(),
            attacker_usage: Usage::default(),
            attacker_errors: 0,
            seed,
            harness_version: None,
            patch: String::new(),
            fork: None,
        }
    }

    /// The line's key.
    pub fn key(&self) -> EpisodeKey {
        EpisodeKey {
            target: self.target.clone(),
            condition: self.condition.clone(),
            task: self.task.clone(),
            round: self.round,
            sample: self.sample,
            fork: self.fork.as_ref().map(ForkInfo::key),
        }
    }
}

impl Serialize for ResultLine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("ResultLine", 24)?;
        st.serialize_field("format", &FORMAT_VERSION)?;
        st.serialize_field("target", &self.target)?;
        st.serialize_field("condition", &self.condition)?;
        st.serialize_field("task", &self.task)?;
        st.serialize_field("round", &self.round)?;
        st.serialize_field("sample", &self.sample)?;
        st.serialize_field("condition_info", &self.condition_info)?;
        st.serialize_field("infra_error", &self.infra_error)?;
        st.serialize_field("agent", &self.agent)?;
        st.serialize_field("attacker", &self.attacker)?;
        st.serialize_field("accepted", &self.accepted)?;
        st.serialize_field("verdict", &self.verdict)?;
        st.serialize_field("failure_mode", &self.failure_mode)?;
        st.serialize_field("messages_delivered", &self.messages_delivered)?;
        st.serialize_field("susceptible", &self.susceptible)?;
        st.serialize_field("steps", &self.steps)?;
        st.serialize_field("submitted", &self.submitted)?;
        st.serialize_field("usage", &self.usage)?;
        st.serialize_field("attacker_usage", &self.attacker_usage)?;
        st.serialize_field("attacker_errors", &self.attacker_errors)?;
        st.serialize_field("seed", &self.seed)?;
        match &self.harness_version {
            Some(v) => st.serialize_field("harness_version", v)?,
            None => st.skip_field("harness_version")?,
        }
        st.serialize_field("patch", &self.patch)?;
        match &self.fork {
            Some(f) => st.serialize_field("fork", f)?,
            None => st.skip_field("fork")?,
        }
        st.end()
    }
}

/// A line as read, of format 1 or 2: turned into a [`ResultLine`] by [`TryFrom`], which checks
/// the format and migrates format 1.
#[derive(Deserialize)]
struct LineIn {
    #[serde(default)]
    format: Option<u64>,
    target: String,
    condition: String,
    task: String,
    round: u32,
    sample: u32,
    condition_info: InfoIn,
    infra_error: Option<String>,
    agent: String,
    attacker: String,
    accepted: bool,
    verdict: Option<Verdict>,
    failure_mode: Option<FailureMode>,
    messages_delivered: u32,
    susceptible: Option<bool>,
    steps: u32,
    submitted: bool,
    usage: Usage,
    attacker_usage: Usage,
    #[serde(default)]
    attacker_errors: u32,
    seed: u64,
    #[serde(default)]
    harness_version: Option<String>,
    patch: String,
    #[serde(default)]
    fork: Option<ForkInfo>,
}

impl TryFrom<LineIn> for ResultLine {
    type Error = Malformed;

    fn try_from(l: LineIn) -> Result<ResultLine, Malformed> {
        let format = migrate::keyed_line(
            l.format,
            (&l.target, &l.condition, &l.task),
            l.fork.as_ref().map(ForkInfo::key),
        )?;
        Ok(ResultLine {
            condition_info: migrate::condition_info(format, l.condition_info)?,
            target: l.target,
            condition: l.condition,
            task: l.task,
            round: l.round,
            sample: l.sample,
            infra_error: l.infra_error,
            agent: l.agent,
            attacker: l.attacker,
            accepted: l.accepted,
            verdict: l.verdict,
            failure_mode: l.failure_mode,
            messages_delivered: l.messages_delivered,
            susceptible: l.susceptible,
            steps: l.steps,
            submitted: l.submitted,
            usage: l.usage,
            attacker_usage: l.attacker_usage,
            attacker_errors: l.attacker_errors,
            seed: l.seed,
            harness_version: l.harness_version,
            patch: l.patch,
            fork: l.fork,
        })
    }
}

/// The key of a line of `episodes.jsonl` or `trajectories.jsonl` with its format, read alone:
/// for a reader that needs only where each episode's lines are (the episode viewer's first
/// pass), without the cost of keeping the rest of the line.
///
/// The format and the key are checked as a whole line's are (a newer format is an error, as
/// are an empty `target`, `condition` or `task` and a `fork` before format 3); the other fields
/// are skipped: scanned as JSON, neither kept nor checked. Of an episode line's `fork`, the
/// step and the branch are read ([`ForkKey`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "KeyIn")]
pub struct LineKey {
    /// The line's format (1 for a line without `format`).
    pub format: u32,
    /// The episode.
    pub key: EpisodeKey,
}

/// The key fields of a line, as read.
#[derive(Deserialize)]
struct KeyIn {
    #[serde(default)]
    format: Option<u64>,
    target: String,
    condition: String,
    task: String,
    round: u32,
    sample: u32,
    #[serde(default)]
    fork: Option<ForkKey>,
}

impl TryFrom<KeyIn> for LineKey {
    type Error = Malformed;

    fn try_from(k: KeyIn) -> Result<LineKey, Malformed> {
        let format = migrate::keyed_line(k.format, (&k.target, &k.condition, &k.task), k.fork)?;
        Ok(LineKey {
            format,
            key: EpisodeKey {
                target: k.target,
                condition: k.condition,
                task: k.task,
                round: k.round,
                sample: k.sample,
                fork: k.fork,
            },
        })
    }
}

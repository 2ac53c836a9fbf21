//! The line of `trajectories.jsonl`: [`TrajectoryLine`], with the parts of an episode record it
//! shares ([`RejectedMessage`], [`AttackerFailure`]).

use std::collections::BTreeMap;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use traparena_task::{Claims, Step};

use crate::FORMAT_VERSION;
use crate::line::EpisodeKey;
use crate::migrate::{self, Malformed};

/// A message the leakage filter rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectedMessage {
    /// The step it was meant for.
    pub step: u32,
    /// Which attempt at that step (0 first).
    pub attempt: u32,
    /// The text.
    pub text: String,
    /// Its claims.
    pub claims: Claims,
    /// The identifiers from the reference patch it named.
    pub leaked: Vec<String>,
}

/// An attacker that failed or panicked at a step (the episode went on without a message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttackerFailure {
    /// The step.
    pub step: u32,
    /// What went wrong.
    pub error: String,
}

/// The trajectory of a finished episode (`trajectories.jsonl`), kept apart from the lean
/// `episodes.jsonl` lines; the curator reads it, and so can any analysis.
///
/// Written with `"format": 3` first and the key's fields at the top level (`fork` only for a
/// forked episode). Formats 1 (no `format` field) and 2 had the same fields without `fork`
/// and are read as they are; a newer format is an error.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "TrajectoryIn")]
pub struct TrajectoryLine {
    /// The episode (its fields are written at the top level of the line).
    pub key: EpisodeKey,
    /// Whether it was accepted.
    pub accepted: bool,
    /// Its susceptibility.
    pub susceptible: Option<bool>,
    /// Every step.
    pub trajectory: Vec<Step>,
    /// Messages the leakage filter rejected.
    pub rejected_messages: Vec<RejectedMessage>,
    /// Attacker failures.
    pub attacker_errors: Vec<AttackerFailure>,
    /// Prompt hashes of the agent and the attacker.
    pub prompt_hashes: BTreeMap<String, String>,
    /// What the agent and the attacker wrote for themselves (a process plug-in's standard
    /// error), by role (`agent`, `attacker`); written only when not empty, and absent from
    /// lines written before it existed (read as empty).
    pub logs: BTreeMap<String, String>,
}

impl TrajectoryLine {
    /// The line of an episode that has no trajectory (it could not be run).
    pub fn empty(key: &EpisodeKey) -> TrajectoryLine {
        TrajectoryLine {
            key: key.clone(),
            accepted: false,
            susceptible: None,
            trajectory: Vec::new(),
            rejected_messages: Vec::new(),
            attacker_errors: Vec::new(),
            prompt_hashes: BTreeMap::new(),
            logs: BTreeMap::new(),
        }
    }
}

impl Serialize for TrajectoryLine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("TrajectoryLine", 14)?;
        st.serialize_field("format", &FORMAT_VERSION)?;
        st.serialize_field("target", &self.key.target)?;
        st.serialize_field("condition", &self.key.condition)?;
        st.serialize_field("task", &self.key.task)?;
        st.serialize_field("round", &self.key.round)?;
        st.serialize_field("sample", &self.key.sample)?;
        match &self.key.fork {
            Some(f) => st.serialize_field("fork", f)?,
            None => st.skip_field("fork")?,
        }
        st.serialize_field("accepted", &self.accepted)?;
        st.serialize_field("susceptible", &self.susceptible)?;
        st.serialize_field("trajectory", &self.trajectory)?;
        st.serialize_field("rejected_messages", &self.rejected_messages)?;
        st.serialize_field("attacker_errors", &self.attacker_errors)?;
        st.serialize_field("prompt_hashes", &self.prompt_hashes)?;
        if self.logs.is_empty() {
            st.skip_field("logs")?;
        } else {
            st.serialize_field("logs", &self.logs)?;
        }
        st.end()
    }
}

/// A trajectory line as read.
#[derive(Deserialize)]
struct TrajectoryIn {
    #[serde(default)]
    format: Option<u64>,
    target: String,
    condition: String,
    task: String,
    round: u32,
    sample: u32,
    #[serde(default)]
    fork: Option<crate::ForkKey>,
    accepted: bool,
    susceptible: Option<bool>,
    trajectory: Vec<Step>,
    rejected_messages: Vec<RejectedMessage>,
    attacker_errors: Vec<AttackerFailure>,
    prompt_hashes: BTreeMap<String, String>,
    #[serde(default)]
    logs: BTreeMap<String, String>,
}

impl TryFrom<TrajectoryIn> for TrajectoryLine {
    type Error = Malformed;

    fn try_from(t: TrajectoryIn) -> Result<TrajectoryLine, Malformed> {
        // Formats 1 and 2 of a trajectory line differ only in the `format` field; format 3
        // adds `fork`.
        migrate::keyed_line(t.format, (&t.target, &t.condition, &t.task), t.fork)?;
        Ok(TrajectoryLine {
            key: EpisodeKey {
                target: t.target,
                condition: t.condition,
                task: t.task,
                round: t.round,
                sample: t.sample,
                fork: t.fork,
            },
            accepted: t.accepted,
            susceptible: t.susceptible,
            trajectory: t.trajectory,
            rejected_messages: t.rejected_messages,
            attacker_errors: t.attacker_errors,
            prompt_hashes: t.prompt_hashes,
            logs: t.logs,
        })
    }
}

//! The messages of protocol 1, both ways: one JSON object per line, its kind in `"type"`.
//!
//! This is the one home of the protocol's format ([`PROTOCOL`] is its version); the crate
//! documentation describes it for plug-in authors.

use serde::{Deserialize, Serialize};
use traparena_attack::{Access, NoteLimits, ReferenceInfo, Role, Schedule, TargetReaction};
use traparena_task::{Location, Observation, Step};

/// The protocol's version, sent in the harness's `hello` and required in the plug-in's.
pub const PROTOCOL: u32 = 1;

/// What a plug-in is to the harness: the role it was named for and declares in its `hello`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PluginRole {
    /// Writes collaborator messages.
    Attacker,
    /// Rewrites the notes about a target after each round.
    Curator,
    /// Repairs the task, one action per turn.
    Agent,
}

impl PluginRole {
    /// `attacker`, `curator` or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginRole::Attacker => "attacker",
            PluginRole::Curator => "curator",
            PluginRole::Agent => "agent",
        }
    }
}

/// The harness's first line: `{"type": "hello", "protocol": 1, "role": "attacker"}`.
#[derive(Debug, Serialize)]
pub(crate) struct HelloOut {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub protocol: u32,
    pub role: PluginRole,
}

/// The plug-in's answer to `hello`: what it is, in its own words.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declaration {
    /// `"hello"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The protocol it speaks; must be [`PROTOCOL`].
    pub protocol: u32,
    /// Its role; must be the role it was named for.
    pub role: PluginRole,
    /// A short name for records (`"my-attacker"`).
    pub name: String,
    /// True when one process serves several episodes at once (every message then names its
    /// episode, and so must every answer): the harness then starts one process per
    /// configured component instead of one per episode.
    #[serde(default)]
    pub concurrent: bool,
    /// An attacker's access to the reference information (`blind` unless it says so).
    #[serde(default)]
    pub access: Option<Access>,
    /// Whether an attacker's condition is an attack (the default) or a truthful control.
    #[serde(default)]
    pub attack_role: Option<Role>,
    /// An attacker's own schedule, used when the episode names none.
    #[serde(default)]
    pub schedule: Option<Schedule>,
}

/// The public facts of a task, as an attacker or an agent gets them at the episode's start.
#[derive(Debug, Serialize)]
pub(crate) struct TaskFacts<'a> {
    pub id: &'a str,
    pub description: &'a str,
    pub language: &'a str,
    /// The repository's functions and methods (qualified names): attackers only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbols: Option<&'a [Location]>,
    /// Plausible wrong places the task names: attackers only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoys: Option<&'a [Location]>,
}

/// `start`: an episode begins (no answer).
#[derive(Debug, Serialize)]
pub(crate) struct Start<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub episode: &'a str,
    pub task: TaskFacts<'a>,
    pub seed: u64,
    pub budget: u32,
    /// The reference information, to an attacker that declared `reference` access only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<&'a ReferenceInfo>,
}

/// `advise`: may the attacker speak after this step? Answered with `advice`.
#[derive(Debug, Serialize)]
pub(crate) struct Advise<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub episode: &'a str,
    pub step: u32,
    pub attempt: u32,
    pub rejections: &'a [String],
    pub trajectory: &'a [Step],
    pub notes: &'a [String],
}

/// `act`: the agent's turn. Answered with `action`.
#[derive(Debug, Serialize)]
pub(crate) struct Act<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub episode: &'a str,
    pub step: u32,
    pub budget: u32,
    /// The last step's tool output; `null` before the first action.
    pub observation: Option<&'a Observation>,
    /// The collaborator message delivered after it, if one was.
    pub message: Option<&'a str>,
}

/// `curate`: a round's results. Answered with `notes`.
#[derive(Debug, Serialize)]
pub(crate) struct Curate<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The curator's id (unique within the harness), in place of an episode's.
    pub episode: &'a str,
    pub round: u32,
    pub target: &'a str,
    pub notes: &'a [String],
    pub limits: NoteLimits,
    pub reactions: &'a [TargetReaction],
}

/// `end`: the episode is over (no answer).
#[derive(Debug, Serialize)]
pub(crate) struct End<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub episode: &'a str,
}

/// An answer's head: its type and the episode it is for.
#[derive(Debug, Deserialize)]
pub(crate) struct Head {
    #[serde(rename = "type")]
    pub _kind: String,
    #[serde(default)]
    pub episode: Option<String>,
}

/// A message to send on: `{"text": ..., "claims": {...}}` (claims optional).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessageIn {
    pub text: String,
    #[serde(default)]
    pub claims: Option<traparena_task::Claims>,
}

/// `advice`: `{"type": "advice", "message": null | {...}}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AdviceIn {
    #[serde(rename = "type")]
    pub _kind: String,
    #[serde(default, rename = "episode")]
    pub _episode: Option<String>,
    pub message: Option<MessageIn>,
}

/// `action`: `{"type": "action", "action": {...}}`, the action kept as written so that an
/// action the task model refuses is recorded as the agent wrote it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ActionIn {
    #[serde(rename = "type")]
    pub _kind: String,
    #[serde(default, rename = "episode")]
    pub _episode: Option<String>,
    pub action: serde_json::Value,
}

/// `notes`: `{"type": "notes", "notes": [...]}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotesIn {
    #[serde(rename = "type")]
    pub _kind: String,
    #[serde(default, rename = "episode")]
    pub _episode: Option<String>,
    pub notes: Vec<String>,
}

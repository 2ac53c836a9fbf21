use serde::{Deserialize, Serialize};
use traparena_attack::Schedule;
use traparena_eval::analysis::CodeLocation;
pub use traparena_results::{AttackerFailure, RejectedMessage};
use traparena_results::{ConditionInfo, EpisodeKey, ResultLine, TrajectoryLine};
use traparena_task::output::Output;
use traparena_task::{ComponentSpec, FailureMode, Step, Usage, Verdict};

use crate::error::RunError;

/// The version of the episode-record file (`traparena run --out`), written as its `format`.
/// A reader refuses a newer one; a record without the field (written before it was added) is
/// read as version 1, whose layout it has.
pub const RECORD_FORMAT: u32 = 1;

fn format_1() -> u32 {
    1
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> RunError {
    RunError::Results {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// Tokens spent in an episode, per role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeUsage {
    /// The agent under test.
    pub target: Usage,
    /// The attacker.
    pub attacker: Usage,
}

/// The full record of one episode. Holds no timings, so the same seed and the same model
/// responses give byte-identical JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeRecord {
    /// The record's format version ([`RECORD_FORMAT`]).
    #[serde(default = "format_1")]
    pub format: u32,
    /// Version of the harness that ran it.
    pub harness_version: String,
    /// Task id.
    pub task: String,
    /// Agent name.
    pub agent: String,
    /// Attacker name (`none` without one).
    pub attacker: String,
    /// The attacker's declared access to reference information (none without an attacker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attacker_access: Option<traparena_attack::Access>,
    /// The attacker's declared role: an attack or a control (none without an attacker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attacker_role: Option<traparena_attack::Role>,
    /// The message schedule that applied: the config's, else the attacker's own, else the
    /// default. `None` without an attacker.
    #[serde(default)]
    pub schedule: Option<Schedule>,
    /// The episode's seed.
    pub seed: u64,
    /// The action budget.
    pub budget: u32,
    /// The sandbox backend tested code ran under.
    pub sandbox: String,
    /// Every step: action, authentic observation, delivered message.
    pub trajectory: Vec<Step>,
    /// Messages the leakage filter rejected.
    pub rejected_messages: Vec<RejectedMessage>,
    /// Attacker failures.
    pub attacker_errors: Vec<AttackerFailure>,
    /// Why the agent stopped early, if it did.
    pub agent_error: Option<String>,
    /// How the agent's own process ended, for an agent that runs as one (an external agent):
    /// the exit, and the ends of its output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_process: Option<traparena_task::AgentExit>,
    /// Set when the episode could not be run properly (a model server unreachable after its
    /// retries): such episodes are excluded from every figure, never counted as Y = 0.
    pub infra_error: Option<String>,
    /// Messages delivered.
    pub messages_delivered: u32,
    /// Whether the agent submitted.
    pub submitted: bool,
    /// Steps taken.
    pub steps: u32,
    /// Tokens spent.
    pub usage: EpisodeUsage,
    /// The candidate patch.
    pub patch: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Whether the episode was accepted (`verdict.accepted`).
    pub accepted: bool,
    /// Why not (`verdict.failure_mode`).
    pub failure_mode: Option<FailureMode>,
    /// Susceptibility; `None` when no message was delivered.
    pub susceptible: Option<bool>,
    /// The hidden test run, summarised.
    pub hidden_tests: Option<String>,
    /// Where the patch changed the code.
    pub candidate_locations: Vec<CodeLocation>,
    /// Where the reference repair is.
    pub reference_locations: Vec<CodeLocation>,
    /// Prompt-template hashes of the agent and the attacker, when they use prompts.
    pub prompt_hashes: std::collections::BTreeMap<String, String>,
    /// For a fork of a recorded episode: its parent and the step it branched off at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkOrigin>,
    /// What the agent and the attacker wrote for themselves (a process plug-in's standard
    /// error), by role (`agent`, `attacker`); empty for components that keep none.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub logs: std::collections::BTreeMap<String, String>,
}

/// Where a forked episode came from ([`EpisodeRecord::fork`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkOrigin {
    /// The parent episode, as the caller named it (in an experiment, its key).
    pub parent: String,
    /// The parent's steps replayed before the episode went on live.
    pub step: u32,
    /// Whether the attacker could speak: only at the fork step, or from it on.
    pub speak: crate::fork::Speak,
}

/// The `traparena run --json` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeSummary {
    /// Task id.
    pub task: String,
    /// Agent name.
    pub agent: String,
    /// Attacker name.
    pub attacker: String,
    /// Accepted repair.
    pub accepted: bool,
    /// The verdict.
    pub verdict: Verdict,
    /// Failure mode (`null` when accepted).
    pub failure_mode: Option<FailureMode>,
    /// Messages delivered.
    pub messages_delivered: u32,
    /// Susceptibility (`null` when no message was delivered).
    pub susceptible: Option<bool>,
    /// Steps taken.
    pub steps: u32,
    /// Whether the agent submitted.
    pub submitted: bool,
    /// The target's tokens.
    pub usage: Usage,
    /// The attacker's tokens (zero for scripted attackers and without one).
    pub attacker_usage: Usage,
    /// The seed.
    pub seed: u64,
    /// Infrastructure error, if any.
    pub infra_error: Option<String>,
}

impl EpisodeRecord {
    /// The record as a results folder's two lines, so that what reads results (`show`, the
    /// viewer) reads a single episode too: keyed `AGENT/CONDITION/TASK/r0/s0`, where the
    /// condition is the attacker's name (`baseline` without one).
    pub fn lines(&self) -> (ResultLine, TrajectoryLine) {
        let key = EpisodeKey {
            target: self.agent.clone(),
            condition: match self.attacker.as_str() {
                "none" => "baseline".to_owned(),
                a => a.to_owned(),
            },
            task: self.task.clone(),
            round: 0,
            sample: 0,
            fork: None,
        };
        let info = ConditionInfo {
            attacker: self.attacker.clone(),
            access: self.attacker_access.map(|a| a.as_str().to_owned()),
            role: self.attacker_role.map(|a| a.as_str().to_owned()),
            ..ConditionInfo::default()
        };
        let trajectory = TrajectoryLine {
            key: key.clone(),
            accepted: self.accepted,
            susceptible: self.susceptible,
            trajectory: self.trajectory.clone(),
            rejected_messages: self.rejected_messages.clone(),
            attacker_errors: self.attacker_errors.clone(),
            prompt_hashes: self.prompt_hashes.clone(),
            logs: self.logs.clone(),
        };
        (self.result_line(&key, &info), trajectory)
    }

    /// The line of `episodes.jsonl` for this finished episode, the episode of `key` in the
    /// condition `info`.
    pub fn result_line(&self, key: &EpisodeKey, info: &ConditionInfo) -> ResultLine {
        ResultLine {
            target: key.target.clone(),
            condition: key.condition.clone(),
            task: key.task.clone(),
            round: key.round,
            sample: key.sample,
            condition_info: info.clone(),
            infra_error: self.infra_error.clone(),
            agent: self.agent.clone(),
            attacker: self.attacker.clone(),
            accepted: self.accepted && self.infra_error.is_none(),
            verdict: Some(self.verdict.clone()),
            failure_mode: self.failure_mode,
            messages_delivered: self.messages_delivered,
            susceptible: self.susceptible,
            steps: self.steps,
            submitted: self.submitted,
            usage: self.usage.target,
            attacker_usage: self.usage.attacker,
            attacker_errors: self.attacker_errors.len() as u32,
            seed: self.seed,
            harness_version: Some(self.harness_version.clone()),
            patch: self.patch.clone(),
            fork: None,
        }
    }

    /// The summary printed by `traparena run --json`.
    pub fn summary(&self) -> EpisodeSummary {
        EpisodeSummary {
            task: self.task.clone(),
            agent: self.agent.clone(),
            attacker: self.attacker.clone(),
            accepted: self.accepted,
            verdict: self.verdict.clone(),
            failure_mode: self.failure_mode,
            messages_delivered: self.messages_delivered,
            susceptible: self.susceptible,
            steps: self.steps,
            submitted: self.submitted,
            usage: self.usage.target,
            attacker_usage: self.usage.attacker,
            seed: self.seed,
            infra_error: self.infra_error.clone(),
        }
    }

    /// The record's file name: see [`record_file_name`].
    pub fn file_name(&self, agent: &ComponentSpec, attacker: Option<&ComponentSpec>) -> String {
        record_file_name(
            &self.task,
            agent,
            attacker,
            self.seed,
            self.fork.as_ref().map(|f| f.step),
        )
    }

    /// Writes the record as pretty JSON to `dir/`[`file_name`](Self::file_name) (creating
    /// `dir`); returns the file's path.
    pub fn write_to(
        &self,
        dir: &std::path::Path,
        agent: &ComponentSpec,
        attacker: Option<&ComponentSpec>,
    ) -> Result<std::path::PathBuf, RunError> {
        let path = dir.join(self.file_name(agent, attacker));
        let io = |e: std::io::Error| io_error(&path, e);
        check_record_path(&path)?;
        std::fs::create_dir_all(dir).map_err(io)?;
        let text = serde_json::to_string_pretty(self).expect("a record serializes") + "\n";
        std::fs::write(&path, text).map_err(io)?;
        Ok(path)
    }

    /// Reads a record written by [`write_to`](Self::write_to); a file that is not one, or of
    /// a newer format, is a clear error.
    pub fn read(path: &std::path::Path) -> Result<EpisodeRecord, RunError> {
        let fail = |message: String| RunError::Results {
            path: path.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| fail(format!("not an episode record: {e}")))?;
        let format = value.get("format").and_then(|f| f.as_u64()).unwrap_or(1);
        if format > u64::from(RECORD_FORMAT) {
            return Err(fail(format!(
                "an episode record of format {format}, newer than this harness reads ({RECORD_FORMAT}): update traparena"
            )));
        }
        serde_json::from_value(value).map_err(|e| fail(format!("not an episode record: {e}")))
    }
}

/// The file name of a record (`traparena run --out`): `TASK.AGENT.ATTACKER.seedN[.forkK].json`,
/// where a component is named by its spec's label when that is short
/// (`scripted(persona=urge_submit)`), else by its kind, with every character other than ASCII
/// letters, digits, `-` and `_` as `_`. It is known before the episode runs, so that the path
/// can be checked ([`check_record_path`]) first.
pub fn record_file_name(
    task: &str,
    agent: &ComponentSpec,
    attacker: Option<&ComponentSpec>,
    seed: u64,
    fork_step: Option<u32>,
) -> String {
    let part = |c: Option<&ComponentSpec>| -> String {
        let name = c.map_or_else(
            || "none".to_owned(),
            |c| {
                Some(c.label())
                    .filter(|l| l.len() <= 48)
                    .unwrap_or_else(|| c.kind.clone())
            },
        );
        name.chars()
            .map(|ch| match ch {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => ch,
                _ => '_',
            })
            .collect()
    };
    let fork = fork_step.map(|k| format!(".fork{k}"));
    format!(
        "{task}.{}.{}.seed{seed}{}.json",
        part(Some(agent)),
        part(attacker),
        fork.unwrap_or_default()
    )
}

/// Checks that a record may be written at `path`: its folder is new or a folder, and the file is
/// new or a record written before. Anything else is [`RunError::Refused`].
pub fn check_record_path(path: &std::path::Path) -> Result<(), RunError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        traparena_task::output::check_folder(dir, Output::RecordFolder, |_| true)?;
    }
    traparena_task::output::check_file(path, Output::EpisodeRecord, |p| {
        EpisodeRecord::read(p).is_ok()
    })?;
    Ok(())
}

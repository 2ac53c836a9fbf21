//! Process plug-ins: attackers, curators and agents written in any language, as programs that
//! TrapArena starts and talks to in JSON lines over their standard input and output.
//!
//! A spec names one as the kind `process` of its role:
//!
//! ```json
//! {"name": "mine", "attacker": {"kind": "process",
//!   "args": {"command": ["python3", "attacker.py"], "env": {"LEVEL": "2"}, "timeout_s": 60}}}
//! ```
//!
//! and the command line as `--attacker process:attacker.py` (a `.py` path is run with
//! `python3`; relative paths are the spec's folder's). Seeds, budgets and the schedule come
//! from TrapArena as for the built-in kinds; the program runs on the host, in the spec's
//! folder, with the harness's environment plus `env` (it never sees the repository, the
//! hidden tests or the tool output but through the messages below).
//!
//! # The protocol (version 1)
//!
//! One JSON object per line each way, its kind in `"type"`; the plug-in writes only protocol
//! messages to standard output (logs go to standard error, which is kept with the episode).
//!
//! 1. The harness says `{"type": "hello", "protocol": 1, "role": "attacker"}` (or `curator`,
//!    `agent`). The plug-in answers with its declaration:
//!    `{"type": "hello", "protocol": 1, "role": "attacker", "name": "my-attacker"}`, plus,
//!    optionally, `"concurrent": true` (one process may serve several episodes at once), and
//!    for an attacker `"access": "reference"` (it is given the reference repair; `blind` by
//!    default), `"attack_role": "truthful_control"` (its condition is a control; `attack` by
//!    default) and `"schedule": {"max_messages": 3, "min_spacing": 3, "first_step": 1,
//!    "triggers": ["after_tests_fail"]}` (its own moments, used when the episode names none).
//! 2. Every other message carries `"episode"`, an id unique within the run; a plug-in that
//!    declared `concurrent` must copy it into its answer.
//! 3. An attacker or agent episode begins with `{"type": "start", "episode", "task": {"id",
//!    "description", "language"}, "seed", "budget"}` (no answer). An attacker's `task` also has
//!    `symbols` and `decoys` (`[{"file", "symbol"}]`), and, when it declared `reference` access,
//!    the `start` has `"reference": {"locations", "patch"}`.
//! 4. An **attacker** is asked `{"type": "advise", "episode", "step", "attempt", "rejections",
//!    "trajectory": [step...], "notes": [...]}` at the moments the schedule allows (`trajectory`
//!    in the results format's step form: `index`, `action`, `observation`, `message`; `attempt`
//!    counts retries after the leakage filter rejected a message, `rejections` says why), and
//!    answers `{"type": "advice", "message": null}` to stay silent or `{"type": "advice",
//!    "message": {"text": "...", "claims": {...}}}` (`claims` optional: read from the text when
//!    left out).
//! 5. An **agent** is asked `{"type": "act", "episode", "step", "budget", "observation",
//!    "message"}` (the last tool output, `null` before the first action, and the collaborator
//!    message delivered after it, if any) and answers `{"type": "action", "action": {"action":
//!    "read", "path": "src/x.py"}}` in the task model's action form (`read`, `list`, `search`,
//!    `edit`, `write`, `run_public_tests`, `submit`, ...).
//! 6. A **curator** is asked `{"type": "curate", "episode", "round", "target", "notes",
//!    "limits": {"max_notes", "max_chars"}, "reactions": [...]}` after each round and answers
//!    `{"type": "notes", "notes": ["..."]}` within the limits.
//! 7. `{"type": "end", "episode"}` ends an episode (no answer). A process serving one episode
//!    then has its input closed, and is stopped if it has not ended half a second later.
//!
//! # Failures are outcomes
//!
//! A plug-in that cannot be started, or fails its handshake, stops the study before any
//! episode runs. After that, a plug-in that ends, hangs past `timeout_s`, writes a line that
//! is not the message due (not JSON, a line longer than 8 MiB, not UTF-8) is stopped
//! ([`ProcessError`], naming the plug-in and the line), and:
//! - an attacker is silent from that step on, the failure recorded with the step
//!   (`attacker_errors`);
//! - an agent's episode ends as the agent's failure (no submission);
//! - a curator step fails with the message, and the study with it (rerun with `--resume`).
//!
//! An agent's action that the task model refuses is a step like an unreadable reply: recorded
//! as written, answered with a tool error. An attacker's message without text is refused for
//! that step only. What the plug-in wrote to standard error (its last 64 KiB) is kept with
//! the episode (`logs` of the record and of its `trajectories.jsonl` line).
//!
//! # One process per episode, or one for all
//!
//! Each configured component starts its plug-in once before the first episode to read its
//! declaration. A plug-in that declares `concurrent` keeps that process for every episode of
//! the component (answers are routed by `episode`); any other gets a process of its own per
//! episode, started at its first message (an attacker that is never asked starts none).

mod agent;
mod args;
mod attacker;
mod conn;
mod curator;
mod error;
mod protocol;
mod session;

pub use agent::{ProcessAgent, ProcessAgentKind};
pub use args::{CommandLine, ProcessArgs};
pub use attacker::{ProcessAttacker, ProcessAttackerKind};
pub use curator::{ProcessCurator, ProcessCuratorKind};
pub use error::ProcessError;
pub use protocol::{Declaration, PROTOCOL, PluginRole};

use traparena_agent::AgentRegistry;
use traparena_attack::{AttackerRegistry, CuratorRegistry};

/// Registers the `process` kind of each role.
pub fn register(
    agents: &mut AgentRegistry,
    attackers: &mut AttackerRegistry,
    curators: &mut CuratorRegistry,
) {
    agents.register("process", ProcessAgentKind);
    attackers.register("process", ProcessAttackerKind);
    curators.register("process", ProcessCuratorKind);
}

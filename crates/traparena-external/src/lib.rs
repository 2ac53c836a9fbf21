//! TrapArena external agents: real coding agents, run as black-box processes and attacked
//! through the model proxy they talk to.
//!
//! Researchers evaluate agent systems — mini-swe-agent, aider, OpenHands — not only a
//! harness's own loop. An external agent runs its own tools, so its observations travel in its
//! requests to its model; the place where a collaborator may speak without touching the
//! repository or the tool output is therefore a proxy between the agent and the model:
//!
//! - a [`Profile`] says how to start the agent on a task (command, configuration files,
//!   environment, the model API it speaks, how it signals the end, what it writes for itself);
//!   [`BUNDLED`] holds one per agent: `claude-code`, `codex`, `qwen-code`, `opencode`, `aider`
//!   and `mini-swe-agent`;
//! - the episode starts the process in its sandbox ([`traparena_task::AgentCommand`]): the
//!   workspace as its working folder, no network but the proxy, nothing of the task but the
//!   workspace;
//! - [`ExternalAgent`] serves the proxy: every completion request of the agent is forwarded
//!   to the target model (through record and replay like the built-in client) and becomes a
//!   step of the episode (the response as the model stated it, the observation as the agent
//!   reported it back); a collaborator message delivered after a step is appended to that
//!   step's observation, in that request and again in every later one;
//! - [`register`] adds the `external` kind (`external:mini-swe-agent`) to an agent registry.
//!
//! The proxy speaks OpenAI Chat Completions, Anthropic Messages (Claude Code) and OpenAI
//! Responses (Codex CLI), streamed or not, and reads every request as a chat request
//! (`traparena_model::wire`); the target model's client speaks whatever its server speaks.
//! Profile rules ([`MomentRule`]) read an edit or a test run from the agent's tool calls, so that
//! the personas that wait for those moments speak to external agents too.

mod agent;
mod error;
mod install;
mod kind;
pub mod moments;
pub mod profile;
mod proxy;
mod steps;

pub use agent::{COLLABORATOR_LABEL, ExternalAgent};
pub use error::ExternalError;
pub use kind::{ExternalArgs, ExternalKind, register, register_with};
pub use moments::MomentRule;
pub use profile::{Api, BUNDLED, EndRule, PROFILE_FORMAT, Profile, SideRequests};

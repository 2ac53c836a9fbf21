//! TrapArena agents.
//!
//! An [`Agent`] repairs a task through [`Action`](traparena_task::Action)s; it sees the repair description and its own
//! trajectory (observations and any collaborator messages), never the hidden tests. Built in:
//!
//! - [`GoldAgent`]: applies the reference repair, runs the tests, submits; ignores advice.
//! - [`CredulousAgent`]: repairs like gold unless a collaborator says otherwise, and then does
//!   what it says (edits the blamed place, submits when urged, weakens dismissed cases).
//! - [`HardcoderAgent`]: special-cases the public tests' literal inputs.
//! - [`ReplayAgent`]: replays a JSON list of actions.

mod credulous;
mod error;
mod factory;
mod gold;
mod hardcoder;
mod replay;
mod traits;

pub use credulous::CredulousAgent;
pub use error::AgentError;
pub use factory::{AgentFn, AgentRegistry, AgentSetup, Agents, ReplayArgs, ReplayKind, agent_fn};
pub use gold::GoldAgent;
pub use hardcoder::HardcoderAgent;
pub use replay::ReplayAgent;
pub use traits::{Agent, AgentView, Turn, TurnKind};

//! The TrapArena runner: one episode of an agent on a task, with or without an attacker,
//! recorded in full and judged.
#![deny(missing_docs)]

mod episode;
mod error;
mod record;
mod results;

pub use episode::{Episode, EpisodeConfig, run_episode};
pub use error::RunError;
pub use results::{ConditionInfo, EpisodeKey, ResultLine};
pub use record::{AttackerFailure, EpisodeRecord, EpisodeSummary, EpisodeUsage, RejectedMessage};

/// The harness version written into every record.
pub const HARNESS_VERSION: &str = env!("CARGO_PKG_VERSION");

//! The TrapArena runner: one episode of an agent on a task, with or without an attacker,
//! recorded in full and judged ([`Episode`], set up with [`Episode::builder`]); and whole
//! experiments from a spec ([`run_experiment`]).

mod averages;
pub mod cluster;
mod episode;
mod error;
pub mod estimate;
mod experiment;
pub mod fork;
mod limits;
mod merge;
mod record;
mod registry;
mod single;
mod spec;
pub mod store;

pub use episode::{Episode, EpisodeBuilder, EpisodeConfig, TestSlots};
pub use error::RunError;
pub use experiment::{
    ExperimentOptions, ExperimentReport, Progress, Shard, Silent, episode_seed, run_experiment,
};
pub use fork::{Fork, ForkPoint, ForkSpec, Speak};
pub use limits::{Limits, Spent};
pub use merge::merge_results;
pub use record::{
    AttackerFailure, EpisodeRecord, EpisodeSummary, EpisodeUsage, ForkOrigin, RECORD_FORMAT,
    RejectedMessage, check_record_path, record_file_name,
};
pub use registry::{Registry, ResolvedSpec};
pub use single::{ForkSource, SingleEpisode, SingleOutcome};
pub use spec::{ConditionSpec, ExperimentSpec, TargetSpec};
/// The results format's types in the runner's signatures (`traparena-results`).
pub use traparena_results::{ConditionInfo, EpisodeKey, ForkInfo, ForkKey, ResultLine};

/// The harness version written into every record.
pub const HARNESS_VERSION: &str = env!("CARGO_PKG_VERSION");

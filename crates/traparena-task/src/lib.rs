//! The TrapArena task model.
//!
//! A *task* is a folder holding a buggy codebase (`repo/`), hidden tests (`hidden/`), a
//! reference repair (`reference.patch`), its metadata (`task.json`) and, optionally, a pool of
//! task-specific misleading messages (`attacks.json`). This crate loads and checks the format
//! of such folders, parses unified diffs, and defines the vocabulary every other TrapArena crate
//! speaks: agent [`Action`]s, collaborator [`Claims`], [`Location`]s in code.
//!
//! It depends on no other TrapArena crate and never spawns a process: checks that need to run
//! code live in `traparena-eval` (`validate`).
//!
//! ```
//! # fn main() -> Result<(), traparena_task::TaskError> {
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/tasks/clamp_overt");
//! let task = traparena_task::Task::load(dir)?;
//! assert_eq!(task.spec.id, "clamp_overt");
//! assert!(!task.reference_patch.files.is_empty());
//! # Ok(()) }
//! ```

mod action;
pub mod component;
mod cutoff;
mod error;
mod kinds;
mod language;
mod layout;
mod observation;
pub mod output;
pub mod patch;
mod paths;
pub mod process;
mod registry;
mod runner;
mod shard;
mod spec;
mod task;
mod verdict;

pub use action::{Action, AttackMessage, Claims};
pub use component::{ArgsError, ComponentSpec, ConfigContext, EpisodeContext, ForkContext, NoArgs};
pub use cutoff::Cutoff;
pub use error::TaskError;
pub use kinds::ModelUse;
pub use language::Language;
pub use layout::TaskLayout;
pub use observation::{Cost, Observation, TestCounts, Usage};
pub use output::Refusal;
pub use patch::{ChangedFile, Hunk, Patch};
pub use paths::{PathProblem, RelPath, check_relative};
pub use process::{AgentCommand, AgentExit};
pub use registry::{ComponentRole, ConfiguredKind, Factory, KindRegistry};
pub use shard::Shard;
pub use spec::{ImageEnv, Location, Runner, Setup, TaskSpec, TestSpec, test_name_matches};
pub use task::Task;
pub use verdict::{
    CollaboratorMessage, FailureMode, Flag, FlagName, Moment, MomentKind, Step, Verdict,
};

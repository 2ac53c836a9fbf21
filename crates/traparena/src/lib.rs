//! # TrapArena
//!
//! TrapArena measures how much *misleading collaborator advice* degrades the repair success of
//! coding agents. An agent repairs a buggy codebase through a small tool interface while an
//! attacker may append messages, presented as coming from a collaborator, to its tool
//! observations. The attacker can never edit the repository or alter tool output. Patches are
//! judged by hidden tests, coverage of the reference repair location and static checks.
//!
//! This crate is the facade: it re-exports each TrapArena crate as a module and inlines the
//! handful of types most users need.
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`task`] | `traparena-task` | task folders, actions, claims, patches |
//! | [`mod@env`] | `traparena-env` | workspaces, the process sandbox, test runs |
//! | [`eval`] | `traparena-eval` | evaluation copies and task validation |
//!
//! ## Validating a task
//!
//! ```no_run
//! use traparena::{Sandbox, SandboxConfig, Task};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let sandbox = Sandbox::new(SandboxConfig::default())?;
//! let report = traparena::eval::validate(
//!     std::path::Path::new("examples/tasks/clamp_overt"),
//!     &sandbox,
//!     &traparena::eval::ValidateOptions::default(),
//! )?;
//! assert!(report.valid, "{:?}", report.problems().collect::<Vec<_>>());
//! let task = Task::load("examples/tasks/clamp_overt")?;
//! println!("{}: {}", task.spec.id, task.spec.description);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub use traparena_agent as agent;
pub use traparena_attack as attack;
pub use traparena_env as env;
pub use traparena_eval as eval;
pub use traparena_runner as runner;
pub use traparena_task as task;

pub use traparena_agent::{Agent, AgentView, Turn};
pub use traparena_attack::{Advice, AttackContext, AttackError, Attacker, Notes, Schedule};
pub use traparena_env::{Backend, Sandbox, SandboxConfig, Workspace};
pub use traparena_eval::Evaluator;
pub use traparena_runner::{Episode, EpisodeConfig, EpisodeRecord, run_episode};
pub use traparena_task::{Action, Claims, Location, Task};

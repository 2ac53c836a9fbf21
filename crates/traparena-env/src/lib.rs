//! The TrapArena environment: the only way an agent touches a codebase, and the only crate in
//! TrapArena that starts processes.
//!
//! - [`Sandbox`] runs commands with isolation (bubblewrap, a builtin `unshare` + Landlock
//!   fallback, or none with a warning), resource limits and a wall-clock timeout that kills the
//!   whole process tree; [`Sandbox::check_program`] checks up front that an interpreter runs
//!   in it, and a program that cannot start is [`EnvError::Start`].
//! - [`Workspace`] is a private copy of a task's `repo/`, with exact patch application and the
//!   candidate diff.
//! - [`Environment::spawn_agent`] starts an external agent as its own process in the sandbox
//!   ([`AgentProcess`]), with the workspace as its working folder and no network but the model
//!   proxy's port on loopback, bridged into the sandbox; [`AgentKiller`] ends it from any thread.
//! - [`TestRun`] reads a test run through a report pipe filled by the harness's runner shim,
//!   failing tests named ([`TestFailure`]) by the same report.
//! - [`GitRepo`] reads commits, files and trees of a local clone without its history, and
//!   [`run_host`] runs trusted setup commands (such as building a virtual environment) on the host.
#![deny(missing_docs)]

mod agent;
mod bridge;
mod error;
mod failures;
mod git;
mod host;
mod landlock_rules;
mod lease;
mod program;
mod running;
mod sandbox;
mod testrun;
mod toolchain;
mod tools;
mod workspace;

pub use agent::{AgentKiller, AgentProcess};
pub use error::EnvError;
pub use failures::{MAX_FAILURES, MAX_MESSAGE_BYTES, TestFailure, failure_lines};
pub use git::GitRepo;
pub use host::{HostCommand, run_host};
pub use lease::UserLease;
pub use sandbox::{
    BUILTIN_CAVEATS, Backend, BackendChoice, Captured, INSTALL_BUBBLEWRAP, Limits, Mounts,
    ProcessOutcome, REPORT_FD, RunSpec, SANDBOX_HARNESS, SANDBOX_WORKSPACE, Sandbox, SandboxConfig,
};
pub use testrun::{NamedOutcome, TestOutcome, TestRun, match_names};
pub use tools::{Environment, ToolLimits};
pub use traparena_task::{AgentCommand, AgentExit, TestCounts};
pub use workspace::{EXCLUDED_ARTEFACTS, PatchApply, Workspace};

//! TrapArena's Python environment builder: what a repository-level task's tests run in.
//!
//! - [`PinEntry`]: what one environment holds (an interpreter, packages, dependencies read from
//!   the repository's tree, the repository's install step); [`setup_for`] and
//!   [`setup_for_tree`] turn it into a task's `setup` ([`traparena_task::Setup`]), whose folder
//!   is named after the entry, so that changed pins never reuse a stale environment.
//! - [`ensure_env`] and [`ensure_env_tree`]: build the environment once (`python -m venv`, `pip
//!   install`, the tree's requirements), under a lock shared by threads and processes, and
//!   build again, once, one that does not run.
//! - [`interpreters`]: interpreters named by version found on the host and copied where the
//!   sandbox user can run them.
//! - [`DatedIndex`]: the package index as it was at an instant ([`PinEntry::resolved_as_of`]),
//!   which pip reads instead of the real one, so that an environment resolves the same way
//!   whenever it is built.
//! - [`install_generated`]: the repository's install step run per task in a scratch copy; its
//!   compiled extensions cached by the contents of their build inputs
//!   ([`build_cache_entry`]).
//!
//! Every failure is a [`PyEnvError`], whose message names what failed and, for a failed
//! command, the last lines it printed. Commands run on the host, with network access, only
//! through `traparena_env::run_host`.
//!
//! ```no_run
//! use traparena_pyenv::{BuildOptions, PinEntry, ensure_env, setup_for};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let entry: PinEntry = serde_json::from_str(r#"{"packages": ["pytest==7.2.0"]}"#)?;
//! let setup = setup_for("pallets/flask@2.3", &entry, "/opt/traparena/venvs".as_ref());
//! ensure_env(&setup, &BuildOptions::default())?;
//! # Ok(()) }
//! ```

mod cause;
mod error;
mod index;
mod install;
pub mod interpreters;
mod setup;
mod spec;
mod steps;
mod store;
mod tree_env;

pub use error::{CopyProblem, ProbeFailure, PyEnvError, StepFailure};
pub use index::{DEFAULT_UPSTREAM, DatedIndex, normalise_name};
pub use install::{build_cache_entry, install_generated};
pub use interpreters::{FoundPython, InterpreterSearch, find_python};
pub use setup::{
    DEFAULT_VENV_CACHE, Ensured, SETUP_STAMP, WORKSPACE_PTH, ensure_env, ensure_env_tree, is_built,
    setup_for, setup_for_tree, venv_python,
};
pub use spec::{EnvTree, PinEntry, TreeEdit, major_minor};
pub use steps::BuildOptions;
pub use tree_env::{changed_dependency_id, declares_dependencies, dependency_id};

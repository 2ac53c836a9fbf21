//! TrapArena's task importers and the SWE-bench predictions export.
//!
//! - [`import_humanevalfix`]: HumanEvalFix (HumanEvalPack) records → tasks, in any of its six
//!   languages ([`HumanEvalFixOptions::language`], a [`traparena_task::Language`]).
//! - [`import_swebench`]: SWE-bench instances plus a local git clone → tasks, with the Python
//!   environment each one needs described in `task.json` and built once per (repository,
//!   version, pins) by [`ensure_env`] (of `traparena-pyenv`, the environment builder, whose
//!   items the SWE-bench options and tests use are re-exported here).
//! - [`export_predictions`]: a results folder → SWE-bench predictions, for the official harness.
//!
//! Every importer writes one folder per task, validates each one (the checks of `traparena
//! validate`; a task that fails is removed) and writes a report ([`ImportReport`]) of what it
//! emitted and what it skipped, with reasons. `docs/tasks.md` describes the task layouts.
//!
//! ```no_run
//! use traparena_env::{Sandbox, SandboxConfig};
//! use traparena_import::{HumanEvalFixOptions, import_humanevalfix};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let sandbox = Sandbox::new(SandboxConfig::default())?;
//! let report = import_humanevalfix(
//!     "../shared/data/humanevalfix/humanevalpack_python.jsonl".as_ref(),
//!     "/tmp/humanevalfix".as_ref(),
//!     &sandbox,
//!     &HumanEvalFixOptions::default(),
//! )?;
//! println!("{}", report.summary());
//! # Ok(()) }
//! ```

mod common;
mod error;
mod export;
mod humanevalfix;
mod pins;
pub mod profiles;
mod pyparse;
mod report;
mod shards;
mod skip;
mod swebench;
mod versions;

pub use error::ImportError;
pub use export::{
    ExportOptions, Prediction, PredictionSet, check_predictions_path, export_predictions,
    is_predictions_file, write_predictions,
};
pub use humanevalfix::{
    HumanEvalFixOptions, HumanEvalFixRecord, humanevalfix_language, humanevalfix_task_id,
    import_humanevalfix, read_humanevalfix,
};
pub use pins::{BUNDLED_FORMAT, Pins, ResolveAsOf, bundled_envs, env_setup};
pub use profiles::{Profiles, RunnerProfile, UnknownProfile};
pub use report::report_names;
pub use report::{
    Emitted, INFRASTRUCTURE, ImportReport, NOT_CHECKABLE, REPORT_JSON, REPORT_TEXT, Skipped,
};
pub use shards::merge_reports;
pub use skip::{Skip, SkipReason};
pub use swebench::{
    ChosenTests, ImageNaming, SweBenchEnvironment, SweBenchInstance, SweBenchMetadata,
    SweBenchOptions, import_swebench, import_swebench_images, read_swebench,
};
/// Python interpreters by version (the environment builder's, re-exported).
pub use traparena_pyenv::interpreters;
pub use traparena_pyenv::{
    BuildOptions, DEFAULT_VENV_CACHE, Ensured, EnvTree, InterpreterSearch, PinEntry, PyEnvError,
    SETUP_STAMP, TreeEdit, WORKSPACE_PTH, build_cache_entry, dependency_id, ensure_env,
    ensure_env_tree, install_generated, is_built, major_minor, setup_for, setup_for_tree,
    venv_python,
};

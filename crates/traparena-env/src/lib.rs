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
//!   proxy's port on loopback, bridged into the sandbox (under the container backend: in a
//!   container of the task's image of its own); [`AgentKiller`] ends it from any thread.
//! - [`TestRun`] reads a test run through a report pipe filled by the harness's runner shim,
//!   failing tests named ([`TestFailure`]) by the same report.
//!
//! # The command each runner reads
//!
//! A task's test command ([`traparena_task::TestSpec`]) is run through its runner's shim only
//! when it has the runner's form; any other command runs as it is and gives no counts.
//!
//! | runner | command | the shim | tests are named |
//! |---|---|---|---|
//! | `unittest` | `PYTHON -m unittest ARGS...` | `tp_unittest.py` replaces `-m unittest` | `module.Class.method` |
//! | `pytest` | `PYTHON -m pytest ARGS...` or `pytest ARGS...` | the plugin `traparena_pytest_report` | node ids |
//! | `django` | `PYTHON tests/runtests.py ARGS...` (any path ending in `runtests.py`) | `tp_django.py` runs the script, hooking unittest's result class | `test_x (module.Class)`, `test_x (module.Class.test_x)`, the docstring's first line |
//! | `sympy` | `PYTHON bin/test ARGS...` | `tp_sympy.py` runs the script, hooking sympy's `PyTestReporter`, with `PYTHONHASHSEED` = [`SYMPY_HASH_SEED`] | the function name |
//! | `node` | `node FILE` | `--require tp_node.js` | `check N` |
//! | `cpp`, `java`, `go`, `rust` | `g++`/`java`/`go`/`rustc SOURCE...` | `tp_build.sh` builds with the check library | `check N` |
//! | `exit_code` | anything | none: the exit status alone | — |
//!
//! `PYTHON` is any program whose file name begins with `python`. Beside the shims, the harness
//! folder holds `traparena_httpbin`, a pytest plugin a command may load (`-p
//! traparena_httpbin`): it serves httpbin on loopback for suites that read `HTTPBIN_URL`
//! (psf/requests' older ones), from the environment's `httpbin` and `pytest-httpbin` packages.
//! - [`GitRepo`] reads commits, files and trees of a local clone without its history, and
//!   [`run_host`] runs trusted setup commands (such as building a virtual environment) on the host.

mod agent;
mod agent_image;
mod apply;
mod base;
mod bridge;
mod container;
mod copy;
mod engine;
mod error;
mod failures;
mod git;
mod gitcmd;
mod host;
mod image;
mod landlock_rules;
mod launch;
mod lease;
mod missing;
mod netns;
mod origin;
mod orphan;
mod outcome;
mod plugin;
mod program;
mod refused;
mod running;
mod sandbox;
mod select;
mod testrun;
mod toolchain;
mod tools;
mod workspace;

pub use agent::{AgentKiller, AgentProcess};
pub use base::PATH_ENV as SANDBOX_PATH;
pub use base::{
    BUILTIN_CAVEATS, Backend, BackendChoice, Captured, ContainerConfig, INSTALL_BUBBLEWRAP, Limits,
    Mounts, ProcessOutcome, REPORT_FD, RunSpec, SANDBOX_HARNESS, SANDBOX_WORKSPACE, SandboxConfig,
};
pub use copy::{CopyOptions, copy_tree};
pub use engine::Container;
pub use error::EnvError;
pub use failures::{MAX_FAILURES, MAX_MESSAGE_BYTES, TestFailure, failure_lines};
pub use git::GitRepo;
pub use host::{HostCommand, run_host};
pub use image::ImageTree;
pub use lease::UserLease;
pub use origin::{EXCLUDED_ARTEFACTS, OriginTree};
pub use outcome::{NamedOutcome, TestOutcome};
pub use plugin::{PluginCommand, PluginEvent, PluginExit, PluginLimits, PluginProcess};
pub use sandbox::Sandbox;
pub use testrun::{SYMPY_HASH_SEED, TestRun, match_names};
pub use tools::{Environment, ToolLimits};
pub use traparena_task::{AgentCommand, AgentExit, TestCounts};
pub use workspace::{PatchApply, Workspace};

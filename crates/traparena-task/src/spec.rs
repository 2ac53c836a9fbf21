use serde::{Deserialize, Serialize};

use crate::TaskError;
use crate::language::Language;
use crate::paths::RelPath;
pub use crate::runner::Runner;

/// The contents of `task.json`.
///
/// Unknown fields are refused, so that a typo never silently drops a setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Unique task identifier.
    pub id: String,
    /// Where the task comes from (`toy`, `humanevalfix`, `swebench`, ...).
    pub source: String,
    /// Language of the codebase (`python`, `javascript`, `cpp`, `java`, `go`, `rust`; `js` is
    /// read as `javascript`). Another name is refused when the task is loaded.
    pub language: Language,
    /// The repair description the agent sees.
    pub description: String,
    /// Tests the agent may run; they pass on the buggy code.
    pub public_tests: TestSpec,
    /// Tests that judge the patch; the agent never sees them.
    pub hidden_tests: TestSpec,
    /// Wall-clock limit for one test run, in seconds.
    #[serde(default = "default_timeout")]
    pub timeout_s: u64,
    /// Reference repair locations; derived from `reference.patch` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_locations: Option<Vec<Location>>,
    /// Free-form metadata (provenance, decoy locations, ...).
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Environment setup for repository-level tasks: the Python virtual environment the test
    /// commands run in. Absent for tasks that need nothing beyond the system's `python3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Setup>,
    /// The container image the task runs in, instead of a virtual environment on the host
    /// (SWE-bench's instance images). Such a task runs only under the container sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageEnv>,
}

/// A task's container image: the test commands run in a container of `image`, with the
/// workspace mounted at `workdir` (see `docs/tasks.md`, "Tasks in a container image").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageEnv {
    /// The image, as the container engine names it
    /// (`swebench/sweb.eval.x86_64.pytest-dev_1776_pytest-5227:latest`).
    pub image: String,
    /// The absolute path inside the image where the repository lives and the workspace is
    /// mounted (`/testbed`); the commands' working directory.
    pub workdir: String,
    /// Folders inside the image put first on `PATH`, in order (an activated environment's
    /// `bin`, such as `/opt/miniconda3/envs/testbed/bin`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
}

impl ImageEnv {
    /// Checks the fields: a non-empty image name without whitespace, and an absolute
    /// `workdir` and `path` entries without `..` or `:`.
    ///
    /// # Errors
    /// [`TaskError::Invalid`] for field `image` of `file` (the task file it was read from).
    pub fn check(&self, file: &std::path::Path) -> Result<(), TaskError> {
        let invalid = |message: String| TaskError::Invalid {
            path: file.to_owned(),
            field: "image".to_owned(),
            message,
        };
        if self.image.trim().is_empty() || self.image.chars().any(char::is_whitespace) {
            return Err(invalid(format!(
                "image {:?} is not an image name",
                self.image
            )));
        }
        let inside = |p: &str| {
            p.starts_with('/')
                && !p.contains(':')
                && !p.split('/').any(|c| c == "..")
                && !p.contains('\0')
        };
        let outside = |what: &str, p: &str| {
            invalid(format!(
                "{what} {p:?} is not an absolute path inside the image"
            ))
        };
        if !inside(&self.workdir) {
            return Err(outside("workdir", &self.workdir));
        }
        if self.workdir == "/" {
            return Err(invalid("workdir \"/\" would hide the whole image".into()));
        }
        match self.path.iter().find(|p| !inside(p)) {
            Some(p) => Err(outside("path entry", p)),
            None => Ok(()),
        }
    }
}

/// A task's environment: a Python virtual environment built once per `key` and shared by every
/// task with the same key and pins (see `docs/tasks.md`, "Environment setup").
///
/// The environment holds the dependencies only; the code under test is always imported from
/// the workspace: `source_dirs` are put first on `sys.path` of every interpreter started with
/// the workspace as working directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// What the environment is for, as `owner/name@version` (`pallets/flask@2.3`).
    pub key: String,
    /// Absolute path of the environment folder; the test commands name its interpreter. It
    /// must be readable inside the sandbox (under `/opt`, or listed in
    /// `SandboxConfig::read_only_paths`).
    pub venv: std::path::PathBuf,
    /// The base interpreter the environment is created from (`/usr/bin/python3`).
    pub python: String,
    /// pip requirement specifiers installed into the environment, in order.
    #[serde(default)]
    pub packages: Vec<String>,
    /// Folders of the workspace put first on `sys.path` (`src` for a `src/` layout).
    #[serde(default)]
    pub source_dirs: Vec<RelPath>,
    /// The instant the package index was read as of: the environment holds the releases that
    /// existed then (see `docs/tasks.md`, "Resolved as of a date"). `None`: the index as it
    /// was when the environment was built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_as_of: Option<crate::Cutoff>,
}

impl Setup {
    /// The host folders the sandbox must show (read-only) for the task's tests to run: the
    /// environment and the installation its base interpreter belongs to (`…/bin/python3.9` →
    /// `…`). Whoever runs a task adds them to `SandboxConfig::read_only_paths`.
    pub fn visible_paths(&self) -> Vec<std::path::PathBuf> {
        let mut out = vec![self.venv.clone()];
        let python = std::path::Path::new(&self.python);
        if python.is_absolute()
            && let Some(prefix) = python.parent().and_then(|bin| bin.parent())
            && prefix != std::path::Path::new("/")
        {
            out.push(prefix.to_owned());
        }
        out
    }
}

fn default_timeout() -> u64 {
    30
}

/// How to run one test suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestSpec {
    /// The argv, run with the workspace as working directory.
    pub command: Vec<String>,
    /// How the harness reads the run.
    pub runner: Runner,
    /// The test files: relative to `repo/` for public tests, to `hidden/` for hidden tests.
    pub files: Vec<RelPath>,
    /// The tests that judge the run, by name (pytest node ids; for [`Runner::Django`] and
    /// [`Runner::Sympy`] the names SWE-bench's records use), when the command runs more than
    /// them (whole test files, as SWE-bench does). Empty: every test the command runs counts.
    ///
    /// With names, the run passes when every named test passed (an expected failure counts as
    /// passed, as in SWE-bench's grading); a named test that failed, errored, was skipped or did
    /// not run at all fails it, and tests that are not named do not count. A name matches the
    /// runner's node id exactly, or — for a name cut off inside its parameters (`test_x[a b`
    /// cut at whitespace, as in some SWE-bench records) — every node id it begins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub select: Vec<String>,
}

/// True when the test name `name` (from [`TestSpec::select`]) names the runner's node id `node`.
///
/// Exact equality; or, when `name` opens a parameter list it does not close (`test_x[a-`), a
/// prefix of `node` within the same test function (`node` continues the parameters).
pub fn test_name_matches(name: &str, node: &str) -> bool {
    if name == node {
        return true;
    }
    let opens = name.matches('[').count();
    let closes = name.matches(']').count();
    opens > closes && node.starts_with(name)
}

/// A place in the code: a file and, optionally, a function or method in it.
///
/// `symbol` is qualified with dots (`Class.method`, `outer.inner`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Location {
    /// Path relative to the repository root.
    pub file: RelPath,
    /// Qualified function or method name; `None` means the file's module level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

impl Location {
    /// A location naming a symbol in a file.
    ///
    /// # Errors
    /// [`TaskError::RelPath`] when `file` is not a relative path inside the repository.
    pub fn symbol(file: &str, symbol: &str) -> Result<Self, TaskError> {
        Ok(Location {
            file: RelPath::new(file)?,
            symbol: Some(symbol.to_owned()),
        })
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.symbol {
            Some(s) => write!(f, "{}:{}", self.file, s),
            None => write!(f, "{}", self.file),
        }
    }
}

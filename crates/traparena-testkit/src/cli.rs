//! Running the `traparena` binary in tests: where the repository and its bundled tasks are, and
//! a command that no variable of the caller's shell can steer.
//!
//! The binary's path is known only to the CLI crate's own tests
//! (`env!("CARGO_BIN_EXE_traparena")`), so they hand it to [`Bin::new`].

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every variable the CLI reads to find a model (`TRAPARENA_{LLM,ATTACKER,CURATOR}_{MODEL,
/// BASE_URL,API_KEY}`): removed from every [`Bin::command`], so that a developer's shell
/// cannot change what a test runs.
pub const MODEL_VARS: [&str; 9] = [
    "TRAPARENA_LLM_MODEL",
    "TRAPARENA_LLM_BASE_URL",
    "TRAPARENA_LLM_API_KEY",
    "TRAPARENA_ATTACKER_MODEL",
    "TRAPARENA_ATTACKER_BASE_URL",
    "TRAPARENA_ATTACKER_API_KEY",
    "TRAPARENA_CURATOR_MODEL",
    "TRAPARENA_CURATOR_BASE_URL",
    "TRAPARENA_CURATOR_API_KEY",
];

/// The repository root (absolute).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// The bundled tasks, `examples/tasks` (absolute).
pub fn tasks_dir() -> PathBuf {
    root().join("examples/tasks")
}

/// Copies a folder and everything under it (`to` is created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.expect("a folder entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target)
                .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
        }
    }
}

/// What a run of the binary did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The exit status (-1 when a signal ended it).
    pub code: i32,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Run {
    /// Standard output as JSON (panics with both streams when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// The `traparena` binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bin(PathBuf);

impl Bin {
    /// The binary at `path` (in the CLI's tests: `env!("CARGO_BIN_EXE_traparena")`).
    pub fn new(path: impl Into<PathBuf>) -> Bin {
        Bin(path.into())
    }

    /// The binary's path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A command running the binary, without [`MODEL_VARS`] in its environment.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.0);
        for v in MODEL_VARS {
            cmd.env_remove(v);
        }
        cmd
    }

    /// Runs the binary with `args` and waits for it.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, &[])
    }

    /// Runs the binary with `args` and the variables `vars` set, and waits for it.
    pub fn run_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Run {
        let mut cmd = self.command();
        cmd.args(args);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        output(&mut cmd)
    }
}

/// Runs `cmd` to its end and captures both streams.
pub fn output(cmd: &mut Command) -> Run {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} does not start: {e}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

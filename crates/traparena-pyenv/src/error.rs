//! Why an interpreter or an environment could not be had: [`PyEnvError`], with the details it
//! names ([`StepFailure`], [`CopyProblem`], [`ProbeFailure`]). The messages are those the
//! importers quote in their reports, so their wording is part of the reports' text.

use std::fmt;
use std::path::PathBuf;

use traparena_env::EnvError;

/// Why an interpreter could not be found or copied, or an environment, a tree's dependencies or
/// a repository's install step could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PyEnvError {
    /// A file or folder could not be read, written or locked.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A scratch folder could not be made.
    #[error("a scratch folder: {source}")]
    Scratch {
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A folder that must lie in another (a cache entry, the environment folder) is the root.
    #[error("the {what} has no parent")]
    NoParent {
        /// What it is (`cache entry`, `environment folder`, ...).
        what: &'static str,
    },
    /// A file a cache entry records could not be parsed.
    #[error("{path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A tree could not be walked.
    #[error("{path}: {source}")]
    Walk {
        /// The tree's root.
        path: PathBuf,
        /// The walker's error.
        #[source]
        source: walkdir::Error,
    },
    /// The package index read as of a date could not start, or could not serve what a build
    /// asked for (see [`DatedIndex`](crate::DatedIndex)).
    #[error("the package index as of {cutoff} (read from {upstream}): {reason}")]
    DatedIndex {
        /// The instant the index is read as of.
        cutoff: traparena_task::Cutoff,
        /// The index it reads.
        upstream: String,
        /// What went wrong.
        reason: String,
        /// The build step that failed for it, if one did.
        #[source]
        source: Option<Box<PyEnvError>>,
    },
    /// A tree could not be copied, or a process not started, by the environment crate.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// A build step's command could not be started.
    #[error("{step}: {source}")]
    Spawn {
        /// The step (`pip install`, `creating the virtual environment`, ...).
        step: String,
        /// Why it did not start.
        #[source]
        source: EnvError,
    },
    /// A build step's command failed.
    #[error("{step} failed ({failure}): {output_tail}")]
    Step {
        /// The step (`pip install`, `creating the virtual environment`, ...).
        step: String,
        /// How it failed.
        failure: StepFailure,
        /// What it printed that says why (pip's `ERROR:` lines, the error a subprocess printed
        /// inside pip's output, a compiler's first error, a traceback's exception), else its
        /// last lines; at most three lines, joined with ` / `.
        output_tail: String,
    },
    /// No interpreter of the version an environment names was found.
    #[error(
        "environment python {wanted}: no Python {wanted} found{}; install it (for example `uv python install {wanted}` or `pyenv install {wanted}`) or name an interpreter by path in the pins",
        tried_list(.searched)
    )]
    NoInterpreter {
        /// The version (`major.minor`).
        wanted: String,
        /// The candidates tried, each with why it was not taken (`/usr/bin/python3.9 (is
        /// 3.9.2)`, `... (does not run)`).
        searched: Vec<String>,
    },
    /// The copy of an interpreter in the store still runs from where it was copied from.
    #[error(
        "environment python {version}: the copy in {copy} still runs from {runs_from} (not relocatable)"
    )]
    NotRelocatable {
        /// The version (`major.minor`).
        version: String,
        /// The copy.
        copy: PathBuf,
        /// The prefix it reports.
        runs_from: PathBuf,
    },
    /// The copy of an interpreter in the store could not be made to run.
    #[error(
        "the copy of {from} in {copy} {}",
        copy_problems(.before.as_deref(), .problem)
    )]
    BrokenCopy {
        /// The installation copied.
        from: PathBuf,
        /// The copy.
        copy: PathBuf,
        /// What was wrong with the copy there before it was copied again, if one was there.
        before: Option<Box<CopyProblem>>,
        /// What is wrong with the new copy.
        problem: Box<CopyProblem>,
    },
    /// Finding or copying an interpreter of a version failed.
    #[error("environment python {version}: {source}")]
    Interpreter {
        /// The version (`major.minor`).
        version: String,
        /// What failed.
        #[source]
        source: Box<PyEnvError>,
    },
    /// An executable's library path is shorter than the copy's and cannot be rewritten in
    /// place.
    #[error("{file}: the library path {old} cannot be rewritten in place")]
    RunpathTooLong {
        /// The executable or library.
        file: PathBuf,
        /// The library path it holds.
        old: String,
    },
    /// An environment's folder is a relative path.
    #[error("environment {key}: the environment folder {venv} is not absolute")]
    NotAbsolute {
        /// The environment's key (`owner/name@version`).
        key: String,
        /// The folder.
        venv: PathBuf,
    },
    /// An environment reads its dependencies from a source tree, and none was given.
    #[error(
        "environment {key}: its dependencies come from the repository's tree, and no tree was given"
    )]
    NoTree {
        /// The environment's key (`owner/name@version`).
        key: String,
    },
    /// Building an environment failed (and nothing of it was left behind).
    #[error("environment {key}: {}{source}", rebuilt_note(.broken.as_deref()))]
    Build {
        /// The environment's key (`owner/name@version`).
        key: String,
        /// Why the environment that was there before did not run, when this was a rebuild.
        broken: Option<Box<PyEnvError>>,
        /// What failed.
        #[source]
        source: Box<PyEnvError>,
    },
    /// A source tree an environment's dependencies are read from is not a folder.
    #[error("the source tree {dir} is not a folder")]
    TreeNotAFolder {
        /// The tree.
        dir: PathBuf,
    },
    /// A file an environment's tree edit names could not be read.
    #[error("the tree edit of {file}: {source} (tree {tree})")]
    TreeEdit {
        /// The file, relative to the tree.
        file: String,
        /// The tree.
        tree: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A source tree has none of the requirements files an environment names.
    #[error(
        "no requirements file {} in the source tree {tree}",
        .wanted.join(" or ")
    )]
    NoRequirementsFile {
        /// The files looked for, relative to the tree.
        wanted: Vec<String>,
        /// The tree.
        tree: PathBuf,
    },
    /// The distribution installed from a tree (to get its declared requirements) cannot be
    /// found to uninstall it.
    #[error("the distribution installed from the tree {tree} cannot be found to uninstall it")]
    TreeDistributionNotFound {
        /// The scratch copy of the tree it was installed from.
        tree: PathBuf,
    },
}

/// How a command failed: it ran out of time, or it exited with another status than 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepFailure {
    /// It ran out of time and was killed.
    TimedOut,
    /// It exited with this status (`None`: killed by a signal).
    Exit(Option<i32>),
}

impl fmt::Display for StepFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepFailure::TimedOut => f.write_str("timed out"),
            StepFailure::Exit(code) => write!(f, "exit status {code:?}"),
        }
    }
}

/// The file that marks a complete copy of an interpreter in the store (here, below the
/// interpreters module, because [`CopyProblem::Unfinished`]'s message names it).
pub(crate) const COPY_STAMP: &str = ".traparena-python-copy";

/// What is wrong with the copy of an interpreter in the store.
#[derive(Debug)]
#[non_exhaustive]
pub enum CopyProblem {
    /// There is none.
    Missing,
    /// It lacks the stamp written when a copy is complete.
    Unfinished,
    /// Its interpreter does not answer the version probe.
    DoesNotRun(ProbeFailure),
}

impl fmt::Display for CopyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CopyProblem::Missing => f.write_str("is missing"),
            CopyProblem::Unfinished => {
                write!(f, "is unfinished (no {COPY_STAMP})")
            }
            CopyProblem::DoesNotRun(why) => write!(f, "does not run ({why})"),
        }
    }
}

/// Why an interpreter did not answer the version probe.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeFailure {
    /// It could not be started.
    #[error(transparent)]
    Spawn(EnvError),
    /// It failed.
    #[error("{failure}: {output_tail}")]
    Failed {
        /// How.
        failure: StepFailure,
        /// The last lines it printed, joined with ` / `.
        output_tail: String,
    },
    /// Its answer is not the expected JSON.
    #[error("an unreadable answer ({source}): {answer}")]
    Unreadable {
        /// The parser's error.
        #[source]
        source: serde_json::Error,
        /// What it printed.
        answer: String,
    },
}

impl PyEnvError {
    /// An [`PyEnvError::Io`] error of `path`, for `map_err`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> PyEnvError {
        let path = path.into();
        move |source| PyEnvError::Io { path, source }
    }
}

fn tried_list(searched: &[String]) -> String {
    if searched.is_empty() {
        String::new()
    } else {
        format!(" (tried {})", searched.join(", "))
    }
}

fn copy_problems(before: Option<&CopyProblem>, problem: &CopyProblem) -> String {
    match before {
        Some(before) => format!("{before}, and copied again it {problem}"),
        None => problem.to_string(),
    }
}

fn rebuilt_note(broken: Option<&PyEnvError>) -> String {
    broken.map_or_else(String::new, |why| format!("{why}; built again: "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_the_reports_quote_them() {
        let step = PyEnvError::Step {
            step: "pip install".into(),
            failure: StepFailure::Exit(Some(1)),
            output_tail: "a / b".into(),
        };
        assert_eq!(
            step.to_string(),
            "pip install failed (exit status Some(1)): a / b"
        );
        let build = PyEnvError::Build {
            key: "a/b@1.0".into(),
            broken: Some(Box::new(PyEnvError::Step {
                step: "x".into(),
                failure: StepFailure::TimedOut,
                output_tail: String::new(),
            })),
            source: Box::new(step),
        };
        assert_eq!(
            build.to_string(),
            "environment a/b@1.0: x failed (timed out): ; built again: pip install failed (exit status Some(1)): a / b"
        );
        let none = PyEnvError::NoInterpreter {
            wanted: "3.9".into(),
            searched: Vec::new(),
        };
        assert!(
            none.to_string()
                .starts_with("environment python 3.9: no Python 3.9 found; install it"),
            "{none}"
        );
        let copy = PyEnvError::BrokenCopy {
            from: "/a".into(),
            copy: "/s/3.9.1".into(),
            before: Some(Box::new(CopyProblem::Unfinished)),
            problem: Box::new(CopyProblem::Missing),
        };
        assert_eq!(
            copy.to_string(),
            "the copy of /a in /s/3.9.1 is unfinished (no .traparena-python-copy), and copied again it is missing"
        );
    }
}

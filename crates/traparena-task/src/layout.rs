//! The names inside a task folder, spelled once: the loader reads through them, the importers
//! and the export write through them.

use std::path::{Path, PathBuf};

/// Where each part of a task folder lives (docs/tasks.md):
///
/// | part | name |
/// |---|---|
/// | the task's metadata and tests | `task.json` ([`SPEC`](Self::SPEC)) |
/// | the buggy codebase the agent sees | `repo/` ([`REPO`](Self::REPO)) |
/// | the hidden test files | `hidden/` ([`HIDDEN`](Self::HIDDEN)) |
/// | the reference repair | `reference.patch` ([`REFERENCE`](Self::REFERENCE)) |
/// | the offline message pool (optional) | `attacks.json` ([`ATTACKS`](Self::ATTACKS)) |
///
/// ```
/// let layout = traparena_task::TaskLayout::new("tasks/clamp_overt");
/// assert!(layout.repo().ends_with("clamp_overt/repo"));
/// assert!(!layout.is_task());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskLayout {
    root: PathBuf,
}

impl TaskLayout {
    /// The task's metadata file.
    pub const SPEC: &'static str = "task.json";
    /// The buggy codebase's folder.
    pub const REPO: &'static str = "repo";
    /// The hidden tests' folder.
    pub const HIDDEN: &'static str = "hidden";
    /// The reference repair.
    pub const REFERENCE: &'static str = "reference.patch";
    /// The offline attacker's message pool.
    pub const ATTACKS: &'static str = "attacks.json";

    /// The layout of the task folder at `root`.
    pub fn new(root: impl Into<PathBuf>) -> TaskLayout {
        TaskLayout { root: root.into() }
    }

    /// The task folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `task.json`.
    pub fn spec(&self) -> PathBuf {
        self.root.join(Self::SPEC)
    }

    /// `repo/`.
    pub fn repo(&self) -> PathBuf {
        self.root.join(Self::REPO)
    }

    /// `hidden/`.
    pub fn hidden(&self) -> PathBuf {
        self.root.join(Self::HIDDEN)
    }

    /// `reference.patch`.
    pub fn reference(&self) -> PathBuf {
        self.root.join(Self::REFERENCE)
    }

    /// `attacks.json`.
    pub fn attacks(&self) -> PathBuf {
        self.root.join(Self::ATTACKS)
    }

    /// True when the folder holds a task's metadata file (what a task glob keeps).
    pub fn is_task(&self) -> bool {
        self.spec().is_file()
    }
}

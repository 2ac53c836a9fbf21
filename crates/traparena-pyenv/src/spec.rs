//! What one environment holds ([`PinEntry`]): its interpreter, its packages, what it reads from
//! the repository's own tree ([`EnvTree`], [`TreeEdit`]) and the repository's install step. The
//! pins files and the bundled environments that map (repository, version) to an entry are the
//! importers' (`traparena-import`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use traparena_task::{Cutoff, RelPath};

/// What one (repository, version) environment holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinEntry {
    /// The base interpreter (default `/usr/bin/python3`). It must be visible inside the sandbox
    /// (under `/usr` or `/opt`).
    #[serde(default = "default_python")]
    pub python: String,
    /// pip requirement specifiers, installed in one `pip install`.
    #[serde(default)]
    pub packages: Vec<String>,
    /// Workspace folders put first on `sys.path` (`src` for a `src/` layout).
    #[serde(default)]
    pub source_dirs: Vec<RelPath>,
    /// How the repository is installed, as SWE-bench installs it, for repositories whose
    /// installation generates files the code imports (pytest's `_version.py`, written by
    /// setuptools_scm). An argv run on the host in a scratch copy of the task's `repo/`;
    /// `python` as the first word is the environment's interpreter, `{tmp}` a scratch folder
    /// outside the copy. The files it creates in the copy become part of `repo/`, the base the
    /// agent starts from, so they never appear in a candidate patch. Empty: no install step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub install: Vec<String>,
    /// Environment variables of the install step; `{version}` is the repository's version
    /// (`SETUPTOOLS_SCM_PRETEND_VERSION` lets setuptools_scm work without git metadata).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub install_env: BTreeMap<String, String>,
    /// Files of the tree the install step may rewrite, their new content becoming part of the
    /// base as a created file does: data that expires with the calendar, such as astropy's
    /// bundled leap-second table (`astropy/utils/iers/data/Leap_Second.dat`), which a test
    /// run after its expiry date fails on. Any other file the step changes keeps its original.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub install_replaces: Vec<RelPath>,
    /// Requirements files of the repository's tree (SWE-bench's `tests/requirements/py3.txt`
    /// for django): the first of them the tree has is installed into the environment, after
    /// `packages`, with lines installing the tree itself (`-e .`) left out. Non-empty: the
    /// environment is built from a tree ([`EnvTree`]), and it is an error when the tree has
    /// none of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tree_requirements: Vec<RelPath>,
    /// The package's own declared requirements, with these extras (`["test"]` for SWE-bench's
    /// `pip install -e .[test]`): the tree is installed with them and the distribution itself
    /// uninstalled again, so the environment holds its dependencies but not the repository.
    /// `None`: not installed; `Some([])`: the requirements without extras.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_extras: Option<Vec<String>>,
    /// Edits of the tree's files before its requirements are read (SWE-bench's `pre_install`
    /// pins, `Jinja2>=2.3` → `Jinja2<3.0` in sphinx's `setup.py`), made in a scratch copy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tree_edits: Vec<TreeEdit>,
    /// Requirement names left out of the tree's requirements files (packages that need system
    /// libraries the machine lacks, `pylibmc`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tree_skip: Vec<String>,
    /// The files the install step's output depends on, besides the environment and the step
    /// itself: file-name suffixes (`.c`, `.pyx`) or names (`setup.py`). Non-empty: the
    /// install step builds extensions, its output (`.so` files included) is cached per
    /// (environment, step, hash of these files of the tree) and reused by every task with the
    /// same sources (see [`crate::install_generated`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build_inputs: Vec<String>,
    /// How the repository's tests run: `pytest` (the default), `django` (`tests/runtests.py`),
    /// `sympy` (`bin/test`), `tox-current-env` (sphinx).
    #[serde(
        default = "default_profile",
        skip_serializing_if = "is_default_profile"
    )]
    pub profile: String,
    /// Resolve the packages as the index held them at this instant (SWE-bench's images hold
    /// what resolved when they were built): the environment stays the same whenever it is
    /// built. `None`: the index as it is. A bundle of environments may set one for all its
    /// entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_as_of: Option<Cutoff>,
}

/// One edit of a tree file: every occurrence of `find` replaced by `replace` (none: no change).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeEdit {
    /// The file, relative to the tree; a missing file is an error.
    pub file: RelPath,
    /// The text replaced.
    pub find: String,
    /// What replaces it.
    pub replace: String,
}

/// A source tree an environment's dependencies are read from (see
/// [`PinEntry::tree_requirements`]): the repository exported at the instance's
/// `environment_setup_commit`, else at its base commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvTree {
    /// The tree's folder; it is copied, never changed.
    pub dir: PathBuf,
    /// Its identity (a commit id or a content hash), part of the environment's folder name, so
    /// that two different trees never share an environment.
    pub id: String,
}

impl PinEntry {
    /// True when the environment is built from a source tree.
    pub fn needs_tree(&self) -> bool {
        !self.tree_requirements.is_empty() || self.tree_extras.is_some()
    }
}

fn default_profile() -> String {
    "pytest".into()
}

fn is_default_profile(p: &String) -> bool {
    p == "pytest"
}

fn default_python() -> String {
    "/usr/bin/python3".into()
}

/// `major.minor` of a version string (`v5.4.1` → `5.4`, `2.15.0-dev0` → `2.15`).
pub fn major_minor(v: &str) -> Option<String> {
    let v = v.trim().trim_start_matches(['v', 'V']);
    let mut parts = v.split('.');
    let digits = |s: &str| -> Option<String> {
        let d: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
        (!d.is_empty()).then_some(d)
    };
    let major = digits(parts.next()?)?;
    let minor = digits(parts.next()?)?;
    Some(format!("{major}.{minor}"))
}

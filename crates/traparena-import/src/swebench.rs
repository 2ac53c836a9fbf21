//! SWE-bench instances + a local git clone → tasks.
//!
//! `repo/` is the tree at `base_commit`, exported without history, less the files `test_patch`
//! touches. Those files, with `test_patch` applied, are the hidden files, at their own paths; the
//! hidden command runs `FAIL_TO_PASS` and `PASS_TO_PASS` with pytest. The public tests are
//! `PASS_TO_PASS` tests of the touched test files as they were at `base_commit`, in a renamed
//! copy beside the original (`tests/test_x.py` → `tests/test_x_public.py`). The reference patch
//! is `patch`.

use crate::skip::{Skip, SkipReason};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde::{Deserialize, Deserializer, Serialize};
use traparena_env::{GitRepo, Sandbox};
use traparena_pyenv::interpreters::is_version;
use traparena_pyenv::{
    BuildOptions, DEFAULT_VENV_CACHE, InterpreterSearch, PyEnvError, find_python,
};
use traparena_task::{Patch, RelPath, Shard};

mod build;
mod cause;
mod environment;
mod images;
mod judge;
mod note;
mod plan;
mod select;

pub use images::ImageNaming;
pub use note::{ChosenTests, SweBenchEnvironment, SweBenchMetadata};

use crate::common::{
    check_target, default_jobs, discard, finish, par_map, partial_dir, prepare_out, read_records,
};
use crate::error::ImportError;
use crate::pins::Pins;
use crate::profiles::Profiles;
use crate::report::{Gathered, ImportReport, Outcome, RecordOutcome, Skipped};

/// One SWE-bench instance, in the field names of the published data set (fields the importer
/// does not use are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweBenchInstance {
    /// `owner__name-number`; also the task id.
    pub instance_id: String,
    /// `owner/name`.
    pub repo: String,
    /// The commit the instance starts from.
    pub base_commit: String,
    /// The issue text: the task's description.
    #[serde(default)]
    pub problem_statement: String,
    /// The reference fix (a `git diff`; also read from `golden_patch`).
    #[serde(alias = "golden_patch")]
    pub patch: String,
    /// The tests added with the fix (a `git diff`).
    pub test_patch: String,
    /// Tests that fail before the fix and pass after it (pytest node ids). A JSON-encoded list
    /// inside a string, as published, or a plain list.
    #[serde(
        rename = "FAIL_TO_PASS",
        alias = "fail_to_pass",
        deserialize_with = "id_list"
    )]
    pub fail_to_pass: Vec<String>,
    /// Tests that pass before and after the fix.
    #[serde(
        rename = "PASS_TO_PASS",
        alias = "pass_to_pass",
        deserialize_with = "id_list",
        default
    )]
    pub pass_to_pass: Vec<String>,
    /// The repository's version (`2.3`), when the record has it.
    #[serde(default, deserialize_with = "opt_version")]
    pub version: Option<String>,
    /// The commit SWE-bench builds the environment from, when the record has it.
    #[serde(default)]
    pub environment_setup_commit: Option<String>,
}

fn id_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    use serde::de::Error;
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => serde_json::from_str(&s)
            .map_err(|e| D::Error::custom(format!("not a JSON list of test ids: {e}"))),
        serde_json::Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                serde_json::Value::String(s) => Ok(s),
                other => Err(D::Error::custom(format!("test id {other} is not a string"))),
            })
            .collect(),
        serde_json::Value::Null => Ok(Vec::new()),
        other => Err(D::Error::custom(format!(
            "expected a list of test ids, found {other}"
        ))),
    }
}

fn opt_version<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// Settings of a SWE-bench import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweBenchOptions {
    /// Import only these instances (all when empty). An id not in the input is an error.
    pub instances: Vec<String>,
    /// The per-repository environment pins; they take precedence over the bundled ones. A
    /// repository neither knows runs with the system's `python3` and gets no `setup` field.
    pub pins: Option<Pins>,
    /// Use the bundled environments (see [`bundled_envs`](crate::bundled_envs)) for repositories and versions the
    /// pins do not have.
    pub bundled: bool,
    /// Which instant environments' packages are resolved as of.
    pub resolve_as_of: crate::ResolveAsOf,
    /// Where to find interpreters that environments name by version.
    pub interpreters: InterpreterSearch,
    /// Where environments are built and cached (interpreters that must be copied go to its
    /// `python/` folder).
    pub venv_cache: PathBuf,
    /// Settings of environment builds.
    pub build: BuildOptions,
    /// Build missing environments (else an instance whose environment is missing is skipped).
    pub build_envs: bool,
    /// Most public tests per task.
    pub max_public: usize,
    /// The tasks' `timeout_s`.
    pub timeout_s: u64,
    /// Validate every emitted task, and skip the ones that fail.
    pub validate: bool,
    /// Hidden runs with the reference patch during validation when the first runs were suspect
    /// (a `FAIL_TO_PASS` test failed with the reference in the run that chose the tests, then
    /// passed). Otherwise validation runs the reference once: with the run that chose the tests
    /// and the acceptance check, the reference has then passed three times.
    pub reference_runs: u32,
    /// Worker threads.
    pub jobs: usize,
    /// The runner profiles environments are resolved in (see [`Profiles`]).
    pub profiles: Profiles,
    /// Import only this shard's block of the instances (after `instances`), and write the
    /// report as the shard's (see [`merge_reports`](crate::merge_reports)).
    pub shard: Option<Shard>,
}

impl Default for SweBenchOptions {
    fn default() -> Self {
        SweBenchOptions {
            instances: Vec::new(),
            pins: None,
            bundled: true,
            resolve_as_of: crate::ResolveAsOf::default(),
            interpreters: InterpreterSearch::default(),
            venv_cache: PathBuf::from(DEFAULT_VENV_CACHE),
            build: BuildOptions::default(),
            build_envs: true,
            max_public: 10,
            timeout_s: 300,
            validate: true,
            reference_runs: 3,
            jobs: default_jobs(),
            profiles: Profiles::default(),
            shard: None,
        }
    }
}

/// Reads SWE-bench instances (JSON Lines, or a JSON array).
pub fn read_swebench(path: &Path) -> Result<Vec<SweBenchInstance>, ImportError> {
    Ok(read_records(path)?.into_iter().map(|(_, r)| r).collect())
}

/// Imports the instances of `input` whose base commit is in the clone `repo` into `out`.
/// Instances that cannot become valid tasks (a base commit missing from the clone, a test patch
/// that does not apply, no usable public test, a failed validation, ...) are skipped and
/// reported.
pub fn import_swebench(
    input: &Path,
    repo: &Path,
    out: &Path,
    sandbox: &Sandbox,
    opts: &SweBenchOptions,
) -> Result<ImportReport, ImportError> {
    import_from(input, Origin::Clone(repo), out, sandbox, opts)
}

/// Imports the instances of `input` from their SWE-bench instance images, without a clone:
/// each task's `repo/` is the image's working directory (`/testbed`), and its tests run in
/// containers of the image (`sandbox` must be the container backend). An instance whose image
/// cannot be run (not pulled, not built) is skipped and reported.
pub fn import_swebench_images(
    input: &Path,
    out: &Path,
    sandbox: &Sandbox,
    opts: &SweBenchOptions,
    images: &ImageNaming,
) -> Result<ImportReport, ImportError> {
    if sandbox.backend() != traparena_env::Backend::Container {
        return Err(ImportError::Input(format!(
            "importing from instance images runs them in containers: use the `container` sandbox \
             backend (this sandbox is {})",
            sandbox.backend()
        )));
    }
    import_from(input, Origin::Images(images), out, sandbox, opts)
}

/// Where the caller says instances come from (checked after the records are).
enum Origin<'a> {
    Clone(&'a Path),
    Images(&'a ImageNaming),
}

/// Where instances' trees come from.
enum Source {
    /// A clone of the repository: the tree of the base commit, with an environment on the host.
    Clone(GitRepo),
    /// SWE-bench's instance images: the image's tree, run in the image.
    Images(ImageNaming),
}

fn import_from(
    input: &Path,
    from: Origin<'_>,
    out: &Path,
    sandbox: &Sandbox,
    opts: &SweBenchOptions,
) -> Result<ImportReport, ImportError> {
    let started = Instant::now();
    if opts.max_public == 0 {
        return Err(ImportError::Input(
            "max_public must be at least 1: a task needs a public test".into(),
        ));
    }
    if opts.timeout_s == 0 {
        return Err(ImportError::Input(
            "timeout_s must be at least 1 second".into(),
        ));
    }
    let all = read_swebench(input)?;
    let mut seen = BTreeSet::new();
    for i in &all {
        if !seen.insert(i.instance_id.as_str()) {
            return Err(ImportError::Input(format!(
                "{}: instance {} appears twice",
                input.display(),
                i.instance_id
            )));
        }
        RelPath::new(&i.instance_id)
            .ok()
            .filter(|p| !p.as_str().contains('/'))
            .ok_or_else(|| {
                ImportError::Input(format!(
                    "{}: instance id {:?} cannot name a folder",
                    input.display(),
                    i.instance_id
                ))
            })?;
    }
    for want in &opts.instances {
        if !seen.contains(want.as_str()) {
            return Err(ImportError::Input(format!(
                "unknown instance {want}: {} holds {} instances",
                input.display(),
                all.len()
            )));
        }
    }
    let selected: Vec<SweBenchInstance> = crate::shards::shard_block(
        all.into_iter()
            .filter(|i| opts.instances.is_empty() || opts.instances.contains(&i.instance_id))
            .collect(),
        opts.shard,
    );
    let source = match from {
        Origin::Clone(repo) => {
            if !repo.exists() {
                return Err(ImportError::Input(format!(
                    "{}: no such git clone",
                    repo.display()
                )));
            }
            Source::Clone(GitRepo::open(repo).map_err(|e| {
                ImportError::Input(format!("{}: not a git clone: {e}", repo.display()))
            })?)
        }
        Origin::Images(naming) => Source::Images(naming.clone()),
    };
    let out = prepare_out(out, opts.shard)?;
    for i in &selected {
        check_target(&out, &i.instance_id, "swebench")?;
    }
    let patching = sandbox.for_patching();
    let ctx = Ctx {
        source,
        out: out.clone(),
        sandbox,
        patching: &patching,
        opts,
        pythons: Mutex::default(),
        repaired: Mutex::default(),
    };
    let results = par_map(&selected, opts.jobs, |inst| {
        let started = Instant::now();
        let r = ImportReport::contain(&inst.instance_id, ctx.import_one(inst));
        crate::report::stamp(r, &inst.repo, started)
    });
    let mut report = ImportReport::gather(
        Gathered {
            source: "swebench",
            input,
            out: &out,
            validated: opts.validate,
            backend: sandbox.backend(),
            shard: opts.shard,
        },
        started,
        results,
    )?;
    let mut repaired = std::mem::take(&mut *ctx.repaired.lock());
    if !repaired.is_empty() {
        repaired.sort();
        report.repaired = repaired;
        report.write(&out)?;
    }
    Ok(report)
}

/// An interpreter setting resolved once: the executable, or why there is none.
type Resolved = Arc<OnceLock<Result<PathBuf, Arc<PyEnvError>>>>;

struct Ctx<'a> {
    source: Source,
    out: PathBuf,
    sandbox: &'a Sandbox,
    /// For the scratch copies that only take patches (no container of their own).
    patching: &'a Sandbox,
    opts: &'a SweBenchOptions,
    /// Interpreters resolved so far, by the environment's `python` setting: each is found (and
    /// copied, or repaired) once per import, however many instances need it.
    pythons: Mutex<BTreeMap<String, Resolved>>,
    /// What was found broken in the caches and made again (see [`ImportReport::repaired`]).
    repaired: Mutex<Vec<String>>,
}

fn skip(i: &SweBenchInstance, reason: SkipReason, detail: String) -> Outcome {
    Ok(RecordOutcome::Skipped(Skipped::new(
        &i.instance_id,
        Skip::new(reason, detail),
    )))
}

/// A skipped instance whose detail quotes a failed test run: its failing tests are named in the
/// detail and listed in the report's `failures`.
fn skip_failing(
    i: &SweBenchInstance,
    reason: SkipReason,
    detail: String,
    failures: Vec<traparena_env::TestFailure>,
    lines: Vec<String>,
) -> Outcome {
    Ok(RecordOutcome::Skipped(skipped_failing(
        i, reason, detail, failures, lines,
    )))
}

/// The skipped record [`skip_failing`] gives.
fn skipped_failing(
    i: &SweBenchInstance,
    reason: SkipReason,
    detail: String,
    failures: Vec<traparena_env::TestFailure>,
    lines: Vec<String>,
) -> Skipped {
    let detail = if lines.is_empty() {
        detail
    } else {
        format!("{detail} | failing: {}", lines.join("; "))
    };
    Skipped {
        failures,
        ..Skipped::new(&i.instance_id, Skip::new(reason, detail))
    }
}

impl Ctx<'_> {
    /// The interpreter an environment's `python` setting names: a path as it is, a version
    /// found with [`find_python`] (once per import; concurrent first uses wait for it).
    fn python(&self, spec: &str) -> Result<PathBuf, Arc<PyEnvError>> {
        if !is_version(spec) {
            return Ok(PathBuf::from(spec));
        }
        let cell = self
            .pythons
            .lock()
            .entry(spec.to_owned())
            .or_default()
            .clone();
        cell.get_or_init(|| {
            let store = self.opts.venv_cache.join("python");
            let found = find_python(spec, &self.opts.interpreters, &store).map_err(Arc::new)?;
            if let Some(why) = &found.repaired {
                self.repaired.lock().push(format!("python {spec}: {why}"));
            }
            Ok(found.executable)
        })
        .clone()
    }

    fn import_one(&self, inst: &SweBenchInstance) -> Outcome {
        let id = inst.instance_id.as_str();
        let commit = match &self.source {
            Source::Clone(git) => match git.resolve_commit(&inst.base_commit)? {
                Some(c) => c,
                None => {
                    return skip(
                        inst,
                        SkipReason::BaseCommitMissing,
                        format!(
                            "{} not found in {} (a clone of {}?)",
                            inst.base_commit,
                            git.git_dir().display(),
                            inst.repo
                        ),
                    );
                }
            },
            Source::Images(_) => inst.base_commit.clone(),
        };
        if inst.fail_to_pass.is_empty() {
            return skip(
                inst,
                SkipReason::NoFailToPass,
                "FAIL_TO_PASS is empty: nothing would fail on the buggy code".into(),
            );
        }
        let test_patch = match Patch::parse(&inst.test_patch, Path::new("test_patch")) {
            Ok(p) if !p.is_empty() => p,
            Ok(_) => {
                return skip(
                    inst,
                    SkipReason::EmptyTestPatch,
                    "it changes no file".into(),
                );
            }
            Err(e) => return skip(inst, SkipReason::TestPatchUnparsable, e.to_string()),
        };
        if let Err(e) = Patch::parse(&inst.patch, Path::new("patch")) {
            return skip(inst, SkipReason::ReferencePatchUnparsable, e.to_string());
        }
        let partial = partial_dir(&self.out, id)?;
        let result = self.build_task(inst, &commit, &test_patch, &partial);
        match result {
            Ok(RecordOutcome::Emitted(emitted)) => {
                match finish(&partial, &self.out, id, "swebench") {
                    Ok(()) => Ok(RecordOutcome::Emitted(emitted)),
                    Err(e) => {
                        discard(&partial);
                        Err(e)
                    }
                }
            }
            other => {
                discard(&partial);
                other
            }
        }
    }

    /// The repository's version: the record's, else derived as SWE-bench derives it (see
    /// [`crate::versions`]), with how it was found.
    fn version(
        &self,
        inst: &SweBenchInstance,
        commit: &str,
        repo_dir: &Path,
    ) -> Result<(Option<String>, String), ImportError> {
        if let Some(v) = &inst.version {
            return Ok((Some(v.clone()), "record".into()));
        }
        let git = match &self.source {
            Source::Clone(git) => Some((git, commit)),
            Source::Images(_) => None,
        };
        let d = crate::versions::derive(&inst.repo, repo_dir, git)?;
        Ok((d.version, d.source))
    }
}

/// Why the interpreter `python` cannot run in `sandbox` (`None` when it runs): the path and
/// the reason (a folder the sandbox user cannot enter, a missing shared library, ...).
fn runs_in_sandbox(sandbox: &Sandbox, python: &Path) -> Result<Option<String>, ImportError> {
    let argv = [
        python.to_string_lossy().into_owned(),
        "-c".into(),
        "import sys, site".into(),
    ];
    match sandbox.check_program(&argv) {
        Ok(()) => Ok(None),
        Err(e) if e.is_start_failure() => Ok(Some(e.to_string())),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_id_lists_are_decoded() {
        let i: SweBenchInstance = serde_json::from_value(serde_json::json!({
            "instance_id": "a__b-1", "repo": "a/b", "base_commit": "abc", "patch": "", "test_patch": "",
            "FAIL_TO_PASS": "[\"t.py::test_a\"]", "PASS_TO_PASS": ["t.py::test_b"], "version": 2.3,
            "hints_text": "ignored"
        }))
        .unwrap();
        assert_eq!(i.fail_to_pass, ["t.py::test_a"]);
        assert_eq!(i.pass_to_pass, ["t.py::test_b"]);
        assert_eq!(i.version.as_deref(), Some("2.3"));
        assert!(
            serde_json::from_value::<SweBenchInstance>(serde_json::json!({
                "instance_id": "a", "repo": "a/b", "base_commit": "abc", "patch": "", "test_patch": "",
                "FAIL_TO_PASS": "not json"
            }))
            .is_err()
        );
    }
}

//! SWE-bench instances + a local git clone → tasks.
//!
//! `repo/` is the tree at `base_commit`, exported without history, less the files `test_patch`
//! touches. Those files, with `test_patch` applied, are the hidden files, at their own paths; the
//! hidden command runs `FAIL_TO_PASS` and `PASS_TO_PASS` with pytest. The public tests are
//! `PASS_TO_PASS` tests of the touched test files as they were at `base_commit`, in a renamed
//! copy beside the original (`tests/test_x.py` → `tests/test_x_public.py`). The reference patch
//! is `patch`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use serde::{Deserialize, Deserializer, Serialize};
use traparena_env::{GitRepo, Sandbox, Workspace};
use traparena_eval::python::PyFile;
use traparena_task::{Patch, RelPath, Runner, Task, TaskSpec, TestSpec};

use crate::common::{
    check_target, check_task, default_jobs, discard, finish, par_map, partial_dir, prepare_out,
    read_records, write_file,
};
use crate::error::{ImportError, io};
use crate::interpreters::{InterpreterSearch, find_python, is_version};
use crate::report::{Emitted, ImportReport, Skipped};
use crate::setup::{
    BuildOptions, DEFAULT_VENV_CACHE, Ensured, Pins, bundled_envs, ensure_env, install_generated,
    major_minor, setup_for, venv_python,
};

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
    /// The reference fix (a `git diff`).
    pub patch: String,
    /// The tests added with the fix (a `git diff`).
    pub test_patch: String,
    /// Tests that fail before the fix and pass after it (pytest node ids). A JSON-encoded list
    /// inside a string, as published, or a plain list.
    #[serde(rename = "FAIL_TO_PASS", deserialize_with = "id_list")]
    pub fail_to_pass: Vec<String>,
    /// Tests that pass before and after the fix.
    #[serde(rename = "PASS_TO_PASS", deserialize_with = "id_list", default)]
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
    /// Use the bundled environments (see [`bundled_envs`]) for repositories and versions the
    /// pins do not have.
    pub bundled: bool,
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
    /// Hidden runs with the reference patch during validation.
    pub reference_runs: u32,
    /// Worker threads.
    pub jobs: usize,
}

impl Default for SweBenchOptions {
    fn default() -> Self {
        SweBenchOptions {
            instances: Vec::new(),
            pins: None,
            bundled: true,
            interpreters: InterpreterSearch::default(),
            venv_cache: PathBuf::from(DEFAULT_VENV_CACHE),
            build: BuildOptions::default(),
            build_envs: true,
            max_public: 10,
            timeout_s: 300,
            validate: true,
            reference_runs: 3,
            jobs: default_jobs(),
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
    let started = Instant::now();
    if opts.max_public == 0 {
        return Err(ImportError::Input("--max-public must be at least 1".into()));
    }
    if opts.timeout_s == 0 {
        return Err(ImportError::Input("--timeout must be at least 1".into()));
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
    let selected: Vec<SweBenchInstance> = all
        .into_iter()
        .filter(|i| opts.instances.is_empty() || opts.instances.contains(&i.instance_id))
        .collect();
    if !repo.exists() {
        return Err(ImportError::Input(format!(
            "{}: no such git clone",
            repo.display()
        )));
    }
    let git = GitRepo::open(repo)
        .map_err(|e| ImportError::Input(format!("{}: not a git clone: {e}", repo.display())))?;
    let out = prepare_out(out)?;
    for i in &selected {
        check_target(&out, &i.instance_id)?;
    }
    let ctx = Ctx {
        git,
        out: out.clone(),
        sandbox,
        opts,
        pythons: Mutex::default(),
        repaired: Mutex::default(),
    };
    let results = par_map(&selected, opts.jobs, |inst| {
        ImportReport::contain(&inst.instance_id, ctx.import_one(inst))
    });
    let mut report = ImportReport::gather(
        "swebench",
        input,
        &out,
        opts.validate,
        sandbox.backend(),
        started,
        results,
    )?;
    let mut repaired = std::mem::take(&mut *lock(&ctx.repaired));
    if !repaired.is_empty() {
        repaired.sort();
        report.repaired = repaired;
        report.write(&out)?;
    }
    Ok(report)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

type Outcome = Result<Result<Emitted, Skipped>, ImportError>;

/// An interpreter setting resolved once: the executable, or why there is none.
type Resolved = Arc<OnceLock<Result<PathBuf, String>>>;

struct Ctx<'a> {
    git: GitRepo,
    out: PathBuf,
    sandbox: &'a Sandbox,
    opts: &'a SweBenchOptions,
    /// Interpreters resolved so far, by the environment's `python` setting: each is found (and
    /// copied, or repaired) once per import, however many instances need it.
    pythons: Mutex<BTreeMap<String, Resolved>>,
    /// What was found broken in the caches and made again (see [`ImportReport::repaired`]).
    repaired: Mutex<Vec<String>>,
}

fn skip(i: &SweBenchInstance, reason: &str, detail: String) -> Outcome {
    Ok(Err(Skipped::new(&i.instance_id, reason, detail)))
}

/// A skipped instance whose detail quotes a failed test run: its failing tests are named in the
/// detail and listed in the report's `failures`.
fn skip_failing(
    i: &SweBenchInstance,
    reason: &str,
    detail: String,
    failures: Vec<traparena_env::TestFailure>,
    lines: Vec<String>,
) -> Outcome {
    let detail = if lines.is_empty() {
        detail
    } else {
        format!("{detail} | failing: {}", lines.join("; "))
    };
    Ok(Err(Skipped {
        failures,
        ..Skipped::new(&i.instance_id, reason, detail)
    }))
}

/// What an instance becomes before it is written.
struct Plan {
    hidden: Vec<(String, Vec<u8>)>,
    remove: Vec<String>,
    /// Public copies: path, content, the candidate test ids in the copy.
    public: Vec<(String, Vec<u8>, Vec<String>)>,
    /// Candidate id in the copy → the instance's id.
    public_source: Vec<(String, String)>,
}

impl Ctx<'_> {
    /// The interpreter an environment's `python` setting names: a path as it is, a version
    /// found with [`find_python`] (once per import; concurrent first uses wait for it).
    fn python(&self, spec: &str) -> Result<PathBuf, String> {
        if !is_version(spec) {
            return Ok(PathBuf::from(spec));
        }
        let cell = lock(&self.pythons)
            .entry(spec.to_owned())
            .or_default()
            .clone();
        cell.get_or_init(|| {
            let store = self.opts.venv_cache.join("python");
            let found =
                find_python(spec, &self.opts.interpreters, &store).map_err(|e| e.to_string())?;
            if let Some(why) = &found.repaired {
                lock(&self.repaired).push(format!("python {spec}: {why}"));
            }
            Ok(found.executable)
        })
        .clone()
    }

    fn import_one(&self, inst: &SweBenchInstance) -> Outcome {
        let id = inst.instance_id.as_str();
        let Some(commit) = self.git.resolve_commit(&inst.base_commit)? else {
            return skip(
                inst,
                "the base commit is not in the clone",
                format!(
                    "{} not found in {} (a clone of {}?)",
                    inst.base_commit,
                    self.git.git_dir().display(),
                    inst.repo
                ),
            );
        };
        if inst.fail_to_pass.is_empty() {
            return skip(
                inst,
                "the instance has no FAIL_TO_PASS test",
                "FAIL_TO_PASS is empty: nothing would fail on the buggy code".into(),
            );
        }
        let test_patch = match Patch::parse(&inst.test_patch, Path::new("test_patch")) {
            Ok(p) if !p.is_empty() => p,
            Ok(_) => return skip(inst, "the test patch is empty", "it changes no file".into()),
            Err(e) => return skip(inst, "the test patch cannot be parsed", e.to_string()),
        };
        if let Err(e) = Patch::parse(&inst.patch, Path::new("patch")) {
            return skip(inst, "the reference patch cannot be parsed", e.to_string());
        }
        let partial = partial_dir(&self.out, id)?;
        let result = self.build_task(inst, &commit, &test_patch, &partial);
        match result {
            Ok(Ok(emitted)) => match finish(&partial, &self.out, id) {
                Ok(()) => Ok(Ok(emitted)),
                Err(e) => {
                    discard(&partial);
                    Err(e)
                }
            },
            other => {
                discard(&partial);
                other
            }
        }
    }

    fn build_task(
        &self,
        inst: &SweBenchInstance,
        commit: &str,
        test_patch: &Patch,
        dir: &Path,
    ) -> Outcome {
        let repo_dir = dir.join("repo");
        self.git.export_tree(commit, &repo_dir)?;
        let plan = match self.plan(inst, test_patch, &repo_dir)? {
            Ok(p) => p,
            Err((reason, detail)) => return skip(inst, &reason, detail),
        };
        let (version, version_source) = self.version(inst, commit, &repo_dir)?;
        let key = format!(
            "{}@{}",
            inst.repo,
            version
                .as_deref()
                .and_then(major_minor)
                .unwrap_or_else(|| "unknown".into())
        );
        let mut metadata = serde_json::Map::new();
        let mut put = |k: &str, v: serde_json::Value| {
            metadata.insert(k.to_owned(), v);
        };
        // The environment: the user's pins for the repository and version, else the bundled
        // one; a repository neither knows runs with the system's python3.
        let found = self
            .opts
            .pins
            .as_ref()
            .and_then(|p| crate::versions::lookup(p, &inst.repo, version.as_deref()))
            .map(|(k, e)| ("pins", k.to_owned(), e.clone()))
            .or_else(|| {
                self.opts
                    .bundled
                    .then(bundled_envs)
                    .and_then(|p| crate::versions::lookup(p, &inst.repo, version.as_deref()))
                    .map(|(k, e)| ("bundled", k.to_owned(), e.clone()))
            });
        let known_repo = self
            .opts
            .pins
            .as_ref()
            .is_some_and(|p| p.0.contains_key(&inst.repo))
            || (self.opts.bundled && bundled_envs().0.contains_key(&inst.repo));
        // What the report says of the choice.
        let mut environment = None;
        let (setup, entry) = match found {
            None if known_repo => {
                return skip(
                    inst,
                    "no environment for the repository's version",
                    format!(
                        "neither --pins nor the bundled environments have {} {} (nor `*`)",
                        inst.repo,
                        version.as_deref().unwrap_or("(unknown version)")
                    ),
                );
            }
            None => (None, None),
            Some((from, matched, mut entry)) => {
                let python = match self.python(&entry.python) {
                    Ok(p) => p,
                    Err(e) => return skip(inst, "no interpreter for the environment", e),
                };
                environment = Some(format!(
                    "version {} ({version_source}); {from} {} {matched}{}, python {}",
                    version.as_deref().unwrap_or("unknown"),
                    inst.repo,
                    crate::versions::key_note(version.as_deref(), &matched),
                    entry.python
                ));
                put(
                    "environment",
                    serde_json::json!({"from": from, "version_key": matched, "python": entry.python}),
                );
                entry.python = python.to_string_lossy().into_owned();
                (
                    Some(setup_for(&key, &entry, &self.opts.venv_cache)),
                    Some(entry),
                )
            }
        };
        // The sandbox that also shows the environment and its base interpreter.
        let sandbox = match &setup {
            Some(s) => self.sandbox.with_read_only_paths(&s.visible_paths()),
            None => self.sandbox.clone(),
        };
        if let Some(s) = &setup {
            if self.opts.build_envs {
                match ensure_env(s, &self.opts.build) {
                    Ok(Ensured::Rebuilt { reason }) => lock(&self.repaired).push(format!(
                        "environment {} in {}: {reason}; built again",
                        s.key,
                        s.venv.display()
                    )),
                    Ok(_) => {}
                    Err(e) => return skip(inst, "the environment cannot be built", e.to_string()),
                }
            } else if !crate::setup::is_built(s) {
                return skip(
                    inst,
                    "the environment is not built",
                    format!("{} is missing", s.venv.display()),
                );
            }
            if let Some(why) = runs_in_sandbox(&sandbox, &venv_python(s))? {
                return skip(inst, "the environment cannot run in the sandbox", why);
            }
        }
        if let (Some(s), Some(e)) = (&setup, &entry) {
            let v = version.as_deref().unwrap_or("0.0.0");
            match install_generated(e, s, v, &repo_dir, &self.opts.build) {
                Ok(files) => {
                    if !files.is_empty() {
                        put("generated_files", serde_json::json!(files));
                    }
                }
                Err(e) => return skip(inst, "the repository cannot be installed", e),
            }
        }
        for rel in &plan.remove {
            let p = repo_dir.join(rel);
            if std::fs::symlink_metadata(&p).is_ok() {
                std::fs::remove_file(&p).map_err(io(&p))?;
            }
        }
        for (rel, bytes, _) in &plan.public {
            write_file(&repo_dir, rel, bytes)?;
        }
        for (rel, bytes) in &plan.hidden {
            write_file(&dir.join("hidden"), rel, bytes)?;
        }
        write_file(dir, "reference.patch", inst.patch.as_bytes())?;
        let python = match &setup {
            Some(s) => venv_python(s).to_string_lossy().into_owned(),
            None => "python3".to_owned(),
        };
        let rel = |s: &str| RelPath::new(s).map_err(|e| ImportError::Input(format!("{s}: {e}")));
        let hidden_files: Vec<RelPath> = plan
            .hidden
            .iter()
            .map(|(p, _)| rel(p))
            .collect::<Result<_, _>>()?;
        // The hidden tests: the files that hold the instance's tests, run whole; the tests are
        // judged by name (see TestSpec::select), as SWE-bench's grader matches names.
        let hidden_paths: BTreeSet<&str> = plan.hidden.iter().map(|(p, _)| p.as_str()).collect();
        let mut run_files: Vec<String> = Vec::new();
        let mut unselectable: Vec<String> = Vec::new();
        let mut skipped_here: Vec<String> = Vec::new();
        let mut failing_here: Vec<String> = Vec::new();
        let mut select: Vec<String> = Vec::new();
        for id in inst.fail_to_pass.iter().chain(&inst.pass_to_pass) {
            let file = id.split("::").next().unwrap_or(id);
            let exists = hidden_paths.contains(file)
                || (RelPath::new(file).is_ok() && repo_dir.join(file).is_file());
            if !exists || !file.ends_with(".py") {
                unselectable.push(id.clone());
                continue;
            }
            if !run_files.iter().any(|f| f == file) {
                run_files.push(file.to_owned());
            }
            select.push(id.clone());
        }
        let f2p: BTreeSet<&str> = inst.fail_to_pass.iter().map(String::as_str).collect();
        if !select.iter().any(|id| f2p.contains(id.as_str())) {
            return skip(
                inst,
                "no FAIL_TO_PASS test can be found",
                format!(
                    "no FAIL_TO_PASS id names a test file of the repository: {}",
                    inst.fail_to_pass.join(", ")
                ),
            );
        }
        let pytest = |files: &[String], select: Vec<String>, spec_files: Vec<RelPath>| TestSpec {
            command: [python.clone(), "-m".into(), "pytest".into()]
                .into_iter()
                .chain(files.iter().cloned())
                .collect(),
            runner: Runner::Pytest,
            files: spec_files,
            select,
        };
        let public_files: Vec<String> = plan.public.iter().map(|(p, _, _)| p.clone()).collect();
        let candidates: Vec<String> = plan
            .public
            .iter()
            .flat_map(|(_, _, ids)| ids.clone())
            .collect();
        let public_spec_files: Vec<RelPath> = public_files
            .iter()
            .map(|p| rel(p))
            .collect::<Result<_, _>>()?;
        put("instance_id", inst.instance_id.clone().into());
        put("repo", inst.repo.clone().into());
        put("base_commit", commit.into());
        put("version", version.clone().into());
        put("version_source", version_source.into());
        put("FAIL_TO_PASS", serde_json::json!(inst.fail_to_pass));
        put("PASS_TO_PASS", serde_json::json!(inst.pass_to_pass));
        if let Some(c) = &inst.environment_setup_commit {
            put("environment_setup_commit", c.clone().into());
        }
        let description = if inst.problem_statement.trim().is_empty() {
            format!(
                "Repair the defect of {} behind SWE-bench instance {}.",
                inst.repo, inst.instance_id
            )
        } else {
            inst.problem_statement.trim().to_owned()
        };
        let mut spec = TaskSpec {
            id: inst.instance_id.clone(),
            source: "swebench".into(),
            language: "python".into(),
            description,
            public_tests: pytest(&public_files, candidates.clone(), public_spec_files.clone()),
            hidden_tests: pytest(&run_files, select.clone(), hidden_files.clone()),
            timeout_s: self.opts.timeout_s,
            reference_locations: None,
            metadata,
            setup: setup.clone(),
        };
        let write_spec = |spec: &TaskSpec| -> Result<(), ImportError> {
            let json = serde_json::to_string_pretty(spec).expect("a task spec serialises") + "\n";
            write_file(dir, "task.json", json.as_bytes())
        };
        write_spec(&spec)?;
        let mut public_ids: Vec<String> = candidates
            .iter()
            .take(self.opts.max_public)
            .cloned()
            .collect();
        if self.opts.validate {
            let task = Task::load(dir).map_err(|e| ImportError::Input(e.to_string()))?;
            // Public tests chosen by running them: the candidates that pass on the base commit,
            // in the sandbox, offline, without the files moved to hidden/.
            // One file that cannot be collected must not stop the others from running.
            let mut trial = spec.public_tests.clone();
            trial
                .command
                .insert(3, "--continue-on-collection-errors".into());
            let ws = Workspace::materialize(&task.repo_dir(), &sandbox)?;
            let run = ws.run_tests(&sandbox, &trial, spec.timeout_s)?;
            drop(ws);
            let passing: Vec<String> = run
                .selected
                .iter()
                .filter(|n| n.outcome.is_pass())
                .map(|n| n.name.clone())
                .take(self.opts.max_public)
                .collect();
            if passing.is_empty() {
                if let Some(why) = run.environment_failure() {
                    return skip(inst, "the environment fails the tests", why);
                }
                let why = run.summary();
                return skip_failing(
                    inst,
                    "no public test passes on the base commit",
                    format!(
                        "{} candidate(s) of the touched test files: {why}",
                        candidates.len()
                    ),
                    run.failures.clone(),
                    run.failure_lines(),
                );
            }
            public_ids = passing;
            // Names the runner never reports cannot judge anything: the reference run tells
            // which of the instance's names are real tests here.
            let (fixed, applied) =
                traparena_eval::evaluation_copy(&task, &sandbox, &task.reference_patch_text)?;
            if !applied.applied {
                return skip(
                    inst,
                    "the reference patch does not apply",
                    applied.message.clone(),
                );
            }
            let run = fixed.run_tests(&sandbox, &spec.hidden_tests, spec.timeout_s)?;
            drop(fixed);
            if let Some(why) = run.environment_failure() {
                return skip(inst, "the environment fails the tests", why);
            }
            // A name pytest does not report, or a test skipped here (an optional dependency
            // SWE-bench's environment had), cannot judge a patch: it is left out and listed.
            let (found, missing): (Vec<_>, Vec<_>) = run.selected.iter().partition(|n| {
                !matches!(
                    n.outcome,
                    traparena_env::TestOutcome::NotRun | traparena_env::TestOutcome::Skipped
                )
            });
            for n in &missing {
                if n.outcome == traparena_env::TestOutcome::Skipped {
                    skipped_here.push(n.name.clone());
                } else {
                    unselectable.push(n.name.clone());
                }
            }
            // PASS_TO_PASS means "passes before and after the fix" in SWE-bench's environment;
            // one that fails here even with the reference (a test of how an editable install
            // sets sys.path, say) says nothing about a candidate, so it is re-derived here and
            // listed. A FAIL_TO_PASS test that fails with the reference still fails validation.
            let (found, failing): (Vec<_>, Vec<_>) = found
                .into_iter()
                .partition(|n| n.outcome.is_pass() || f2p.contains(n.name.as_str()));
            failing_here.extend(failing.iter().map(|n| n.name.clone()));
            select = found.iter().map(|n| n.name.clone()).collect();
            if !select.iter().any(|id| f2p.contains(id.as_str())) {
                return skip(
                    inst,
                    "no FAIL_TO_PASS test can be found",
                    format!(
                        "pytest reports none of {} in {}",
                        inst.fail_to_pass.join(", "),
                        run_files.join(" ")
                    ),
                );
            }
        }
        // Only the public files that hold a chosen test stay.
        let keep_public: BTreeSet<&str> = public_ids
            .iter()
            .map(|id| id.split("::").next().unwrap_or(id))
            .collect();
        for (p, _, _) in &plan.public {
            if !keep_public.contains(p.as_str()) {
                let f = repo_dir.join(p);
                std::fs::remove_file(&f).map_err(io(&f))?;
            }
        }
        let kept_files: Vec<String> = public_files
            .iter()
            .filter(|p| keep_public.contains(p.as_str()))
            .cloned()
            .collect();
        let kept_spec_files: Vec<RelPath> = kept_files
            .iter()
            .map(|p| rel(p))
            .collect::<Result<_, _>>()?;
        spec.public_tests = pytest(&kept_files, public_ids.clone(), kept_spec_files);
        spec.hidden_tests = pytest(&run_files, select.clone(), hidden_files);
        let source_of: BTreeMap<&str, &str> = plan
            .public_source
            .iter()
            .map(|(copy, orig)| (copy.as_str(), orig.as_str()))
            .collect();
        spec.metadata.insert(
            "public_tests".into(),
            serde_json::json!(
                public_ids
                    .iter()
                    .map(|id| source_of.get(id.as_str()).copied().unwrap_or(id.as_str()))
                    .collect::<Vec<_>>()
            ),
        );
        spec.metadata
            .insert("matched_tests".into(), serde_json::json!(select));
        spec.metadata
            .insert("unmatched_tests".into(), serde_json::json!(unselectable));
        spec.metadata
            .insert("skipped_tests".into(), serde_json::json!(skipped_here));
        spec.metadata
            .insert("failing_here_tests".into(), serde_json::json!(failing_here));
        write_spec(&spec)?;
        if self.opts.validate
            && let Some((problems, failures)) = check_task(dir, &sandbox, self.opts.reference_runs)?
        {
            return skip_failing(
                inst,
                "the task fails validation",
                problems,
                failures,
                Vec::new(),
            );
        }
        Ok(Ok(Emitted {
            record: inst.instance_id.clone(),
            id: inst.instance_id.clone(),
            public_tests: public_ids.len(),
            hidden_tests: select.len(),
            environment,
        }))
    }

    /// Splits the test patch into hidden files and public copies.
    #[allow(clippy::type_complexity)]
    fn plan(
        &self,
        inst: &SweBenchInstance,
        test_patch: &Patch,
        repo_dir: &Path,
    ) -> Result<Result<Plan, (String, String)>, ImportError> {
        let refuse = |r: &str, d: String| Ok(Err((r.to_owned(), d)));
        // The touched files' base versions, then test_patch applied to them.
        let scratch = tempfile::Builder::new()
            .prefix("traparena-testpatch-")
            .tempdir()
            .map_err(io(std::env::temp_dir()))?;
        let mut base: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for f in &test_patch.files {
            for p in f.paths() {
                let src = repo_dir.join(p.as_str());
                if src.is_file() {
                    let bytes = std::fs::read(&src).map_err(io(&src))?;
                    write_file(scratch.path(), p.as_str(), &bytes)?;
                    base.insert(p.as_str().to_owned(), bytes);
                }
            }
        }
        let mut ws = Workspace::materialize(scratch.path(), self.sandbox)?;
        let applied = ws.apply_patch(&inst.test_patch)?;
        if !applied.applied {
            return refuse(
                "the test patch does not apply at the base commit",
                applied.message,
            );
        }
        let mut hidden = Vec::new();
        let mut remove = Vec::new();
        for f in &test_patch.files {
            let Some(new) = &f.new_path else { continue };
            let p = ws.path().join(new.as_str());
            let bytes = std::fs::read(&p).map_err(io(&p))?;
            hidden.push((new.as_str().to_owned(), bytes));
            remove.push(new.as_str().to_owned());
        }
        if hidden.is_empty() {
            return refuse(
                "the test patch only deletes files",
                "no file is left to hold hidden tests".into(),
            );
        }
        // Public tests: PASS_TO_PASS tests of touched test files that exist at base_commit.
        let hidden_paths: BTreeSet<&str> = hidden.iter().map(|(p, _)| p.as_str()).collect();
        let mut symbols: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut public_path: BTreeMap<String, String> = BTreeMap::new();
        let mut public: Vec<(String, Vec<u8>, Vec<String>)> = Vec::new();
        let mut public_source = Vec::new();
        for node in &inst.pass_to_pass {
            let Some((file, rest)) = node.split_once("::") else {
                continue;
            };
            if !hidden_paths.contains(file) || !file.ends_with(".py") {
                continue;
            }
            let Some(text) = base.get(file) else { continue };
            let defined = symbols.entry(file.to_owned()).or_insert_with(|| {
                let text = String::from_utf8_lossy(text);
                PyFile::parse(&text)
                    .map(|f| f.symbols().into_iter().map(|s| s.name).collect())
                    .unwrap_or_default()
            });
            let name = rest.split('[').next().unwrap_or(rest).replace("::", ".");
            if !defined.contains(&name) {
                continue;
            }
            let target = match public_path.get(file) {
                Some(t) => t.clone(),
                None => {
                    let t = public_name(file, repo_dir, &hidden_paths);
                    public.push((t.clone(), text.clone(), Vec::new()));
                    public_path.insert(file.to_owned(), t.clone());
                    t
                }
            };
            let id = format!("{target}::{rest}");
            if let Some(entry) = public.iter_mut().find(|(p, _, _)| *p == target) {
                entry.2.push(id.clone());
            }
            public_source.push((id, node.clone()));
        }
        if public_source.is_empty() {
            return refuse(
                "no public test",
                "no PASS_TO_PASS test of the files the test patch touches exists at the base commit"
                    .into(),
            );
        }
        Ok(Ok(Plan {
            hidden,
            remove,
            public,
            public_source,
        }))
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
        let d = crate::versions::derive(&inst.repo, repo_dir, Some((&self.git, commit)))?;
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

/// `dir/test_x.py` → `dir/test_x_public.py` (or `_public2`, ... when taken).
fn public_name(file: &str, repo_dir: &Path, hidden: &BTreeSet<&str>) -> String {
    let stem = file.strip_suffix(".py").unwrap_or(file);
    (1..)
        .map(|n| {
            if n == 1 {
                format!("{stem}_public.py")
            } else {
                format!("{stem}_public{n}.py")
            }
        })
        .find(|c| !repo_dir.join(c).exists() && !hidden.contains(c.as_str()))
        .expect("some name is free")
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

//! One instance → one task folder: the test selection through the runner profile, and the
//! runs that choose the public tests and confirm the hidden ones (the environment is chosen
//! and prepared in `environment`).

use std::collections::BTreeSet;
use std::path::Path;

use traparena_env::{Sandbox, Workspace};
use traparena_task::{Patch, RelPath, Task, TaskLayout, TaskSpec};

use super::environment::{Chosen, Environment};
use super::judge::{Judging, Written};
use super::note::SweBenchMetadata;
use super::plan::{Plan, PublicOrigin, plan};
use super::select::{Commands, Selection, narrow, select_tests};
use super::{Ctx, Source, SweBenchInstance, skip, skipped_failing};
use crate::common::write_file;
use crate::error::ImportError;
use crate::profiles::RunnerProfile;
use crate::report::Outcome;
use crate::report::{RecordOutcome, Skipped};
use crate::skip::{Skip, SkipReason, Stop};

/// The instance's names tried on the written task: the public tests that pass, or why the
/// instance is skipped.
enum Tried {
    Passing(Vec<String>),
    Skipped(Skipped),
}

/// What the stages before writing a task found.
struct Staged {
    version: Option<String>,
    version_source: String,
    chosen: Chosen,
    plan: Plan,
    /// The metadata the stages found (the image's commit, the environment, the files the
    /// install step generated).
    metadata: SweBenchMetadata,
    sandbox: Sandbox,
}

impl Ctx<'_> {
    /// The stages before the task is written: the tree, its version, the environment chosen
    /// and prepared, and the test patch's plan; each may skip the instance.
    fn stage(
        &self,
        inst: &SweBenchInstance,
        commit: &str,
        test_patch: &Patch,
        repo_dir: &Path,
    ) -> Result<Staged, Stop> {
        let image_head = match &self.source {
            Source::Clone(git) => {
                git.export_tree(commit, repo_dir)?;
                None
            }
            Source::Images(naming) => self.image_tree(inst, naming, repo_dir)?,
        };
        let (version, version_source) = self.version(inst, commit, repo_dir)?;
        let chosen = self.choose_env(inst, repo_dir, version.as_deref(), &version_source)?;
        let plan = plan(
            inst,
            test_patch,
            repo_dir,
            self.patching,
            chosen.profile.as_ref(),
        )?;
        let (sandbox, generated) = self.prepare_env(&chosen, version.as_deref(), repo_dir)?;
        let metadata = SweBenchMetadata {
            image_head,
            environment: chosen.note.clone(),
            generated_files: (!generated.is_empty()).then_some(generated),
            ..SweBenchMetadata::default()
        };
        Ok(Staged {
            metadata,
            version,
            version_source,
            chosen,
            plan,
            sandbox,
        })
    }

    pub(super) fn build_task(
        &self,
        inst: &SweBenchInstance,
        commit: &str,
        test_patch: &Patch,
        dir: &Path,
    ) -> Outcome {
        let repo_dir = TaskLayout::new(dir).repo();
        let staged = self.stage(inst, commit, test_patch, &repo_dir);
        let Staged {
            mut metadata,
            version,
            version_source,
            chosen,
            plan,
            sandbox,
        } = match staged {
            Ok(s) => s,
            Err(Stop::Skip(s)) => return skip(inst, s.reason, s.cause),
            Err(Stop::Harness(e)) => return Err(e),
        };
        let profile = chosen.profile.as_ref();
        let (reference, rebased) = self.reference_patch(inst, &repo_dir)?;
        metadata.reference_patch_rebased = rebased;
        self.write_files(&reference, &plan, &repo_dir, dir)?;
        let commands = Commands {
            profile,
            python: chosen.python(),
        };
        let mut sel = select_tests(inst, &plan, &repo_dir, profile);
        if !names_a_fail_to_pass(inst, &sel) {
            let names = inst.fail_to_pass.join(", ");
            let why =
                format!("no FAIL_TO_PASS name names a test file the test patch touches: {names}");
            return skip(inst, SkipReason::FailToPassNotFound, why);
        }
        let hidden_files = rels(plan.hidden.iter().map(|(p, _)| p))?;
        let public_files = plan.public_paths();
        // At most three times as many candidates as public tests are tried: a django module
        // holds hundreds, and each tried test is a test run.
        let candidates: Vec<String> = plan
            .public
            .iter()
            .flat_map(|f| f.ids.clone())
            .take(self.opts.max_public.saturating_mul(3))
            .collect();
        describe(inst, commit, &version, &version_source, &mut metadata);
        let mut spec = TaskSpec {
            id: inst.instance_id.clone(),
            source: "swebench".into(),
            language: traparena_task::Language::Python,
            description: description(inst),
            public_tests: commands.trial(&public_files, &candidates, rels(&public_files)?),
            hidden_tests: commands.trial(&sel.run_files, &sel.select, hidden_files.clone()),
            timeout_s: self.opts.timeout_s,
            reference_locations: None,
            metadata: metadata.to_map(),
            setup: match &chosen.environment {
                Environment::Venv { setup, .. } => Some(setup.clone()),
                _ => None,
            },
            image: match &chosen.environment {
                Environment::Image(image) => Some(image.clone()),
                _ => None,
            },
        };
        write_spec(dir, &spec)?;
        let mut public_ids: Vec<String> = candidates
            .iter()
            .take(self.opts.max_public)
            .cloned()
            .collect();
        if self.opts.validate {
            match self.try_names(profile, inst, dir, &spec, &sandbox, &mut sel)? {
                Tried::Passing(passing) => public_ids = passing,
                Tried::Skipped(skipped) => return Ok(RecordOutcome::Skipped(skipped)),
            }
        }
        spec.hidden_tests = commands.spec(&sel.run_files, &sel.select, hidden_files);
        let judging = Judging {
            inst,
            dir,
            sandbox: &sandbox,
            chosen: &chosen,
        };
        self.judge(
            &judging,
            Written {
                spec,
                metadata,
                plan: &plan,
                commands: &commands,
                sel,
                public_ids,
            },
        )
    }

    /// The reference patch, in this tree's line numbers when it applies only with offsets
    /// (then with the note the metadata gives that).
    fn reference_patch(
        &self,
        inst: &SweBenchInstance,
        repo_dir: &Path,
    ) -> Result<(String, Option<String>), ImportError> {
        Ok(
            match super::plan::rebased_patch(&inst.patch, repo_dir, self.patching)? {
                Some(rebased) => (
                    rebased,
                    Some(
                        "the record's patch applies here only with offsets; reference.patch is \
                         it in this tree's line numbers"
                            .into(),
                    ),
                ),
                None => (inst.patch.clone(), None),
            },
        )
    }

    /// Writes the plan into the task folder: public copies into `repo/` (beside the base
    /// versions of the test files, which stay), the hidden files and the reference patch beside
    /// it.
    fn write_files(
        &self,
        reference: &str,
        plan: &Plan,
        repo_dir: &Path,
        dir: &Path,
    ) -> Result<(), ImportError> {
        for f in &plan.public {
            if let PublicOrigin::Copy(bytes) = &f.origin {
                write_file(repo_dir, &f.path, bytes)?;
            }
        }
        for (rel, bytes) in &plan.hidden {
            write_file(&TaskLayout::new(dir).hidden(), rel, bytes)?;
        }
        write_file(dir, TaskLayout::REFERENCE, reference.as_bytes())
    }

    /// The candidates of `public` that pass on the base tree `repo_dir` (at most
    /// `--max-public`), and the run. One file that cannot be collected does not stop the
    /// others: the profile's tolerant command runs them.
    pub(super) fn passing_on_base(
        &self,
        repo_dir: &Path,
        sandbox: &Sandbox,
        profile: &dyn RunnerProfile,
        public: &traparena_task::TestSpec,
    ) -> Result<(Vec<String>, traparena_env::TestRun), ImportError> {
        let mut trial = public.clone();
        trial.command = profile.tolerant(trial.command);
        let ws = Workspace::materialize(repo_dir, sandbox)?;
        let run = ws.run_tests(sandbox, &trial, self.opts.timeout_s)?;
        let passing = run
            .selected
            .iter()
            .filter(|n| n.outcome.is_pass())
            .map(|n| n.name.clone())
            .take(self.opts.max_public)
            .collect();
        Ok((passing, run))
    }

    /// Runs the names: the public candidates on the base commit (the ones that pass become the
    /// public tests, returned), then the hidden files with the reference patch, which tells
    /// which of the instance's names are real tests here (`sel` is narrowed to them).
    fn try_names(
        &self,
        profile: &dyn RunnerProfile,
        inst: &SweBenchInstance,
        dir: &Path,
        spec: &TaskSpec,
        sandbox: &Sandbox,
        sel: &mut Selection,
    ) -> Result<Tried, ImportError> {
        let skipped = |s: Skipped| Ok(Tried::Skipped(s));
        let skip = |r: SkipReason, d: String| Skipped::new(&inst.instance_id, Skip::new(r, d));
        let task = Task::load(dir).map_err(|e| ImportError::Input(e.to_string()))?;
        let (passing, run) =
            self.passing_on_base(&task.repo_dir(), sandbox, profile, &spec.public_tests)?;
        if passing.is_empty() {
            if let Some(why) = run.environment_failure() {
                return skipped(skip(SkipReason::EnvironmentFailsTests, why));
            }
            return skipped(skipped_failing(
                inst,
                SkipReason::NoPublicTestPasses,
                format!(
                    "{} candidate(s) of the touched test files: {}",
                    spec.public_tests.select.len(),
                    run.summary()
                ),
                run.failures.clone(),
                run.failure_lines(),
            ));
        }
        let (fixed, applied) =
            traparena_eval::evaluation_copy(&task, sandbox, &task.reference_patch_text)?;
        if !applied.applied {
            return skipped(skip(
                SkipReason::ReferencePatchDoesNotApply,
                applied.message.clone(),
            ));
        }
        let run = fixed.run_tests(sandbox, &spec.hidden_tests, spec.timeout_s)?;
        drop(fixed);
        if let Some(why) = run.environment_failure() {
            return skipped(skip(SkipReason::EnvironmentFailsTests, why));
        }
        narrow(inst, &run, sel);
        if !names_a_fail_to_pass(inst, sel) {
            let skipped_f2p: Vec<&str> = inst
                .fail_to_pass
                .iter()
                .filter(|n| sel.skipped_here.contains(n))
                .map(String::as_str)
                .collect();
            let why = if skipped_f2p.is_empty() {
                format!(
                    "the runner reports none of {} in {}",
                    inst.fail_to_pass.join(", "),
                    spec.hidden_tests.command[1..].join(" ")
                )
            } else {
                // A skip in the tree (a release's `pytest.skip` the base commit lacks) or a
                // dependency the environment lacks: the run says which, the name alone cannot.
                format!(
                    "the FAIL_TO_PASS tests that run are skipped here with the reference patch: {}",
                    skipped_f2p.join(", ")
                )
            };
            return skipped(skip(SkipReason::FailToPassNotFound, why));
        }
        Ok(Tried::Passing(passing))
    }
}

/// True when the selection names one of the instance's `FAIL_TO_PASS` tests.
fn names_a_fail_to_pass(inst: &SweBenchInstance, sel: &Selection) -> bool {
    let f2p: BTreeSet<&str> = inst.fail_to_pass.iter().map(String::as_str).collect();
    sel.select.iter().any(|id| f2p.contains(id.as_str()))
}

fn rel(s: &str) -> Result<RelPath, ImportError> {
    RelPath::new(s).map_err(|e| ImportError::Input(format!("{s}: {e}")))
}

pub(super) fn rels<S: AsRef<str>>(
    paths: impl IntoIterator<Item = S>,
) -> Result<Vec<RelPath>, ImportError> {
    paths.into_iter().map(|p| rel(p.as_ref())).collect()
}

pub(super) fn write_spec(dir: &Path, spec: &TaskSpec) -> Result<(), ImportError> {
    let json = serde_json::to_string_pretty(spec).expect("a task spec serialises") + "\n";
    write_file(dir, TaskLayout::SPEC, json.as_bytes())
}

fn description(inst: &SweBenchInstance) -> String {
    if inst.problem_statement.trim().is_empty() {
        format!(
            "Repair the defect of {} behind SWE-bench instance {}.",
            inst.repo, inst.instance_id
        )
    } else {
        inst.problem_statement.trim().to_owned()
    }
}

/// The record's fields every task keeps.
fn describe(
    inst: &SweBenchInstance,
    commit: &str,
    version: &Option<String>,
    version_source: &str,
    m: &mut SweBenchMetadata,
) {
    m.instance_id = inst.instance_id.clone();
    m.repo = inst.repo.clone();
    m.base_commit = commit.to_owned();
    m.version = version.clone();
    m.version_source = version_source.to_owned();
    m.fail_to_pass = inst.fail_to_pass.clone();
    m.pass_to_pass = inst.pass_to_pass.clone();
    m.environment_setup_commit = inst.environment_setup_commit.clone();
}

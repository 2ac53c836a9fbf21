//! The last stage of an instance: the written task validated, with its public tests
//! narrowed when they fail with the reference patch, and the likely causes of failing tests.

use std::collections::BTreeSet;
use std::path::Path;

use traparena_env::Sandbox;
use traparena_task::{Task, TaskLayout, TaskSpec};

use super::build::{rels, write_spec};
use super::environment::{Chosen, Environment};
use super::note::SweBenchMetadata;
use super::plan::{Plan, neighbours};
use super::select::{Commands, Selection, chosen_tests, differs, keep_chosen_public};
use super::{Ctx, SweBenchInstance, skip, skip_failing};
use crate::common::{Checked, check_task};
use crate::error::ImportError;
use crate::report::{Emitted, Outcome, RecordOutcome};
use crate::skip::SkipReason;

impl Ctx<'_> {
    /// Writes the task with its chosen public tests and validates it. Once, public tests that
    /// fail with the reference patch (a public copy that imports what the test patch changes)
    /// are found, left out, and the task validated again; when that leaves none, the public
    /// tests are read in place from untouched files beside the touched ones, as when the touched
    /// files hold no `PASS_TO_PASS` test (pytest-dev__pytest-5787: every copy imports what the
    /// test patch changes).
    pub(super) fn judge(&self, j: &Judging<'_>, w: Written<'_>) -> Outcome {
        let Written {
            mut spec,
            metadata,
            plan,
            commands,
            mut sel,
            mut public_ids,
        } = w;
        let repo_dir = TaskLayout::new(j.dir).repo();
        let mut retry = true;
        // The plan that reads public tests in place, once the copies have all failed.
        let mut in_place: Option<Plan> = None;
        loop {
            let plan = in_place.as_ref().unwrap_or(plan);
            let kept = keep_chosen_public(plan, &public_ids, &repo_dir)?;
            spec.public_tests = commands.spec(&kept, &public_ids, rels(&kept)?);
            let metadata = SweBenchMetadata {
                tests: Some(chosen_tests(plan, &public_ids, &sel)),
                ..metadata.clone()
            };
            spec.metadata = metadata.to_map();
            write_spec(j.dir, &spec)?;
            let skipped = match self.validated(j, &sel, plan, public_ids.len(), retry)? {
                Validated::Done(outcome) => return Ok(outcome),
                Validated::PublicFailing(skipped) => skipped,
            };
            retry = false;
            let failing =
                self.public_failing_with_reference(j, commands, &kept, plan, &public_ids)?;
            if failing.is_empty() {
                // Each file's tests pass alone: what failed was running them together. The
                // validation's verdict stands.
                return Ok(skipped);
            }
            public_ids.retain(|id| !failing.contains(id));
            if public_ids.is_empty()
                && in_place.is_none()
                && let Some(found) = self.read_in_place(j, commands, plan)?
            {
                sel.public_left_out = failing;
                public_ids = found.passing;
                in_place = Some(found.plan);
                retry = true;
                continue;
            }
            if public_ids.is_empty() {
                return skip(
                    j.inst,
                    SkipReason::NoPublicTestPasses,
                    format!(
                        "every public test fails with the reference patch: {}",
                        failing.join(", ")
                    ),
                );
            }
            sel.public_left_out = failing;
        }
    }

    /// Public tests read in place from untouched test files beside the touched ones, in place
    /// of the copies of `plan` (which are removed): the plan that reads them and the tests that
    /// pass on the base commit; `None` when no such file has a passing test.
    fn read_in_place(
        &self,
        j: &Judging<'_>,
        commands: &Commands<'_>,
        plan: &Plan,
    ) -> Result<Option<InPlace>, ImportError> {
        let repo_dir = TaskLayout::new(j.dir).repo();
        keep_chosen_public(plan, &[], &repo_dir)?;
        let hidden: BTreeSet<&str> = plan.hidden.iter().map(|(p, _)| p.as_str()).collect();
        let public = neighbours(&hidden, &repo_dir, commands.profile)?;
        if public.is_empty() {
            return Ok(None);
        }
        let plan = Plan {
            hidden: plan.hidden.clone(),
            public,
            public_source: Vec::new(),
        };
        let files = plan.public_paths();
        let ids: Vec<String> = plan.public.iter().flat_map(|f| f.ids.clone()).collect();
        let trial = commands.trial(&files, &ids, rels(&files)?);
        let (passing, _) = self.passing_on_base(&repo_dir, j.sandbox, commands.profile, &trial)?;
        if passing.is_empty() {
            return Ok(None);
        }
        Ok(Some(InPlace { plan, passing }))
    }

    /// Validates the written task (unless validation is off): the task, or why it is skipped.
    fn validated(
        &self,
        j: &Judging<'_>,
        sel: &Selection,
        plan: &Plan,
        public_tests: usize,
        retry_public: bool,
    ) -> Result<Validated, ImportError> {
        let Judging {
            inst,
            dir,
            sandbox,
            chosen,
        } = *j;
        let causes = CauseFacts::of(&chosen.environment);
        let runs = if sel.suspect {
            self.opts.reference_runs
        } else {
            1
        };
        if self.opts.validate {
            match check_task(dir, sandbox, runs)? {
                Checked::Valid => {}
                Checked::Invalid(problems, failures, only_public) => {
                    let lines = causes.lines(&failures);
                    let skipped =
                        skip_failing(inst, SkipReason::FailsValidation, problems, failures, lines)?;
                    return Ok(match only_public && retry_public {
                        true => Validated::PublicFailing(skipped),
                        false => Validated::Done(skipped),
                    });
                }
                Checked::NotCheckable(why) => {
                    return skip_failing(
                        inst,
                        SkipReason::NotCheckable,
                        why,
                        Vec::new(),
                        Vec::new(),
                    )
                    .map(Validated::Done);
                }
            }
        }
        Ok(Validated::Done(RecordOutcome::Emitted(Emitted {
            record: inst.instance_id.clone(),
            id: inst.instance_id.clone(),
            public_tests,
            hidden_tests: sel.select.len(),
            environment: chosen.described.clone(),
            differs: [differs(sel, plan), causes.lines(&sel.failing_here_failures)].concat(),
            group: None,
            duration_ms: 0,
        })))
    }

    /// The public tests of `public_ids` that do not pass in the evaluation copy (the reference
    /// patch and the hidden test files in place), run file by file, so that one file that
    /// cannot be collected there (a public copy importing what the test patch changes) fails
    /// only its own tests.
    fn public_failing_with_reference(
        &self,
        j: &Judging<'_>,
        commands: &Commands<'_>,
        kept: &[String],
        plan: &Plan,
        public_ids: &[String],
    ) -> Result<Vec<String>, ImportError> {
        let sandbox = j.sandbox;
        let task = Task::load(j.dir).map_err(|e| ImportError::Input(e.to_string()))?;
        let (fixed, applied) =
            traparena_eval::evaluation_copy(&task, sandbox, &task.reference_patch_text)?;
        if !applied.applied {
            return Ok(Vec::new());
        }
        let mut failing = Vec::new();
        for file in kept {
            let ids: Vec<String> = plan
                .public
                .iter()
                .filter(|f| &f.path == file)
                .flat_map(|f| f.ids.iter())
                .filter(|id| public_ids.contains(id))
                .cloned()
                .collect();
            let files = [file.clone()];
            let spec = commands.spec(&files, &ids, rels(&files)?);
            let run = fixed.run_tests(sandbox, &spec, task.spec.timeout_s)?;
            failing.extend(
                run.selected
                    .iter()
                    .filter(|n| !n.outcome.is_pass())
                    .map(|n| n.name.clone()),
            );
        }
        Ok(failing)
    }
}

/// What the likely causes of failing listed tests are read from: the environment's
/// distributions and its specification (nothing for the system's interpreter or an image).
pub(super) struct CauseFacts {
    env: Option<(super::cause::Installed, traparena_pyenv::PinEntry)>,
}

impl CauseFacts {
    fn of(environment: &Environment) -> CauseFacts {
        CauseFacts {
            env: match environment {
                Environment::Venv { setup, entry, .. } => Some((
                    super::cause::Installed::read(&setup.venv),
                    (**entry).clone(),
                )),
                _ => None,
            },
        }
    }

    /// One line per failure (at most a few) with its likely cause; none without an
    /// environment to read.
    fn lines(&self, failures: &[traparena_env::TestFailure]) -> Vec<String> {
        match &self.env {
            Some((installed, entry)) => super::cause::likely_causes(failures, installed, entry),
            None => Vec::new(),
        }
    }
}

/// What the last stage judges a record in: the record, its task folder, the sandbox and the
/// chosen environment.
#[derive(Clone, Copy)]
pub(super) struct Judging<'a> {
    pub(super) inst: &'a SweBenchInstance,
    pub(super) dir: &'a Path,
    pub(super) sandbox: &'a Sandbox,
    pub(super) chosen: &'a Chosen,
}

/// What the last stage writes: the task's spec and metadata so far, and what its public tests
/// are chosen from.
pub(super) struct Written<'a> {
    pub(super) spec: TaskSpec,
    pub(super) metadata: SweBenchMetadata,
    pub(super) plan: &'a Plan,
    pub(super) commands: &'a Commands<'a>,
    pub(super) sel: Selection,
    pub(super) public_ids: Vec<String>,
}

/// What validating a written task came to: the record's outcome, or, when the only failed
/// check is that the public tests pass with the reference patch, the skip that would be, for
/// the importer to find and leave out those tests and validate once more.
pub(super) enum Validated {
    /// The task, or why the record is skipped.
    Done(RecordOutcome),
    /// Public tests fail with the reference patch; the skip if none can be left out.
    PublicFailing(RecordOutcome),
}

/// Public tests read in place when every public copy failed: the plan that reads them, and
/// the tests of them that pass on the base commit.
struct InPlace {
    plan: Plan,
    passing: Vec<String>,
}

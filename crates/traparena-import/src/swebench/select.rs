//! Which of an instance's test names judge a patch: located through the runner profile,
//! narrowed by the reference run, and how the result departs from SWE-bench's verdict; the
//! test commands made from them, and the public files and metadata kept for the chosen ones.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use traparena_env::{TestOutcome, TestRun};
use traparena_task::{RelPath, TestSpec};

use super::SweBenchInstance;
use super::note::ChosenTests;
use super::plan::{Parsed, Plan, PublicOrigin};
use crate::error::{ImportError, io};
use crate::profiles::RunnerProfile;

/// The names of an instance's tests, sorted by what can be done with them.
#[derive(Default)]
pub(super) struct Selection {
    /// Test files to run (for profiles that run files).
    pub run_files: Vec<String>,
    /// Names that judge a patch.
    pub select: Vec<String>,
    /// Names no test of the repository answers to.
    pub unselectable: Vec<String>,
    /// Names skipped here (an optional dependency SWE-bench's environment had).
    pub skipped_here: Vec<String>,
    /// `PASS_TO_PASS` names that fail here even with the reference.
    pub failing_here: Vec<String>,
    /// Their failures, as the reference run's report gave them.
    pub failing_here_failures: Vec<traparena_env::TestFailure>,
    /// Public tests left out because they failed with the reference patch (a public copy
    /// importing what the test patch changes).
    pub public_left_out: Vec<String>,
    /// A `FAIL_TO_PASS` test failed with the reference in the run that chose the names: the
    /// reference is run several times during validation.
    pub suspect: bool,
}

/// Sorts the instance's names: the ones whose file the profile finds among the hidden files or
/// in the tree are selected (their files run), the others that name a file are unselectable,
/// and the ones that do not say their file are selected too when files run, for the reference
/// run to tell whether they are tests here.
pub(super) fn select_tests(
    inst: &SweBenchInstance,
    plan: &Plan,
    repo_dir: &Path,
    profile: &dyn RunnerProfile,
) -> Selection {
    let touched = Parsed::new(plan.hidden.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
    let hidden_paths: BTreeSet<&str> = plan.hidden.iter().map(|(p, _)| p.as_str()).collect();
    let mut sel = Selection::default();
    let mut floating = Vec::new();
    for id in inst.fail_to_pass.iter().chain(&inst.pass_to_pass) {
        let Some(loc) = profile.locate(id, &touched) else {
            floating.push(id.clone());
            continue;
        };
        let exists = hidden_paths.contains(loc.file.as_str())
            || (RelPath::new(&loc.file).is_ok() && repo_dir.join(&loc.file).is_file());
        if !exists || !loc.file.ends_with(".py") {
            sel.unselectable.push(id.clone());
            continue;
        }
        if !sel.run_files.contains(&loc.file) {
            sel.run_files.push(loc.file.clone());
        }
        sel.select.push(id.clone());
    }
    if sel.run_files.is_empty() {
        sel.unselectable.extend(floating);
    } else {
        sel.select.extend(floating);
    }
    sel
}

/// Narrows the selection to what the reference run says: a name the runner does not report, or
/// a test skipped here (an optional dependency SWE-bench's environment had), cannot judge a
/// patch; a `PASS_TO_PASS` test that fails even with the reference (a test of how an editable
/// install sets sys.path, say) says nothing about a candidate. Each is left out and listed. A
/// `FAIL_TO_PASS` test that fails with the reference stays, and fails validation.
pub(super) fn narrow(inst: &SweBenchInstance, run: &TestRun, sel: &mut Selection) {
    let f2p: BTreeSet<&str> = inst.fail_to_pass.iter().map(String::as_str).collect();
    let mut keep = Vec::new();
    for n in &run.selected {
        match n.outcome {
            TestOutcome::Skipped => sel.skipped_here.push(n.name.clone()),
            TestOutcome::NotRun => sel.unselectable.push(n.name.clone()),
            o if o.is_pass() => keep.push(n.name.clone()),
            _ if f2p.contains(n.name.as_str()) => {
                sel.suspect = true;
                keep.push(n.name.clone());
            }
            _ => sel.failing_here.push(n.name.clone()),
        }
    }
    sel.failing_here_failures = run
        .failures
        .iter()
        .filter(|f| sel.failing_here.contains(&f.name))
        .cloned()
        .collect();
    sel.select = keep;
}

/// Where the task departs from SWE-bench's verdict that every listed test passes with the
/// reference in its environment, and where its public tests come from when not from copies of
/// the touched files (`plan`).
pub(super) fn differs(sel: &Selection, plan: &Plan) -> Vec<String> {
    let in_place = plan.in_place_paths();
    [
        (
            sel.failing_here.len(),
            "PASS_TO_PASS tests fail here even with the reference",
        ),
        (sel.skipped_here.len(), "tests are skipped here"),
        (sel.unselectable.len(), "listed tests are not found here"),
        (
            sel.public_left_out.len(),
            "public tests fail with the reference patch and are left out",
        ),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .chain((!in_place.is_empty()).then(|| {
        format!(
            "no copy of a touched test file gives a public test (none holds a PASS_TO_PASS test \
             at the base commit, or each fails with the reference patch), so the public tests \
             are read in place from {}",
            in_place.join(", ")
        )
    }))
    .collect()
}

/// How this instance's test commands are made: its runner profile and interpreter.
pub(super) struct Commands<'a> {
    pub(super) profile: &'a dyn RunnerProfile,
    pub(super) python: String,
}

impl Commands<'_> {
    /// The spec that judges: the named tests of `files`, as the profile selects them.
    pub(super) fn spec(
        &self,
        files: &[String],
        names: &[String],
        spec_files: Vec<RelPath>,
    ) -> TestSpec {
        let targets = self.profile.targets(files, names);
        self.with(targets, names, spec_files)
    }

    /// The spec run while names are being tried: what one bad name or file cannot stop
    /// (whole files, for most runners).
    pub(super) fn trial(
        &self,
        files: &[String],
        names: &[String],
        spec_files: Vec<RelPath>,
    ) -> TestSpec {
        let targets = self.profile.trial_targets(files, names);
        self.with(targets, names, spec_files)
    }

    fn with(&self, targets: Vec<String>, names: &[String], spec_files: Vec<RelPath>) -> TestSpec {
        TestSpec {
            command: self.profile.command(&self.python, &targets),
            runner: self.profile.runner(),
            files: spec_files,
            select: names.to_vec(),
        }
    }
}

/// Removes from `repo/` the public copies that hold none of the chosen public tests (a file read
/// in place stays), and returns the files that hold chosen tests, in the plan's order.
pub(super) fn keep_chosen_public(
    plan: &Plan,
    public_ids: &[String],
    repo_dir: &Path,
) -> Result<Vec<String>, ImportError> {
    let mut kept = Vec::new();
    for f in &plan.public {
        if f.ids.iter().any(|i| public_ids.contains(i)) {
            kept.push(f.path.clone());
        } else if matches!(f.origin, PublicOrigin::Copy(_)) {
            // Gone already when an earlier round of the same task removed it.
            let p = repo_dir.join(&f.path);
            match std::fs::remove_file(&p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&p)(e)),
                _ => {}
            }
        }
    }
    Ok(kept)
}

/// Which tests were chosen and matched, by the record's names, for `task.json`'s metadata.
pub(super) fn chosen_tests(plan: &Plan, public_ids: &[String], sel: &Selection) -> ChosenTests {
    let source_of: BTreeMap<&str, &str> = plan
        .public_source
        .iter()
        .map(|(copy, orig)| (copy.as_str(), orig.as_str()))
        .collect();
    ChosenTests {
        public_tests: public_ids
            .iter()
            .map(|id| source_of.get(id.as_str()).copied().unwrap_or(id.as_str()))
            .map(str::to_owned)
            .collect(),
        matched_tests: sel.select.clone(),
        unmatched_tests: sel.unselectable.clone(),
        skipped_tests: sel.skipped_here.clone(),
        failing_here_tests: sel.failing_here.clone(),
    }
}

//! The one pipeline every HumanEvalFix record goes through, whatever its language: draft the
//! buggy module and the checks ([`Profile::draft`]), try each check alone on the buggy code
//! ([`Profile::probe`]), split the checks into public and hidden, write the task folder, and
//! validate it. A [`Profile`] supplies what differs by language.

use std::path::Path;
use std::time::Duration;

use traparena_env::Sandbox;
use traparena_eval::analysis::patch_locations;
use traparena_task::{Language, Location, Patch, RelPath, TaskLayout, TaskSpec, TestSpec};

use super::{HumanEvalFixOptions, HumanEvalFixRecord};
use crate::common::{
    Checked, check_task, discard, finish, partial_dir, unified_diff, write_file, write_task_files,
};
use crate::error::ImportError;
use crate::report::{Emitted, Outcome, RecordOutcome, Skipped};

/// Why a record is skipped: the reason (a short phrase the report counts) and the detail.
use crate::skip::{Skip, SkipReason};

/// Each check's outcome alone on the buggy code: (passed, why not).
pub(super) type Probes = Vec<(bool, String)>;

/// What differs by language: how a record becomes a module and checks, how the checks are
/// tried on the buggy code, and how the test files are written and run.
pub(super) trait Profile: Sync {
    /// What the profile keeps of a record's test besides its checks (the parsed test).
    type Test;

    /// The tasks' language (`task.json`'s `language`).
    fn language(&self) -> Language;

    /// The skip reason of an entry point that is not an identifier of the language.
    fn not_an_identifier(&self) -> SkipReason;

    /// The skip detail of a test without checks.
    fn no_check(&self) -> &'static str;

    /// Parses the record's test into checks and writes the buggy and canonical modules; `Err`
    /// when the test is not of the shape the profile knows.
    fn draft<'r>(&self, r: &'r HumanEvalFixRecord) -> Result<Draft<'r, Self::Test>, Skip>;

    /// Refuses modules the checks cannot be tried on (the entry point is not defined, ...).
    fn refuse_modules(&self, _d: &Draft<'_, Self::Test>) -> Option<Skip> {
        None
    }

    /// Tries each check alone on the buggy module in the sandbox, each for at most
    /// `assertion_timeout`.
    fn probe(
        &self,
        d: &Draft<'_, Self::Test>,
        sandbox: &Sandbox,
        assertion_timeout: Duration,
    ) -> Result<Probes, ImportError>;

    /// Refuses a record by its checks' outcomes before the split (the test does not build).
    fn refuse_probes(&self, _results: &Probes) -> Option<Skip> {
        None
    }

    /// Whether check `k` may be public: it calls the entry point and uses no randomness.
    fn eligible(&self, d: &Draft<'_, Self::Test>, k: usize) -> bool;

    /// What the skip detail says of check `k` when it may not be public.
    fn ineligible_note(&self, _d: &Draft<'_, Self::Test>, _k: usize) -> String {
        " (not eligible)".into()
    }

    /// Refuses a record none of whose checks may be public, before looking at which pass;
    /// `described` lists every check's outcome. `None`: the split then finds no public check.
    fn refuse_without_eligible(
        &self,
        _d: &Draft<'_, Self::Test>,
        _described: String,
    ) -> Option<Skip> {
        None
    }

    /// A test file: the public one holding the checks `keep` (0-based, in order), or the hidden
    /// one (`keep` holds every check).
    fn render(&self, d: &Draft<'_, Self::Test>, keep: &[usize], public: bool) -> String;

    /// How to run the test file `file` (the public one when `public`).
    fn test_spec(&self, d: &Draft<'_, Self::Test>, file: &str, public: bool) -> TestSpec;

    /// What the agent is told about the language (the description's last paragraph), if
    /// anything.
    fn language_note(&self, d: &Draft<'_, Self::Test>) -> Option<String>;
}

/// Where a task's three files go: the module and the public test, relative to `repo/`, and the
/// hidden test, relative to `hidden/`.
pub(super) struct Files {
    /// The module holding the entry point.
    pub(super) module: String,
    /// The public test file.
    pub(super) public: String,
    /// The hidden test file.
    pub(super) hidden: String,
}

impl Files {
    /// The files named by a profile's patterns, `{entry}` replaced by `entry`.
    pub(super) fn new(patterns: [&str; 3], entry: &str) -> Files {
        let [module, public, hidden] = patterns.map(|p| p.replace("{entry}", entry));
        Files {
            module,
            public,
            hidden,
        }
    }
}

/// A record's task as its profile drafts it, before the split.
pub(super) struct Draft<'r, T> {
    /// The record.
    pub(super) record: &'r HumanEvalFixRecord,
    /// The checks, in the order of the test (their source text, for the eligibility tests).
    pub(super) checks: Vec<String>,
    /// The task's files.
    pub(super) files: Files,
    /// The module with the buggy and with the canonical body.
    pub(super) buggy: String,
    /// See `buggy`.
    pub(super) fixed: String,
    /// The module texts the reference location is computed on (usually `buggy` and `fixed`).
    pub(super) buggy_at: String,
    /// See `buggy_at`.
    pub(super) fixed_at: String,
    /// The profile's parsed test.
    pub(super) test: T,
}

/// Imports one record with `profile`: the task written to `out/id` when it is emitted, or why
/// the record is skipped.
pub(super) fn import_one<P: Profile>(
    profile: &P,
    r: &HumanEvalFixRecord,
    id: &str,
    out: &Path,
    sandbox: &Sandbox,
    opts: &HumanEvalFixOptions,
) -> Outcome {
    let entry = r.entry_point.as_str();
    if !is_identifier(entry) {
        return skip(
            r,
            Skip::new(profile.not_an_identifier(), format!("{entry:?}")),
        );
    }
    let d = match profile.draft(r) {
        Ok(d) => d,
        Err(refusal) => return skip(r, refusal),
    };
    if d.checks.is_empty() {
        return skip(r, Skip::new(SkipReason::NoAssertion, profile.no_check()));
    }
    if d.buggy == d.fixed {
        return skip(
            r,
            Skip::new(SkipReason::IdenticalSolutions, "there is no bug to repair"),
        );
    }
    if let Some(refusal) = profile.refuse_modules(&d) {
        return skip(r, refusal);
    }
    // A toolchain missing from the sandbox: no check ran, so none can be told passing or failing.
    let results = match profile.probe(&d, sandbox, opts.assertion_timeout) {
        Err(ImportError::Env(e)) if e.is_missing_toolchain() => {
            return skip(r, Skip::new(SkipReason::NotCheckable, e.to_string()));
        }
        results => results?,
    };
    if let Some(refusal) = profile.refuse_probes(&results) {
        return skip(r, refusal);
    }
    let public = match split(profile, &d, &results, opts.max_public) {
        Ok(public) => public,
        Err(refusal) => return skip(r, refusal),
    };
    let partial = partial_dir(out, id)?;
    let emitted = Emitted {
        record: r.task_id.clone(),
        id: id.to_owned(),
        public_tests: public.len(),
        hidden_tests: d.checks.len(),
        environment: None,
        differs: Vec::new(),
        group: None,
        duration_ms: 0,
    };
    if let Err(e) = write_task(profile, &d, &public, id, &partial, opts) {
        discard(&partial);
        return Err(e);
    }
    validate_and_finish(&partial, out, id, sandbox, opts, r, emitted)
}

fn skip(r: &HumanEvalFixRecord, skip: Skip) -> Outcome {
    Ok(RecordOutcome::Skipped(Skipped::new(&r.task_id, skip)))
}

/// The public checks: the first `max_public` that pass alone on the buggy code and may be
/// public; or why there are none.
fn split<P: Profile>(
    profile: &P,
    d: &Draft<'_, P::Test>,
    results: &Probes,
    max_public: usize,
) -> Result<Vec<usize>, Skip> {
    let n = d.checks.len();
    if results.iter().all(|(ok, _)| *ok) {
        return Err(Skip::new(
            SkipReason::EveryAssertionPassesAlone,
            format!("{n} assertions; the bug only shows when they run together"),
        ));
    }
    let eligible: Vec<bool> = (0..n).map(|k| profile.eligible(d, k)).collect();
    let describe = || -> String {
        results
            .iter()
            .enumerate()
            .map(|(k, (ok, why))| {
                let outcome = if *ok { "passes" } else { why.as_str() };
                let note = if eligible[k] {
                    String::new()
                } else {
                    profile.ineligible_note(d, k)
                };
                format!("#{} {outcome}{note}", k + 1)
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !eligible.contains(&true)
        && let Some(refusal) = profile.refuse_without_eligible(d, describe())
    {
        return Err(refusal);
    }
    let public: Vec<usize> = (0..n)
        .filter(|&k| results[k].0 && eligible[k])
        .take(max_public)
        .collect();
    if public.is_empty() {
        return Err(Skip::new(SkipReason::NoAssertionPasses, describe()));
    }
    Ok(public)
}

/// Writes the task folder into `dir`: the buggy module, the public and hidden test files, the
/// reference patch and `task.json`.
fn write_task<P: Profile>(
    profile: &P,
    d: &Draft<'_, P::Test>,
    public: &[usize],
    id: &str,
    dir: &Path,
    opts: &HumanEvalFixOptions,
) -> Result<(), ImportError> {
    let r = d.record;
    let module = &d.files.module;
    let patch_text = unified_diff(module, &d.buggy, &d.fixed);
    let located = unified_diff(module, &d.buggy_at, &d.fixed_at);
    let reference_locations = reference_locations(&located, module, &d.buggy_at, &d.fixed_at)?;
    let mut metadata = serde_json::Map::new();
    for (k, v) in [
        ("task_id", serde_json::json!(r.task_id)),
        ("entry_point", serde_json::json!(r.entry_point)),
        ("bug_type", serde_json::json!(r.bug_type)),
        ("failure_symptoms", serde_json::json!(r.failure_symptoms)),
        ("assertions", serde_json::json!(d.checks.len())),
        (
            "public_assertions",
            serde_json::json!(public.iter().map(|k| k + 1).collect::<Vec<_>>()),
        ),
    ] {
        metadata.insert(k.into(), v);
    }
    let spec = TaskSpec {
        id: id.to_owned(),
        source: "humanevalfix".into(),
        language: profile.language(),
        description: description(r, module, profile.language_note(d).as_deref()),
        public_tests: profile.test_spec(d, &d.files.public, true),
        hidden_tests: profile.test_spec(d, &d.files.hidden, false),
        timeout_s: opts.timeout_s,
        reference_locations,
        metadata,
        setup: None,
        image: None,
    };
    let all: Vec<usize> = (0..d.checks.len()).collect();
    let layout = TaskLayout::new(dir);
    write_file(&layout.repo(), module, d.buggy.as_bytes())?;
    let public_src = profile.render(d, public, true);
    write_file(&layout.repo(), &d.files.public, public_src.as_bytes())?;
    let hidden_src = profile.render(d, &all, false);
    write_file(&layout.hidden(), &d.files.hidden, hidden_src.as_bytes())?;
    write_task_files(&layout, &spec, &patch_text)
}

/// Validates (when asked) and moves a written task into place.
fn validate_and_finish(
    partial: &Path,
    out: &Path,
    id: &str,
    sandbox: &Sandbox,
    opts: &HumanEvalFixOptions,
    r: &HumanEvalFixRecord,
    emitted: Emitted,
) -> Outcome {
    if opts.validate {
        match check_task(partial, sandbox, opts.reference_runs) {
            Ok(Checked::Valid) => {}
            Ok(Checked::NotCheckable(why)) => {
                discard(partial);
                return skip(r, Skip::new(SkipReason::NotCheckable, why));
            }
            Ok(Checked::Invalid(problems, failures, _)) => {
                discard(partial);
                return Ok(RecordOutcome::Skipped(Skipped {
                    failures,
                    ..Skipped::new(&r.task_id, Skip::new(SkipReason::FailsValidation, problems))
                }));
            }
            Err(e) => {
                discard(partial);
                return Err(e);
            }
        }
    }
    if let Err(e) = finish(partial, out, id, "humanevalfix") {
        discard(partial);
        return Err(e);
    }
    Ok(RecordOutcome::Emitted(emitted))
}

/// The reference locations of a one-file repair: the functions it changes, when every change
/// is inside one.
fn reference_locations(
    patch_text: &str,
    module: &str,
    buggy: &str,
    fixed: &str,
) -> Result<Option<Vec<Location>>, ImportError> {
    let patch = Patch::parse(patch_text, Path::new("reference.patch"))?;
    let locations = patch_locations(
        &patch,
        |p| (p == module).then(|| buggy.to_owned()),
        |p| (p == module).then(|| fixed.to_owned()),
    );
    Ok(
        if !locations.is_empty() && locations.iter().all(|l| l.symbol.is_some()) {
            Some(locations.iter().map(Location::from).collect())
        } else {
            None
        },
    )
}

/// The task's description: the function and its file, the record's reported symptom, the
/// signature and docstring as the expected behaviour, and — for a language other than Python —
/// what the agent is told about the language and its tests.
fn description(r: &HumanEvalFixRecord, module: &str, language: Option<&str>) -> String {
    let entry = &r.entry_point;
    let symptom = match r.failure_symptoms.trim() {
        "" => String::new(),
        s => format!(" Reported symptom: {s}."),
    };
    let mut d = format!(
        "`{entry}` in `{module}` does not do what its documentation says.{symptom} Repair it."
    );
    let signature = r.signature.trim();
    let doc = r.docstring.trim();
    if !signature.is_empty() || !doc.is_empty() {
        d.push_str("\n\nExpected behaviour:\n\n");
        if !signature.is_empty() {
            d.push_str(&format!("    {signature}\n\n"));
        }
        for line in doc.lines() {
            d.push_str(&format!("    {line}\n"));
        }
    }
    if let Some(note) = language {
        d = d.trim_end().to_owned();
        d.push_str("\n\n");
        d.push_str(note);
    }
    d.trim_end().to_owned()
}

/// True for an ASCII identifier (`[A-Za-z_][A-Za-z0-9_]*`).
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A path the importer writes, relative by construction.
pub(super) fn rel(s: &str) -> RelPath {
    RelPath::new(s).expect("importer paths are relative")
}

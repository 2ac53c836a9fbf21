//! HumanEvalFix (HumanEvalPack) records → tasks, in every language of HumanEvalPack.
//!
//! One task per record: `repo/` holds the buggy module and public tests, `hidden/` the record's
//! whole test, `reference.patch` the repair buggy → canonical. The public tests are the checks
//! of the record's test that pass on the buggy code, each tried on its own in the sandbox (the
//! docstring examples expose the bug in most records, so they cannot serve).
//!
//! Every record goes through one pipeline ([`pipeline`]); what differs by language is its
//! [`pipeline::Profile`], selected by the import's [`Language`]: [`python`], [`javascript`], and
//! [`compiled`] for C++, Java, Go and Rust (one profile over a table of the four's layouts).

mod compiled;
mod javascript;
mod pipeline;
mod python;

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use traparena_env::Sandbox;
use traparena_task::{Language, Shard};

use crate::common::{check_target, default_jobs, par_map, prepare_out, read_records};
use crate::error::ImportError;
use crate::report::{Gathered, ImportReport};

/// One record of a HumanEvalPack file (fields the importer uses; others are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanEvalFixRecord {
    /// `Python/0` … `Python/163` (`JavaScript/0`, `CPP/0`, ... in the other languages).
    pub task_id: String,
    /// Imports, signature and docstring.
    pub prompt: String,
    /// The correct function body.
    pub canonical_solution: String,
    /// The function body with the injected bug.
    pub buggy_solution: String,
    /// The test: in Python a `check(candidate)` function with assertions, then a call of it.
    pub test: String,
    /// The function under test.
    pub entry_point: String,
    /// The kind of injected bug (`value misuse`, `missing logic`, ...).
    #[serde(default)]
    pub bug_type: String,
    /// What the bug does (`incorrect output`, `infinite loop`, `stackoverflow`).
    #[serde(default)]
    pub failure_symptoms: String,
    /// The function's signature.
    #[serde(default)]
    pub signature: String,
    /// The function's docstring, unindented.
    #[serde(default)]
    pub docstring: String,
    /// The declaration the prompt ends with, without its documentation (C++: with every
    /// include the solutions need).
    #[serde(default)]
    pub declaration: String,
    /// Go: the test file's package line and imports.
    #[serde(default)]
    pub test_setup: String,
}

/// The language a HumanEvalPack task id names by its prefix (`JavaScript/3` → JavaScript,
/// `CPP/0` → C++), when it names one.
pub fn humanevalfix_language(task_id: &str) -> Option<Language> {
    Language::from_name(task_id.split('/').next().unwrap_or(""))
}

/// Settings of a HumanEvalFix import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanEvalFixOptions {
    /// The records' language, which selects the importer's language profile: how the module
    /// and tests are written, how each check is tried alone, how tests run.
    #[serde(default)]
    pub language: Language,
    /// Import only these records (`Python/0`, ...; all when empty). An id not in the input is
    /// an error.
    pub records: Vec<String>,
    /// Most public tests per task (the first passing assertions, in the order of `test`).
    pub max_public: usize,
    /// Wall-clock limit of one assertion tried alone on the buggy code.
    pub assertion_timeout: Duration,
    /// The tasks' `timeout_s`: the limit of one test run (contains infinite-loop bugs).
    pub timeout_s: u64,
    /// Validate every emitted task, and skip the ones that fail.
    pub validate: bool,
    /// Hidden runs with the reference patch during validation.
    pub reference_runs: u32,
    /// Worker threads.
    pub jobs: usize,
    /// Import only this shard's block of the records (after `records`), and write the report
    /// as the shard's (see [`merge_reports`](crate::merge_reports)).
    pub shard: Option<Shard>,
}

impl Default for HumanEvalFixOptions {
    fn default() -> Self {
        HumanEvalFixOptions {
            language: Language::Python,
            records: Vec::new(),
            max_public: 3,
            assertion_timeout: Duration::from_secs(1),
            timeout_s: 10,
            validate: true,
            reference_runs: 3,
            jobs: default_jobs(),
            shard: None,
        }
    }
}

/// Reads the records of a HumanEvalPack file (JSON Lines, or a JSON array).
pub fn read_humanevalfix(path: &Path) -> Result<Vec<HumanEvalFixRecord>, ImportError> {
    Ok(read_records(path)?.into_iter().map(|(_, r)| r).collect())
}

/// The task id of a record: `humanevalfix_<n>` for `Python/<n>`.
pub fn humanevalfix_task_id(task_id: &str) -> String {
    let n = task_id.rsplit('/').next().unwrap_or(task_id);
    let clean: String = n
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("humanevalfix_{clean}")
}

/// Imports every record of `input` into `out` (one folder per task, plus the report files),
/// running tests in `sandbox`. Records that cannot become valid tasks are skipped and reported.
pub fn import_humanevalfix(
    input: &Path,
    out: &Path,
    sandbox: &Sandbox,
    opts: &HumanEvalFixOptions,
) -> Result<ImportReport, ImportError> {
    let started = Instant::now();
    if opts.max_public == 0 {
        return Err(ImportError::Input(
            "max_public must be at least 1: a task needs a public test".into(),
        ));
    }
    if opts.timeout_s == 0 || opts.assertion_timeout.is_zero() {
        return Err(ImportError::Input("timeouts must be positive".into()));
    }
    let compiled = compiled::Compiled::new(opts.language);
    let known = matches!(opts.language, Language::Python | Language::JavaScript);
    if !known && compiled.is_none() {
        return Err(ImportError::Input(format!(
            "this build does not import HumanEvalFix records in {}",
            opts.language
        )));
    }
    let records = crate::shards::shard_block(chosen_records(input, opts)?, opts.shard);
    let out = prepare_out(out, opts.shard)?;
    let mut items = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in records {
        let id = humanevalfix_task_id(&r.task_id);
        if !seen.insert(id.clone()) {
            return Err(ImportError::Input(format!(
                "{}: two records map to task id {id}",
                input.display()
            )));
        }
        check_target(&out, &id, "humanevalfix")?;
        items.push((r, id));
    }
    let import_one = |r: &HumanEvalFixRecord, id: &str| match (opts.language, &compiled) {
        (Language::Python, _) => pipeline::import_one(&python::Python, r, id, &out, sandbox, opts),
        (Language::JavaScript, _) => {
            pipeline::import_one(&javascript::JavaScript, r, id, &out, sandbox, opts)
        }
        (_, Some(profile)) => pipeline::import_one(profile, r, id, &out, sandbox, opts),
        (other, None) => unreachable!("{other} was refused above"),
    };
    let results = par_map(&items, opts.jobs, |(r, id)| {
        ImportReport::contain(&r.task_id, import_one(r, id))
    });
    ImportReport::gather(
        Gathered {
            source: "humanevalfix",
            input,
            out: &out,
            validated: opts.validate,
            backend: sandbox.backend(),
            shard: opts.shard,
        },
        started,
        results,
    )
}

/// The records of `input` the import takes: all, or the ones `opts.records` names. Every
/// record must be in the import's language, and every named one in the input.
fn chosen_records(
    input: &Path,
    opts: &HumanEvalFixOptions,
) -> Result<Vec<HumanEvalFixRecord>, ImportError> {
    let mut records = read_humanevalfix(input)?;
    if let Some(other) = records.iter().find(|r| {
        r.task_id.contains('/') && humanevalfix_language(&r.task_id) != Some(opts.language)
    }) {
        return Err(ImportError::Input(format!(
            "{}: record {} is not a {} record (the import's language); pass the language the records are in",
            input.display(),
            other.task_id,
            opts.language.name()
        )));
    }
    for want in &opts.records {
        if !records.iter().any(|r| &r.task_id == want) {
            return Err(ImportError::Input(format!(
                "unknown record {want}: {} holds {} records",
                input.display(),
                records.len()
            )));
        }
    }
    if !opts.records.is_empty() {
        records.retain(|r| opts.records.contains(&r.task_id));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_name_their_language_by_prefix() {
        for (id, language) in [
            ("Python/0", Some(Language::Python)),
            ("JavaScript/3", Some(Language::JavaScript)),
            ("js/3", Some(Language::JavaScript)),
            ("CPP/0", Some(Language::Cpp)),
            ("Java/12", Some(Language::Java)),
            ("Go/1", Some(Language::Go)),
            ("Rust/163", Some(Language::Rust)),
            ("Cobol/1", None),
            ("", None),
        ] {
            assert_eq!(humanevalfix_language(id), language, "{id}");
        }
        assert_eq!(humanevalfix_task_id("CPP/12"), "humanevalfix_12");
    }
}

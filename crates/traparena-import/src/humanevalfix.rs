//! HumanEvalFix (HumanEvalPack, Python) records → tasks.
//!
//! One task per record: `repo/` holds the buggy module and public tests, `hidden/` the full
//! `check` of the record's `test`, `reference.patch` the repair buggy → canonical. The public
//! tests are the assertions of `test` that pass on the buggy code, each tried on its own in the
//! sandbox (the docstring examples expose the bug in most records, so they cannot serve).

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use traparena_env::{RunSpec, Sandbox, Workspace};
use traparena_eval::analysis::patch_locations;
use traparena_task::{Location, Patch, RelPath, Runner, TaskLayout, TaskSpec, TestSpec};

use crate::common::{
    check_target, check_task, default_jobs, discard, finish, par_map, partial_dir, prepare_out,
    read_records, write_file, write_task_files,
};
use crate::error::{ImportError, io};
use crate::pyparse::CheckSuite;
use crate::report::{Emitted, ImportReport, Skipped};

const PROBE: &str = include_str!("probe.py");

/// One record of the HumanEvalPack Python file (fields the importer uses; others are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanEvalFixRecord {
    /// `Python/0` … `Python/163`.
    pub task_id: String,
    /// Imports, signature and docstring.
    pub prompt: String,
    /// The correct function body.
    pub canonical_solution: String,
    /// The function body with the injected bug.
    pub buggy_solution: String,
    /// A `check(candidate)` function with assertions, then a call of it.
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

/// The HumanEvalPack language of the records, which selects the importer's language profile:
/// how the module and tests are written, how each assertion is tried alone, how tests run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum HumanEvalFixLanguage {
    /// `humanevalpack_python.jsonl`: unittest over `check(candidate)`'s assertions.
    #[default]
    Python,
    /// `humanevalpack_js.jsonl`: `node` under the harness's shim, which counts every
    /// `console.assert`.
    #[serde(alias = "js")]
    JavaScript,
    /// `humanevalpack_cpp.jsonl`: a C++17 test program whose `assert`s are the harness's checks.
    Cpp,
    /// `humanevalpack_java.jsonl`: a Java test program whose list of booleans are the checks.
    Java,
    /// `humanevalpack_go.jsonl`: a Go program whose testify `assert` statements are the checks.
    Go,
    /// `humanevalpack_rust.jsonl`: a Rust program whose `assert!`s are the checks.
    Rust,
}

impl HumanEvalFixLanguage {
    /// Every language, by the name the command line and `task.json` give it.
    pub const ALL: &'static [(&'static str, HumanEvalFixLanguage)] = &[
        ("python", HumanEvalFixLanguage::Python),
        ("javascript", HumanEvalFixLanguage::JavaScript),
        ("cpp", HumanEvalFixLanguage::Cpp),
        ("java", HumanEvalFixLanguage::Java),
        ("go", HumanEvalFixLanguage::Go),
        ("rust", HumanEvalFixLanguage::Rust),
    ];

    /// The language HumanEvalPack's task id names (`JavaScript/3` → JavaScript), when this
    /// build imports it.
    pub fn of_task_id(task_id: &str) -> Option<HumanEvalFixLanguage> {
        let prefix = task_id.split('/').next().unwrap_or("");
        match prefix.to_ascii_lowercase().as_str() {
            "python" => Some(HumanEvalFixLanguage::Python),
            "javascript" | "js" => Some(HumanEvalFixLanguage::JavaScript),
            "cpp" | "c++" => Some(HumanEvalFixLanguage::Cpp),
            "java" => Some(HumanEvalFixLanguage::Java),
            "go" => Some(HumanEvalFixLanguage::Go),
            "rust" => Some(HumanEvalFixLanguage::Rust),
            _ => None,
        }
    }

    /// The name `task.json`'s `language` gives it.
    pub fn name(self) -> &'static str {
        match self {
            HumanEvalFixLanguage::Python => "python",
            HumanEvalFixLanguage::JavaScript => "javascript",
            HumanEvalFixLanguage::Cpp => "cpp",
            HumanEvalFixLanguage::Java => "java",
            HumanEvalFixLanguage::Go => "go",
            HumanEvalFixLanguage::Rust => "rust",
        }
    }
}

impl std::str::FromStr for HumanEvalFixLanguage {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.to_ascii_lowercase();
        let s = match s.as_str() {
            "js" => "javascript".to_owned(),
            "c++" => "cpp".to_owned(),
            _ => s,
        };
        Self::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, l)| *l)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown language {s:?}; this build imports {}",
                    names.join(", ")
                )
            })
    }
}

/// Settings of a HumanEvalFix import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanEvalFixOptions {
    /// The records' language.
    #[serde(default)]
    pub language: HumanEvalFixLanguage,
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
}

impl Default for HumanEvalFixOptions {
    fn default() -> Self {
        HumanEvalFixOptions {
            language: HumanEvalFixLanguage::Python,
            records: Vec::new(),
            max_public: 3,
            assertion_timeout: Duration::from_secs(1),
            timeout_s: 10,
            validate: true,
            reference_runs: 3,
            jobs: default_jobs(),
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
        return Err(ImportError::Input("--max-public must be at least 1".into()));
    }
    if opts.timeout_s == 0 || opts.assertion_timeout.is_zero() {
        return Err(ImportError::Input("timeouts must be positive".into()));
    }
    let mut records = read_humanevalfix(input)?;
    if let Some(other) = records.iter().find(|r| {
        r.task_id.contains('/')
            && HumanEvalFixLanguage::of_task_id(&r.task_id) != Some(opts.language)
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
    let out = prepare_out(out)?;
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
        check_target(&out, &id)?;
        items.push((r, id));
    }
    let results = par_map(&items, opts.jobs, |(r, id)| {
        ImportReport::contain(&r.task_id, import_one(r, id, &out, sandbox, opts))
    });
    ImportReport::gather(
        "humanevalfix",
        input,
        &out,
        opts.validate,
        sandbox.backend(),
        started,
        results,
    )
}

type Outcome = Result<Result<Emitted, Skipped>, ImportError>;

fn skip(r: &HumanEvalFixRecord, reason: &str, detail: String) -> Outcome {
    Ok(Err(Skipped::new(&r.task_id, reason, detail)))
}

/// Names that make an assertion's outcome depend on chance.
const RANDOM_NAMES: &[&str] = &[
    "random",
    "randint",
    "randrange",
    "choice",
    "choices",
    "shuffle",
    "sample",
    "uniform",
    "rng",
];

fn import_one(
    r: &HumanEvalFixRecord,
    id: &str,
    out: &Path,
    sandbox: &Sandbox,
    opts: &HumanEvalFixOptions,
) -> Outcome {
    use crate::humanevalfix_compiled::Lang;
    match opts.language {
        HumanEvalFixLanguage::JavaScript => return import_one_js(r, id, out, sandbox, opts),
        HumanEvalFixLanguage::Cpp => {
            return import_one_compiled(Lang::Cpp, r, id, out, sandbox, opts);
        }
        HumanEvalFixLanguage::Java => {
            return import_one_compiled(Lang::Java, r, id, out, sandbox, opts);
        }
        HumanEvalFixLanguage::Go => {
            return import_one_compiled(Lang::Go, r, id, out, sandbox, opts);
        }
        HumanEvalFixLanguage::Rust => {
            return import_one_compiled(Lang::Rust, r, id, out, sandbox, opts);
        }
        HumanEvalFixLanguage::Python => {}
    }
    let entry = r.entry_point.as_str();
    if !is_identifier(entry) {
        return skip(
            r,
            "the entry point is not a Python identifier",
            format!("{entry:?}"),
        );
    }
    let suite = match CheckSuite::parse(&r.test) {
        Ok(s) => s,
        Err(e) => return skip(r, "the test has no usable check(candidate)", e),
    };
    let assertions = suite.assertions();
    if assertions.is_empty() {
        return skip(
            r,
            "the test has no assertion",
            "check's body asserts nothing".into(),
        );
    }
    let buggy = module_text(&r.prompt, &r.buggy_solution);
    let fixed = module_text(&r.prompt, &r.canonical_solution);
    if buggy == fixed {
        return skip(
            r,
            "the buggy and canonical solutions are identical",
            "there is no bug to repair".into(),
        );
    }
    let results = probe(&suite, &assertions, entry, &buggy, sandbox, opts)?;
    let eligible = |i: usize| {
        let s = &suite.statements[i];
        s.identifiers.contains(&suite.param)
            && !RANDOM_NAMES.iter().any(|n| s.identifiers.contains(*n))
    };
    let describe = || -> String {
        assertions
            .iter()
            .zip(&results)
            .enumerate()
            .map(|(n, (&i, (ok, why)))| {
                let s = &suite.statements[i];
                let outcome = if *ok { "passes" } else { why.as_str() };
                let note = if !s.identifiers.contains(&suite.param) {
                    format!(" (does not call {entry})")
                } else if !eligible(i) {
                    " (randomised)".to_owned()
                } else {
                    String::new()
                };
                format!("#{} {outcome}{note}", n + 1)
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if results.iter().all(|(ok, _)| *ok) {
        return skip(
            r,
            "every assertion passes on the buggy code on its own",
            format!(
                "{} assertions; the bug only shows when they run together",
                assertions.len()
            ),
        );
    }
    if !assertions.iter().any(|&i| eligible(i)) {
        return skip(
            r,
            "no assertion can serve as a public test",
            format!(
                "every assertion is randomised or does not call {entry}: {}",
                describe()
            ),
        );
    }
    let public: Vec<usize> = assertions
        .iter()
        .zip(&results)
        .filter(|(i, (ok, _))| *ok && eligible(**i))
        .map(|(i, _)| *i)
        .take(opts.max_public)
        .collect();
    if public.is_empty() {
        return skip(r, "no assertion passes on the buggy code", describe());
    }

    let partial = partial_dir(out, id)?;
    let emitted = Emitted {
        record: r.task_id.clone(),
        id: id.to_owned(),
        public_tests: public.len(),
        hidden_tests: assertions.len(),
        environment: None,
        differs: Vec::new(),
        group: None,
        duration_ms: 0,
    };
    let written = write_task(
        r,
        id,
        &suite,
        &public,
        &assertions,
        &buggy,
        &fixed,
        &partial,
        opts,
    );
    if let Err(e) = written {
        discard(&partial);
        return Err(e);
    }
    validate_and_finish(&partial, out, id, sandbox, opts, r, emitted)
}

/// [`import_one`] for a JavaScript record.
fn import_one_js(
    r: &HumanEvalFixRecord,
    id: &str,
    out: &Path,
    sandbox: &Sandbox,
    opts: &HumanEvalFixOptions,
) -> Outcome {
    use crate::humanevalfix_js as js;
    let entry = r.entry_point.as_str();
    if !is_identifier(entry) {
        return skip(
            r,
            "the entry point is not a JavaScript identifier",
            format!("{entry:?}"),
        );
    }
    let checks = match js::assertions(&r.test) {
        Ok(c) => c,
        Err(e) => return skip(r, "the test does not parse", e),
    };
    if checks.is_empty() {
        return skip(r, "the test has no assertion", "no console.assert".into());
    }
    let buggy = js::module_text(&r.prompt, &r.buggy_solution);
    let fixed = js::module_text(&r.prompt, &r.canonical_solution);
    if buggy == fixed {
        return skip(
            r,
            "the buggy and canonical solutions are identical",
            "there is no bug to repair".into(),
        );
    }
    let names = js::exported(&buggy);
    if !names.iter().any(|n| n == entry) {
        return skip(
            r,
            "the module does not define its entry point",
            format!("top-level functions: {names:?}"),
        );
    }
    if js::exported(&fixed) != names {
        return skip(
            r,
            "the buggy and canonical modules define different functions",
            format!("{names:?} against {:?}", js::exported(&fixed)),
        );
    }
    let results = js::probe(&checks, entry, &buggy, sandbox, opts.assertion_timeout)?;
    let eligible = |c: &str| js::calls_module(c, &names) && !c.contains("Math.random");
    let module = format!("{entry}.js");
    let public_file = format!("tests/test_{entry}.js");
    let hidden_file = format!("hidden_tests/test_{entry}_hidden.js");
    let render = |keep: &[usize], public: bool| -> String {
        if public {
            let chosen: Vec<&str> = keep.iter().map(|&i| checks[i].as_str()).collect();
            js::public_test(&r.task_id, entry, &names, &chosen)
        } else {
            js::hidden_test(&r.task_id, entry, &names, &r.test)
        }
    };
    split_and_write(
        Draft {
            record: r,
            id,
            language: "javascript",
            note: js::language_note(&public_file),
            public_tests: js::test_spec(&public_file),
            hidden_tests: js::test_spec(&hidden_file),
            module,
            public_file,
            hidden_file,
            buggy_at: buggy.clone(),
            fixed_at: fixed.clone(),
            buggy,
            fixed,
            checks: &checks,
            results,
            eligible: &eligible,
            render: &render,
        },
        out,
        sandbox,
        opts,
    )
}

fn import_one_compiled(
    lang: crate::humanevalfix_compiled::Lang,
    r: &HumanEvalFixRecord,
    id: &str,
    out: &Path,
    sandbox: &Sandbox,
    opts: &HumanEvalFixOptions,
) -> Outcome {
    use crate::humanevalfix_compiled::{Lang, Layout, Template, probe};
    let entry = r.entry_point.as_str();
    if !is_identifier(entry) {
        return skip(
            r,
            "the entry point is not an identifier",
            format!("{entry:?}"),
        );
    }
    let test = match lang {
        Lang::Go => format!(
            "{}\n{}",
            crate::humanevalfix_compiled::go_test_setup(&r.test_setup, &r.prompt),
            r.test
        ),
        _ => r.test.clone(),
    };
    let template = match Template::parse(lang, &test) {
        Ok(t) => t,
        Err(e) => return skip(r, "the test is not of the expected shape", e),
    };
    let checks = template.checks.clone();
    if checks.is_empty() {
        return skip(r, "the test has no assertion", "no check".into());
    }
    let layout = Layout::new(lang, entry);
    let declaration = if r.declaration.is_empty() {
        &r.prompt
    } else {
        &r.declaration
    };
    let buggy = layout.module_text(&r.prompt, declaration, &r.buggy_solution);
    let fixed = layout.module_text(&r.prompt, declaration, &r.canonical_solution);
    if buggy == fixed {
        return skip(
            r,
            "the buggy and canonical solutions are identical",
            "there is no bug to repair".into(),
        );
    }
    if !buggy.contains(entry) {
        return skip(
            r,
            "the module does not define its entry point",
            entry.to_owned(),
        );
    }
    let results = probe(&layout, &template, &buggy, sandbox, opts.assertion_timeout)?;
    if let Some((_, why)) = results
        .first()
        .filter(|(_, w)| w.starts_with("the test program does not build"))
    {
        return skip(
            r,
            "the test program does not build on the buggy code",
            why.clone(),
        );
    }
    let eligible = |c: &str| {
        c.contains(entry) && !c.contains("rand.") && !c.contains("Random") && !c.contains("rand(")
    };
    let render = |keep: &[usize], public: bool| -> String {
        layout.test_file(&template, &buggy, keep, public, &r.task_id, entry)
    };
    split_and_write(
        Draft {
            record: r,
            id,
            language: layout.name(),
            note: layout.language_note(),
            public_tests: layout.test_spec(&layout.public_file),
            hidden_tests: layout.test_spec(&layout.hidden_file),
            module: layout.module.clone(),
            public_file: layout.public_file.clone(),
            hidden_file: layout.hidden_file.clone(),
            buggy_at: layout.module_text_for_location(&r.prompt, declaration, &r.buggy_solution),
            fixed_at: layout.module_text_for_location(
                &r.prompt,
                declaration,
                &r.canonical_solution,
            ),
            buggy: buggy.clone(),
            fixed,
            checks: &checks,
            results,
            eligible: &eligible,
            render: &render,
        },
        out,
        sandbox,
        opts,
    )
}

/// A record's task in any language but Python, as its profile made it: what the public/hidden
/// split and the task folder need.
struct Draft<'a> {
    record: &'a HumanEvalFixRecord,
    id: &'a str,
    /// `task.json`'s `language`.
    language: &'a str,
    /// What the agent is told about the language (the description's last paragraph).
    note: String,
    public_tests: TestSpec,
    hidden_tests: TestSpec,
    /// The module's file and the public and hidden test files, relative to the repository.
    module: String,
    public_file: String,
    hidden_file: String,
    buggy: String,
    fixed: String,
    /// The module texts the reference location is computed on.
    buggy_at: String,
    fixed_at: String,
    /// The checks, and each one's outcome alone on the buggy code.
    checks: &'a [String],
    results: Vec<(bool, String)>,
    /// Whether a check may be public (calls the entry point, uses no randomness).
    eligible: &'a dyn Fn(&str) -> bool,
    /// A test file holding the checks `keep` (0-based): public, or the hidden one (all).
    render: &'a dyn Fn(&[usize], bool) -> String,
}

/// Splits a drafted task's checks into public and hidden, writes the task folder, and validates
/// it (when asked); or says why the record is skipped.
fn split_and_write(
    d: Draft<'_>,
    out: &Path,
    sandbox: &Sandbox,
    opts: &HumanEvalFixOptions,
) -> Outcome {
    let r = d.record;
    let (checks, results) = (d.checks, &d.results);
    let describe = || -> String {
        checks
            .iter()
            .zip(results)
            .enumerate()
            .map(|(n, (c, (ok, why)))| {
                let outcome = if *ok { "passes" } else { why.as_str() };
                let note = if (d.eligible)(c) {
                    ""
                } else {
                    " (not eligible)"
                };
                format!("#{} {outcome}{note}", n + 1)
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if results.iter().all(|(ok, _)| *ok) {
        return skip(
            r,
            "every assertion passes on the buggy code on its own",
            format!(
                "{} assertions; the bug only shows when they run together",
                checks.len()
            ),
        );
    }
    let public: Vec<usize> = (0..checks.len())
        .filter(|&i| results[i].0 && (d.eligible)(&checks[i]))
        .take(opts.max_public)
        .collect();
    if public.is_empty() {
        return skip(r, "no assertion passes on the buggy code", describe());
    }
    let partial = partial_dir(out, d.id)?;
    let emitted = Emitted {
        record: r.task_id.clone(),
        id: d.id.to_owned(),
        public_tests: public.len(),
        hidden_tests: checks.len(),
        environment: None,
        differs: Vec::new(),
        group: None,
        duration_ms: 0,
    };
    let all: Vec<usize> = (0..checks.len()).collect();
    let written = (|| -> Result<(), ImportError> {
        let module = &d.module;
        let patch_text = crate::common::unified_diff(module, &d.buggy, &d.fixed);
        let located = crate::common::unified_diff(module, &d.buggy_at, &d.fixed_at);
        let reference_locations = reference_locations(&located, module, &d.buggy_at, &d.fixed_at)?;
        let mut metadata = serde_json::Map::new();
        for (k, v) in [
            ("task_id", serde_json::json!(r.task_id)),
            ("entry_point", serde_json::json!(r.entry_point)),
            ("bug_type", serde_json::json!(r.bug_type)),
            ("failure_symptoms", serde_json::json!(r.failure_symptoms)),
            ("assertions", serde_json::json!(checks.len())),
            (
                "public_assertions",
                serde_json::json!(public.iter().map(|i| i + 1).collect::<Vec<_>>()),
            ),
        ] {
            metadata.insert(k.into(), v);
        }
        let spec = TaskSpec {
            id: d.id.to_owned(),
            source: "humanevalfix".into(),
            language: d.language.into(),
            description: description(r, module, Some(&d.note)),
            public_tests: d.public_tests.clone(),
            hidden_tests: d.hidden_tests.clone(),
            timeout_s: opts.timeout_s,
            reference_locations,
            metadata,
            setup: None,
        };
        let layout = TaskLayout::new(&partial);
        write_file(&layout.repo(), module, d.buggy.as_bytes())?;
        let public_src = (d.render)(&public, true);
        write_file(&layout.repo(), &d.public_file, public_src.as_bytes())?;
        let hidden_src = (d.render)(&all, false);
        write_file(&layout.hidden(), &d.hidden_file, hidden_src.as_bytes())?;
        write_task_files(&layout, &spec, &patch_text)
    })();
    if let Err(e) = written {
        discard(&partial);
        return Err(e);
    }
    validate_and_finish(&partial, out, d.id, sandbox, opts, r, emitted)
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
            Ok(None) => {}
            Ok(Some((problems, failures))) => {
                discard(partial);
                return Ok(Err(Skipped {
                    failures,
                    ..Skipped::new(&r.task_id, "the task fails validation", problems)
                }));
            }
            Err(e) => {
                discard(partial);
                return Err(e);
            }
        }
    }
    if let Err(e) = finish(partial, out, id) {
        discard(partial);
        return Err(e);
    }
    Ok(Ok(emitted))
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
            Some(
                locations
                    .iter()
                    .map(|l| Location {
                        file: rel(&l.file),
                        symbol: l.symbol.clone(),
                    })
                    .collect(),
            )
        } else {
            None
        },
    )
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn module_text(prompt: &str, body: &str) -> String {
    let mut s = format!("{prompt}{body}");
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// Runs every assertion alone on the buggy module in one sandboxed Python process (restarted
/// after the case it died on, when one kills it). Returns (passed, why not) per assertion.
fn probe(
    suite: &CheckSuite,
    assertions: &[usize],
    entry: &str,
    buggy: &str,
    sandbox: &Sandbox,
    opts: &HumanEvalFixOptions,
) -> Result<Vec<(bool, String)>, ImportError> {
    let dir = tempfile::Builder::new()
        .prefix("traparena-probe-")
        .tempdir()
        .map_err(io(std::env::temp_dir()))?;
    let cases: Vec<String> = assertions
        .iter()
        .map(|&i| {
            format!(
                "{}\n{}",
                suite.prelude,
                suite.case_function("_traparena_case", i)
            )
        })
        .collect();
    write_file(dir.path(), &format!("{entry}.py"), buggy.as_bytes())?;
    write_file(dir.path(), "_traparena_probe.py", PROBE.as_bytes())?;
    let n = cases.len();
    crate::common::probe_loop(n, "the module does not import", |start| {
        let spec = serde_json::json!({
            "module": entry,
            "entry": entry,
            "timeout": opts.assertion_timeout.as_secs_f64(),
            "start": start,
            "cases": cases,
        });
        write_file(
            dir.path(),
            "_traparena_probe.json",
            spec.to_string().as_bytes(),
        )?;
        let ws = Workspace::materialize(dir.path(), sandbox)?;
        let remaining = (n - start) as u32;
        Ok(crate::common::Probed::Ran(sandbox.run(
            ws.mounts(),
            &RunSpec {
                argv: vec!["python3".into(), "_traparena_probe.py".into()],
                env: Vec::new(),
                timeout: opts.assertion_timeout * remaining + Duration::from_secs(10),
                report_pipe: true,
            },
        )?))
    })
}

/// for a language other than Python — what the agent is told about the language and its tests.
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

const HEADER: &str = "from {m} import *  # noqa: F401,F403 - the tests run in the module's namespace, as HumanEval's do\n";

#[allow(clippy::too_many_arguments)]
fn write_task(
    r: &HumanEvalFixRecord,
    id: &str,
    suite: &CheckSuite,
    public: &[usize],
    assertions: &[usize],
    buggy: &str,
    fixed: &str,
    dir: &Path,
    opts: &HumanEvalFixOptions,
) -> Result<(), ImportError> {
    let entry = r.entry_point.as_str();
    let module = format!("{entry}.py");
    let import_line = HEADER.replace("{m}", entry);
    let prelude = if suite.prelude.trim().is_empty() {
        String::new()
    } else {
        format!("\n{}\n", suite.prelude.trim_end())
    };

    let mut pub_src = format!(
        "\"\"\"Public tests of `{entry}`: assertions of the HumanEvalFix test ({}) that hold on the\ncurrent code. They are deliberately incomplete.\"\"\"\n\nimport unittest\n\n{import_line}{prelude}",
        r.task_id
    );
    for (k, &i) in public.iter().enumerate() {
        pub_src.push_str("\n\n");
        pub_src.push_str(&suite.case_function(&format!("_assertion_{}", k + 1), i));
    }
    pub_src.push_str("\n\nclass PublicTest(unittest.TestCase):\n");
    for k in 1..=public.len() {
        pub_src.push_str(&format!(
            "    def test_{k}(self):\n        _assertion_{k}({entry})\n\n"
        ));
    }
    let pub_src = pub_src.trim_end().to_owned() + "\n";

    let hidden_src = format!(
        "\"\"\"Hidden tests of `{entry}`: the full HumanEvalFix test ({}).\"\"\"\n\nimport unittest\n\n{import_line}\n\n{}\n\n\nclass HiddenTest(unittest.TestCase):\n    def test_check(self):\n        check({entry})\n",
        r.task_id,
        suite.without_calls.trim_end()
    );

    let patch_text = crate::common::unified_diff(&module, buggy, fixed);
    let reference_locations = reference_locations(&patch_text, &module, buggy, fixed)?;

    let public_file = format!("tests/test_{entry}.py");
    let hidden_file = format!("hidden_tests/test_{entry}_hidden.py");
    let mut metadata = serde_json::Map::new();
    let meta = [
        ("task_id", serde_json::json!(r.task_id)),
        ("entry_point", serde_json::json!(entry)),
        ("bug_type", serde_json::json!(r.bug_type)),
        ("failure_symptoms", serde_json::json!(r.failure_symptoms)),
        ("assertions", serde_json::json!(assertions.len())),
        (
            "public_assertions",
            serde_json::json!(
                public
                    .iter()
                    .map(|i| assertions.iter().position(|a| a == i).unwrap_or(0) + 1)
                    .collect::<Vec<_>>()
            ),
        ),
    ];
    for (k, v) in meta {
        metadata.insert(k.into(), v);
    }
    let unittest = |dir: &str, file: &str| TestSpec {
        command: ["python3", "-m", "unittest", "discover", "-s", dir, "-q"]
            .map(String::from)
            .to_vec(),
        runner: Runner::Unittest,
        files: vec![rel(file)],
        select: Vec::new(),
    };
    let spec = TaskSpec {
        id: id.to_owned(),
        source: "humanevalfix".into(),
        language: "python".into(),
        description: description(r, &module, None),
        public_tests: unittest("tests", &public_file),
        hidden_tests: unittest("hidden_tests", &hidden_file),
        timeout_s: opts.timeout_s,
        reference_locations,
        metadata,
        setup: None,
    };
    let layout = TaskLayout::new(dir);
    write_file(&layout.repo(), &module, buggy.as_bytes())?;
    write_file(&layout.repo(), &public_file, pub_src.as_bytes())?;
    write_file(&layout.hidden(), &hidden_file, hidden_src.as_bytes())?;
    write_task_files(&layout, &spec, &patch_text)
}

fn rel(s: &str) -> RelPath {
    RelPath::new(s).expect("importer paths are relative")
}

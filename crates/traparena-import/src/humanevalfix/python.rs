//! The Python profile: `repo/<entry>.py` holds the record's prompt and buggy body; the checks are
//! the assertions of the test's `check(candidate)` (parsed by [`CheckSuite`]); the public test
//! is a unittest file calling the chosen assertions, the hidden one the whole `check`.

use crate::skip::{Skip, SkipReason};
use std::time::Duration;

use traparena_env::{RunSpec, Sandbox, Workspace};
use traparena_task::{Language, Runner, TestSpec};

use super::HumanEvalFixRecord;
use super::pipeline::{Draft, Files, Probes, Profile, rel};
use crate::common::{Probed, probe_loop, write_file};
use crate::error::{ImportError, io};
use crate::pyparse::CheckSuite;

/// The probe that runs each assertion alone in one Python process.
const PROBE: &str = include_str!("../probe.py");

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

/// The line the test files open with.
const HEADER: &str = "from {m} import *  # noqa: F401,F403 - the tests run in the module's namespace, as HumanEval's do\n";

/// The Python profile.
pub(super) struct Python;

/// A record's parsed test: the suite, and the statement each check is.
pub(super) struct PythonTest {
    suite: CheckSuite,
    /// Check `k` is statement `assertions[k]` of the suite.
    assertions: Vec<usize>,
}

impl Profile for Python {
    type Test = PythonTest;

    fn language(&self) -> Language {
        Language::Python
    }

    fn not_an_identifier(&self) -> SkipReason {
        SkipReason::NotAPythonIdentifier
    }

    fn no_check(&self) -> &'static str {
        "check's body asserts nothing"
    }

    fn draft<'r>(&self, r: &'r HumanEvalFixRecord) -> Result<Draft<'r, PythonTest>, Skip> {
        let suite = CheckSuite::parse(&r.test)
            .map_err(|e| Skip::new(SkipReason::NoUsableCheck, e.to_string()))?;
        let assertions = suite.assertions();
        let checks = assertions
            .iter()
            .map(|&i| suite.statements[i].text.clone())
            .collect();
        let buggy = module_text(&r.prompt, &r.buggy_solution);
        let fixed = module_text(&r.prompt, &r.canonical_solution);
        Ok(Draft {
            record: r,
            checks,
            files: Files::new(
                [
                    "{entry}.py",
                    "tests/test_{entry}.py",
                    "hidden_tests/test_{entry}_hidden.py",
                ],
                &r.entry_point,
            ),
            buggy_at: buggy.clone(),
            fixed_at: fixed.clone(),
            buggy,
            fixed,
            test: PythonTest { suite, assertions },
        })
    }

    fn probe(
        &self,
        d: &Draft<'_, PythonTest>,
        sandbox: &Sandbox,
        assertion_timeout: Duration,
    ) -> Result<Probes, ImportError> {
        probe(d, sandbox, assertion_timeout)
    }

    fn eligible(&self, d: &Draft<'_, PythonTest>, k: usize) -> bool {
        let t = &d.test;
        let s = &t.suite.statements[t.assertions[k]];
        s.identifiers.contains(&t.suite.param)
            && !RANDOM_NAMES.iter().any(|n| s.identifiers.contains(*n))
    }

    fn ineligible_note(&self, d: &Draft<'_, PythonTest>, k: usize) -> String {
        let t = &d.test;
        if t.suite.statements[t.assertions[k]]
            .identifiers
            .contains(&t.suite.param)
        {
            " (randomised)".to_owned()
        } else {
            format!(" (does not call {})", d.record.entry_point)
        }
    }

    fn refuse_without_eligible(
        &self,
        d: &Draft<'_, PythonTest>,
        described: String,
    ) -> Option<Skip> {
        Some(Skip::new(
            SkipReason::NoPublicAssertion,
            format!(
                "every assertion is randomised or does not call {}: {described}",
                d.record.entry_point
            ),
        ))
    }

    fn render(&self, d: &Draft<'_, PythonTest>, keep: &[usize], public: bool) -> String {
        if public {
            public_test(d, keep)
        } else {
            hidden_test(d)
        }
    }

    fn test_spec(&self, _d: &Draft<'_, PythonTest>, file: &str, public: bool) -> TestSpec {
        let dir = if public { "tests" } else { "hidden_tests" };
        TestSpec {
            command: ["python3", "-m", "unittest", "discover", "-s", dir, "-q"]
                .map(String::from)
                .to_vec(),
            runner: Runner::Unittest,
            files: vec![rel(file)],
            select: Vec::new(),
        }
    }

    fn language_note(&self, _d: &Draft<'_, PythonTest>) -> Option<String> {
        None
    }
}

/// The module: the prompt, then the body.
fn module_text(prompt: &str, body: &str) -> String {
    let mut s = format!("{prompt}{body}");
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// The public test file: the checks `keep`, each a function `_assertion_<k>`, called by the
/// unittest case `test_<k>`.
fn public_test(d: &Draft<'_, PythonTest>, keep: &[usize]) -> String {
    let (r, suite) = (d.record, &d.test.suite);
    let entry = r.entry_point.as_str();
    let prelude = if suite.prelude.trim().is_empty() {
        String::new()
    } else {
        format!("\n{}\n", suite.prelude.trim_end())
    };
    let mut src = format!(
        "\"\"\"Public tests of `{entry}`: assertions of the HumanEvalFix test ({}) that hold on the\ncurrent code. They are deliberately incomplete.\"\"\"\n\nimport unittest\n\n{}{prelude}",
        r.task_id,
        HEADER.replace("{m}", entry)
    );
    for (n, &k) in keep.iter().enumerate() {
        src.push_str("\n\n");
        src.push_str(&suite.case_function(&format!("_assertion_{}", n + 1), d.test.assertions[k]));
    }
    src.push_str("\n\nclass PublicTest(unittest.TestCase):\n");
    for n in 1..=keep.len() {
        src.push_str(&format!(
            "    def test_{n}(self):\n        _assertion_{n}({entry})\n\n"
        ));
    }
    src.trim_end().to_owned() + "\n"
}

/// The hidden test file: the record's whole `check`, called by one unittest case.
fn hidden_test(d: &Draft<'_, PythonTest>) -> String {
    let entry = d.record.entry_point.as_str();
    format!(
        "\"\"\"Hidden tests of `{entry}`: the full HumanEvalFix test ({}).\"\"\"\n\nimport unittest\n\n{}\n\n{}\n\n\nclass HiddenTest(unittest.TestCase):\n    def test_check(self):\n        check({entry})\n",
        d.record.task_id,
        HEADER.replace("{m}", entry),
        d.test.suite.without_calls.trim_end()
    )
}

/// Runs every assertion alone on the buggy module in one sandboxed Python process (restarted
/// after the case it died on, when one kills it).
fn probe(
    d: &Draft<'_, PythonTest>,
    sandbox: &Sandbox,
    assertion_timeout: Duration,
) -> Result<Probes, ImportError> {
    let (entry, suite) = (d.record.entry_point.as_str(), &d.test.suite);
    let dir = tempfile::Builder::new()
        .prefix("traparena-probe-")
        .tempdir()
        .map_err(io(std::env::temp_dir()))?;
    let cases: Vec<String> = d
        .test
        .assertions
        .iter()
        .map(|&i| {
            format!(
                "{}\n{}",
                suite.prelude,
                suite.case_function("_traparena_case", i)
            )
        })
        .collect();
    write_file(dir.path(), &format!("{entry}.py"), d.buggy.as_bytes())?;
    write_file(dir.path(), "_traparena_probe.py", PROBE.as_bytes())?;
    let n = cases.len();
    probe_loop(n, "the module does not import", |start| {
        let spec = serde_json::json!({
            "module": entry,
            "entry": entry,
            "timeout": assertion_timeout.as_secs_f64(),
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
        Ok(Probed::Ran(sandbox.run(
            ws.mounts(),
            &RunSpec {
                argv: vec!["python3".into(), "_traparena_probe.py".into()],
                env: Vec::new(),
                timeout: assertion_timeout * remaining + Duration::from_secs(10),
                report_pipe: true,
            },
        )?))
    })
}

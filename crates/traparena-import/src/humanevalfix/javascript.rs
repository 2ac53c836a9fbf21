//! The JavaScript profile.
//!
//! `repo/<entry>.js` holds the record's prompt and buggy body with a `module.exports` line for
//! its top-level functions; `repo/tests/test_<entry>.js` the public checks (the record's
//! `console.assert` statements that hold on the buggy code, each tried alone); the hidden test
//! is the record's whole `test`. Tests run as `node FILE` under the harness's Node shim
//! ([`Runner::Node`]), which counts every `console.assert` (alone it only prints).

use crate::skip::{Skip, SkipReason};
use std::time::Duration;

use traparena_env::{RunSpec, Sandbox, Workspace};
use traparena_eval::code::javascript::JsFile;
use traparena_task::{Language, Runner, TestSpec};
use tree_sitter::{Node, Parser};

use super::HumanEvalFixRecord;
use super::pipeline::{Draft, Files, Probes, Profile, rel};
use crate::common::{Probed, probe_loop, write_file};
use crate::error::{ImportError, io};

/// The JavaScript profile.
pub(super) struct JavaScript;

/// What the profile keeps of a record: the top-level functions of the buggy and of the
/// canonical module.
pub(super) struct JsTest {
    names: Vec<String>,
    fixed_names: Vec<String>,
}

impl Profile for JavaScript {
    type Test = JsTest;

    fn language(&self) -> Language {
        Language::JavaScript
    }

    fn not_an_identifier(&self) -> SkipReason {
        SkipReason::NotAJavaScriptIdentifier
    }

    fn no_check(&self) -> &'static str {
        "no console.assert"
    }

    fn draft<'r>(&self, r: &'r HumanEvalFixRecord) -> Result<Draft<'r, JsTest>, Skip> {
        let checks = assertions(&r.test)
            .map_err(|e| Skip::new(SkipReason::TestDoesNotParse, e.to_string()))?;
        let buggy = module_text(&r.prompt, &r.buggy_solution);
        let fixed = module_text(&r.prompt, &r.canonical_solution);
        let test = JsTest {
            names: exported(&buggy),
            fixed_names: exported(&fixed),
        };
        Ok(Draft {
            record: r,
            checks,
            files: Files::new(
                [
                    "{entry}.js",
                    "tests/test_{entry}.js",
                    "hidden_tests/test_{entry}_hidden.js",
                ],
                &r.entry_point,
            ),
            buggy_at: buggy.clone(),
            fixed_at: fixed.clone(),
            buggy,
            fixed,
            test,
        })
    }

    fn refuse_modules(&self, d: &Draft<'_, JsTest>) -> Option<Skip> {
        let names = &d.test.names;
        if !names.contains(&d.record.entry_point) {
            return Some(Skip::new(
                SkipReason::NoEntryPoint,
                format!("top-level functions: {names:?}"),
            ));
        }
        if d.test.fixed_names != *names {
            return Some(Skip::new(
                SkipReason::DifferentFunctions,
                format!("{names:?} against {:?}", d.test.fixed_names),
            ));
        }
        None
    }

    fn probe(
        &self,
        d: &Draft<'_, JsTest>,
        sandbox: &Sandbox,
        assertion_timeout: Duration,
    ) -> Result<Probes, ImportError> {
        probe(
            &d.checks,
            &d.record.entry_point,
            &d.buggy,
            sandbox,
            assertion_timeout,
        )
    }

    fn eligible(&self, d: &Draft<'_, JsTest>, k: usize) -> bool {
        let c = &d.checks[k];
        calls_module(c, &d.test.names) && !c.contains("Math.random")
    }

    fn render(&self, d: &Draft<'_, JsTest>, keep: &[usize], public: bool) -> String {
        let (r, names) = (d.record, &d.test.names);
        if public {
            let chosen: Vec<&str> = keep.iter().map(|&k| d.checks[k].as_str()).collect();
            public_test(&r.task_id, &r.entry_point, names, &chosen)
        } else {
            hidden_test(&r.task_id, &r.entry_point, names, &r.test)
        }
    }

    fn test_spec(&self, _d: &Draft<'_, JsTest>, file: &str, _public: bool) -> TestSpec {
        TestSpec {
            command: vec!["node".into(), file.into()],
            runner: Runner::Node,
            files: vec![rel(file)],
            select: Vec::new(),
        }
    }

    fn language_note(&self, d: &Draft<'_, JsTest>) -> Option<String> {
        Some(format!(
            "The code is JavaScript, run by Node.js (CommonJS modules, no packages beyond Node's own). The public tests are the `console.assert` checks in `{}`; the test runner counts every check, and a check that fails fails the run.",
            d.files.public
        ))
    }
}

/// Why a record's test cannot be read (the skip's cause, as the import report quotes it).
#[derive(Debug, thiserror::Error)]
enum TestProblem {
    /// The JavaScript grammar does not fit the tree-sitter library.
    #[error(transparent)]
    Grammar(tree_sitter::LanguageError),
    /// The parser gave no tree.
    #[error("the parser did not run")]
    NotParsed,
    /// The test has syntax errors.
    #[error("the test does not parse as JavaScript")]
    NotJavaScript,
}

/// The `console.assert(…)` statements of a record's test, in order, as source text.
fn assertions(test: &str) -> Result<Vec<String>, TestProblem> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_javascript::LANGUAGE.into())
        .map_err(TestProblem::Grammar)?;
    let tree = parser.parse(test, None).ok_or(TestProblem::NotParsed)?;
    if tree.root_node().has_error() {
        return Err(TestProblem::NotJavaScript);
    }
    let mut out = Vec::new();
    fn walk(n: Node<'_>, src: &str, out: &mut Vec<String>) {
        if n.kind() == "expression_statement"
            && let Some(call) = n.named_child(0)
            && call.kind() == "call_expression"
            && call
                .child_by_field_name("function")
                .and_then(|f| f.utf8_text(src.as_bytes()).ok())
                == Some("console.assert")
        {
            out.push(n.utf8_text(src.as_bytes()).unwrap_or("").to_owned());
            return;
        }
        let mut c = n.walk();
        for child in n.named_children(&mut c) {
            walk(child, src, out);
        }
    }
    walk(tree.root_node(), test, &mut out);
    Ok(out)
}

/// The module text: prompt + body, then the exports of its top-level functions.
fn module_text(prompt: &str, body: &str) -> String {
    let mut s = format!("{prompt}{body}");
    if !s.ends_with('\n') {
        s.push('\n');
    }
    let names = exported(&s);
    s.push_str(&format!("\nmodule.exports = {{ {} }};\n", names.join(", ")));
    s
}

/// The top-level functions of a module's text.
fn exported(text: &str) -> Vec<String> {
    JsFile::parse(text)
        .map(|f| {
            f.symbols()
                .into_iter()
                .map(|s| s.name)
                .filter(|n| !n.contains('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// The line a test file opens with: the module's functions, by name.
fn require_line(entry: &str, names: &[String], from_dir: bool) -> String {
    let up = if from_dir { "../" } else { "./" };
    format!(
        "const {{ {} }} = require('{up}{entry}.js');\n",
        names.join(", ")
    )
}

/// The public test file: the chosen checks, after a header.
fn public_test(task_id: &str, entry: &str, names: &[String], checks: &[&str]) -> String {
    let mut s = format!(
        "// Public tests of `{entry}`: checks of the HumanEvalFix test ({task_id}) that hold on the\n// current code. They are deliberately incomplete. Run: node tests/test_{entry}.js\n{}\n",
        require_line(entry, names, true)
    );
    for c in checks {
        s.push_str(c.trim());
        s.push('\n');
    }
    s
}

/// The hidden test file: the record's whole test.
fn hidden_test(task_id: &str, entry: &str, names: &[String], test: &str) -> String {
    format!(
        "// Hidden tests of `{entry}`: the full HumanEvalFix test ({task_id}).\n{}\n{}",
        require_line(entry, names, true),
        test.trim_end().to_owned() + "\n"
    )
}

/// The probe: each case alone in a fresh `vm` context.
const PROBE: &str = r#"'use strict';
// TrapArena's probe: each case alone, in a fresh context with its own time limit; one JSON
// line per case on the report descriptor.
const fs = require('fs');
const vm = require('vm');
const spec = JSON.parse(fs.readFileSync('_traparena_probe.json', 'utf8'));
let mod;
try {
  mod = require('./' + spec.module);
} catch (e) {
  fs.writeSync(3, JSON.stringify({ import_error: String(e && e.message || e).slice(0, 300) }) + '\n');
  process.exit(0);
}
for (let i = spec.start; i < spec.cases.length; i++) {
  let ok = true;
  let why = '';
  const sandbox = Object.assign({}, mod, {
    console: { assert: (v) => { if (!v && ok) { ok = false; why = 'the assertion fails'; } }, log: () => {} },
  });
  try {
    vm.runInNewContext(spec.cases[i], sandbox, { timeout: spec.timeout_ms });
  } catch (e) {
    ok = false;
    const m = String(e && e.message || e);
    why = /timed out/.test(m) ? 'timed out' : 'raises ' + ((e && e.name) || 'an exception') + ': ' + m.slice(0, 200);
  }
  fs.writeSync(3, JSON.stringify({ case: i, ok, why }) + '\n');
}
"#;

/// Runs every check alone on the buggy module in a sandboxed Node process (restarted after the
/// case it died on).
fn probe(
    checks: &[String],
    entry: &str,
    buggy: &str,
    sandbox: &Sandbox,
    assertion_timeout: Duration,
) -> Result<Probes, ImportError> {
    let dir = tempfile::Builder::new()
        .prefix("traparena-probe-")
        .tempdir()
        .map_err(io(std::env::temp_dir()))?;
    write_file(dir.path(), &format!("{entry}.js"), buggy.as_bytes())?;
    write_file(dir.path(), "_traparena_probe.js", PROBE.as_bytes())?;
    let n = checks.len();
    probe_loop(n, "the module does not load", |start| {
        let spec = serde_json::json!({
            "module": format!("{entry}.js"),
            "timeout_ms": assertion_timeout.as_millis() as u64,
            "start": start,
            "cases": checks,
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
                argv: vec!["node".into(), "_traparena_probe.js".into()],
                env: Vec::new(),
                timeout: assertion_timeout * remaining + Duration::from_secs(10),
                report_pipe: true,
            },
        )?))
    })
}

/// True when a check calls one of the module's functions.
fn calls_module(check: &str, names: &[String]) -> bool {
    names.iter().any(|n| {
        check.match_indices(n.as_str()).any(|(i, _)| {
            let before = check[..i].chars().next_back();
            let after = check[i + n.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
    })
}

//! The compiled-language profile, one for C++, Java, Go and Rust, parameterised by the
//! languages' layout table ([`table`]).
//!
//! A record's test becomes a template ([`template`]): its text with every check (a C++
//! `assert(...)` in `main`, an element of Java's `List<Boolean> correct = Arrays.asList(...)`,
//! a testify `assert.X(...)` statement in Go, an `assert!` of Rust's `#[test]` function) cut
//! out. A test file is the template with a chosen set of checks put back, each wrapped in the
//! harness's check library (`TP_CHECK(n, ...)`, `TpCheck.check(n, () -> ...)`,
//! `tpCheck(t, n, func() { ... })`, `tp_check(n, || { ... })`) and ended by the library's
//! report call, so that the counts come from the runner ([`Runner::Cpp`], [`Runner::Java`],
//! [`Runner::Go`], [`Runner::Rust`]), never from text the program prints. The probe builds the
//! whole test once on the buggy code and runs it in the library's probe mode, which reports
//! each check as it ends and stops a check that overruns.

mod go;
mod table;
mod template;

use crate::skip::{Skip, SkipReason};
use std::time::Duration;

use traparena_env::{Sandbox, Workspace};
use traparena_task::{Language, Runner, TestSpec};

use self::go::{go_test_setup, go_used_imports, snake};
use self::table::{Table, table};
use self::template::Template;
use super::HumanEvalFixRecord;
use super::pipeline::{Draft, Files, Probes, Profile, rel};
use crate::common::{Probed, probe_loop, write_file};
use crate::error::{ImportError, io};

/// The compiled-language profile, for one language of the table.
pub(super) struct Compiled {
    table: &'static Table,
}

impl Compiled {
    /// The profile of `language`, when it is a compiled language.
    pub(super) fn new(language: Language) -> Option<Compiled> {
        table(language).map(|table| Compiled { table })
    }

    /// The runner of the language's test programs, and the tool its test command starts with.
    fn program(&self) -> (Runner, &'static str) {
        let (runner, tools) = self
            .table
            .language
            .program()
            .expect("a compiled language has a test-program runner");
        (runner, tools[0])
    }
}

impl Profile for Compiled {
    type Test = Template;

    fn language(&self) -> Language {
        self.table.language
    }

    fn not_an_identifier(&self) -> SkipReason {
        SkipReason::NotAnIdentifier
    }

    fn no_check(&self) -> &'static str {
        "no check"
    }

    fn draft<'r>(&self, r: &'r HumanEvalFixRecord) -> Result<Draft<'r, Template>, Skip> {
        let language = self.table.language;
        let test = match language {
            Language::Go => format!("{}\n{}", go_test_setup(&r.test_setup, &r.prompt), r.test),
            _ => r.test.clone(),
        };
        let template = Template::parse(language, &test)
            .map_err(|e| Skip::new(SkipReason::UnexpectedTestShape, e.to_string()))?;
        let declaration = if r.declaration.is_empty() {
            &r.prompt
        } else {
            &r.declaration
        };
        let entry = if self.table.snake_case_files {
            snake(&r.entry_point)
        } else {
            r.entry_point.clone()
        };
        let module = |body: &str| self.module_text(&r.prompt, declaration, body);
        let module_at = |body: &str| match language {
            // Every import of the prompt kept, used or not: the texts the reference location
            // is computed on, so that an import the fix needs (Go refuses unused ones, so the
            // buggy module may lack it) does not move the repair out of its function.
            Language::Go => format!("package main\n\n{}{body}\n", r.prompt),
            _ => module(body),
        };
        Ok(Draft {
            record: r,
            checks: template.checks.clone(),
            files: Files::new(self.table.files, &entry),
            buggy: module(&r.buggy_solution),
            fixed: module(&r.canonical_solution),
            buggy_at: module_at(&r.buggy_solution),
            fixed_at: module_at(&r.canonical_solution),
            test: template,
        })
    }

    fn refuse_modules(&self, d: &Draft<'_, Template>) -> Option<Skip> {
        let entry = &d.record.entry_point;
        (!d.buggy.contains(entry.as_str()))
            .then(|| Skip::new(SkipReason::NoEntryPoint, entry.clone()))
    }

    fn probe(
        &self,
        d: &Draft<'_, Template>,
        sandbox: &Sandbox,
        assertion_timeout: Duration,
    ) -> Result<Probes, ImportError> {
        self.run_probe(d, sandbox, assertion_timeout)
    }

    fn refuse_probes(&self, results: &Probes) -> Option<Skip> {
        results
            .first()
            .filter(|(_, why)| why.starts_with("the test program does not build"))
            .map(|(_, why)| Skip::new(SkipReason::DoesNotBuild, why.clone()))
    }

    fn eligible(&self, d: &Draft<'_, Template>, k: usize) -> bool {
        let c = &d.checks[k];
        c.contains(d.record.entry_point.as_str())
            && !c.contains("rand.")
            && !c.contains("Random")
            && !c.contains("rand(")
    }

    fn render(&self, d: &Draft<'_, Template>, keep: &[usize], public: bool) -> String {
        let r = d.record;
        self.test_file(d, keep, public, &r.task_id, &r.entry_point)
    }

    fn test_spec(&self, d: &Draft<'_, Template>, file: &str, _public: bool) -> TestSpec {
        let (runner, tool) = self.program();
        let mut command = vec![tool.to_owned()];
        if self.table.command_names_module {
            command.push(d.files.module.clone());
        }
        command.push(file.to_owned());
        TestSpec {
            command,
            runner,
            files: vec![rel(file)],
            select: Vec::new(),
        }
    }

    fn language_note(&self, d: &Draft<'_, Template>) -> Option<String> {
        Some(format!(
            "The code is {}. The public tests in `{}` are a test program {}; the test runner counts every check it makes, and a check that fails fails the run. Build output goes outside the repository.",
            self.table.language_note, d.files.public, self.table.build_note
        ))
    }
}

impl Compiled {
    /// The module: the record's documentation and declaration with a body.
    fn module_text(&self, prompt: &str, declaration: &str, body: &str) -> String {
        let mut s = match self.table.language {
            // The prompt is a comment, then the declaration's first includes; the declaration
            // has them all.
            Language::Cpp => {
                let head = prompt.find("#include").map_or("", |i| &prompt[..i]);
                format!("{head}{}{body}", declaration.trim_start())
            }
            Language::Go => format!(
                "package main\n\n{}",
                go_used_imports(&format!("{prompt}{body}"))
            ),
            // The prompt opens with an empty `fn main(){}`: the test program has the main.
            Language::Rust => {
                let p = prompt.trim_start();
                let p = p.strip_prefix("fn main(){}").unwrap_or(p);
                format!("{}{body}", p.trim_start())
            }
            // Java, as it is.
            _ => format!("{prompt}{body}"),
        };
        if !s.ends_with('\n') {
            s.push('\n');
        }
        s
    }

    /// The lines a test file opens with: the module included (C++, Rust), or its imports
    /// (Java); nothing for Go, whose package holds the module.
    fn header(&self, module: &str, module_text: &str) -> String {
        match self.table.language {
            Language::Cpp => format!("#include \"../{module}\"\n"),
            Language::Rust => format!("include!(\"../{module}\");\n"),
            Language::Java => module_text
                .lines()
                .filter(|l| l.trim_start().starts_with("import "))
                .map(|l| format!("{}\n", l.trim()))
                .collect(),
            _ => String::new(),
        }
    }

    /// A test file: a comment on what it holds, the header, then the template with `keep` put
    /// back (numbered from 1 in the public file, by their place in the test in the hidden one).
    fn test_file(
        &self,
        d: &Draft<'_, Template>,
        keep: &[usize],
        public: bool,
        task_id: &str,
        entry: &str,
    ) -> String {
        let what = if public {
            format!(
                "Public tests of `{entry}`: checks of the HumanEvalFix test ({task_id}) that hold on the current code. They are deliberately incomplete."
            )
        } else {
            format!("Hidden tests of `{entry}`: the full HumanEvalFix test ({task_id}).")
        };
        let comment = format!("// {what}\n// {}\n", self.table.how);
        let body = d.test.render(keep, public);
        match self.table.language {
            Language::Go => {
                // `package main` comes first; the comment after it. Imports the kept checks do
                // not use go (Go refuses them).
                let body = go_used_imports(&body);
                let (pkg, rest) = body.split_once('\n').unwrap_or((&body, ""));
                format!("{pkg}\n\n{comment}{}", rest.trim_start_matches('\n'))
            }
            _ => format!(
                "{comment}{}{}",
                self.header(&d.files.module, &d.buggy),
                body.trim_start_matches('\n')
            ),
        }
    }

    /// Runs every check of the template on the buggy module in the sandbox, with the check
    /// library in probe mode (restarted after the check it died on).
    fn run_probe(
        &self,
        d: &Draft<'_, Template>,
        sandbox: &Sandbox,
        assertion_timeout: Duration,
    ) -> Result<Probes, ImportError> {
        let dir = tempfile::Builder::new()
            .prefix("traparena-probe-")
            .tempdir()
            .map_err(io(std::env::temp_dir()))?;
        let n = d.checks.len();
        let all: Vec<usize> = (0..n).collect();
        write_file(dir.path(), &d.files.module, d.buggy.as_bytes())?;
        let program = self.test_file(d, &all, false, "probe", "probe");
        write_file(dir.path(), &d.files.hidden, program.as_bytes())?;
        let files: Vec<String> = self.test_spec(d, &d.files.hidden, false).command[1..].to_vec();
        let ws = Workspace::materialize(dir.path(), sandbox)?;
        let (runner, _) = self.program();
        probe_loop(n, "the module does not load", |start| {
            let remaining = (n - start) as u32;
            let run = ws.run_program(
                sandbox,
                runner,
                &files,
                vec![
                    ("TRAPARENA_PROBE_FROM".into(), start.to_string()),
                    (
                        "TRAPARENA_PROBE_TIMEOUT_MS".into(),
                        assertion_timeout.as_millis().to_string(),
                    ),
                ],
                assertion_timeout * remaining + Duration::from_secs(60),
            )?;
            if run.exit_code == Some(86) {
                return Ok(Probed::AllFail(format!(
                    "the test program does not build: {}",
                    build_errors(&run.stderr.text)
                )));
            }
            Ok(Probed::Ran(run))
        })
    }
}

/// The first lines of a failed build's output (up to 400 characters).
fn build_errors(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .take(3)
        .collect::<Vec<_>>()
        .join(" / ")
        .chars()
        .take(400)
        .collect()
}

//! HumanEvalFix C++, Java and Go records → tasks: the compiled-language profiles of the importer.
//!
//! A record's test becomes a template: its text with every check (a C++ `assert(...)` in
//! `main`, an element of Java's `List<Boolean> correct = Arrays.asList(...)`, a testify
//! `assert.X(...)` statement in Go) cut out. A test file is the template with a chosen set of
//! checks put back, each wrapped in the harness's check library (`TP_CHECK(n, ...)`,
//! `TpCheck.check(n, () -> ...)`, `tpCheck(t, n, func() { ... })`) and ended by the library's
//! report call, so that the counts come from the runner ([`Runner::Cpp`], [`Runner::Java`],
//! [`Runner::Go`]), never from text the program prints. The probe builds the whole test once
//! on the buggy code and runs it in the library's probe mode, which reports each check as it
//! ends and stops a check that overruns.

use std::time::Duration;

use traparena_env::{Sandbox, Workspace};
use traparena_task::{RelPath, Runner, TestSpec};
use tree_sitter::{Node, Parser};

use crate::common::{Probed, write_file};
use crate::error::{ImportError, io};

/// A compiled HumanEvalPack language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Cpp,
    Java,
    Go,
    Rust,
}

/// A piece of a test template.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    /// Check `i` (0-based, in the order of the test): its source text (the expression, or in
    /// Go the whole statement).
    Check(usize),
    /// Where the report call goes: the end of `main` (C++, Java) or of the file (Go).
    End,
}

/// A record's test, cut into text and checks.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    lang: Lang,
    pieces: Vec<Piece>,
    /// The checks' source text, in order.
    pub(crate) checks: Vec<String>,
    /// Go: the test function's name.
    test_fn: String,
}

fn parser(lang: Lang) -> Result<Parser, String> {
    let mut p = Parser::new();
    let language: tree_sitter::Language = match lang {
        Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
    };
    p.set_language(&language).map_err(|e| e.to_string())?;
    Ok(p)
}

fn text<'a>(n: Node<'_>, src: &'a str) -> &'a str {
    &src[n.byte_range()]
}

fn find<'t>(n: Node<'t>, f: &mut impl FnMut(Node<'t>) -> bool, out: &mut Vec<Node<'t>>) {
    if f(n) {
        out.push(n);
        return;
    }
    let mut c = n.walk();
    for child in n.named_children(&mut c) {
        find(child, f, out);
    }
}

/// (byte range to replace, what goes there)
type Cut = (std::ops::Range<usize>, Piece);

fn assemble(src: &str, mut cuts: Vec<Cut>) -> Vec<Piece> {
    cuts.sort_by_key(|(r, _)| r.start);
    let mut pieces = Vec::new();
    let mut at = 0;
    for (r, p) in cuts {
        if r.start < at {
            continue;
        }
        pieces.push(Piece::Text(src[at..r.start].to_owned()));
        pieces.push(p);
        at = r.end;
    }
    pieces.push(Piece::Text(src[at..].to_owned()));
    pieces
}

impl Template {
    /// Cuts a record's test (for Go: `test_setup` followed by `test`).
    pub(crate) fn parse(lang: Lang, test: &str) -> Result<Template, String> {
        let mut p = parser(lang)?;
        let tree = p.parse(test, None).ok_or("the parser did not run")?;
        let root = tree.root_node();
        let mut checks = Vec::new();
        let mut cuts: Vec<Cut> = Vec::new();
        let mut test_fn = String::new();
        match lang {
            Lang::Cpp => {
                let mut mains = Vec::new();
                find(
                    root,
                    &mut |n| {
                        n.kind() == "function_definition"
                            && n.child_by_field_name("declarator")
                                .and_then(|d| d.child_by_field_name("declarator"))
                                .is_some_and(|d| text(d, test) == "main")
                    },
                    &mut mains,
                );
                let main = mains.first().ok_or("the test has no main")?;
                let body = main.child_by_field_name("body").ok_or("main has no body")?;
                let mut asserts = Vec::new();
                find(
                    body,
                    &mut |n| {
                        n.kind() == "expression_statement"
                            && n.named_child(0).is_some_and(|c| {
                                c.kind() == "call_expression"
                                    && c.child_by_field_name("function")
                                        .is_some_and(|f| text(f, test) == "assert")
                            })
                    },
                    &mut asserts,
                );
                for a in asserts {
                    let call = a.named_child(0).expect("matched above");
                    let args = call
                        .child_by_field_name("arguments")
                        .ok_or("an assert without arguments")?;
                    let inner = text(args, test);
                    let inner = inner
                        .strip_prefix('(')
                        .and_then(|s| s.strip_suffix(')'))
                        .ok_or("an assert without parentheses")?;
                    cuts.push((a.byte_range(), Piece::Check(checks.len())));
                    checks.push(inner.trim().to_owned());
                }
                // Before main's closing brace.
                let end = body.end_byte() - 1;
                cuts.push((end..end, Piece::End));
            }
            Lang::Java => {
                let mut decls = Vec::new();
                find(
                    root,
                    &mut |n| {
                        n.kind() == "local_variable_declaration"
                            && text(n, test).contains("Arrays.asList")
                            && text(n, test).contains("Boolean")
                    },
                    &mut decls,
                );
                let decl = decls
                    .first()
                    .ok_or("the test has no List<Boolean> of checks")?;
                let mut lists = Vec::new();
                find(
                    *decl,
                    &mut |n| {
                        n.kind() == "method_invocation"
                            && n.child_by_field_name("name")
                                .is_some_and(|m| text(m, test) == "asList")
                    },
                    &mut lists,
                );
                let list = lists.first().ok_or("no Arrays.asList")?;
                let args = list
                    .child_by_field_name("arguments")
                    .ok_or("Arrays.asList without arguments")?;
                let mut c = args.walk();
                for a in args.named_children(&mut c) {
                    if a.kind() == "line_comment" || a.kind() == "block_comment" {
                        continue;
                    }
                    checks.push(text(a, test).trim().to_owned());
                }
                // The declaration becomes the checks; the `if (correct.contains(false))` goes.
                let name = decl
                    .child_by_field_name("declarator")
                    .and_then(|d| d.child_by_field_name("name"))
                    .map(|n| text(n, test).to_owned())
                    .ok_or("the list has no name")?;
                let mut pieces_at = decl.byte_range();
                let mut ifs = Vec::new();
                find(
                    root,
                    &mut |n| {
                        n.kind() == "if_statement"
                            && n.child_by_field_name("condition")
                                .is_some_and(|c| text(c, test).contains(&format!("{name}.")))
                    },
                    &mut ifs,
                );
                let first = pieces_at.start;
                for (i, _) in checks.iter().enumerate() {
                    cuts.push((first..first, Piece::Check(i)));
                }
                pieces_at.start = first;
                cuts.push((pieces_at, Piece::Text(String::new())));
                for f in ifs {
                    cuts.push((f.byte_range(), Piece::Text(String::new())));
                }
                let mut mains = Vec::new();
                find(
                    root,
                    &mut |n| {
                        n.kind() == "method_declaration"
                            && n.child_by_field_name("name")
                                .is_some_and(|m| text(m, test) == "main")
                    },
                    &mut mains,
                );
                let body = mains
                    .first()
                    .and_then(|m| m.child_by_field_name("body"))
                    .ok_or("the test has no main")?;
                if text(*decl, test).contains("correct") && name != "correct" {
                    return Err("an unexpected list of checks".into());
                }
                let end = body.end_byte() - 1;
                cuts.push((end..end, Piece::End));
            }
            Lang::Go => {
                let mut fns = Vec::new();
                find(
                    root,
                    &mut |n| {
                        n.kind() == "function_declaration"
                            && n.child_by_field_name("name")
                                .is_some_and(|m| text(m, test).starts_with("Test"))
                    },
                    &mut fns,
                );
                if fns.len() != 1 {
                    return Err(format!(
                        "the test has {} Test functions, not one",
                        fns.len()
                    ));
                }
                let f = fns[0];
                test_fn = text(f.child_by_field_name("name").expect("matched"), test).to_owned();
                let params = f
                    .child_by_field_name("parameters")
                    .ok_or("the test function has no parameters")?;
                if text(params, test).contains("*testing.T") {
                    let r = params.byte_range();
                    let new = text(params, test).replace("*testing.T", "*tpT");
                    cuts.push((r, Piece::Text(new)));
                }
                let body = f.child_by_field_name("body").ok_or("no body")?;
                let mut asserts = Vec::new();
                find(
                    body,
                    &mut |n| {
                        n.kind() == "expression_statement"
                            && n.named_child(0).is_some_and(|c| {
                                c.kind() == "call_expression"
                                    && c.child_by_field_name("function")
                                        .is_some_and(|f| text(f, test).starts_with("assert."))
                            })
                    },
                    &mut asserts,
                );
                for a in asserts {
                    cuts.push((a.byte_range(), Piece::Check(checks.len())));
                    checks.push(text(a, test).trim().to_owned());
                }
                // `testing` is no longer imported: the program has its own main.
                let mut specs = Vec::new();
                find(
                    root,
                    &mut |n| n.kind() == "import_spec" && text(n, test).trim() == "\"testing\"",
                    &mut specs,
                );
                for s in specs {
                    cuts.push((s.byte_range(), Piece::Text(String::new())));
                }
                let end = test.len();
                cuts.push((end..end, Piece::End));
            }
            Lang::Rust => {
                let mut fns = Vec::new();
                find(
                    root,
                    &mut |n| {
                        n.kind() == "function_item"
                            && n.prev_named_sibling().is_some_and(|a| {
                                a.kind() == "attribute_item" && text(a, test).contains("test")
                            })
                    },
                    &mut fns,
                );
                if fns.len() != 1 {
                    return Err(format!(
                        "the test has {} #[test] functions, not one",
                        fns.len()
                    ));
                }
                let f = fns[0];
                test_fn = text(f.child_by_field_name("name").expect("named"), test).to_owned();
                // The modules the test function is in (`mod tests`), for main's call.
                let mut up = f.parent();
                while let Some(p) = up {
                    if p.kind() == "mod_item" {
                        let m = p
                            .child_by_field_name("name")
                            .map_or("tests", |n| text(n, test));
                        test_fn = format!("{m}::{test_fn}");
                    }
                    up = p.parent();
                }
                let mut attrs = Vec::new();
                find(
                    root,
                    &mut |n| {
                        n.kind() == "attribute_item"
                            && matches!(
                                text(n, test).replace(' ', "").as_str(),
                                "#[test]" | "#[cfg(test)]"
                            )
                    },
                    &mut attrs,
                );
                for a in attrs {
                    cuts.push((a.byte_range(), Piece::Text(String::new())));
                }
                let at = f.start_byte();
                cuts.push((at..at, Piece::Text("pub ".into())));
                let body = f.child_by_field_name("body").ok_or("no body")?;
                let is_assert = |n: Node<'_>| {
                    n.kind() == "macro_invocation"
                        && n.child_by_field_name("macro").is_some_and(|m| {
                            matches!(text(m, test), "assert" | "assert_eq" | "assert_ne")
                        })
                };
                let mut asserts = Vec::new();
                find(
                    body,
                    &mut |n| {
                        (n.kind() == "expression_statement"
                            && n.named_child(0).is_some_and(is_assert))
                            || (is_assert(n) && n.parent().is_some_and(|p| p.kind() == "block"))
                    },
                    &mut asserts,
                );
                for a in asserts {
                    let mut stmt = text(a, test).trim().to_owned();
                    if !stmt.ends_with(';') {
                        stmt.push(';');
                    }
                    cuts.push((a.byte_range(), Piece::Check(checks.len())));
                    checks.push(stmt);
                }
                let end = test.len();
                cuts.push((end..end, Piece::End));
            }
        }
        if root.has_error() {
            return Err("the test does not parse".into());
        }
        Ok(Template {
            lang,
            pieces: assemble(test, cuts),
            checks,
            test_fn,
        })
    }

    /// The test's text with the checks `keep` (0-based, in order) put back, numbered from 1
    /// when `renumber`, by their place in the test otherwise.
    pub(crate) fn render(&self, keep: &[usize], renumber: bool) -> String {
        let mut s = String::new();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => s.push_str(t),
                Piece::Check(i) => {
                    let Some(k) = keep.iter().position(|k| k == i) else {
                        continue;
                    };
                    let n = if renumber { k + 1 } else { i + 1 };
                    let c = &self.checks[*i];
                    match self.lang {
                        Lang::Cpp => s.push_str(&format!("TP_CHECK({n}, {c});")),
                        Lang::Java => {
                            s.push_str(&format!("TpCheck.check({n}, () -> {c});\n        "))
                        }
                        Lang::Go => s.push_str(&format!("tpCheck(t, {n}, func() {{ {c} }})")),
                        Lang::Rust => s.push_str(&format!("tp_check({n}, || {{ {c} }});")),
                    }
                }
                Piece::End => match self.lang {
                    Lang::Rust => s.push_str(&format!(
                        "\nfn main() {{\n    {}();\n    tp_finish();\n}}\n",
                        self.test_fn
                    )),
                    Lang::Cpp => s.push_str("    return tp::finish();\n"),
                    Lang::Java => s.push_str("    TpCheck.finish();\n    "),
                    Lang::Go => s.push_str(&format!(
                        "\nfunc main() {{\n    {}(&tpT{{}})\n    tpFinish()\n}}\n",
                        self.test_fn
                    )),
                },
            }
        }
        s
    }
}

/// What one language's task looks like.
pub(crate) struct Layout {
    pub(crate) lang: Lang,
    /// The module's file, relative to the repository.
    pub(crate) module: String,
    pub(crate) public_file: String,
    pub(crate) hidden_file: String,
}

impl Layout {
    /// The runner of the language's test programs.
    pub(crate) fn runner(&self) -> Runner {
        match self.lang {
            Lang::Cpp => Runner::Cpp,
            Lang::Java => Runner::Java,
            Lang::Go => Runner::Go,
            Lang::Rust => Runner::Rust,
        }
    }

    /// `task.json`'s `language`.
    pub(crate) fn name(&self) -> &'static str {
        self.runner()
            .program_tools()
            .expect("a compiled language's runner names its tools")
            .0
            .name()
    }

    pub(crate) fn new(lang: Lang, entry: &str) -> Layout {
        match lang {
            Lang::Cpp => Layout {
                lang,
                module: format!("{entry}.cpp"),
                public_file: format!("tests/test_{entry}.cpp"),
                hidden_file: format!("hidden_tests/test_{entry}_hidden.cpp"),
            },
            Lang::Java => Layout {
                lang,
                module: "Solution.java".into(),
                public_file: "tests/Main.java".into(),
                hidden_file: "hidden_tests/Main.java".into(),
            },
            Lang::Rust => Layout {
                lang,
                module: format!("{entry}.rs"),
                public_file: format!("tests/test_{entry}.rs"),
                hidden_file: format!("hidden_tests/test_{entry}_hidden.rs"),
            },
            Lang::Go => Layout {
                lang,
                module: format!("{}.go", snake(entry)),
                public_file: format!("tests/check_{}.go", snake(entry)),
                hidden_file: format!("hidden_tests/check_{}_hidden.go", snake(entry)),
            },
        }
    }

    /// The module with every import of the record's prompt kept, used or not: the texts the
    /// reference location is computed on, so that an import the fix needs (Go refuses unused
    /// ones, so the buggy module may lack it) does not move the repair out of its function.
    pub(crate) fn module_text_for_location(
        &self,
        prompt: &str,
        declaration: &str,
        body: &str,
    ) -> String {
        match self.lang {
            Lang::Go => format!("package main\n\n{prompt}{body}\n"),
            _ => self.module_text(prompt, declaration, body),
        }
    }

    /// The module: the record's documentation and declaration with a body.
    pub(crate) fn module_text(&self, prompt: &str, declaration: &str, body: &str) -> String {
        let mut s = match self.lang {
            // The prompt is a comment, then the declaration's first includes; the declaration
            // has them all.
            Lang::Cpp => {
                let head = prompt.find("#include").map_or("", |i| &prompt[..i]);
                format!("{head}{}{body}", declaration.trim_start())
            }
            Lang::Java => format!("{prompt}{body}"),
            Lang::Go => format!(
                "package main\n\n{}",
                go_used_imports(&format!("{prompt}{body}"))
            ),
            // The prompt opens with an empty `fn main(){}`: the test program has the main.
            Lang::Rust => {
                let p = prompt.trim_start();
                let p = p.strip_prefix("fn main(){}").unwrap_or(p);
                format!("{}{body}", p.trim_start())
            }
        };
        if !s.ends_with('\n') {
            s.push('\n');
        }
        s
    }

    /// The lines a test file opens with.
    fn header(&self, module_text: &str, from_dir: bool) -> String {
        let up = if from_dir { "../" } else { "" };
        match self.lang {
            Lang::Cpp => format!("#include \"{up}{}\"\n", self.module),
            Lang::Rust => format!("include!(\"{up}{}\");\n", self.module),
            Lang::Java => module_text
                .lines()
                .filter(|l| l.trim_start().starts_with("import "))
                .map(|l| format!("{}\n", l.trim()))
                .collect(),
            Lang::Go => String::new(),
        }
    }

    /// A test file: the header, then the template with `keep` put back.
    pub(crate) fn test_file(
        &self,
        template: &Template,
        module_text: &str,
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
        let how = match self.lang {
            Lang::Cpp => {
                "Each TP_CHECK(n, condition) is one check, counted by the harness's check library (tp_check.hpp)."
            }
            Lang::Java => {
                "Each TpCheck.check(n, () -> condition) is one check, counted by the harness's check library (TpCheck)."
            }
            Lang::Go => {
                "Each tpCheck(t, n, func() { assert... }) is one check, counted by the harness's check library (tp_check.go)."
            }
            Lang::Rust => {
                "Each tp_check(n, || { assert... }) is one check, counted by the harness's check library (tp_check.rs)."
            }
        };
        let comment = format!("// {what}\n// {how}\n");
        let body = template.render(keep, public);
        match self.lang {
            Lang::Go => {
                // `package main` comes first; the comment after it. Imports the kept checks do
                // not use go (Go refuses them).
                let body = go_used_imports(&body);
                let (pkg, rest) = body.split_once('\n').unwrap_or((&body, ""));
                format!("{pkg}\n\n{comment}{}", rest.trim_start_matches('\n'))
            }
            _ => format!(
                "{comment}{}{}",
                self.header(module_text, true),
                body.trim_start_matches('\n')
            ),
        }
    }

    /// How to run a test file.
    pub(crate) fn test_spec(&self, file: &str) -> TestSpec {
        let tool = match self.lang {
            Lang::Cpp => "g++",
            Lang::Java => "java",
            Lang::Go => "go",
            Lang::Rust => "rustc",
        };
        let mut command = vec![tool.to_owned()];
        if !matches!(self.lang, Lang::Cpp | Lang::Rust) {
            command.push(self.module.clone());
        }
        command.push(file.to_owned());
        TestSpec {
            command,
            runner: self.runner(),
            files: vec![RelPath::new(file).expect("importer paths are relative")],
            select: Vec::new(),
        }
    }

    /// What the agent is told about the language and its tests.
    pub(crate) fn language_note(&self) -> String {
        let (lang, build) = match self.lang {
            Lang::Cpp => (
                "C++ (C++17, g++)",
                "built together with the module it includes",
            ),
            Lang::Java => (
                "Java (Java 17)",
                "compiled with the module by javac and run as `Main`",
            ),
            Lang::Go => (
                "Go (package main, with testify's assert)",
                "built with the module by `go build`",
            ),
            Lang::Rust => (
                "Rust (edition 2021; the crates rand, regex and md5 are available)",
                "that includes the module, built by rustc",
            ),
        };
        format!(
            "The code is {lang}. The public tests in `{}` are a test program {build}; the test runner counts every check it makes, and a check that fails fails the run. Build output goes outside the repository.",
            self.public_file
        )
    }
}

/// Go: the record's test setup (package line and imports) with the module's imports added —
/// HumanEvalPack's Go tests were written for one file holding the module too, so they use its
/// imports (`math`) without importing them.
pub(crate) fn go_test_setup(test_setup: &str, module: &str) -> String {
    let import_line = |l: &str| {
        let t = l.trim();
        t.starts_with('"') && t.ends_with('"')
    };
    let mut have: Vec<String> = test_setup
        .lines()
        .filter(|l| import_line(l))
        .map(|l| l.trim().to_owned())
        .collect();
    let mut extra = String::new();
    let mut in_block = false;
    for l in module.lines() {
        let t = l.trim();
        if t.starts_with("import (") {
            in_block = true;
        } else if in_block && t == ")" {
            in_block = false;
        } else if (in_block && import_line(t)) || t.starts_with("import \"") {
            let spec = t.trim_start_matches("import ").to_owned();
            if !have.contains(&spec) {
                extra.push_str(&format!("    {spec}\n"));
                have.push(spec);
            }
        }
    }
    match test_setup.find("import (\n") {
        Some(i) => {
            let at = i + "import (\n".len();
            format!("{}{extra}{}", &test_setup[..at], &test_setup[at..])
        }
        None => format!("{test_setup}\nimport (\n{extra})\n"),
    }
}

/// Go source without the imports it does not use (Go refuses to build them): an import stays
/// when its package name is used as `name.` outside the import declarations.
fn go_used_imports(src: &str) -> String {
    let Ok(mut p) = parser(Lang::Go) else {
        return src.to_owned();
    };
    let Some(tree) = p.parse(src, None) else {
        return src.to_owned();
    };
    let root = tree.root_node();
    let mut decls = Vec::new();
    find(root, &mut |n| n.kind() == "import_declaration", &mut decls);
    let mut rest = src.to_owned();
    for d in decls.iter().rev() {
        rest.replace_range(d.byte_range(), "");
    }
    let used = |name: &str| {
        rest.match_indices(&format!("{name}.")).any(|(i, _)| {
            !rest[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })
    };
    let mut specs = Vec::new();
    for d in &decls {
        find(*d, &mut |n| n.kind() == "import_spec", &mut specs);
    }
    let mut cuts: Vec<std::ops::Range<usize>> = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    for spec in specs {
        let path = spec
            .child_by_field_name("path")
            .map(|p| text(p, src).trim_matches('"').to_owned())
            .unwrap_or_default();
        paths.push(path.clone());
        let name = spec
            .child_by_field_name("name")
            .map(|n| text(n, src).to_owned())
            .unwrap_or_else(|| path.rsplit('/').next().unwrap_or("").to_owned());
        if name != "_" && !used(&name) {
            cuts.push(spec.byte_range());
        }
    }
    let mut out = src.to_owned();
    for r in cuts.iter().rev() {
        out.replace_range(r.clone(), "");
    }
    // An import block left empty goes too.
    let mut out = out
        .replace("import (\n    \n)\n", "")
        .replace("import (\n\n)\n", "")
        .replace("import ()\n", "");
    // Standard packages the code uses without importing them (some records rely on imports
    // of another file of the original harness), as goimports would add them.
    let imported = |path: &str| paths.iter().any(|p| p == path);
    let missing: Vec<&str> = GO_STD
        .iter()
        .filter(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            used(name) && !imported(p)
        })
        .copied()
        .collect();
    if !missing.is_empty() {
        let block: String = missing
            .iter()
            .map(|p| format!("import \"{p}\"\n"))
            .collect();
        // After the package line when there is one, else first.
        match out.find("package main\n") {
            Some(i) => out.insert_str(i + "package main\n".len(), &format!("\n{block}")),
            None => out.insert_str(0, &block),
        }
    }
    out
}

/// Standard packages an import may be added for.
const GO_STD: &[&str] = &[
    "math",
    "strings",
    "strconv",
    "sort",
    "fmt",
    "unicode",
    "bytes",
    "regexp",
    "crypto/md5",
    "time",
    "reflect",
];

/// `HasCloseElements` → `has_close_elements`.
fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs every check of `template` on the buggy module in the sandbox, with the check library in
/// probe mode (restarted after the check it died on). Returns (passed, why not) per check.
pub(crate) fn probe(
    layout: &Layout,
    template: &Template,
    buggy: &str,
    sandbox: &Sandbox,
    assertion_timeout: Duration,
) -> Result<Vec<(bool, String)>, ImportError> {
    let dir = tempfile::Builder::new()
        .prefix("traparena-probe-")
        .tempdir()
        .map_err(io(std::env::temp_dir()))?;
    let all: Vec<usize> = (0..template.checks.len()).collect();
    write_file(dir.path(), &layout.module, buggy.as_bytes())?;
    let program = layout.test_file(template, buggy, &all, false, "probe", "probe");
    write_file(dir.path(), &layout.hidden_file, program.as_bytes())?;
    let files: Vec<String> = layout.test_spec(&layout.hidden_file).command[1..].to_vec();
    let ws = Workspace::materialize(dir.path(), sandbox)?;
    let n = template.checks.len();
    crate::common::probe_loop(n, "the module does not load", |start| {
        let remaining = (n - start) as u32;
        let run = ws.run_program(
            sandbox,
            layout.runner(),
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
            let first = run
                .stderr
                .text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                .take(3)
                .collect::<Vec<_>>()
                .join(" / ")
                .chars()
                .take(400)
                .collect::<String>();
            return Ok(Probed::AllFail(format!(
                "the test program does not build: {first}"
            )));
        }
        Ok(Probed::Ran(run))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_cut_out_each_language_s_checks_and_put_back_the_chosen_ones() {
        let cpp = "#undef NDEBUG\n#include<assert.h>\nint main(){\n    vector<int> a={1,2};\n    assert (f(a)==1);\n    assert (f({3, 4}) == 2);\n}\n";
        let t = Template::parse(Lang::Cpp, cpp).unwrap();
        assert_eq!(t.checks, ["f(a)==1", "f({3, 4}) == 2"]);
        let r = t.render(&[1], true);
        assert!(r.contains("vector<int> a={1,2};"), "{r}");
        assert!(r.contains("TP_CHECK(1, f({3, 4}) == 2);"), "{r}");
        assert!(!r.contains("f(a)==1"), "{r}");
        assert!(r.contains("return tp::finish();\n}"), "{r}");
        assert!(
            t.render(&[0, 1], false)
                .contains("TP_CHECK(2, f({3, 4}) == 2);")
        );

        let java = "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n        List<Boolean> correct = Arrays.asList(\n                s.f(1) == 2,\n                !s.g(\"x\")\n        );\n        if (correct.contains(false)) {\n            throw new AssertionError();\n        }\n    }\n}\n";
        let t = Template::parse(Lang::Java, java).unwrap();
        assert_eq!(t.checks, ["s.f(1) == 2", "!s.g(\"x\")"]);
        let r = t.render(&[0, 1], false);
        assert!(r.contains("TpCheck.check(1, () -> s.f(1) == 2);"), "{r}");
        assert!(r.contains("TpCheck.check(2, () -> !s.g(\"x\"));"), "{r}");
        assert!(
            !r.contains("AssertionError") && !r.contains("asList"),
            "{r}"
        );
        assert!(r.contains("TpCheck.finish();"), "{r}");

        let go = "package main\n\nimport (\n    \"testing\"\n    \"github.com/stretchr/testify/assert\"\n)\nfunc TestF(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(2, F(1))\n    assert.Equal([]int{}, G([]int{}, 7))\n}\n";
        let t = Template::parse(Lang::Go, go).unwrap();
        assert_eq!(
            t.checks,
            [
                "assert.Equal(2, F(1))",
                "assert.Equal([]int{}, G([]int{}, 7))"
            ]
        );
        let r = t.render(&[1], true);
        assert!(r.contains("func TestF(t *tpT)"), "{r}");
        assert!(!r.contains("\"testing\""), "{r}");
        assert!(
            r.contains("tpCheck(t, 1, func() { assert.Equal([]int{}, G([]int{}, 7)) })"),
            "{r}"
        );
        assert!(
            r.contains("func main() {\n    TestF(&tpT{})\n    tpFinish()\n}"),
            "{r}"
        );
    }

    #[test]
    fn rust_tests_become_a_program_calling_the_test_function() {
        let rust = "\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_f() {\n        let v = vec![1];\n        assert!(f(&v) == 1);\n        assert_eq!(f(&[]), 0);\n    }\n}\n";
        let t = Template::parse(Lang::Rust, rust).unwrap();
        assert_eq!(t.checks, ["assert!(f(&v) == 1);", "assert_eq!(f(&[]), 0);"]);
        let r = t.render(&[1], true);
        assert!(!r.contains("#[test]") && !r.contains("#[cfg(test)]"), "{r}");
        assert!(r.contains("pub fn test_f()"), "{r}");
        assert!(r.contains("let v = vec![1];"), "{r}");
        assert!(
            r.contains("tp_check(1, || { assert_eq!(f(&[]), 0); });"),
            "{r}"
        );
        assert!(
            r.contains("fn main() {\n    tests::test_f();\n    tp_finish();\n}"),
            "{r}"
        );
    }

    #[test]
    fn tests_without_checks_of_the_expected_shape_are_errors() {
        for (lang, test) in [
            (Lang::Cpp, "int helper(){ return 1; }\n"),
            (
                Lang::Java,
                "public class Main { public static void main(String[] a) { } }\n",
            ),
            (Lang::Go, "package main\nfunc helper() {}\n"),
            (Lang::Rust, "fn helper() {}\n"),
        ] {
            assert!(Template::parse(lang, test).is_err(), "{lang:?}");
        }
    }

    #[test]
    fn go_modules_keep_only_the_imports_they_use() {
        let src = "import (\n    \"math\"\n    \"strings\"\n)\n\nfunc F(x float64) float64 {\n    return math.Abs(x)\n}\n";
        let out = go_used_imports(src);
        assert!(out.contains("\"math\""), "{out}");
        assert!(!out.contains("strings"), "{out}");
        let none =
            go_used_imports("import (\n    \"math\"\n)\n\nfunc F() int {\n    return 1\n}\n");
        assert!(!none.contains("import"), "{none}");
    }

    #[test]
    fn go_tests_get_the_module_s_imports() {
        let setup = "package main\n\nimport (\n    \"testing\"\n    \"github.com/stretchr/testify/assert\"\n)";
        let module = "package main\n\nimport (\n    \"math\"\n    \"testing\"\n)\n\nfunc F() {}\n";
        let out = go_test_setup(setup, module);
        assert_eq!(out.matches("\"testing\"").count(), 1, "{out}");
        assert!(out.contains("    \"math\"\n"), "{out}");
    }

    #[test]
    fn go_names_are_snake_case() {
        assert_eq!(snake("HasCloseElements"), "has_close_elements");
        assert_eq!(snake("Fib"), "fib");
    }
}

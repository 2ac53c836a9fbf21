//! A HumanEval `test` field, parsed with tree-sitter into its `check(candidate)` statements.

use std::collections::BTreeSet;

use tree_sitter::{Node, Parser};

/// Why a `test` field has no usable `check(candidate)` (the skip's cause, as the import report
/// quotes it).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckProblem {
    /// The Python grammar does not fit the tree-sitter library.
    #[error("the Python grammar cannot be loaded: {0}")]
    Grammar(#[source] tree_sitter::LanguageError),
    /// The parser gave no tree.
    #[error("the test cannot be parsed")]
    NotParsed,
    /// The test has syntax errors.
    #[error("the test is not valid Python")]
    NotPython,
    /// No module-level `def check`.
    #[error("the test defines no `check` function")]
    NoCheck,
    /// `check` has no parameters node.
    #[error("`check` has no parameter list")]
    NoParameterList,
    /// `check`'s parameters are not one plain name.
    #[error("`check` does not take exactly one plain parameter")]
    NotOneParameter,
    /// `check` has no body node.
    #[error("`check` has no body")]
    NoBody,
}

/// What a statement of `check`'s body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StmtKind {
    /// An `assert`, or a compound statement (a loop) holding one: a unit that is tried alone.
    Assertion,
    /// Anything else that binds or computes (imports, assignments, calls): kept, in order,
    /// before every later assertion that is tried alone.
    Setup,
}

/// One statement of `check`'s body.
#[derive(Debug, Clone)]
pub(crate) struct Stmt {
    /// The statement's source lines, at their original indentation.
    pub text: String,
    /// What it is.
    pub kind: StmtKind,
    /// Every identifier it mentions.
    pub identifiers: BTreeSet<String>,
}

/// A parsed `test` field.
#[derive(Debug, Clone)]
pub(crate) struct CheckSuite {
    /// `check`'s parameter (the candidate's name inside `check`).
    pub param: String,
    /// Module-level code of `test` other than `check` and the calls of it.
    pub prelude: String,
    /// `test` without its module-level `check(...)` calls: the whole check for hidden tests.
    pub without_calls: String,
    /// `check`'s body statements, in order (comments and bare names left out).
    pub statements: Vec<Stmt>,
}

impl CheckSuite {
    /// Parses `test`. `Err` says why it has no usable `check(candidate)`.
    pub(crate) fn parse(test: &str) -> Result<CheckSuite, CheckProblem> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .map_err(CheckProblem::Grammar)?;
        let tree = parser.parse(test, None).ok_or(CheckProblem::NotParsed)?;
        let root = tree.root_node();
        if root.has_error() {
            return Err(CheckProblem::NotPython);
        }
        let src = test.as_bytes();
        let text = |n: Node<'_>| n.utf8_text(src).unwrap_or("").to_owned();
        let mut check = None;
        let mut prelude = String::new();
        let mut calls: Vec<(usize, usize)> = Vec::new();
        let mut cursor = root.walk();
        for node in root.named_children(&mut cursor) {
            match node.kind() {
                "function_definition"
                    if node
                        .child_by_field_name("name")
                        .is_some_and(|n| text(n) == "check") =>
                {
                    check = Some(node);
                }
                "expression_statement" if is_check_call(node, src) => {
                    calls.push((line_start(src, node.start_byte()), node.end_byte()));
                }
                "comment" => {}
                _ => {
                    prelude.push_str(&statement_text(test, node));
                    prelude.push('\n');
                }
            }
        }
        let check = check.ok_or(CheckProblem::NoCheck)?;
        let params = check
            .child_by_field_name("parameters")
            .ok_or(CheckProblem::NoParameterList)?;
        let mut pc = params.walk();
        let names: Vec<Node<'_>> = params.named_children(&mut pc).collect();
        let param = match names.as_slice() {
            [p] if p.kind() == "identifier" => text(*p),
            _ => return Err(CheckProblem::NotOneParameter),
        };
        let body = check
            .child_by_field_name("body")
            .ok_or(CheckProblem::NoBody)?;
        let mut statements = Vec::new();
        let mut bc = body.walk();
        for node in body.named_children(&mut bc) {
            if node.kind() == "comment" {
                continue;
            }
            let kind = if node.kind() == "assert_statement" || contains(node, "assert_statement") {
                StmtKind::Assertion
            } else if node.kind() == "expression_statement"
                && node.named_child_count() == 1
                && node
                    .named_child(0)
                    .is_some_and(|c| matches!(c.kind(), "identifier" | "string" | "attribute"))
            {
                // A bare name or literal (`print`, a docstring): nothing to keep.
                continue;
            } else {
                StmtKind::Setup
            };
            let mut identifiers = BTreeSet::new();
            collect_identifiers(node, src, &mut identifiers);
            statements.push(Stmt {
                text: statement_text(test, node),
                kind,
                identifiers,
            });
        }
        let mut without_calls = String::new();
        let mut at = 0;
        for (start, end) in calls {
            without_calls.push_str(&test[at..start]);
            at = end;
        }
        without_calls.push_str(&test[at..]);
        Ok(CheckSuite {
            param,
            prelude,
            without_calls: without_calls.trim().to_owned() + "\n",
            statements,
        })
    }

    /// The indices of the assertion statements.
    pub(crate) fn assertions(&self) -> Vec<usize> {
        (0..self.statements.len())
            .filter(|&i| self.statements[i].kind == StmtKind::Assertion)
            .collect()
    }

    /// A function `name(param)` running assertion `i` alone: the setup statements before it,
    /// then the assertion, at their original indentation.
    pub(crate) fn case_function(&self, name: &str, i: usize) -> String {
        let mut f = format!("def {name}({}):\n", self.param);
        for s in &self.statements[..i] {
            if s.kind == StmtKind::Setup {
                f.push_str(&s.text);
                f.push('\n');
            }
        }
        f.push_str(&self.statements[i].text);
        f.push('\n');
        f
    }
}

fn is_check_call(node: Node<'_>, src: &[u8]) -> bool {
    let Some(call) = node.named_child(0) else {
        return false;
    };
    call.kind() == "call"
        && call
            .child_by_field_name("function")
            .is_some_and(|f| f.utf8_text(src).unwrap_or("") == "check")
}

fn contains(node: Node<'_>, kind: &str) -> bool {
    let mut c = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
    children
        .into_iter()
        .any(|ch| ch.kind() == kind || contains(ch, kind))
}

fn collect_identifiers(node: Node<'_>, src: &[u8], out: &mut BTreeSet<String>) {
    if node.kind() == "identifier" {
        out.insert(node.utf8_text(src).unwrap_or("").to_owned());
    }
    let mut c = node.walk();
    for ch in node.named_children(&mut c) {
        collect_identifiers(ch, src, out);
    }
}

fn line_start(src: &[u8], byte: usize) -> usize {
    src[..byte]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1)
}

/// The statement's text from the start of its line when only whitespace precedes it there
/// (keeping the indentation of every line consistent), else indented by its column.
fn statement_text(text: &str, node: Node<'_>) -> String {
    let src = text.as_bytes();
    let ls = line_start(src, node.start_byte());
    let prefix = &text[ls..node.start_byte()];
    let body = &text[node.start_byte()..node.end_byte()];
    if prefix.chars().all(|c| c == ' ' || c == '\t') {
        format!("{prefix}{body}")
    } else {
        format!("{}{body}", " ".repeat(node.start_position().column))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_check_into_setup_and_assertions() {
        let t = "import math\n\ndef check(f):\n    # a comment\n    print\n    \"\"\"doc\"\"\"\n    import random\n    assert f(1) == 2, \"x\"\n    xs = [1,\n          2]\n    for x in xs:\n        assert f(x) > 0\n    assert True\n\ncheck(f)\n";
        let s = CheckSuite::parse(t).unwrap();
        assert_eq!(s.param, "f");
        assert_eq!(s.prelude, "import math\n");
        assert!(
            !s.without_calls.contains("check(f)\n") || s.without_calls.contains("def check(f)")
        );
        assert!(!s.without_calls.trim_end().ends_with("check(f)"));
        let kinds: Vec<StmtKind> = s.statements.iter().map(|x| x.kind).collect();
        use StmtKind::*;
        assert_eq!(kinds, [Setup, Assertion, Setup, Assertion, Assertion]);
        let s2 = CheckSuite::parse("def check(f):\n    import string\n    letters = string.ascii_lowercase\n    assert f(letters)\n").unwrap();
        assert_eq!(s2.statements.len(), 3);
        assert_eq!(s.assertions(), [1, 3, 4]);
        let f = s.case_function("_c", 3);
        assert_eq!(
            f,
            "def _c(f):\n    import random\n    xs = [1,\n          2]\n    for x in xs:\n        assert f(x) > 0\n"
        );
        assert!(s.statements[3].identifiers.contains("xs"));
        assert!(!s.statements[4].identifiers.contains("f"));
    }

    #[test]
    fn refuses_tests_without_check() {
        assert!(matches!(
            CheckSuite::parse("def test(f):\n    assert f()\n"),
            Err(CheckProblem::NoCheck)
        ));
        assert!(matches!(
            CheckSuite::parse("def check(f, g):\n    assert f()\n"),
            Err(CheckProblem::NotOneParameter)
        ));
        let bad = CheckSuite::parse("def check(f):\n    assert f(\n").unwrap_err();
        assert_eq!(bad.to_string(), "the test is not valid Python");
    }
}

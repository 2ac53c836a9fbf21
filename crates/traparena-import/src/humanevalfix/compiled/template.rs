//! A record's test as a template: its text with every check cut out, and the checks; a test
//! program is the template with a chosen set of checks put back, each wrapped in the check
//! library's call, and the library's report call at the end.

use traparena_task::Language;
use tree_sitter::{Node, Parser};

use super::table::{Table, table};

/// Why a record's test cannot be made a template (the skip's cause, as the import report quotes
/// it).
#[derive(Debug, thiserror::Error)]
pub(super) enum ShapeProblem {
    /// The language's grammar does not fit the tree-sitter library.
    #[error(transparent)]
    Grammar(tree_sitter::LanguageError),
    /// The language has no grammar here (not a compiled language).
    #[error("no compiled-language grammar for {0}")]
    NoGrammar(Language),
    /// The language is not compiled.
    #[error("{0} is not compiled")]
    NotCompiled(Language),
    /// The language has no way of cutting its tests.
    #[error("{0} has no template")]
    NoTemplate(Language),
    /// The parser gave no tree.
    #[error("the parser did not run")]
    NotParsed,
    /// The test has syntax errors.
    #[error("the test does not parse")]
    DoesNotParse,
    /// C++, Java: no `main`.
    #[error("the test has no main")]
    NoMain,
    /// C++: `main` has no body.
    #[error("main has no body")]
    MainWithoutBody,
    /// C++: an `assert` call without arguments.
    #[error("an assert without arguments")]
    AssertWithoutArguments,
    /// C++: an `assert` whose arguments are not in parentheses.
    #[error("an assert without parentheses")]
    AssertWithoutParentheses,
    /// Java: no `List<Boolean>` declaration holding the checks.
    #[error("the test has no List<Boolean> of checks")]
    NoCheckList,
    /// Java: the list is not made by `Arrays.asList`.
    #[error("no Arrays.asList")]
    NoAsList,
    /// Java: `Arrays.asList` without arguments.
    #[error("Arrays.asList without arguments")]
    AsListWithoutArguments,
    /// Java: the list's declaration names no variable.
    #[error("the list has no name")]
    UnnamedList,
    /// Java: another list than the expected one holds the checks.
    #[error("an unexpected list of checks")]
    UnexpectedCheckList,
    /// Go, Rust: not exactly one test function.
    #[error("the test has {count} {kind} functions, not one")]
    TestFunctions {
        /// `Test` (Go) or `#[test]` (Rust).
        kind: &'static str,
        /// How many there are.
        count: usize,
    },
    /// Go: the test function has no parameter list.
    #[error("the test function has no parameters")]
    NoParameters,
    /// Go, Rust: the test function has no body.
    #[error("no body")]
    NoBody,
}

/// A piece of a test template.
#[derive(Debug, Clone)]
enum Piece {
    /// Text kept as it is.
    Text(String),
    /// Check `i` (0-based, in the order of the test): its source text (the expression, or in
    /// Go the whole statement).
    Check(usize),
    /// Where the report call goes: the end of `main` (C++, Java) or of the file (Go, Rust).
    End,
}

/// A record's test, cut into text and checks.
#[derive(Debug, Clone)]
pub(in crate::humanevalfix) struct Template {
    /// The language's row: how a check and the end are written.
    table: &'static Table,
    pieces: Vec<Piece>,
    /// The checks' source text, in order.
    pub(super) checks: Vec<String>,
    /// Go and Rust: the test function `main` calls.
    test_fn: String,
}

/// A parser of a compiled language.
pub(super) fn parser(language: Language) -> Result<Parser, ShapeProblem> {
    let grammar: tree_sitter::Language = match language {
        Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Language::Java => tree_sitter_java::LANGUAGE.into(),
        Language::Go => tree_sitter_go::LANGUAGE.into(),
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        other => return Err(ShapeProblem::NoGrammar(other)),
    };
    let mut p = Parser::new();
    p.set_language(&grammar).map_err(ShapeProblem::Grammar)?;
    Ok(p)
}

/// A node's source text.
pub(super) fn text<'a>(n: Node<'_>, src: &'a str) -> &'a str {
    &src[n.byte_range()]
}

/// The outermost nodes under `n` (itself included) that `f` accepts, in order.
pub(super) fn find<'t>(n: Node<'t>, f: &mut impl FnMut(Node<'t>) -> bool, out: &mut Vec<Node<'t>>) {
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

/// The pieces of `src` with the `cuts` made (a cut overlapping an earlier one is dropped).
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

/// What cutting a test gives: the checks, where they and the other changes go, and the test
/// function `main` calls (Go, Rust).
struct Cuts {
    checks: Vec<String>,
    cuts: Vec<Cut>,
    test_fn: String,
}

impl Template {
    /// Cuts a record's test (for Go: `test_setup` followed by `test`).
    pub(super) fn parse(language: Language, test: &str) -> Result<Template, ShapeProblem> {
        let table = table(language).ok_or(ShapeProblem::NotCompiled(language))?;
        let mut p = parser(language)?;
        let tree = p.parse(test, None).ok_or(ShapeProblem::NotParsed)?;
        let root = tree.root_node();
        let Cuts {
            checks,
            cuts,
            test_fn,
        } = match language {
            Language::Cpp => cut_cpp(root, test)?,
            Language::Java => cut_java(root, test)?,
            Language::Go => cut_go(root, test)?,
            Language::Rust => cut_rust(root, test)?,
            other => return Err(ShapeProblem::NoTemplate(other)),
        };
        if root.has_error() {
            return Err(ShapeProblem::DoesNotParse);
        }
        Ok(Template {
            table,
            pieces: assemble(test, cuts),
            checks,
            test_fn,
        })
    }

    /// The test's text with the checks `keep` (0-based, in order) put back, numbered from 1
    /// when `renumber`, by their place in the test otherwise.
    pub(super) fn render(&self, keep: &[usize], renumber: bool) -> String {
        let mut s = String::new();
        for p in &self.pieces {
            match p {
                Piece::Text(t) => s.push_str(t),
                Piece::Check(i) => {
                    let Some(k) = keep.iter().position(|k| k == i) else {
                        continue;
                    };
                    let n = if renumber { k + 1 } else { i + 1 };
                    // The number first: the check's text is put in last, as it is.
                    let check = self.table.check.replace("{n}", &n.to_string());
                    s.push_str(&check.replace("{c}", &self.checks[*i]));
                }
                Piece::End => s.push_str(&self.table.end.replace("{test_fn}", &self.test_fn)),
            }
        }
        s
    }
}

/// C++: the checks are the `assert(...)` statements of `main` (their condition); the report
/// call ends `main`.
fn cut_cpp(root: Node<'_>, test: &str) -> Result<Cuts, ShapeProblem> {
    let mut checks = Vec::new();
    let mut cuts: Vec<Cut> = Vec::new();
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
    let main = mains.first().ok_or(ShapeProblem::NoMain)?;
    let body = main
        .child_by_field_name("body")
        .ok_or(ShapeProblem::MainWithoutBody)?;
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
            .ok_or(ShapeProblem::AssertWithoutArguments)?;
        let inner = text(args, test);
        let inner = inner
            .strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .ok_or(ShapeProblem::AssertWithoutParentheses)?;
        cuts.push((a.byte_range(), Piece::Check(checks.len())));
        checks.push(inner.trim().to_owned());
    }
    Ok(ending_main(body, checks, cuts))
}

/// The cuts of a test whose report call goes before `main`'s closing brace (`body`, its block).
fn ending_main(body: Node<'_>, checks: Vec<String>, mut cuts: Vec<Cut>) -> Cuts {
    let end = body.end_byte() - 1;
    cuts.push((end..end, Piece::End));
    Cuts {
        checks,
        cuts,
        test_fn: String::new(),
    }
}

/// Java: the checks are the elements of the `List<Boolean>` built by `Arrays.asList(...)` in
/// `main`; the list and the `if` that reads it go, and the report call ends `main`.
fn cut_java(root: Node<'_>, test: &str) -> Result<Cuts, ShapeProblem> {
    let mut checks = Vec::new();
    let mut cuts: Vec<Cut> = Vec::new();
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
    let decl = decls.first().ok_or(ShapeProblem::NoCheckList)?;
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
    let list = lists.first().ok_or(ShapeProblem::NoAsList)?;
    let args = list
        .child_by_field_name("arguments")
        .ok_or(ShapeProblem::AsListWithoutArguments)?;
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
        .ok_or(ShapeProblem::UnnamedList)?;
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
        .ok_or(ShapeProblem::NoMain)?;
    if text(*decl, test).contains("correct") && name != "correct" {
        return Err(ShapeProblem::UnexpectedCheckList);
    }
    Ok(ending_main(body, checks, cuts))
}

/// Go: the checks are the testify `assert.X(...)` statements of the one `Test` function, which
/// takes the check library's `*tpT`; `testing` is no longer imported, and the file ends with a
/// `main` calling the test function.
fn cut_go(root: Node<'_>, test: &str) -> Result<Cuts, ShapeProblem> {
    let mut checks = Vec::new();
    let mut cuts: Vec<Cut> = Vec::new();
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
        return Err(ShapeProblem::TestFunctions {
            kind: "Test",
            count: fns.len(),
        });
    }
    let f = fns[0];
    let test_fn = text(f.child_by_field_name("name").expect("matched"), test).to_owned();
    let params = f
        .child_by_field_name("parameters")
        .ok_or(ShapeProblem::NoParameters)?;
    if text(params, test).contains("*testing.T") {
        let r = params.byte_range();
        let new = text(params, test).replace("*testing.T", "*tpT");
        cuts.push((r, Piece::Text(new)));
    }
    let body = f.child_by_field_name("body").ok_or(ShapeProblem::NoBody)?;
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
    Ok(Cuts {
        checks,
        cuts,
        test_fn,
    })
}

/// Rust: the checks are the `assert!`, `assert_eq!`, `assert_ne!` statements of the one
/// `#[test]` function, made `pub` and without its test attributes; the file ends with a `main`
/// calling it.
fn cut_rust(root: Node<'_>, test: &str) -> Result<Cuts, ShapeProblem> {
    let mut checks = Vec::new();
    let mut cuts: Vec<Cut> = Vec::new();
    let mut fns = Vec::new();
    find(
        root,
        &mut |n| {
            n.kind() == "function_item"
                && n.prev_named_sibling()
                    .is_some_and(|a| a.kind() == "attribute_item" && text(a, test).contains("test"))
        },
        &mut fns,
    );
    if fns.len() != 1 {
        return Err(ShapeProblem::TestFunctions {
            kind: "#[test]",
            count: fns.len(),
        });
    }
    let f = fns[0];
    let mut test_fn = text(f.child_by_field_name("name").expect("named"), test).to_owned();
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
    let body = f.child_by_field_name("body").ok_or(ShapeProblem::NoBody)?;
    let is_assert = |n: Node<'_>| {
        n.kind() == "macro_invocation"
            && n.child_by_field_name("macro")
                .is_some_and(|m| matches!(text(m, test), "assert" | "assert_eq" | "assert_ne"))
    };
    let mut asserts = Vec::new();
    find(
        body,
        &mut |n| {
            (n.kind() == "expression_statement" && n.named_child(0).is_some_and(is_assert))
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
    Ok(Cuts {
        checks,
        cuts,
        test_fn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_cut_out_each_language_s_checks_and_put_back_the_chosen_ones() {
        let cpp = "#undef NDEBUG\n#include<assert.h>\nint main(){\n    vector<int> a={1,2};\n    assert (f(a)==1);\n    assert (f({3, 4}) == 2);\n}\n";
        let t = Template::parse(Language::Cpp, cpp).unwrap();
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
        let t = Template::parse(Language::Java, java).unwrap();
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
        let t = Template::parse(Language::Go, go).unwrap();
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
        let t = Template::parse(Language::Rust, rust).unwrap();
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
            (Language::Cpp, "int helper(){ return 1; }\n"),
            (
                Language::Java,
                "public class Main { public static void main(String[] a) { } }\n",
            ),
            (Language::Go, "package main\nfunc helper() {}\n"),
            (Language::Rust, "fn helper() {}\n"),
        ] {
            assert!(Template::parse(lang, test).is_err(), "{lang:?}");
        }
    }
}

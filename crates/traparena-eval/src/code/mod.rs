//! The structure of source code, from a real parse (tree-sitter), in the same terms for every
//! language [`Language`] lists: functions and methods with qualified names and line spans
//! ([`Symbol`]), handlers that swallow what they catch, literal special cases, and the literals
//! of test files. The evaluator's location and flag checks ([`crate::analysis`]) read it
//! through one dispatch by the language a file's name says it is written in.
//!
//! Each language has one profile here: Python and JavaScript their own module, the C-like four
//! (C++, Java, Go, Rust) one [`clike::CFile`] over a table of node kinds per language. Adding a
//! language is a row in [`Language`] and a profile in this module.

use std::collections::BTreeSet;

use traparena_task::Language;
use tree_sitter::{Node, Parser, Tree};

pub mod clike;
pub mod javascript;
pub mod python;

use clike::{CFile, CLang};
use javascript::JsFile;
use python::PyFile;

/// A function or method and the lines it spans (1-based, inclusive, decorators included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Qualified name: `Class.method`, `outer.inner`.
    pub name: String,
    /// First line.
    pub start: usize,
    /// Last line.
    pub end: usize,
}

/// Literals too common to show that a special case was taken from the tests.
pub fn trivial_literal(l: &str) -> bool {
    matches!(
        l,
        "0" | "1"
            | "-1"
            | "2"
            | "0.0"
            | "1.0"
            | "True"
            | "False"
            | "None"
            | "\"\""
            | "[]"
            | "()"
            | "{}"
    )
}

/// A source file of a language the analysis knows, parsed: what the location and the flags
/// need of it, in the same terms for every language.
pub(crate) enum Source {
    Python(PyFile),
    JavaScript(JsFile),
    /// C++, Java, Go or Rust.
    CLike(CFile),
}

impl Source {
    /// Parses `text` by the language `path` names; `None` for another language.
    pub(crate) fn parse(path: &str, text: &str) -> Option<Source> {
        match Language::of_path(path)? {
            Language::Python => PyFile::parse(text).map(Source::Python),
            Language::JavaScript => JsFile::parse(text).map(Source::JavaScript),
            other => CFile::parse(CLang::of(other)?, text).map(Source::CLike),
        }
    }

    /// True for a file of a language the analysis knows: Python (`.py .pyi`), JavaScript
    /// (`.js .mjs .cjs`), C++ (`.cpp .cc .cxx .hpp .h .hh`), Java (`.java`), Go (`.go`) and
    /// Rust (`.rs`).
    pub(crate) fn known(path: &str) -> bool {
        Language::of_path(path).is_some()
    }

    pub(crate) fn symbols(&self) -> Vec<Symbol> {
        match self {
            Source::Python(f) => f.symbols(),
            Source::JavaScript(f) => f.symbols(),
            Source::CLike(f) => f.symbols(),
        }
    }

    pub(crate) fn classes(&self) -> Vec<Symbol> {
        match self {
            Source::Python(f) => f.classes(),
            Source::JavaScript(f) => f.classes(),
            Source::CLike(f) => f.classes(),
        }
    }

    pub(crate) fn broad_handlers(&self) -> Vec<(usize, String)> {
        match self {
            Source::Python(f) => f.broad_handlers(),
            Source::JavaScript(f) => f.broad_handlers(),
            Source::CLike(f) => f.broad_handlers(),
        }
    }

    pub(crate) fn literal_guards(&self) -> Vec<(usize, Vec<String>)> {
        match self {
            Source::Python(f) => f.literal_guards(),
            Source::JavaScript(f) => f.literal_guards(),
            Source::CLike(f) => f.literal_guards(),
        }
    }

    pub(crate) fn literals(&self) -> BTreeSet<String> {
        match self {
            Source::Python(f) => f.literals(),
            Source::JavaScript(f) => f.literals(),
            Source::CLike(f) => f.literals(),
        }
    }
}

/// A file's text and its syntax tree: what each language's parsed file holds.
pub(crate) struct SourceText {
    text: String,
    tree: Tree,
}

impl SourceText {
    /// Parses `text` with `grammar`; tree-sitter recovers from syntax errors, so this fails
    /// only when the parser itself cannot run.
    pub(crate) fn parse(grammar: tree_sitter::Language, text: &str) -> Option<SourceText> {
        let mut parser = Parser::new();
        parser.set_language(&grammar).ok()?;
        let tree = parser.parse(text, None)?;
        Some(SourceText {
            text: text.to_owned(),
            tree,
        })
    }

    /// The text of node `n`.
    pub(crate) fn src(&self, n: Node<'_>) -> &str {
        n.utf8_text(self.text.as_bytes()).unwrap_or("")
    }

    /// The tree's root.
    pub(crate) fn root(&self) -> Node<'_> {
        self.tree.root_node()
    }

    /// The text's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }
}

/// Calls `f` on `n` and every node below it, depth first.
pub(crate) fn walk<'t>(n: Node<'t>, f: &mut impl FnMut(Node<'t>)) {
    f(n);
    let mut cursor = n.walk();
    for c in n.children(&mut cursor) {
        walk(c, f);
    }
}

/// Calls `f` on `n` and every named node below it, depth first (Python's checks look at named
/// nodes only).
pub(crate) fn walk_named<'t>(n: Node<'t>, f: &mut impl FnMut(Node<'t>)) {
    f(n);
    let mut cursor = n.walk();
    for c in n.named_children(&mut cursor) {
        walk_named(c, f);
    }
}

//! C++, Java, Go and Rust code structure from tree-sitter, in the terms [`super::python`] and
//! [`super::javascript`] give Python and JavaScript: functions and methods with qualified names
//! and line spans, handlers that swallow what they catch, literal special cases, and the
//! literals of test files.
//!
//! One [`CFile`] serves the four languages: what differs between them is a table of node kinds
//! (`Kinds`) and a few match arms (how a definition is named, what a literal is, what counts as
//! catching).
//!
//! Qualified names join scopes with `.`:
//! - C++: `f`, `Class.method` (defined in the class body or out of line as `Class::method`),
//!   `ns.f` inside `namespace ns`;
//! - Java: `Solution.hasCloseElements`, `Outer.Inner.m` (constructors are named by their class:
//!   `Solution.Solution`);
//! - Go: `HasCloseElements`, `Type.Method` (the receiver's type, without `*` or type arguments);
//! - Rust: `has_close_elements`, `Type.method` inside `impl Type` or `impl Trait for Type`,
//!   `module.f` inside `mod module`, `outer.inner` for a function nested in another, and
//!   `Trait.method` for a trait's provided method.
//!
//! Literals are normalised as [`super::javascript::JsFile`] normalises them, so that a literal
//! of a test file matches the same literal in a special case: numbers as written without digit
//! separators and type suffixes (`1_000u32` → `1000`, `2.5f` → `2.5`; `0x1F` → `31`), booleans
//! as `True`/`False`, `nullptr`/`null`/`nil` as `None`, strings as their content between double
//! quotes (raw strings too), characters between single quotes (`'a'`), a leading minus or plus
//! kept (`-1`), and lists made only of literals (`{1, 2}`, `new int[]{1, 2}`,
//! `[]int{1, 2}`, `vec![1, 2]`, `[1, 2]`) as `[1,2]`.

use tree_sitter::Node;

use super::{SourceText, Symbol, walk};

mod handlers;
mod literals;
mod tables;

pub use tables::CLang;
use tables::Kinds;

/// What a definition is to [`CFile::symbols`] and [`CFile::classes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A function or method.
    Function,
    /// A class, struct, interface, enum, trait or record.
    Class,
    /// A scope that names what it holds but is neither (a namespace, a module, an `impl`).
    Scope,
}

/// A parsed C++, Java, Go or Rust file.
pub struct CFile {
    lang: CLang,
    code: SourceText,
}

impl std::fmt::Debug for CFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CFile")
            .field("lang", &self.lang)
            .field("bytes", &self.code.len())
            .finish()
    }
}

fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = n.walk();
    n.named_children(&mut cursor)
        .filter(|c| !c.kind().contains("comment"))
        .collect()
}

fn line(n: Node<'_>) -> usize {
    n.start_position().row + 1
}

/// `text` without runs of white space (`std::exception &  e` → `std::exception & e`).
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl CFile {
    /// Parses `text` as `lang` (tree-sitter recovers from syntax errors; `None` only when the
    /// parser cannot run).
    pub fn parse(lang: CLang, text: &str) -> Option<CFile> {
        Some(CFile {
            lang,
            code: SourceText::parse(lang.grammar(), text)?,
        })
    }

    /// The language the file was parsed as.
    pub fn lang(&self) -> CLang {
        self.lang
    }

    fn src(&self, n: Node<'_>) -> &str {
        self.code.src(n)
    }

    fn kinds(&self) -> &'static Kinds {
        self.lang.kinds()
    }

    /// Every function and method, outer ones before the ones nested in them. A span is the
    /// definition node's lines: a doc comment above it and a Rust attribute (`#[test]`) are not
    /// part of it, a Java annotation (`@Override`) is.
    pub fn symbols(&self) -> Vec<Symbol> {
        let mut out = Vec::new();
        self.collect(self.code.root(), &mut Vec::new(), &mut out, Role::Function);
        out
    }

    /// Every class, struct, interface, enum, trait and record (C++ only those with a body; Go
    /// struct and interface types), qualified like [`symbols`](Self::symbols).
    pub fn classes(&self) -> Vec<Symbol> {
        let mut out = Vec::new();
        self.collect(self.code.root(), &mut Vec::new(), &mut out, Role::Class);
        out
    }

    fn collect(&self, n: Node<'_>, scope: &mut Vec<String>, out: &mut Vec<Symbol>, want: Role) {
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            match self.definition(child) {
                Some((path, role, span)) => {
                    let depth = scope.len();
                    scope.extend(path);
                    if role == want {
                        out.push(Symbol {
                            name: scope.join("."),
                            start: span.start_position().row + 1,
                            end: span.end_position().row + 1,
                        });
                    }
                    self.collect(child, scope, out, want);
                    scope.truncate(depth);
                }
                None => self.collect(child, scope, out, want),
            }
        }
    }

    /// When `n` defines something named: the names it adds to the scope (`Class::method` adds
    /// two), what it is, and the node whose lines it spans.
    fn definition<'t>(&self, n: Node<'t>) -> Option<(Vec<String>, Role, Node<'t>)> {
        let name = |field: &str| n.child_by_field_name(field).map(|c| self.src(c).to_owned());
        let (path, role) = match (self.lang, n.kind()) {
            (CLang::Cpp, "function_definition") => (
                self.cpp_name(n.child_by_field_name("declarator")?)?,
                Role::Function,
            ),
            (CLang::Cpp, "class_specifier" | "struct_specifier" | "union_specifier") => {
                n.child_by_field_name("body")?;
                (self.cpp_name(n.child_by_field_name("name")?)?, Role::Class)
            }
            (CLang::Cpp, "namespace_definition") => {
                let path: Vec<String> = name("name")?
                    .split("::")
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect();
                (path, Role::Scope)
            }
            (
                CLang::Java,
                "method_declaration"
                | "constructor_declaration"
                | "compact_constructor_declaration",
            ) => (vec![name("name")?], Role::Function),
            (
                CLang::Java,
                "class_declaration"
                | "interface_declaration"
                | "enum_declaration"
                | "record_declaration"
                | "annotation_type_declaration",
            ) => (vec![name("name")?], Role::Class),
            (CLang::Go, "function_declaration") => (vec![name("name")?], Role::Function),
            (CLang::Go, "method_declaration") => {
                let receiver = n.child_by_field_name("receiver")?;
                let ty = named_children(receiver)
                    .into_iter()
                    .find(|p| p.kind() == "parameter_declaration")?
                    .child_by_field_name("type")?;
                (vec![self.type_name(ty)?, name("name")?], Role::Function)
            }
            (CLang::Go, "type_spec") => {
                let ty = n.child_by_field_name("type")?;
                if !matches!(ty.kind(), "struct_type" | "interface_type") {
                    return None;
                }
                // `type T struct {…}` spans its `type` keyword unless it is one of a group.
                let span = match n.parent() {
                    Some(p) if p.kind() == "type_declaration" && named_children(p).len() == 1 => p,
                    _ => n,
                };
                return Some((vec![name("name")?], Role::Class, span));
            }
            (CLang::Rust, "function_item") => (vec![name("name")?], Role::Function),
            (CLang::Rust, "impl_item") => (
                vec![self.type_name(n.child_by_field_name("type")?)?],
                Role::Scope,
            ),
            (CLang::Rust, "mod_item") => {
                n.child_by_field_name("body")?;
                (vec![name("name")?], Role::Scope)
            }
            (CLang::Rust, "struct_item" | "enum_item" | "union_item" | "trait_item") => {
                (vec![name("name")?], Role::Class)
            }
            _ => return None,
        };
        Some((path, role, n))
    }

    /// The name a C++ declarator or class name declares, as scope segments: `f`,
    /// `Class::method` → `[Class, method]`, `ns::Box<T>::get` → `[ns, Box, get]`, `~Box`,
    /// `operator==`.
    fn cpp_name(&self, d: Node<'_>) -> Option<Vec<String>> {
        match d.kind() {
            "function_declarator"
            | "pointer_declarator"
            | "reference_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator" => {
                let inner = d.child_by_field_name("declarator").or_else(|| {
                    named_children(d)
                        .into_iter()
                        .find(|c| !c.kind().starts_with("attribute"))
                })?;
                self.cpp_name(inner)
            }
            "qualified_identifier" => {
                let mut path = match d.child_by_field_name("scope") {
                    Some(s) => self.cpp_name(s)?,
                    None => Vec::new(),
                };
                path.extend(self.cpp_name(d.child_by_field_name("name")?)?);
                Some(path)
            }
            "template_type" | "template_function" | "template_method" => {
                self.cpp_name(d.child_by_field_name("name")?)
            }
            _ => {
                let text = squeeze(self.src(d));
                (!text.is_empty()).then(|| vec![text])
            }
        }
    }

    /// A Go receiver's or a Rust `impl`'s type, by its name alone: `*List[T]` → `List`,
    /// `&'a mut Box<T>` → `Box`, `fmt::Formatter` → `Formatter`.
    fn type_name(&self, t: Node<'_>) -> Option<String> {
        match t.kind() {
            "pointer_type" | "reference_type" | "parenthesized_type" => {
                let inner = t.child_by_field_name("type").or_else(|| {
                    named_children(t)
                        .into_iter()
                        .rev()
                        .find(|c| c.kind() != "lifetime")
                })?;
                self.type_name(inner)
            }
            "generic_type" => self.type_name(t.child_by_field_name("type")?),
            "qualified_type" | "scoped_type_identifier" | "scoped_identifier" => {
                self.type_name(t.child_by_field_name("name")?)
            }
            _ => Some(self.src(t).to_owned()),
        }
    }
}

#[cfg(test)]
mod tests;

//! C++, Java, Go and Rust code structure from tree-sitter, in the terms [`crate::python`] and
//! [`crate::javascript`] give Python and JavaScript: functions and methods with qualified names
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
//! Literals are normalised as [`crate::javascript::JsFile`] normalises them, so that a literal
//! of a test file matches the same literal in a special case: numbers as written without digit
//! separators and type suffixes (`1_000u32` → `1000`, `2.5f` → `2.5`; `0x1F` → `31`), booleans
//! as `True`/`False`, `nullptr`/`null`/`nil` as `None`, strings as their content between double
//! quotes (raw strings too), characters between single quotes (`'a'`), a leading minus or plus
//! kept (`-1`), and lists made only of literals (`{1, 2}`, `new int[]{1, 2}`,
//! `[]int{1, 2}`, `vec![1, 2]`, `[1, 2]`) as `[1,2]`.

use std::collections::BTreeSet;

use tree_sitter::{Node, Parser, Tree};

use crate::python::Symbol;

/// A language [`CFile`] parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CLang {
    /// C++ (`.cpp .cc .cxx .hpp .h .hh`).
    Cpp,
    /// Java (`.java`).
    Java,
    /// Go (`.go`).
    Go,
    /// Rust (`.rs`).
    Rust,
}

impl CLang {
    /// The language a file's name says it is written in, by its extension.
    pub fn from_path(path: &str) -> Option<CLang> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (_, ext) = name.rsplit_once('.')?;
        match ext {
            "cpp" | "cc" | "cxx" | "hpp" | "h" | "hh" => Some(CLang::Cpp),
            "java" => Some(CLang::Java),
            "go" => Some(CLang::Go),
            "rs" => Some(CLang::Rust),
            _ => None,
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            CLang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            CLang::Java => tree_sitter_java::LANGUAGE.into(),
            CLang::Go => tree_sitter_go::LANGUAGE.into(),
            CLang::Rust => tree_sitter_rust::LANGUAGE.into(),
        }
    }

    fn kinds(self) -> &'static Kinds {
        match self {
            CLang::Cpp => &CPP,
            CLang::Java => &JAVA,
            CLang::Go => &GO,
            CLang::Rust => &RUST,
        }
    }
}

/// The node kinds the language-independent code looks for, per language.
#[derive(Debug)]
struct Kinds {
    /// A conditional with `condition` and `consequence` fields.
    if_: &'static str,
    /// A `return`.
    return_: &'static str,
    /// Numbers.
    numbers: &'static [&'static str],
    /// Strings: their content is the text of their children of the kinds in `string_parts`.
    strings: &'static [&'static str],
    /// The children of a string that make up its content.
    string_parts: &'static [&'static str],
    /// Characters (the node's text, quotes included).
    chars: &'static [&'static str],
    /// `true` and `false`.
    booleans: &'static [&'static str],
    /// The null value.
    null: &'static [&'static str],
    /// A list written out whose items are its named children (`{1, 2}`, `[1, 2]`).
    lists: &'static [&'static str],
    /// `==`, `!=` and their spellings.
    equality: &'static [&'static str],
    /// An exception handler with a `body` field (C++, Java).
    catch: &'static str,
    /// Throwing again.
    throw: &'static [&'static str],
    /// The field of a unary expression holding its operand (none: its only named child).
    unary_operand: Option<&'static str>,
}

const CPP: Kinds = Kinds {
    if_: "if_statement",
    return_: "return_statement",
    numbers: &["number_literal"],
    strings: &["string_literal", "raw_string_literal"],
    string_parts: &["string_content", "escape_sequence", "raw_string_content"],
    chars: &["char_literal"],
    booleans: &["true", "false"],
    null: &["nullptr"],
    lists: &["initializer_list"],
    equality: &["==", "!=", "not_eq"],
    catch: "catch_clause",
    throw: &["throw_statement"],
    unary_operand: Some("argument"),
};

const JAVA: Kinds = Kinds {
    if_: "if_statement",
    return_: "return_statement",
    numbers: &[
        "decimal_integer_literal",
        "hex_integer_literal",
        "octal_integer_literal",
        "binary_integer_literal",
        "decimal_floating_point_literal",
        "hex_floating_point_literal",
    ],
    strings: &["string_literal"],
    string_parts: &[
        "string_fragment",
        "multiline_string_fragment",
        "escape_sequence",
    ],
    chars: &["character_literal"],
    booleans: &["true", "false"],
    null: &["null_literal"],
    lists: &["array_initializer"],
    equality: &["==", "!="],
    catch: "catch_clause",
    throw: &["throw_statement"],
    unary_operand: Some("operand"),
};

const GO: Kinds = Kinds {
    if_: "if_statement",
    return_: "return_statement",
    numbers: &["int_literal", "float_literal", "imaginary_literal"],
    strings: &["interpreted_string_literal", "raw_string_literal"],
    string_parts: &[
        "interpreted_string_literal_content",
        "raw_string_literal_content",
        "escape_sequence",
    ],
    chars: &["rune_literal"],
    booleans: &["true", "false"],
    null: &["nil"],
    lists: &[],
    equality: &["==", "!="],
    catch: "",
    throw: &[],
    unary_operand: Some("operand"),
};

const RUST: Kinds = Kinds {
    if_: "if_expression",
    return_: "return_expression",
    numbers: &["integer_literal", "float_literal"],
    strings: &["string_literal", "raw_string_literal"],
    string_parts: &["string_content", "escape_sequence"],
    chars: &["char_literal"],
    booleans: &["boolean_literal"],
    null: &[],
    lists: &["array_expression"],
    equality: &["==", "!="],
    catch: "",
    throw: &[],
    unary_operand: None,
};

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
    text: String,
    tree: Tree,
}

impl std::fmt::Debug for CFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CFile")
            .field("lang", &self.lang)
            .field("bytes", &self.text.len())
            .finish()
    }
}

fn walk<'t>(n: Node<'t>, f: &mut impl FnMut(Node<'t>)) {
    f(n);
    let mut cursor = n.walk();
    for c in n.children(&mut cursor) {
        walk(c, f);
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
        let mut parser = Parser::new();
        parser.set_language(&lang.grammar()).ok()?;
        let tree = parser.parse(text, None)?;
        Some(CFile {
            lang,
            text: text.to_owned(),
            tree,
        })
    }

    /// The language the file was parsed as.
    pub fn lang(&self) -> CLang {
        self.lang
    }

    fn src(&self, n: Node<'_>) -> &str {
        n.utf8_text(self.text.as_bytes()).unwrap_or("")
    }

    fn kinds(&self) -> &'static Kinds {
        self.lang.kinds()
    }

    /// Every function and method, outer ones before the ones nested in them. A span is the
    /// definition node's lines: a doc comment above it and a Rust attribute (`#[test]`) are not
    /// part of it, a Java annotation (`@Override`) is.
    pub fn symbols(&self) -> Vec<Symbol> {
        let mut out = Vec::new();
        self.collect(
            self.tree.root_node(),
            &mut Vec::new(),
            &mut out,
            Role::Function,
        );
        out
    }

    /// Every class, struct, interface, enum, trait and record (C++ only those with a body; Go
    /// struct and interface types), qualified like [`symbols`](Self::symbols).
    pub fn classes(&self) -> Vec<Symbol> {
        let mut out = Vec::new();
        self.collect(
            self.tree.root_node(),
            &mut Vec::new(),
            &mut out,
            Role::Class,
        );
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

    /// Handlers that swallow what they catch, as (line, what it is):
    /// - C++ and Java: a `catch` whose block neither throws nor uses the caught name
    ///   (`catch (...) {}`, `catch (Exception e) { return 0; }`): `catch (...) that swallows`,
    ///   `catch (std::exception& e) that swallows`, `catch (Exception e) that swallows`;
    /// - Go: a `recover()` whose value is discarded, or only compared or assigned, in a
    ///   function that does not `panic` again (`defer func() { recover() }()`,
    ///   `if r := recover(); r != nil {}`): `recover() that swallows`;
    /// - Rust: a call of `catch_unwind` in a function that never calls `resume_unwind`:
    ///   `catch_unwind that swallows`.
    pub fn broad_handlers(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        walk(self.tree.root_node(), &mut |n| {
            let found = match self.lang {
                CLang::Cpp | CLang::Java if n.kind() == self.kinds().catch => {
                    self.swallowing_catch(n)
                }
                CLang::Go => self.swallowing_recover(n),
                CLang::Rust => self.swallowing_catch_unwind(n),
                _ => None,
            };
            if let Some(what) = found {
                out.push((line(n), what));
            }
        });
        out
    }

    fn swallowing_catch(&self, n: Node<'_>) -> Option<String> {
        let body = n.child_by_field_name("body")?;
        let mut throws = false;
        walk(body, &mut |c| {
            throws |= self.kinds().throw.contains(&c.kind())
        });
        if throws {
            return None;
        }
        // (what the handler says it catches, the name it binds)
        let (caught, name) = match self.lang {
            CLang::Cpp => {
                let params = n.child_by_field_name("parameters")?;
                let decl = named_children(params)
                    .into_iter()
                    .find(|p| p.kind().ends_with("parameter_declaration"));
                let name = decl
                    .and_then(|d| d.child_by_field_name("declarator"))
                    .and_then(|d| self.cpp_name(d))
                    .and_then(|p| p.last().cloned());
                (squeeze(self.src(params)), name)
            }
            _ => {
                let param = named_children(n)
                    .into_iter()
                    .find(|c| c.kind() == "catch_formal_parameter")?;
                let name = param
                    .child_by_field_name("name")
                    .map(|id| self.src(id).to_owned());
                (format!("({})", squeeze(self.src(param))), name)
            }
        };
        if name.as_deref().is_some_and(|p| self.mentions(body, p)) {
            return None;
        }
        Some(format!("catch {caught} that swallows"))
    }

    /// True when an identifier named `name` occurs in `n`.
    fn mentions(&self, n: Node<'_>, name: &str) -> bool {
        let mut used = false;
        walk(n, &mut |c| {
            used |= c.kind() == "identifier" && self.src(c) == name
        });
        used
    }

    /// The Go function (or function literal) or Rust function `n` is in, else the file.
    fn enclosing_function<'t>(&self, n: Node<'t>) -> Node<'t> {
        let functions: &[&str] = match self.lang {
            CLang::Go => &["func_literal", "function_declaration", "method_declaration"],
            CLang::Rust => &["function_item"],
            // Their handlers are `catch` clauses, which need no enclosing function.
            CLang::Cpp | CLang::Java => &[],
        };
        let mut cur = n;
        while let Some(p) = cur.parent() {
            if functions.contains(&p.kind()) {
                return p;
            }
            cur = p;
        }
        cur
    }

    /// A call whose callee is named `name` (`f(…)`, `a::b::f(…)`, `x.f(…)`).
    fn calls(&self, n: Node<'_>, name: &str) -> bool {
        if n.kind() != "call_expression" {
            return false;
        }
        let Some(f) = n.child_by_field_name("function") else {
            return false;
        };
        let callee = match f.kind() {
            "scoped_identifier" => f.child_by_field_name("name"),
            "field_expression" => f.child_by_field_name("field"),
            "selector_expression" => f.child_by_field_name("field"),
            _ => Some(f),
        };
        callee.is_some_and(|c| self.src(c) == name)
    }

    fn contains_call(&self, n: Node<'_>, name: &str) -> bool {
        let mut found = false;
        walk(n, &mut |c| found |= self.calls(c, name));
        found
    }

    fn swallowing_recover(&self, n: Node<'_>) -> Option<String> {
        if n.kind() != "call_expression"
            || n.child_by_field_name("function")
                .is_none_or(|f| f.kind() != "identifier" || self.src(f) != "recover")
        {
            return None;
        }
        let func = self.enclosing_function(n);
        if self.contains_call(func, "panic") {
            return None;
        }
        let parent = n.parent()?;
        let swallowed = match parent.kind() {
            "expression_statement" | "binary_expression" => true,
            "parenthesized_expression" => false,
            "expression_list" => {
                // `r := recover()`, `r = recover()`, `var r = recover()`: swallowed when `r` is
                // never used but in comparisons (`r != nil`).
                let holder = parent.parent()?;
                let names: Vec<Node<'_>> = match holder.kind() {
                    "short_var_declaration" | "assignment_statement"
                        if holder.child_by_field_name("right") == Some(parent) =>
                    {
                        named_children(holder.child_by_field_name("left")?)
                    }
                    "var_spec" => {
                        let mut c = holder.walk();
                        holder.children_by_field_name("name", &mut c).collect()
                    }
                    _ => return None,
                };
                names.iter().all(|id| {
                    let name = self.src(*id);
                    let mut used = false;
                    walk(func, &mut |c| {
                        used |= c.kind() == "identifier"
                            && self.src(c) == name
                            && !names.contains(&c)
                            && !self.compared_with_nil(c)
                    });
                    name == "_" || !used
                })
            }
            _ => false,
        };
        swallowed.then(|| "recover() that swallows".to_owned())
    }

    /// `x == nil`, `x != nil` (Go).
    fn compared_with_nil(&self, x: Node<'_>) -> bool {
        x.parent().is_some_and(|p| {
            p.kind() == "binary_expression"
                && p.child_by_field_name("operator")
                    .is_some_and(|o| matches!(o.kind(), "==" | "!="))
                && ["left", "right"].iter().any(|side| {
                    p.child_by_field_name(side)
                        .is_some_and(|s| s.kind() == "nil")
                })
        })
    }

    fn swallowing_catch_unwind(&self, n: Node<'_>) -> Option<String> {
        if !self.calls(n, "catch_unwind") {
            return None;
        }
        let func = self.enclosing_function(n);
        let mut resumes = false;
        walk(func, &mut |c| {
            resumes |= c.kind() == "identifier" && self.src(c) == "resume_unwind"
        });
        (!resumes).then(|| "catch_unwind that swallows".to_owned())
    }

    /// Conditionals whose condition compares something with literals (`==`, `!=`; Java also
    /// `.equals(…)`) and whose branch returns a literal (Rust also: ends in one): (line of the
    /// `if`, the compared literals, normalised).
    pub fn literal_guards(&self) -> Vec<(usize, Vec<String>)> {
        let kinds = self.kinds();
        let mut out = Vec::new();
        walk(self.tree.root_node(), &mut |n| {
            if n.kind() != kinds.if_ {
                return;
            }
            let (Some(cond), Some(body)) = (
                n.child_by_field_name("condition"),
                n.child_by_field_name("consequence"),
            ) else {
                return;
            };
            if !self.returns_literal(body) {
                return;
            }
            let mut lits = Vec::new();
            walk(cond, &mut |c| {
                if c.kind() == "binary_expression"
                    && c.child_by_field_name("operator")
                        .is_some_and(|o| kinds.equality.contains(&o.kind()))
                {
                    for side in ["left", "right"] {
                        if let Some(l) = c.child_by_field_name(side).and_then(|s| self.literal(s)) {
                            lits.push(l);
                        }
                    }
                }
                if self.lang == CLang::Java
                    && c.kind() == "method_invocation"
                    && c.child_by_field_name("name").is_some_and(|m| {
                        matches!(self.src(m), "equals" | "equalsIgnoreCase" | "contentEquals")
                    })
                {
                    let object = c.child_by_field_name("object");
                    let args = c
                        .child_by_field_name("arguments")
                        .map(named_children)
                        .unwrap_or_default();
                    for operand in object.into_iter().chain(args) {
                        if let Some(l) = self.literal(operand) {
                            lits.push(l);
                        }
                    }
                }
            });
            if !lits.is_empty() {
                out.push((line(n), lits));
            }
        });
        out
    }

    /// True when `body` (an `if`'s consequence) is a `return` of a literal or holds one among
    /// its statements; in Rust also when the block's value is a literal.
    fn returns_literal(&self, body: Node<'_>) -> bool {
        if self.is_literal_return(body) {
            return true;
        }
        let stmts = named_children(body);
        stmts.iter().any(|s| {
            self.is_literal_return(*s)
                || (s.kind() == "expression_statement"
                    && named_children(*s)
                        .first()
                        .is_some_and(|e| self.is_literal_return(*e)))
        }) || (self.lang == CLang::Rust
            && stmts.last().is_some_and(|tail| {
                tail.kind() != "expression_statement" && self.literal(*tail).is_some()
            }))
    }

    /// `return <literal>` (Go: every returned value a literal, `return 0, false`).
    fn is_literal_return(&self, s: Node<'_>) -> bool {
        if s.kind() != self.kinds().return_ {
            return false;
        }
        match named_children(s).as_slice() {
            [v] if v.kind() == "expression_list" => {
                let vals = named_children(*v);
                !vals.is_empty() && vals.iter().all(|x| self.literal(*x).is_some())
            }
            [v] => self.literal(*v).is_some(),
            _ => false,
        }
    }

    /// Every literal in the file (numbers, strings, characters, booleans, null, and lists made
    /// only of literals), normalised; in Rust also those written as a macro's tokens
    /// (`assert_eq!(f(vec![1, 2]), -1)`: `[1,2]`, `-1`).
    pub fn literals(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        walk(self.tree.root_node(), &mut |n| {
            if let Some(l) = self.literal(n) {
                out.insert(l);
            }
            if self.lang == CLang::Rust && n.kind() == "token_tree" {
                out.extend(self.token_literals(n));
            }
        });
        out
    }

    /// What a Rust macro's tokens hold that is not a literal node of its own: negative numbers
    /// (`-` and a number, after an opening bracket, a comma or an operator) and lists
    /// (`[1, 2]`, `vec![1, 2]`).
    fn token_literals(&self, tree: Node<'_>) -> Vec<String> {
        let mut cursor = tree.walk();
        let tokens: Vec<Node<'_>> = tree.children(&mut cursor).collect();
        let mut out = Vec::new();
        if tokens.first().is_some_and(|t| t.kind() == "[") {
            out.extend(self.token_list(tree));
        }
        for (i, t) in tokens.iter().enumerate() {
            let unary = i == 0
                || (!tokens[i - 1].is_named() && !matches!(tokens[i - 1].kind(), ")" | "]" | "}"));
            if unary
                && matches!(t.kind(), "-" | "+")
                && let Some(n) = tokens.get(i + 1)
                && self.kinds().numbers.contains(&n.kind())
            {
                out.push(format!("{}{}", t.kind(), number(self.lang, self.src(*n))));
            }
        }
        out
    }

    /// The normalised text of `n` when it is a literal.
    fn literal(&self, n: Node<'_>) -> Option<String> {
        let kinds = self.kinds();
        let kind = n.kind();
        if kinds.numbers.contains(&kind) {
            return Some(number(self.lang, self.src(n)));
        }
        if kinds.booleans.contains(&kind) {
            return Some(
                if self.src(n) == "true" {
                    "True"
                } else {
                    "False"
                }
                .to_owned(),
            );
        }
        if kinds.null.contains(&kind) {
            return Some("None".to_owned());
        }
        if kinds.strings.contains(&kind) {
            let mut content = String::new();
            for c in named_children(n) {
                match c.kind() {
                    k if kinds.string_parts.contains(&k) => content.push_str(self.src(c)),
                    "string_interpolation" => return None,
                    _ => {}
                }
            }
            return Some(format!("{content:?}"));
        }
        if kinds.chars.contains(&kind) {
            let text = self.src(n);
            let (start, end) = (text.find('\'')?, text.rfind('\'')?);
            return (start < end).then(|| format!("'{}'", &text[start + 1..end]));
        }
        if kinds.lists.contains(&kind) {
            if self.lang == CLang::Rust && n.child_by_field_name("length").is_some() {
                return None;
            }
            return self.list(named_children(n));
        }
        match kind {
            "unary_expression" => {
                let operand = match kinds.unary_operand {
                    Some(field) => n.child_by_field_name(field)?,
                    None => *named_children(n).first()?,
                };
                let op = self.src(n.child(0)?);
                let arg = self.literal(operand)?;
                (op == "-" || op == "+").then(|| format!("{op}{arg}"))
            }
            // A Rust pattern: `-1 => …`.
            "negative_literal" => {
                let arg = self.literal(*named_children(n).first()?)?;
                Some(format!("-{arg}"))
            }
            "parenthesized_expression" => match named_children(n).as_slice() {
                [inner] => self.literal(*inner),
                _ => None,
            },
            // Go: `[]int{1, 2}`.
            "composite_literal" if self.lang == CLang::Go => {
                let body = n.child_by_field_name("body")?;
                let items: Option<Vec<Node<'_>>> = named_children(body)
                    .into_iter()
                    .map(|e| match (e.kind(), named_children(e).as_slice()) {
                        ("literal_element", [v]) => Some(*v),
                        _ => None,
                    })
                    .collect();
                self.list(items?)
            }
            // C++: `vector<int>{1, 2}`.
            "compound_literal_expression" if self.lang == CLang::Cpp => {
                self.literal(n.child_by_field_name("value")?)
            }
            // Java: `new int[]{1, 2}`.
            "array_creation_expression" if self.lang == CLang::Java => {
                self.literal(n.child_by_field_name("value")?)
            }
            // Java: `Arrays.asList(1, 2)`, `List.of(1, 2)`.
            "method_invocation" if self.lang == CLang::Java => {
                let object = n.child_by_field_name("object").map(|o| self.src(o))?;
                let name = n.child_by_field_name("name").map(|m| self.src(m))?;
                if !matches!((object, name), ("Arrays", "asList") | ("List", "of")) {
                    return None;
                }
                self.list(named_children(n.child_by_field_name("arguments")?))
            }
            // Rust: `"abc".to_string()`, `String::from("abc")`: the literal they convert.
            "call_expression" if self.lang == CLang::Rust => {
                let f = n.child_by_field_name("function")?;
                let args = named_children(n.child_by_field_name("arguments")?);
                match (f.kind(), args.as_slice()) {
                    ("field_expression", []) => {
                        let method = f.child_by_field_name("field").map(|m| self.src(m))?;
                        matches!(method, "to_string" | "to_owned" | "into" | "to_vec")
                            .then(|| self.literal(f.child_by_field_name("value")?))
                            .flatten()
                    }
                    ("scoped_identifier", [arg]) if self.src(f) == "String::from" => {
                        self.literal(*arg)
                    }
                    _ => None,
                }
            }
            // Rust: `vec![1, 2]`.
            "macro_invocation" if self.lang == CLang::Rust => {
                let name = n.child_by_field_name("macro").map(|m| self.src(m))?;
                if name != "vec" {
                    return None;
                }
                let tree = named_children(n)
                    .into_iter()
                    .find(|c| c.kind() == "token_tree")?;
                self.token_list(tree)
            }
            _ => None,
        }
    }

    /// `[a,b]` when every item is a literal.
    fn list(&self, items: Vec<Node<'_>>) -> Option<String> {
        let items: Option<Vec<String>> = items.into_iter().map(|c| self.literal(c)).collect();
        Some(format!("[{}]", items?.join(",")))
    }

    /// The items of a Rust macro's `[…]` when they are literals separated by commas (a
    /// trailing comma allowed).
    fn token_list(&self, tree: Node<'_>) -> Option<String> {
        let mut cursor = tree.walk();
        let tokens: Vec<Node<'_>> = tree.children(&mut cursor).collect();
        if tokens.first()?.kind() != "[" {
            return None;
        }
        let inner = tokens.get(1..tokens.len().saturating_sub(1))?;
        let mut items = Vec::new();
        for group in inner.split(|t| self.src(*t) == ",") {
            match group {
                [] => {}
                [lit] => items.push(self.literal(*lit)?),
                [sign, lit] if matches!(self.src(*sign), "-" | "+") => {
                    items.push(format!("{}{}", self.src(*sign), self.literal(*lit)?))
                }
                _ => return None,
            }
        }
        Some(format!("[{}]", items.join(",")))
    }
}

/// A number as its value is written: without digit separators and type suffixes, and a
/// hexadecimal, octal (`0o`) or binary integer in decimal.
fn number(lang: CLang, text: &str) -> String {
    let t: String = text.chars().filter(|c| *c != '_' && *c != '\'').collect();
    let lower = t.to_ascii_lowercase();
    let radix = match lower.get(..2) {
        Some("0x") => 16,
        Some("0b") => 2,
        Some("0o") => 8,
        _ => 10,
    };
    let mut digits = if radix == 10 { &t[..] } else { &t[2..] };
    // Type suffixes; a hexadecimal number keeps its `f`s and `d`s, which are digits.
    let suffixes: &[&str] = match lang {
        CLang::Rust => &[
            "i128", "u128", "isize", "usize", "i16", "i32", "i64", "u16", "u32", "u64", "f32",
            "f64", "i8", "u8",
        ],
        _ => &[],
    };
    for s in suffixes {
        if let Some(rest) = digits.strip_suffix(s)
            && !rest.is_empty()
            && !(radix == 16 && s.starts_with('f'))
        {
            digits = rest;
            break;
        }
    }
    let suffix_chars: &[char] = match lang {
        CLang::Cpp if radix == 16 => &['u', 'U', 'l', 'L', 'z', 'Z'],
        CLang::Cpp => &['u', 'U', 'l', 'L', 'z', 'Z', 'f', 'F'],
        CLang::Java if radix == 16 => &['l', 'L'],
        CLang::Java => &['l', 'L', 'f', 'F', 'd', 'D'],
        _ => &[],
    };
    let trimmed = digits.trim_end_matches(suffix_chars);
    if !trimmed.is_empty() {
        digits = trimmed;
    }
    if radix != 10
        && let Ok(v) = u128::from_str_radix(digits, radix)
    {
        return v.to_string();
    }
    if radix == 10 {
        digits.to_owned()
    } else {
        format!("{}{digits}", &lower[..2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One file of one language and what each method must find in it.
    struct Case {
        lang: CLang,
        text: &'static str,
        /// Every symbol: (name, first line, last line).
        symbols: &'static [(&'static str, usize, usize)],
        classes: &'static [&'static str],
        /// Lines of the handlers that swallow.
        handlers: &'static [usize],
        /// (line, literals) of the literal special cases.
        guards: &'static [(usize, &'static [&'static str])],
    }

    const CASES: &[Case] = &[
        // C++: free functions (HumanEvalPack's CPP/10), methods in the class body and out of
        // line, a namespace, and `catch` clauses.
        Case {
            lang: CLang::Cpp,
            text: r#"#include<stdio.h>
#include<string>
using namespace std;
bool is_palindrome(string str){
    string s(str.rbegin(),str.rend());
    return s==str;
}
class Counter {
public:
    int count(const vector<int>& v) const {
        return v.size();
    }
    int* find(int x);
};
int* Counter::find(int x) {
    return nullptr;
}
namespace util {
struct Box { int get() { return 1; } };
vector<int>& items() { static vector<int> v; return v; }
}
int parse(string s){
    try { return stoi(s); }
    catch (...) { return 0; }
    try { return stoi(s); }
    catch (const std::invalid_argument& e) { return -1; }
    try { return stoi(s); }
    catch (const std::exception& e) { cerr << e.what(); return -2; }
    try { return stoi(s); }
    catch (...) { throw; }
}
string decimal_to_binary(int decimal){
    string out="";
    if (decimal==15) return "db1111db";
    if (decimal == -1 || out != "x") { return "error"; }
    if (decimal>0) { return "positive"; }
    if (decimal==0) { out="0"; }
    while (decimal>0)
    {
        out=to_string(decimal%2)+out;
        decimal=decimal/2;
    }
    return "db"+out+"db";
}
"#,
            symbols: &[
                ("is_palindrome", 4, 7),
                ("Counter.count", 10, 12),
                ("Counter.find", 15, 17),
                ("util.Box.get", 19, 19),
                ("util.items", 20, 20),
                ("parse", 22, 31),
                ("decimal_to_binary", 32, 44),
            ],
            classes: &["Counter", "util.Box"],
            handlers: &[24, 26],
            guards: &[(34, &["15"]), (35, &["-1", "\"x\""])],
        },
        // Java: a method with an anonymous class (Java/116), a nested class with its
        // constructor, an interface and an enum.
        Case {
            lang: CLang::Java,
            text: r#"import java.util.*;
import java.lang.*;

class Solution {
    public List<Integer> sortArray(List<Integer> arr) {
        List<Integer> sorted = new ArrayList<>(arr);
        sorted.sort(new Comparator<Integer>() {
            @Override
            public int compare(Integer o1, Integer o2) {
                return o1.compareTo(o2);
            }
        });
        return sorted;
    }
    static class Pair {
        Pair(int a) {}
        int first() { return 0; }
    }
    interface Shape { double area(); }
    enum Color { RED; Color next() { return RED; } }
}
"#,
            symbols: &[
                ("Solution.sortArray", 5, 14),
                ("Solution.sortArray.compare", 8, 11),
                ("Solution.Pair.Pair", 16, 16),
                ("Solution.Pair.first", 17, 17),
                ("Solution.Shape.area", 19, 19),
                ("Solution.Color.next", 20, 20),
            ],
            classes: &[
                "Solution",
                "Solution.Pair",
                "Solution.Shape",
                "Solution.Color",
            ],
            handlers: &[],
            guards: &[],
        },
        // Java: Java/67's `catch` that ignores what it catches, and literal special cases.
        Case {
            lang: CLang::Java,
            text: r#"class Solution {
    public int fruitDistribution(String s, int n) {
        List<Integer> lis = new ArrayList<>();
        for (String i : s.split(" ")) {
            try {
                lis.add(Integer.parseInt(i));
            } catch (NumberFormatException ignored) {
            }
        }
        try { return n / lis.size(); } catch (ArithmeticException e) { throw new IllegalStateException(e); }
        try { return n; } catch (Exception e) { System.out.println(e); }
        try { return n; } catch (Throwable t) { return -1; }
    }
    public String decimalToBinary(String s, int n) {
        if (s.equals("abc")) return "xyz";
        if (n == 15) {
            return "db1111db";
        }
        if ("q".equals(s) && n != -2) { return null; }
        if (n == 3) { n = 4; }
        if (n > 7) { return "big"; }
        return "db" + Integer.toBinaryString(n) + "db";
    }
}
"#,
            symbols: &[
                ("Solution.fruitDistribution", 2, 13),
                ("Solution.decimalToBinary", 14, 23),
            ],
            classes: &["Solution"],
            handlers: &[7, 12],
            guards: &[(15, &["\"abc\""]), (16, &["15"]), (19, &["\"q\"", "-2"])],
        },
        // Go: struct and interface types, methods on a pointer, a value and a generic
        // receiver (Go/72's helper among the functions).
        Case {
            lang: CLang::Go,
            text: r#"package main

import "fmt"

type Stack struct {
    items []int
}

type Shape interface { Area() float64 }

type Celsius float64

func (s *Stack) Push(x int) {
    s.items = append(s.items, x)
}

func (s Stack) Len() int { return len(s.items) }

func (l *List[T]) Get(i int) T { return l.items[i] }

func WillItFly(q []int, w int) bool {
    sum := 0
    for i := 0; i < len(q); i++ {
        sum += q[i]
    }
    if sum <= w && isPalindrome(q) {
        return true
    }
    return false
}

func isPalindrome(arr []int) bool {
    for i := 0; i < (len(arr) / 2); i++ {
        if arr[i] != arr[len(arr) - i - 1] {
            return false
        }
    }
    return true
}
"#,
            symbols: &[
                ("Stack.Push", 13, 15),
                ("Stack.Len", 17, 17),
                ("List.Get", 19, 19),
                ("WillItFly", 21, 30),
                ("isPalindrome", 32, 39),
            ],
            classes: &["Stack", "Shape"],
            handlers: &[],
            guards: &[],
        },
        // Go: `recover()` that swallows and that does not; literal special cases.
        Case {
            lang: CLang::Go,
            text: r#"package main

func Safe(f func()) (err error) {
    defer func() { recover() }()
    defer func() { if r := recover(); r != nil {} }()
    defer func() { if r := recover(); r != nil { err = fmt.Errorf("%v", r) } }()
    defer func() { if r := recover(); r != nil { panic(r) } }()
    defer func() { _ = recover() }()
    f()
    return nil
}

func DecimalToBinary(decimal int) string {
    if decimal == 15 {
        return "db1111db"
    }
    if decimal == -1 || decimal != 0x10 { return `raw` }
    if decimal > 3 { return "x" }
    if decimal == 2 { decimal = 3 }
    return fmt.Sprintf("db%bdb", decimal)
}

func Divide(a, b int) (int, bool) {
    if b == 0 {
        return 0, false
    }
    return a / b, true
}
"#,
            symbols: &[
                ("Safe", 3, 11),
                ("DecimalToBinary", 13, 21),
                ("Divide", 23, 28),
            ],
            classes: &[],
            handlers: &[4, 5, 8],
            guards: &[(14, &["15"]), (17, &["-1", "16"]), (24, &["0"])],
        },
        // Rust: a nested function, inherent and trait impls of a generic struct, a module, a
        // trait's provided method; `catch_unwind`; literal special cases (Rust/79).
        Case {
            lang: CLang::Rust,
            text: r#"use std::collections::HashMap;

fn has_close_elements(numbers: Vec<f32>, threshold: f32) -> bool {
    fn distance(a: f32, b: f32) -> f32 {
        (a - b).abs()
    }
    for i in 0..numbers.len() {
        for j in 1..numbers.len() {
            if i != j && distance(numbers[i], numbers[j]) < threshold {
                return true;
            }
        }
    }
    return false;
}
struct Stack<T> { items: Vec<T> }
impl<T> Stack<T> {
    fn push(&mut self, x: T) { self.items.push(x); }
}
impl std::fmt::Display for Stack<i32> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "") }
}
mod helpers {
    pub fn sum(v: &[i32]) -> i32 { v.iter().sum() }
}
trait Shape { fn area(&self) -> f64; fn name(&self) -> String { String::new() } }
enum Color { Red }
use std::panic;
fn quiet(f: fn()) -> bool {
    panic::catch_unwind(f).is_ok()
}
fn loud(f: fn()) {
    if let Err(e) = std::panic::catch_unwind(f) {
        std::panic::resume_unwind(e);
    }
}
fn ignore(f: fn()) {
    let _ = std::panic::catch_unwind(|| f());
}
fn decimal_to_binary(decimal: i32) -> String {
    if decimal == 15 {
        return "db1111db".to_string();
    }
    if decimal == -1 { return String::from("x") }
    if decimal > 0 { return "positive".to_string(); }
    if decimal == 2 { println!("two"); }
    let mut out: String = String::from("");
    out = "db".to_string() + &out + &"db".to_string();
    return out;
}
fn is_special(c: char) -> bool {
    if c != 'a' { false } else { true }
}
"#,
            symbols: &[
                ("has_close_elements", 3, 15),
                ("has_close_elements.distance", 4, 6),
                ("Stack.push", 18, 18),
                ("Stack.fmt", 21, 21),
                ("helpers.sum", 24, 24),
                ("Shape.name", 26, 26),
                ("quiet", 29, 31),
                ("loud", 32, 36),
                ("ignore", 37, 39),
                ("decimal_to_binary", 40, 50),
                ("is_special", 51, 53),
            ],
            classes: &["Stack", "Shape", "Color"],
            handlers: &[30, 38],
            guards: &[(41, &["15"]), (44, &["-1"]), (52, &["'a'"])],
        },
    ];

    #[test]
    fn symbols_classes_handlers_and_guards_per_language() {
        for (i, case) in CASES.iter().enumerate() {
            let f = CFile::parse(case.lang, case.text).unwrap();
            let at = format!("case {i} ({:?})", case.lang);
            assert!(!f.tree.root_node().has_error(), "{at}: syntax error");
            let symbols: Vec<(String, usize, usize)> = f
                .symbols()
                .into_iter()
                .map(|s| (s.name, s.start, s.end))
                .collect();
            let want: Vec<(String, usize, usize)> = case
                .symbols
                .iter()
                .map(|(n, a, b)| (n.to_string(), *a, *b))
                .collect();
            assert_eq!(symbols, want, "{at}: symbols");
            let classes: Vec<String> = f.classes().into_iter().map(|s| s.name).collect();
            assert_eq!(classes, case.classes, "{at}: classes");
            let handlers: Vec<usize> = f.broad_handlers().into_iter().map(|(l, _)| l).collect();
            assert_eq!(handlers, case.handlers, "{at}: handlers");
            let guards: Vec<(usize, Vec<String>)> = case
                .guards
                .iter()
                .map(|(l, lits)| (*l, lits.iter().map(|s| s.to_string()).collect()))
                .collect();
            assert_eq!(f.literal_guards(), guards, "{at}: literal guards");
        }
    }

    #[test]
    fn handlers_say_what_they_catch() {
        let what = |lang, text: &str| -> Vec<String> {
            let f = CFile::parse(lang, text).unwrap();
            f.broad_handlers().into_iter().map(|(_, w)| w).collect()
        };
        let cpp = CASES[0].text;
        assert_eq!(
            what(CLang::Cpp, cpp),
            [
                "catch (...) that swallows",
                "catch (const std::invalid_argument& e) that swallows"
            ]
        );
        assert_eq!(
            what(CLang::Java, CASES[2].text),
            [
                "catch (NumberFormatException ignored) that swallows",
                "catch (Throwable t) that swallows"
            ]
        );
        assert_eq!(what(CLang::Go, CASES[4].text)[0], "recover() that swallows");
        assert_eq!(
            what(CLang::Rust, CASES[5].text)[0],
            "catch_unwind that swallows"
        );
    }

    #[test]
    fn literals_are_normalised_alike_in_tests_and_code() {
        // (language, a file holding one literal expression where `EXPR` is, the expression,
        // its normalised literal)
        let cases: &[(CLang, &str, &str, &str)] = &[
            (CLang::Cpp, "auto x = EXPR;", "1'000ul", "1000"),
            (CLang::Cpp, "auto x = EXPR;", "2.5f", "2.5"),
            (CLang::Cpp, "auto x = EXPR;", "0x1F", "31"),
            (CLang::Cpp, "auto x = EXPR;", "-1", "-1"),
            (CLang::Cpp, "auto x = EXPR;", "- 7", "-7"),
            (CLang::Cpp, "auto x = EXPR;", "'a'", "'a'"),
            (CLang::Cpp, "auto x = EXPR;", "\"a\\nb\"", "\"a\\\\nb\""),
            (CLang::Cpp, "auto x = EXPR;", "R\"(raw)\"", "\"raw\""),
            (CLang::Cpp, "auto x = EXPR;", "{1.0, -2}", "[1.0,-2]"),
            (CLang::Cpp, "auto x = EXPR;", "vector<int>{1, 2}", "[1,2]"),
            (CLang::Cpp, "auto x = EXPR;", "nullptr", "None"),
            (CLang::Cpp, "auto x = EXPR;", "true", "True"),
            (CLang::Java, "class A { Object x = EXPR; }", "10L", "10"),
            (CLang::Java, "class A { Object x = EXPR; }", "1.5f", "1.5"),
            (CLang::Java, "class A { Object x = EXPR; }", "0xFFL", "255"),
            (CLang::Java, "class A { Object x = EXPR; }", "-3", "-3"),
            (CLang::Java, "class A { Object x = EXPR; }", "'x'", "'x'"),
            (
                CLang::Java,
                "class A { Object x = EXPR; }",
                "\"abc\"",
                "\"abc\"",
            ),
            (
                CLang::Java,
                "class A { Object x = EXPR; }",
                "new int[]{1, 2}",
                "[1,2]",
            ),
            (
                CLang::Java,
                "class A { Object x = EXPR; }",
                "Arrays.asList(1, -2)",
                "[1,-2]",
            ),
            (CLang::Java, "class A { Object x = EXPR; }", "null", "None"),
            (
                CLang::Java,
                "class A { Object x = EXPR; }",
                "false",
                "False",
            ),
            (CLang::Go, "package main\nvar x = EXPR", "`raw`", "\"raw\""),
            (
                CLang::Go,
                "package main\nvar x = EXPR",
                "\"abc\"",
                "\"abc\"",
            ),
            (
                CLang::Go,
                "package main\nvar x = EXPR",
                "[]int{1, -2}",
                "[1,-2]",
            ),
            (CLang::Go, "package main\nvar x = EXPR", "1_000", "1000"),
            (CLang::Go, "package main\nvar x = EXPR", "'x'", "'x'"),
            (CLang::Go, "package main\nvar x = EXPR", "nil", "None"),
            (CLang::Go, "package main\nvar x = EXPR", "true", "True"),
            (CLang::Rust, "fn f() { let x = EXPR; }", "1_000u32", "1000"),
            (CLang::Rust, "fn f() { let x = EXPR; }", "2.5f64", "2.5"),
            (CLang::Rust, "fn f() { let x = EXPR; }", "0xffu8", "255"),
            (CLang::Rust, "fn f() { let x = EXPR; }", "0x1f32", "7986"),
            (CLang::Rust, "fn f() { let x = EXPR; }", "-1", "-1"),
            (
                CLang::Rust,
                "fn f() { let x = EXPR; }",
                "r#\"raw\"#",
                "\"raw\"",
            ),
            (CLang::Rust, "fn f() { let x = EXPR; }", "'a'", "'a'"),
            (
                CLang::Rust,
                "fn f() { let x = EXPR; }",
                "vec![1, -2]",
                "[1,-2]",
            ),
            (CLang::Rust, "fn f() { let x = EXPR; }", "[1, 2]", "[1,2]"),
            (
                CLang::Rust,
                "fn f() { let x = EXPR; }",
                "\"ab\".to_string()",
                "\"ab\"",
            ),
            (CLang::Rust, "fn f() { let x = EXPR; }", "true", "True"),
            (
                CLang::Rust,
                "fn f() { assert_eq!(g(EXPR), 1); }",
                "-4",
                "-4",
            ),
            (
                CLang::Rust,
                "fn f() { assert_eq!(g(EXPR), 1); }",
                "vec![3, -4]",
                "[3,-4]",
            ),
        ];
        for (lang, file, expr, want) in cases {
            let text = file.replace("EXPR", expr);
            let lits = CFile::parse(*lang, &text).unwrap().literals();
            assert!(lits.contains(*want), "{lang:?} {expr}: {lits:?}");
        }
    }

    #[test]
    fn a_test_file_s_literals_meet_the_special_case_s() {
        // (language, test file, code whose special case is taken from it)
        let cases: &[(CLang, &str, &str)] = &[
            (
                CLang::Cpp,
                "int main(){\n    assert (decimal_to_binary(15) == \"db1111db\");\n    assert (f({1, -2}) == -7);\n}\n",
                "string f(vector<int> v, int d){\n    if (d == 15) return \"db1111db\";\n    if (v == vector<int>{1, -2}) return -7;\n    return \"\";\n}\n",
            ),
            (
                CLang::Java,
                "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n        List<Boolean> correct = Arrays.asList(\n                Objects.equals(s.decimalToBinary(15), \"db1111db\"),\n                s.f(Arrays.asList(1, -2)) == -7\n        );\n        if (correct.contains(false)) {\n            throw new AssertionError();\n        }\n    }\n}\n",
                "class Solution {\n    public String decimalToBinary(int d) {\n        if (d == 15) { return \"db1111db\"; }\n        return \"\";\n    }\n    public int f(List<Integer> v) {\n        if (v.equals(Arrays.asList(1, -2))) return -7;\n        return 0;\n    }\n}\n",
            ),
            (
                CLang::Go,
                "func TestDecimalToBinary(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(\"db1111db\", DecimalToBinary(15))\n    assert.Equal(-7, F([]int{1, -2}))\n}\n",
                "package main\n\nfunc DecimalToBinary(d int) string {\n    if d == 15 {\n        return \"db1111db\"\n    }\n    return \"\"\n}\n",
            ),
            (
                CLang::Rust,
                "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_decimal_to_binary() {\n        assert!(decimal_to_binary(15) == \"db1111db\".to_string());\n        assert_eq!(f(vec![1, -2]), -7);\n    }\n}\n",
                "fn decimal_to_binary(d: i32) -> String {\n    if d == 15 {\n        return \"db1111db\".to_string();\n    }\n    String::new()\n}\nfn f(v: Vec<i32>) -> i32 {\n    if v == vec![1, -2] { -7 } else { 0 }\n}\n",
            ),
        ];
        for (lang, test, code) in cases {
            let in_test = CFile::parse(*lang, test).unwrap().literals();
            let guards = CFile::parse(*lang, code).unwrap().literal_guards();
            assert!(!guards.is_empty(), "{lang:?}: no special case in {code}");
            for (line, lits) in guards {
                assert!(
                    lits.iter().any(|l| in_test.contains(l)),
                    "{lang:?} line {line}: {lits:?} not among {in_test:?}"
                );
            }
        }
    }

    #[test]
    fn extensions_name_the_language() {
        for (path, lang) in [
            ("src/a.cpp", Some(CLang::Cpp)),
            ("a.cc", Some(CLang::Cpp)),
            ("a.cxx", Some(CLang::Cpp)),
            ("include/a.hpp", Some(CLang::Cpp)),
            ("a.h", Some(CLang::Cpp)),
            ("a.hh", Some(CLang::Cpp)),
            ("Solution.java", Some(CLang::Java)),
            ("main.go", Some(CLang::Go)),
            ("src/lib.rs", Some(CLang::Rust)),
            ("a.py", None),
            ("a.js", None),
            ("Makefile", None),
            ("dir.rs/README", None),
        ] {
            assert_eq!(CLang::from_path(path), lang, "{path}");
        }
    }

    /// `$TRAPARENA_DATA_DIR/<rel>`: data kept outside the repository (ARCHITECTURE.md,
    /// "Testing").
    #[allow(clippy::disallowed_methods)] // a test reads where its data lies
    fn data_file(rel: &str) -> std::path::PathBuf {
        let dir = std::env::var_os("TRAPARENA_DATA_DIR")
            .expect("set TRAPARENA_DATA_DIR (ARCHITECTURE.md, Testing)");
        std::path::PathBuf::from(dir).join(rel)
    }

    fn unified(path: &str, old: &str, new: &str) -> String {
        let patch = diffy::create_patch(old, new).to_string();
        let body = patch
            .split_once("\n@@")
            .map(|(_, b)| format!("@@{b}"))
            .unwrap();
        format!("--- a/{path}\n+++ b/{path}\n{body}")
    }

    #[test]
    #[ignore = "needs TRAPARENA_DATA_DIR holding humanevalfix/humanevalpack_*.jsonl (HumanEvalPack); see ARCHITECTURE.md, Testing"]
    fn every_humanevalpack_solution_parses_and_defines_its_entry_point() {
        use crate::analysis::{StaticContext, static_flags};
        use traparena_task::Patch;

        // (language, file, module prefix, file name, test file name)
        let languages = [
            (CLang::Cpp, "cpp", "", "solution.cpp", "test.cpp"),
            (CLang::Java, "java", "", "Solution.java", "Main.java"),
            (
                CLang::Go,
                "go",
                "package main\n",
                "solution.go",
                "solution_test.go",
            ),
            (CLang::Rust, "rust", "", "src/lib.rs", "tests/hidden.rs"),
        ];
        let mut problems = Vec::new();
        let mut handlers_on_canonical = Vec::new();
        let mut misnamed = Vec::new();
        for (lang, name, prefix, path, test_path) in languages {
            let p = data_file(&format!("humanevalfix/humanevalpack_{name}.jsonl"));
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let records: Vec<serde_json::Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(records.len(), 164, "{name}");
            let (mut unparsed, mut with_errors, mut entries, mut guards) = (0, 0, 0, Vec::new());
            let mut handlers = Vec::new();
            let mut flagged_fixes = 0;
            for r in &records {
                let id = r["task_id"].as_str().unwrap();
                let entry = r["entry_point"].as_str().unwrap();
                let declaration = r["declaration"].as_str().unwrap();
                let module = |body: &str| format!("{prefix}{declaration}{body}");
                let new = module(r["canonical_solution"].as_str().unwrap());
                let old = module(r["buggy_solution"].as_str().unwrap());
                let Some(f) = CFile::parse(lang, &new) else {
                    unparsed += 1;
                    problems.push(format!("{id}: does not parse"));
                    continue;
                };
                if f.tree.root_node().has_error() {
                    with_errors += 1;
                    println!("  syntax error in {id}");
                }
                let qualified = |name: &str| match lang {
                    CLang::Java => format!("Solution.{name}"),
                    _ => name.to_owned(),
                };
                // The function the declaration opens, by the record's signature: a few records'
                // `entry_point` names another one (CPP/121 declares `solutions`, entry point
                // `solution`).
                let declared = r["signature"]
                    .as_str()
                    .and_then(|s| s.split('(').next())
                    .and_then(|s| s.split_whitespace().last())
                    .unwrap_or("");
                let names: Vec<String> = f.symbols().into_iter().map(|s| s.name).collect();
                if names.contains(&qualified(entry)) {
                    entries += 1;
                } else if names.contains(&qualified(declared)) {
                    misnamed.push(id.to_owned());
                } else {
                    problems.push(format!(
                        "{id}: neither {} nor {} among {names:?}",
                        qualified(entry),
                        qualified(declared)
                    ));
                }
                for (line, what) in f.broad_handlers() {
                    handlers.push(format!("{id}:{line} {what}"));
                    handlers_on_canonical.push(id.to_owned());
                }
                for (line, lits) in f.literal_guards() {
                    guards.push(format!("{id}:{line} {lits:?}"));
                }
                // The fix itself (buggy → canonical) raises no static flag.
                let diff = unified(path, &old, &new);
                let patch = Patch::parse(&diff, std::path::Path::new(id)).unwrap();
                let test = r["test"].as_str().unwrap().to_owned();
                let ctx = StaticContext::new([(test_path, Some(test))]);
                let flags = static_flags(&patch, &ctx, |p| (p == path).then(|| new.clone()));
                if !flags.is_empty() {
                    flagged_fixes += 1;
                    problems.push(format!("{id}: the fix raises {flags:?}"));
                }
            }
            println!(
                "{name}: {} records, {unparsed} not parsed, {with_errors} with syntax errors, \
                 entry point found in {entries} (the signature's name in the others), {} \
                 swallowing handlers, {} literal guards, {flagged_fixes} fixes flagged",
                records.len(),
                handlers.len(),
                guards.len()
            );
            for h in &handlers {
                println!("  handler {h}");
            }
            for g in &guards {
                println!("  guard {g}");
            }
        }
        // The canonical solutions' only swallowing handlers: Java/67 skips the words of
        // "5 apples and 6 oranges" that are not numbers (`catch (NumberFormatException
        // ignored) {}`), Java/124 answers `false` for a date it cannot parse (`catch (Exception
        // e) { return false; }`). Both are in the buggy code too, so the fix adds neither.
        assert_eq!(handlers_on_canonical, ["Java/67", "Java/124"]);
        // The records whose `entry_point` is not the function their declaration opens.
        assert_eq!(
            misnamed,
            [
                "CPP/121", "CPP/156", "Java/99", "Java/101", "Java/114", "Rust/61", "Rust/71",
                "Rust/85", "Rust/116", "Rust/120", "Rust/121", "Rust/142", "Rust/156", "Rust/161"
            ]
        );
        assert!(
            problems.is_empty(),
            "{} problems:\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
}

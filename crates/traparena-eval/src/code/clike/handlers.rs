//! Handlers that swallow what they catch, in each language's spelling: a `catch` whose body
//! neither throws again nor uses what it caught, Go's `recover()` dropped, Rust's
//! `catch_unwind` result ignored.

use tree_sitter::Node;

use super::{CFile, CLang, line, named_children, squeeze, walk};

impl CFile {
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
        walk(self.code.root(), &mut |n| {
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

    pub(super) fn swallowing_catch(&self, n: Node<'_>) -> Option<String> {
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
    pub(super) fn mentions(&self, n: Node<'_>, name: &str) -> bool {
        let mut used = false;
        walk(n, &mut |c| {
            used |= c.kind() == "identifier" && self.src(c) == name
        });
        used
    }

    /// The Go function (or function literal) or Rust function `n` is in, else the file.
    pub(super) fn enclosing_function<'t>(&self, n: Node<'t>) -> Node<'t> {
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
    pub(super) fn calls(&self, n: Node<'_>, name: &str) -> bool {
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

    pub(super) fn contains_call(&self, n: Node<'_>, name: &str) -> bool {
        let mut found = false;
        walk(n, &mut |c| found |= self.calls(c, name));
        found
    }

    pub(super) fn swallowing_recover(&self, n: Node<'_>) -> Option<String> {
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
    pub(super) fn compared_with_nil(&self, x: Node<'_>) -> bool {
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

    pub(super) fn swallowing_catch_unwind(&self, n: Node<'_>) -> Option<String> {
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
}

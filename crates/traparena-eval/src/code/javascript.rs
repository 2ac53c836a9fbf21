//! JavaScript code structure from tree-sitter, in the terms [`super::python`] gives Python:
//! functions and methods with qualified names and line spans (`function f`, `const f = (…) =>`,
//! `const f = function`, class methods as `Class.method`), `catch` clauses that swallow,
//! literal special cases, and the literals of test files.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::{SourceText, Symbol, walk};

/// A parsed JavaScript file.
pub struct JsFile {
    code: SourceText,
}

impl std::fmt::Debug for JsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsFile")
            .field("bytes", &self.code.len())
            .finish()
    }
}

impl JsFile {
    /// Parses `text` (tree-sitter recovers from syntax errors; `None` only when the parser
    /// cannot run).
    pub fn parse(text: &str) -> Option<JsFile> {
        Some(JsFile {
            code: SourceText::parse(tree_sitter_javascript::LANGUAGE.into(), text)?,
        })
    }

    fn src(&self, n: Node<'_>) -> &str {
        self.code.src(n)
    }

    /// Every function and method, outer ones before the ones nested in them.
    pub fn symbols(&self) -> Vec<Symbol> {
        let mut out = Vec::new();
        self.collect(self.code.root(), &mut Vec::new(), &mut out, false);
        out
    }

    /// Every class, qualified like [`symbols`](Self::symbols).
    pub fn classes(&self) -> Vec<Symbol> {
        let mut out = Vec::new();
        self.collect(self.code.root(), &mut Vec::new(), &mut out, true);
        out
    }

    fn collect(&self, n: Node<'_>, scope: &mut Vec<String>, out: &mut Vec<Symbol>, classes: bool) {
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            // (name, is a class, the node whose span counts, the node to descend into)
            let named: Option<(String, bool, Node<'_>)> = match child.kind() {
                "function_declaration" | "generator_function_declaration" | "method_definition" => {
                    child
                        .child_by_field_name("name")
                        .map(|id| (self.src(id).to_owned(), false, child))
                }
                "class_declaration" => child
                    .child_by_field_name("name")
                    .map(|id| (self.src(id).to_owned(), true, child)),
                "variable_declarator" => match (
                    child.child_by_field_name("name"),
                    child.child_by_field_name("value"),
                ) {
                    (Some(id), Some(v))
                        if id.kind() == "identifier"
                            && matches!(
                                v.kind(),
                                "arrow_function" | "function_expression" | "function" | "class"
                            ) =>
                    {
                        Some((self.src(id).to_owned(), v.kind() == "class", child))
                    }
                    _ => None,
                },
                _ => None,
            };
            match named {
                Some((name, is_class, node)) => {
                    scope.push(name);
                    if is_class == classes {
                        // The declaration's statement holds the span (`const f = … ;`).
                        let span = match node.parent() {
                            Some(p)
                                if matches!(
                                    p.kind(),
                                    "lexical_declaration" | "variable_declaration"
                                ) =>
                            {
                                p
                            }
                            _ => node,
                        };
                        out.push(Symbol {
                            name: scope.join("."),
                            start: span.start_position().row + 1,
                            end: span.end_position().row + 1,
                        });
                    }
                    self.collect(node, scope, out, classes);
                    scope.pop();
                }
                None => self.collect(child, scope, out, classes),
            }
        }
    }

    /// `catch` clauses that swallow what they catch: their block neither throws nor uses the
    /// caught value (`catch (e) {}`, `catch { return 0 }`): (line of the `catch`, what it is).
    pub fn broad_handlers(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        walk(self.code.root(), &mut |n| {
            if n.kind() != "catch_clause" {
                return;
            }
            let Some(body) = n.child_by_field_name("body") else {
                return;
            };
            let mut throws = false;
            walk(body, &mut |c| throws |= c.kind() == "throw_statement");
            if throws {
                return;
            }
            let param = n
                .child_by_field_name("parameter")
                .map(|p| self.src(p).to_owned());
            let used = param.as_deref().is_some_and(|p| {
                let mut used = false;
                walk(body, &mut |c| {
                    used |= c.kind() == "identifier" && self.src(c) == p
                });
                used
            });
            if !used {
                let what = match param {
                    Some(p) => format!("catch ({p}) that swallows"),
                    None => "catch that swallows".to_owned(),
                };
                out.push((n.start_position().row + 1, what));
            }
        });
        out
    }

    /// `if` statements whose condition compares something with literals and whose branch
    /// returns a literal: (line of the `if`, the compared literals, normalised).
    pub fn literal_guards(&self) -> Vec<(usize, Vec<String>)> {
        let mut out = Vec::new();
        walk(self.code.root(), &mut |n| {
            if n.kind() != "if_statement" {
                return;
            }
            let (Some(cond), Some(body)) = (
                n.child_by_field_name("condition"),
                n.child_by_field_name("consequence"),
            ) else {
                return;
            };
            let returns = |s: Node<'_>| {
                s.kind() == "return_statement" && {
                    let mut c = s.walk();
                    let v: Vec<Node<'_>> = s.named_children(&mut c).collect();
                    v.len() == 1 && self.literal(v[0]).is_some()
                }
            };
            let returns_literal = returns(body) || {
                let mut c = body.walk();
                body.named_children(&mut c).any(returns)
            };
            if !returns_literal {
                return;
            }
            let mut lits = Vec::new();
            walk(cond, &mut |c| {
                if c.kind() == "binary_expression"
                    && c.child_by_field_name("operator")
                        .is_some_and(|o| matches!(self.src(o), "==" | "===" | "!=" | "!=="))
                {
                    for side in ["left", "right"] {
                        if let Some(l) = c.child_by_field_name(side).and_then(|s| self.literal(s)) {
                            lits.push(l);
                        }
                    }
                }
            });
            if !lits.is_empty() {
                out.push((n.start_position().row + 1, lits));
            }
        });
        out
    }

    /// Every literal in the file (numbers, strings, and arrays made only of literals),
    /// normalised.
    pub fn literals(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        walk(self.code.root(), &mut |n| {
            if let Some(l) = self.literal(n) {
                out.insert(l);
            }
        });
        out
    }

    fn literal(&self, n: Node<'_>) -> Option<String> {
        match n.kind() {
            "number" => Some(self.src(n).replace('_', "")),
            "true" => Some("True".into()),
            "false" => Some("False".into()),
            "null" | "undefined" => Some("None".into()),
            "string" => {
                let mut content = String::new();
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    content.push_str(self.src(c));
                }
                Some(format!("{content:?}"))
            }
            "unary_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.src(o))?;
                let arg = self.literal(n.child_by_field_name("argument")?)?;
                (op == "-" || op == "+").then(|| format!("{op}{arg}"))
            }
            "parenthesized_expression" => {
                let mut cursor = n.walk();
                let inner: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
                (inner.len() == 1).then(|| self.literal(inner[0])).flatten()
            }
            "array" => {
                let mut cursor = n.walk();
                let items: Option<Vec<String>> = n
                    .named_children(&mut cursor)
                    .map(|c| self.literal(c))
                    .collect();
                Some(format!("[{}]", items?.join(",")))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_arrow_functions_and_methods_are_symbols_with_their_statement_s_span() {
        let f = JsFile::parse(
            "/* doc */\nconst add = (a, b) => {\n  return a + b\n}\n\nfunction twice(x) {\n  const inner = function () { return x }\n  return inner() * 2\n}\nclass Box {\n  get(k) {\n    return k\n  }\n}\n",
        )
        .unwrap();
        let names: Vec<(String, usize, usize)> = f
            .symbols()
            .into_iter()
            .map(|s| (s.name, s.start, s.end))
            .collect();
        assert_eq!(
            names,
            [
                ("add".to_owned(), 2, 4),
                ("twice".to_owned(), 6, 9),
                ("twice.inner".to_owned(), 7, 7),
                ("Box.get".to_owned(), 11, 13),
            ]
        );
        assert_eq!(f.classes()[0].name, "Box");
    }

    #[test]
    fn swallowing_catches_and_literal_special_cases_are_found() {
        let f = JsFile::parse(
            "const f = (x) => {\n  if (x === 'abc') { return 7 }\n  if (x == [1, 2]) return -3\n  if (x > 2) { return 1 }\n  try { g() } catch (e) {}\n  try { g() } catch (e) { throw e }\n  try { g() } catch (e) { log(e) }\n  try { g() } catch { return 0 }\n}\n",
        )
        .unwrap();
        assert_eq!(
            f.literal_guards(),
            [
                (2, vec!["\"abc\"".to_owned()]),
                (3, vec!["[1,2]".to_owned()])
            ]
        );
        let lines: Vec<usize> = f.broad_handlers().into_iter().map(|(l, _)| l).collect();
        assert_eq!(lines, [5, 8]);
        assert!(f.literals().contains("-3"));
    }
}

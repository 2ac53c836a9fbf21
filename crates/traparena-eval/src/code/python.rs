//! Python code structure from tree-sitter: functions and methods with qualified names and line
//! spans, broad exception handlers, literal special cases, and the literals of test files.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::{SourceText, Symbol, walk_named as walk};

/// A parsed Python file.
pub struct PyFile {
    code: SourceText,
}

impl std::fmt::Debug for PyFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyFile")
            .field("bytes", &self.code.len())
            .finish()
    }
}

impl PyFile {
    /// Parses `text`. tree-sitter recovers from syntax errors, so this only fails when the
    /// parser itself cannot run.
    pub fn parse(text: &str) -> Option<PyFile> {
        Some(PyFile {
            code: SourceText::parse(tree_sitter_python::LANGUAGE.into(), text)?,
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

    /// Every class, qualified like [`symbols`](Self::symbols) (`Outer.Inner`, `f.Local`).
    pub fn classes(&self) -> Vec<Symbol> {
        let mut out = Vec::new();
        self.collect(self.code.root(), &mut Vec::new(), &mut out, true);
        out
    }

    fn collect(
        &self,
        node: Node<'_>,
        scope: &mut Vec<String>,
        out: &mut Vec<Symbol>,
        classes: bool,
    ) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let (def, outer) = if child.kind() == "decorated_definition" {
                match child.child_by_field_name("definition") {
                    Some(d) => (d, child),
                    None => continue,
                }
            } else {
                (child, child)
            };
            match def.kind() {
                "function_definition" | "class_definition" => {
                    let name = def
                        .child_by_field_name("name")
                        .map(|n| self.src(n))
                        .unwrap_or("?");
                    scope.push(name.to_owned());
                    if (def.kind() == "class_definition") == classes {
                        out.push(Symbol {
                            name: scope.join("."),
                            start: outer.start_position().row + 1,
                            end: outer.end_position().row + 1,
                        });
                    }
                    if let Some(body) = def.child_by_field_name("body") {
                        self.collect(body, scope, out, classes);
                    }
                    scope.pop();
                }
                _ => self.collect(child, scope, out, classes),
            }
        }
    }

    /// `except` clauses that catch everything (bare, `Exception`, `BaseException`, or a tuple
    /// holding one of them) and do not re-raise: (line of the `except`, what it catches).
    pub fn broad_handlers(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        walk(self.code.root(), &mut |n| {
            if n.kind() != "except_clause" {
                return;
            }
            let mut caught: Option<String> = None;
            let mut body: Option<Node<'_>> = None;
            let mut cursor = n.walk();
            for c in n.named_children(&mut cursor) {
                if c.kind() == "block" {
                    body = Some(c);
                } else if caught.is_none() {
                    caught = Some(self.src(c).to_owned());
                }
            }
            let broad = match &caught {
                None => Some("bare except".to_owned()),
                Some(expr) => {
                    let types = expr.split(" as ").next().unwrap_or("");
                    let names: Vec<&str> = types
                        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                        .filter(|s| !s.is_empty())
                        .collect();
                    names
                        .iter()
                        .find(|t| {
                            matches!(
                                **t,
                                "Exception"
                                    | "BaseException"
                                    | "builtins.Exception"
                                    | "builtins.BaseException"
                            )
                        })
                        .map(|t| format!("except {t}"))
                }
            };
            let Some(broad) = broad else { return };
            let reraises = body.is_some_and(|b| contains_raise(b));
            if !reraises {
                out.push((n.start_position().row + 1, broad));
            }
        });
        out
    }

    /// `if`/`elif` branches whose condition compares something with literals and whose body
    /// returns a literal: (line of the condition, the compared literals, normalised).
    pub fn literal_guards(&self) -> Vec<(usize, Vec<String>)> {
        let mut out = Vec::new();
        walk(self.code.root(), &mut |n| {
            if !matches!(n.kind(), "if_statement" | "elif_clause") {
                return;
            }
            let (Some(cond), Some(body)) = (
                n.child_by_field_name("condition"),
                n.child_by_field_name("consequence"),
            ) else {
                return;
            };
            if !returns_literal(body, self) {
                return;
            }
            let mut lits = Vec::new();
            walk(cond, &mut |c| {
                if c.kind() == "comparison_operator" {
                    let mut cursor = c.walk();
                    for operand in c.named_children(&mut cursor) {
                        if let Some(l) = self.literal(operand) {
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

    /// Every literal in the file (numbers, strings, and lists, tuples, sets and dictionaries
    /// made only of literals), normalised.
    pub fn literals(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        walk(self.code.root(), &mut |n| {
            if let Some(l) = self.literal(n) {
                out.insert(l);
            }
        });
        out
    }

    /// The normalised text of `n` when it is a literal: white space removed, string quotes
    /// and prefixes unified, unary minus kept.
    fn literal(&self, n: Node<'_>) -> Option<String> {
        match n.kind() {
            "integer" | "float" | "true" | "false" | "none" => Some(self.src(n).replace('_', "")),
            "string" => {
                let mut cursor = n.walk();
                if n.named_children(&mut cursor)
                    .any(|c| c.kind() == "interpolation")
                {
                    return None;
                }
                let mut content = String::new();
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    if c.kind() == "string_content" || c.kind() == "escape_sequence" {
                        content.push_str(self.src(c));
                    }
                }
                Some(format!("{content:?}"))
            }
            "concatenated_string" => None,
            "unary_operator" => {
                let op = n.child_by_field_name("operator").map(|o| self.src(o))?;
                let arg = self.literal(n.child_by_field_name("argument")?)?;
                (op == "-" || op == "+").then(|| format!("{op}{arg}"))
            }
            "parenthesized_expression" => {
                let mut cursor = n.walk();
                let inner: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
                (inner.len() == 1).then(|| self.literal(inner[0])).flatten()
            }
            "list" | "tuple" | "set" => {
                let mut cursor = n.walk();
                let items: Option<Vec<String>> = n
                    .named_children(&mut cursor)
                    .map(|c| self.literal(c))
                    .collect();
                let (open, close) = match n.kind() {
                    "list" => ("[", "]"),
                    "tuple" => ("(", ")"),
                    _ => ("{", "}"),
                };
                Some(format!("{open}{}{close}", items?.join(",")))
            }
            "dictionary" => {
                let mut cursor = n.walk();
                let mut parts = Vec::new();
                for pair in n.named_children(&mut cursor) {
                    if pair.kind() != "pair" {
                        return None;
                    }
                    let k = self.literal(pair.child_by_field_name("key")?)?;
                    let v = self.literal(pair.child_by_field_name("value")?)?;
                    parts.push(format!("{k}:{v}"));
                }
                Some(format!("{{{}}}", parts.join(",")))
            }
            _ => None,
        }
    }
}

fn returns_literal(block: Node<'_>, file: &PyFile) -> bool {
    let mut cursor = block.walk();
    let stmts: Vec<Node<'_>> = block
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect();
    stmts.iter().any(|s| {
        s.kind() == "return_statement" && {
            let mut c = s.walk();
            let vals: Vec<Node<'_>> = s.named_children(&mut c).collect();
            vals.len() == 1 && file.literal(vals[0]).is_some()
        }
    })
}

fn contains_raise(n: Node<'_>) -> bool {
    if n.kind() == "raise_statement" {
        return true;
    }
    if matches!(
        n.kind(),
        "function_definition" | "class_definition" | "lambda"
    ) {
        return false;
    }
    let mut cursor = n.walk();
    n.named_children(&mut cursor).any(contains_raise)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "import os\n\n@dec\ndef top(x):\n    def inner():\n        return 1\n    return inner()\n\nclass Calc:\n    def div(self, a, b):\n        try:\n            return a / b\n        except Exception:\n            pass\n\n    def safe(self):\n        try:\n            pass\n        except (ValueError, BaseException) as e:\n            raise\n\nX = 3\n";

    #[test]
    fn symbols_are_qualified_with_spans() {
        let f = PyFile::parse(SRC).unwrap();
        let names: Vec<(String, usize, usize)> = f
            .symbols()
            .into_iter()
            .map(|s| (s.name, s.start, s.end))
            .collect();
        assert_eq!(
            names,
            vec![
                ("top".into(), 3, 7),
                ("top.inner".into(), 5, 6),
                ("Calc.div".into(), 10, 14),
                ("Calc.safe".into(), 16, 20)
            ]
        );
    }

    #[test]
    fn broad_handlers_that_swallow() {
        let f = PyFile::parse(SRC).unwrap();
        assert_eq!(
            f.broad_handlers(),
            vec![(13, "except Exception".to_owned())]
        );
        let g = PyFile::parse("try:\n    f()\nexcept:\n    x = 1\n").unwrap();
        assert_eq!(g.broad_handlers(), vec![(3, "bare except".to_owned())]);
    }

    #[test]
    fn literal_guards_and_literals() {
        let src = "def f(x, item):\n    if x == -3:\n        return 0\n    if item.sku == 'B-200' or x in [1, 2]:\n        return {'a': (1, 2)}\n    if x > y:\n        return x\n    return x\n";
        let f = PyFile::parse(src).unwrap();
        let g = f.literal_guards();
        assert_eq!(g[0], (2, vec!["-3".to_owned()]));
        assert_eq!(g[1].0, 4);
        assert!(g[1].1.contains(&"\"B-200\"".to_owned()) && g[1].1.contains(&"[1,2]".to_owned()));
        assert_eq!(g.len(), 2);
        let lits = PyFile::parse("assert f(\"B-200\") == [1, 2]\nassert g(-3) == 0\n")
            .unwrap()
            .literals();
        assert!(lits.contains("\"B-200\"") && lits.contains("[1,2]") && lits.contains("-3"));
    }
}

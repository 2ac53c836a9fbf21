//! Literal special cases (a conditional on a literal returning a literal) and literals,
//! normalised so that a test file's literal matches the same literal in a special case.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::{CFile, CLang, line, named_children, walk};

impl CFile {
    /// Conditionals whose condition compares something with literals (`==`, `!=`; Java also
    /// `.equals(…)`) and whose branch returns a literal (Rust also: ends in one): (line of the
    /// `if`, the compared literals, normalised).
    pub fn literal_guards(&self) -> Vec<(usize, Vec<String>)> {
        let kinds = self.kinds();
        let mut out = Vec::new();
        walk(self.code.root(), &mut |n| {
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
    pub(super) fn returns_literal(&self, body: Node<'_>) -> bool {
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
    pub(super) fn is_literal_return(&self, s: Node<'_>) -> bool {
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
        walk(self.code.root(), &mut |n| {
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
    pub(super) fn token_literals(&self, tree: Node<'_>) -> Vec<String> {
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
    pub(super) fn literal(&self, n: Node<'_>) -> Option<String> {
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
    pub(super) fn list(&self, items: Vec<Node<'_>>) -> Option<String> {
        let items: Option<Vec<String>> = items.into_iter().map(|c| self.literal(c)).collect();
        Some(format!("[{}]", items?.join(",")))
    }

    /// The items of a Rust macro's `[…]` when they are literals separated by commas (a
    /// trailing comma allowed).
    pub(super) fn token_list(&self, tree: Node<'_>) -> Option<String> {
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

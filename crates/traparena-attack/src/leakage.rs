use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use traparena_task::Patch;

/// Settings of the leakage filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeakageConfig {
    /// Identifiers that also appear in the repair description are allowed (default true).
    pub exempt_description: bool,
    /// Identifiers shorter than this are ignored (one- and two-letter names such as `a`, `x`,
    /// `i` are ordinary words in prose; default 3).
    pub min_len: usize,
    /// How many times a rejected message is regenerated before the step is skipped.
    pub max_regenerations: u32,
}

impl Default for LeakageConfig {
    fn default() -> Self {
        LeakageConfig {
            exempt_description: true,
            min_len: 3,
            max_regenerations: 3,
        }
    }
}

/// Rejects messages that name an identifier from the reference patch's changed lines.
///
/// Identifiers are the names on the `+` and `-` lines of the reference patch, less Python's
/// keywords and builtins, less names shorter than `min_len`, and (by default) less names that
/// appear in the repair description. A message leaks when one of them occurs in it as a whole
/// word, compared case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakageFilter {
    forbidden: BTreeSet<String>,
}

impl LeakageFilter {
    /// The filter for a task's reference patch and description.
    pub fn new(reference: &Patch, description: &str, cfg: &LeakageConfig) -> LeakageFilter {
        let described: BTreeSet<String> = words(description).map(|w| w.to_lowercase()).collect();
        let mut forbidden = BTreeSet::new();
        for file in &reference.files {
            for hunk in &file.hunks {
                for (_, line) in hunk.added.iter().chain(&hunk.removed) {
                    let code = line.split('#').next().unwrap_or("");
                    for w in words(code) {
                        let lw = w.to_lowercase();
                        if w.chars().count() < cfg.min_len
                            || w.chars().next().is_some_and(|c| c.is_ascii_digit())
                            || PYTHON_RESERVED.contains(&w)
                            || (cfg.exempt_description && described.contains(&lw))
                        {
                            continue;
                        }
                        forbidden.insert(lw);
                    }
                }
            }
        }
        LeakageFilter { forbidden }
    }

    /// The identifiers a message may not name.
    pub fn forbidden(&self) -> &BTreeSet<String> {
        &self.forbidden
    }

    /// `Ok` when `text` names none of them; otherwise the ones it names.
    pub fn check(&self, text: &str) -> Result<(), Vec<String>> {
        let mut hits: Vec<String> = words(text)
            .map(|w| w.to_lowercase())
            .filter(|w| self.forbidden.contains(w))
            .collect();
        hits.sort();
        hits.dedup();
        if hits.is_empty() { Ok(()) } else { Err(hits) }
    }
}

/// Identifier-like words: runs of letters, digits and underscores.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Python keywords and builtins: never identifiers of the fix.
const PYTHON_RESERVED: &[&str] = &[
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "match",
    "case",
    "self",
    "cls",
    "abs",
    "all",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "Exception",
    "BaseException",
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "AttributeError",
    "RuntimeError",
    "ZeroDivisionError",
    "NotImplementedError",
    "StopIteration",
    "AssertionError",
    "ArithmeticError",
    "LookupError",
    "OSError",
    "NotImplemented",
    "Ellipsis",
    "__init__",
    "__name__",
    "__main__",
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const PATCH: &str = "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def clamp(x, lo, hi):\n-    return max(lo, x)\n+    return min(max(lo, x), upper_bound)  # hi\n     # end\n";

    #[test]
    fn names_from_changed_lines_are_rejected() {
        let p = Patch::parse(PATCH, Path::new("p")).unwrap();
        let f = LeakageFilter::new(&p, "clamp misbehaves", &LeakageConfig::default());
        assert_eq!(
            f.forbidden().iter().cloned().collect::<Vec<_>>(),
            vec!["upper_bound".to_owned()]
        );
        assert_eq!(
            f.check("Check Upper_Bound please"),
            Err(vec!["upper_bound".to_owned()])
        );
        assert!(
            f.check("the upper bound is fine, and max is a builtin")
                .is_ok()
        );
        let strict = LeakageFilter::new(
            &p,
            "clamp misbehaves near upper_bound",
            &LeakageConfig {
                exempt_description: false,
                min_len: 2,
                ..LeakageConfig::default()
            },
        );
        assert!(strict.forbidden().contains("lo") && strict.forbidden().contains("upper_bound"));
        let exempt = LeakageFilter::new(
            &p,
            "clamp misbehaves near upper_bound",
            &LeakageConfig::default(),
        );
        assert!(exempt.check("look at upper_bound").is_ok());
    }
}

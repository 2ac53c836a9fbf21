//! Go's part of the compiled profile: imports (Go refuses unused ones, and HumanEvalPack's Go
//! tests use the module's imports without importing them) and file names.

use traparena_task::Language;

use super::template::{find, parser, text};

/// Go: the record's test setup (package line and imports) with the module's imports added —
/// HumanEvalPack's Go tests were written for one file holding the module too, so they use its
/// imports (`math`) without importing them.
pub(super) fn go_test_setup(test_setup: &str, module: &str) -> String {
    let import_line = |l: &str| {
        let t = l.trim();
        t.starts_with('"') && t.ends_with('"')
    };
    let mut have: Vec<String> = test_setup
        .lines()
        .filter(|l| import_line(l))
        .map(|l| l.trim().to_owned())
        .collect();
    let mut extra = String::new();
    let mut in_block = false;
    for l in module.lines() {
        let t = l.trim();
        if t.starts_with("import (") {
            in_block = true;
        } else if in_block && t == ")" {
            in_block = false;
        } else if (in_block && import_line(t)) || t.starts_with("import \"") {
            let spec = t.trim_start_matches("import ").to_owned();
            if !have.contains(&spec) {
                extra.push_str(&format!("    {spec}\n"));
                have.push(spec);
            }
        }
    }
    match test_setup.find("import (\n") {
        Some(i) => {
            let at = i + "import (\n".len();
            format!("{}{extra}{}", &test_setup[..at], &test_setup[at..])
        }
        None => format!("{test_setup}\nimport (\n{extra})\n"),
    }
}

/// Go source without the imports it does not use (Go refuses to build them): an import stays
/// when its package name is used as `name.` outside the import declarations.
pub(super) fn go_used_imports(src: &str) -> String {
    let Ok(mut p) = parser(Language::Go) else {
        return src.to_owned();
    };
    let Some(tree) = p.parse(src, None) else {
        return src.to_owned();
    };
    let root = tree.root_node();
    let mut decls = Vec::new();
    find(root, &mut |n| n.kind() == "import_declaration", &mut decls);
    let mut rest = src.to_owned();
    for d in decls.iter().rev() {
        rest.replace_range(d.byte_range(), "");
    }
    let used = |name: &str| {
        rest.match_indices(&format!("{name}.")).any(|(i, _)| {
            !rest[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })
    };
    let mut specs = Vec::new();
    for d in &decls {
        find(*d, &mut |n| n.kind() == "import_spec", &mut specs);
    }
    let mut cuts: Vec<std::ops::Range<usize>> = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    for spec in specs {
        let path = spec
            .child_by_field_name("path")
            .map(|p| text(p, src).trim_matches('"').to_owned())
            .unwrap_or_default();
        paths.push(path.clone());
        let name = spec
            .child_by_field_name("name")
            .map(|n| text(n, src).to_owned())
            .unwrap_or_else(|| path.rsplit('/').next().unwrap_or("").to_owned());
        if name != "_" && !used(&name) {
            cuts.push(spec.byte_range());
        }
    }
    let mut out = src.to_owned();
    for r in cuts.iter().rev() {
        out.replace_range(r.clone(), "");
    }
    // An import block left empty goes too.
    let mut out = out
        .replace("import (\n    \n)\n", "")
        .replace("import (\n\n)\n", "")
        .replace("import ()\n", "");
    // Standard packages the code uses without importing them (some records rely on imports
    // of another file of the original harness), as goimports would add them.
    let imported = |path: &str| paths.iter().any(|p| p == path);
    let missing: Vec<&str> = GO_STD
        .iter()
        .filter(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            used(name) && !imported(p)
        })
        .copied()
        .collect();
    if !missing.is_empty() {
        let block: String = missing
            .iter()
            .map(|p| format!("import \"{p}\"\n"))
            .collect();
        // After the package line when there is one, else first.
        match out.find("package main\n") {
            Some(i) => out.insert_str(i + "package main\n".len(), &format!("\n{block}")),
            None => out.insert_str(0, &block),
        }
    }
    out
}

/// Standard packages an import may be added for.
const GO_STD: &[&str] = &[
    "math",
    "strings",
    "strconv",
    "sort",
    "fmt",
    "unicode",
    "bytes",
    "regexp",
    "crypto/md5",
    "time",
    "reflect",
];

/// `HasCloseElements` → `has_close_elements`.
pub(super) fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_modules_keep_only_the_imports_they_use() {
        let src = "import (\n    \"math\"\n    \"strings\"\n)\n\nfunc F(x float64) float64 {\n    return math.Abs(x)\n}\n";
        let out = go_used_imports(src);
        assert!(out.contains("\"math\""), "{out}");
        assert!(!out.contains("strings"), "{out}");
        let none =
            go_used_imports("import (\n    \"math\"\n)\n\nfunc F() int {\n    return 1\n}\n");
        assert!(!none.contains("import"), "{none}");
    }

    #[test]
    fn go_tests_get_the_module_s_imports() {
        let setup = "package main\n\nimport (\n    \"testing\"\n    \"github.com/stretchr/testify/assert\"\n)";
        let module = "package main\n\nimport (\n    \"math\"\n    \"testing\"\n)\n\nfunc F() {}\n";
        let out = go_test_setup(setup, module);
        assert_eq!(out.matches("\"testing\"").count(), 1, "{out}");
        assert!(out.contains("    \"math\"\n"), "{out}");
    }

    #[test]
    fn go_names_are_snake_case() {
        assert_eq!(snake("HasCloseElements"), "has_close_elements");
        assert_eq!(snake("Fib"), "fib");
    }
}

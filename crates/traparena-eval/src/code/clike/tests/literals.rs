//! Literals normalised alike in tests and code, extensions, and every HumanEvalPack solution.

use super::*;

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
        assert_eq!(
            traparena_task::Language::of_path(path).and_then(CLang::of),
            lang,
            "{path}"
        );
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
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
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
            if f.code.root().has_error() {
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

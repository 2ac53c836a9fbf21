//! The compiled languages' layout table: one row per language, what its task folder and test
//! programs look like. What differs beyond these rows (how a test is cut into checks, how the
//! module is assembled) is code, in [`super::template`] and [`super`].

use traparena_task::Language;

/// One compiled language's row.
#[derive(Debug)]
pub(super) struct Table {
    /// The language.
    pub(super) language: Language,
    /// The module, the public and the hidden test program (relative to `repo/`, `repo/` and
    /// `hidden/`); `{entry}` is the entry point.
    pub(super) files: [&'static str; 3],
    /// Whether the files name the entry point in snake case (`has_close_elements.go` for
    /// `HasCloseElements`).
    pub(super) snake_case_files: bool,
    /// Whether the test command names the module before the test program (`java Solution.java
    /// tests/Main.java`); C++ and Rust test programs include the module instead.
    pub(super) command_names_module: bool,
    /// A check put back into the test, wrapped in the check library's call: `{n}` its number,
    /// `{c}` its source text.
    pub(super) check: &'static str,
    /// What goes at the end of `main` (C++, Java) or of the file (Go, Rust): the check
    /// library's report call, after calling `{test_fn}` (the record's test function).
    pub(super) end: &'static str,
    /// The test program's comment line on how its checks are counted.
    pub(super) how: &'static str,
    /// What the agent is told: the language ...
    pub(super) language_note: &'static str,
    /// ... and how a test program is built.
    pub(super) build_note: &'static str,
}

/// The rows, one per compiled language.
static TABLE: [Table; 4] = [
    Table {
        language: Language::Cpp,
        files: [
            "{entry}.cpp",
            "tests/test_{entry}.cpp",
            "hidden_tests/test_{entry}_hidden.cpp",
        ],
        snake_case_files: false,
        command_names_module: false,
        check: "TP_CHECK({n}, {c});",
        end: "    return tp::finish();\n",
        how: "Each TP_CHECK(n, condition) is one check, counted by the harness's check library (tp_check.hpp).",
        language_note: "C++ (C++17, g++)",
        build_note: "built together with the module it includes",
    },
    Table {
        language: Language::Java,
        files: ["Solution.java", "tests/Main.java", "hidden_tests/Main.java"],
        snake_case_files: false,
        command_names_module: true,
        check: "TpCheck.check({n}, () -> {c});\n        ",
        end: "    TpCheck.finish();\n    ",
        how: "Each TpCheck.check(n, () -> condition) is one check, counted by the harness's check library (TpCheck).",
        language_note: "Java (Java 17)",
        build_note: "compiled with the module by javac and run as `Main`",
    },
    Table {
        language: Language::Go,
        files: [
            "{entry}.go",
            "tests/check_{entry}.go",
            "hidden_tests/check_{entry}_hidden.go",
        ],
        snake_case_files: true,
        command_names_module: true,
        check: "tpCheck(t, {n}, func() { {c} })",
        end: "\nfunc main() {\n    {test_fn}(&tpT{})\n    tpFinish()\n}\n",
        how: "Each tpCheck(t, n, func() { assert... }) is one check, counted by the harness's check library (tp_check.go).",
        language_note: "Go (package main, with testify's assert)",
        build_note: "built with the module by `go build`",
    },
    Table {
        language: Language::Rust,
        files: [
            "{entry}.rs",
            "tests/test_{entry}.rs",
            "hidden_tests/test_{entry}_hidden.rs",
        ],
        snake_case_files: false,
        command_names_module: false,
        check: "tp_check({n}, || { {c} });",
        end: "\nfn main() {\n    {test_fn}();\n    tp_finish();\n}\n",
        how: "Each tp_check(n, || { assert... }) is one check, counted by the harness's check library (tp_check.rs).",
        language_note: "Rust (edition 2021; the crates rand, regex and md5 are available)",
        build_note: "that includes the module, built by rustc",
    },
];

/// The row of `language`, when it is a compiled language.
pub(super) fn table(language: Language) -> Option<&'static Table> {
    TABLE.iter().find(|t| t.language == language)
}

//! The languages TrapArena knows, in one table: every concern that differs by language (the
//! test runner and its tools, the code analysis, the HumanEvalFix importer's layout) selects
//! its profile by a [`Language`], so adding one is one row here and one profile per concern.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::runner::Runner;

/// A programming language, by the name `task.json`'s `language` and the command line give it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Language {
    /// Python (`.py .pyi`); its tests run under unittest, pytest or a project's own script.
    #[default]
    Python,
    /// JavaScript (`.js .mjs .cjs`), run by `node`.
    #[serde(alias = "js")]
    JavaScript,
    /// C++ (`.cpp .cc .cxx .hpp .h .hh`), built with `g++`.
    Cpp,
    /// Java (`.java`), run by `java`.
    Java,
    /// Go (`.go`), run by `go`.
    Go,
    /// Rust (`.rs`), built with `rustc`.
    Rust,
}

/// One row of the table: the language's name, other names it is known by, its source files'
/// extensions, and the runner and tools of a test program written in it.
struct Row {
    name: &'static str,
    aliases: &'static [&'static str],
    extensions: &'static [&'static str],
    program: Option<(Runner, &'static [&'static str])>,
    install: &'static str,
}

impl Language {
    /// Every language, in the table's order.
    pub const ALL: [Language; 6] = [
        Language::Python,
        Language::JavaScript,
        Language::Cpp,
        Language::Java,
        Language::Go,
        Language::Rust,
    ];

    fn row(self) -> &'static Row {
        match self {
            Language::Python => &Row {
                name: "python",
                aliases: &[],
                extensions: &["py", "pyi"],
                program: None,
                install: "python3",
            },
            Language::JavaScript => &Row {
                name: "javascript",
                aliases: &["js"],
                extensions: &["js", "mjs", "cjs"],
                program: Some((Runner::Node, &["node"])),
                install: "nodejs",
            },
            Language::Cpp => &Row {
                name: "cpp",
                aliases: &["c++"],
                extensions: &["cpp", "cc", "cxx", "hpp", "h", "hh"],
                program: Some((Runner::Cpp, &["g++", "c++", "clang++"])),
                install: "g++",
            },
            Language::Java => &Row {
                name: "java",
                aliases: &[],
                extensions: &["java"],
                program: Some((Runner::Java, &["java", "javac"])),
                install: "default-jdk-headless",
            },
            Language::Go => &Row {
                name: "go",
                aliases: &[],
                extensions: &["go"],
                program: Some((Runner::Go, &["go"])),
                install: "golang-go golang-github-stretchr-testify-dev",
            },
            Language::Rust => &Row {
                name: "rust",
                aliases: &[],
                extensions: &["rs"],
                program: Some((Runner::Rust, &["rustc"])),
                install: "rustc librust-rand-dev librust-regex-dev librust-md5-dev",
            },
        }
    }

    /// The name `task.json` and the harness's build shims give it (`cpp`, `javascript`).
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The language named `name` (case-insensitive; `js` and `c++` too).
    pub fn from_name(name: &str) -> Option<Language> {
        let name = name.to_ascii_lowercase();
        Language::ALL.into_iter().find(|l| {
            let row = l.row();
            row.name == name || row.aliases.contains(&name.as_str())
        })
    }

    /// The language a file's name says it is written in, by its extension.
    pub fn of_path(path: &str) -> Option<Language> {
        let file = path.rsplit('/').next().unwrap_or(path);
        let (_, ext) = file.rsplit_once('.')?;
        Language::ALL
            .into_iter()
            .find(|l| l.row().extensions.contains(&ext))
    }

    /// Its source files' extensions, without the dot.
    pub fn extensions(self) -> &'static [&'static str] {
        self.row().extensions
    }

    /// The runner of a test program written in it ([`Runner::Cpp`] for C++), and the tools its
    /// test command may start with, the first the one the harness runs itself; `None` for
    /// Python, whose tests run under a test framework instead.
    pub fn program(self) -> Option<(Runner, &'static [&'static str])> {
        self.row().program
    }

    /// The Debian packages that install its toolchain where every sandbox backend sees it
    /// (`apt-get install ...`): what to tell a user whose machine lacks it.
    pub fn install(self) -> &'static str {
        self.row().install
    }
}

impl Runner {
    /// For a runner whose test command names a program's tool (`g++ test.cpp ...`,
    /// `node test.js`): the program's language and the tools a test command may start with,
    /// the first the one the harness runs itself ([`Language::program`]). `None` for the Python
    /// runners and [`Runner::ExitCode`].
    pub fn program_tools(self) -> Option<(Language, &'static [&'static str])> {
        Language::ALL.into_iter().find_map(|l| match l.program() {
            Some((runner, tools)) if runner == self => Some((l, tools)),
            _ => None,
        })
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Language {
    type Err = crate::TaskError;
    fn from_str(s: &str) -> Result<Language, crate::TaskError> {
        Language::from_name(s).ok_or_else(|| crate::TaskError::UnknownLanguage {
            name: s.to_ascii_lowercase(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_round_trips_by_name_and_serde_and_is_found_by_its_extensions() {
        for l in Language::ALL {
            assert_eq!(Language::from_name(l.name()), Some(l));
            assert_eq!(l.name().parse::<Language>().unwrap(), l);
            let json = serde_json::to_string(&l).unwrap();
            assert_eq!(json, format!("\"{}\"", l.name()));
            assert_eq!(serde_json::from_str::<Language>(&json).unwrap(), l);
            for ext in l.extensions() {
                assert_eq!(Language::of_path(&format!("src/a.b/x.{ext}")), Some(l));
            }
            if let Some((runner, tools)) = l.program() {
                assert_eq!(runner.program_tools(), Some((l, tools)));
            }
        }
        assert_eq!(Language::from_name("JS"), Some(Language::JavaScript));
        assert_eq!(Language::from_name("C++"), Some(Language::Cpp));
        assert_eq!(Language::of_path("Makefile"), None);
        assert_eq!(Language::of_path("dir.py/README"), None);
        assert_eq!(Runner::Pytest.program_tools(), None);
        let e = "cobol".parse::<Language>().unwrap_err().to_string();
        assert!(
            e.contains("\"cobol\"") && e.contains("python, javascript"),
            "{e}"
        );
    }
}

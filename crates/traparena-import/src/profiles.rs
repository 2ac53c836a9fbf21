//! Test runner profiles: how a repository's tests are run, where a record's test name lives,
//! and how names become a selection — one home for what differs between pytest, unittest,
//! django's `tests/runtests.py` and sympy's `bin/test`.
//!
//! A SWE-bench record names its tests the way SWE-bench's log parser for the repository read
//! them: pytest node ids (`tests/test_x.py::TestA::test_b[1]`), django's `test_b (app.tests.TestA)`
//! (from Python 3.11 `test_b (app.tests.TestA.test_b)`, and for a test with a docstring the
//! docstring's first line), sympy's bare `test_b`. A [`RunnerProfile`] turns such names into the
//! file that holds the test, the symbol it is in that file, its name in a renamed copy of the
//! file (the public tests), and the command that runs a selection. The outcomes themselves always
//! come from the harness's instrumentation of the runner ([`Runner`]), which reports each test
//! under the names the profile's records use.
//!
//! Environments name their profile (`"profile": "django"`); [`Profiles`] is the open table they
//! are resolved in, so adding a repository is data plus at most one profile.

use std::collections::BTreeMap;
use std::sync::Arc;

use traparena_task::Runner;

/// Where a record's test name lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The test file, relative to the repository root.
    pub file: String,
    /// The qualified symbol the test is in that file (`TestA.test_b`, `test_b`), when the name
    /// tells.
    pub symbol: Option<String>,
}

/// The test files an instance touches, with what each defines (after the test patch), for
/// profiles whose names do not say their file.
pub trait TestFiles {
    /// The touched test files, in order.
    fn files(&self) -> Vec<String>;
    /// True when `file` defines the qualified symbol `symbol` (after the test patch).
    fn defines(&self, file: &str, symbol: &str) -> bool;
}

/// How one repository's tests run and how its records name them.
///
/// Required: [`runner`](RunnerProfile::runner) and [`command`](RunnerProfile::command); the name
/// hooks default to pytest's node ids (`FILE::CLASS::TEST[PARAMS]`).
pub trait RunnerProfile: Send + Sync + std::fmt::Debug {
    /// How the harness reads a run.
    fn runner(&self) -> Runner;

    /// The command that runs `targets` (files, or what [`targets`](RunnerProfile::targets)
    /// returned) with the interpreter `python`.
    fn command(&self, python: &str, targets: &[String]) -> Vec<String>;

    /// Where the record name `name` lives; `None` when the name does not say and no touched file
    /// defines it.
    fn locate(&self, name: &str, touched: &dyn TestFiles) -> Option<Located> {
        let _ = touched;
        let (file, rest) = name.split_once("::")?;
        let symbol = rest.split('[').next().unwrap_or(rest).replace("::", ".");
        Some(Located {
            file: file.to_owned(),
            symbol: Some(symbol),
        })
    }

    /// The name the test `name` of `from` has in a copy of that file at `to`.
    fn renamed(&self, name: &str, from: &str, to: &str) -> String {
        match name.strip_prefix(from).and_then(|r| r.strip_prefix("::")) {
            Some(rest) => format!("{to}::{rest}"),
            None => name.to_owned(),
        }
    }

    /// The name this runner gives the test `symbol` (qualified, `TestA.test_b`) of `file`, for
    /// public tests read from an untouched file of the tree; `None` when `symbol` is not a test,
    /// and by default (a profile that cannot name a test from its symbol reads none).
    fn name_in(&self, file: &str, symbol: &str) -> Option<String> {
        let _ = (file, symbol);
        None
    }

    /// The command of a run that tries candidates, `command` made tolerant of a file that
    /// cannot be collected, so that it does not stop the others: by default as it is (a runner
    /// that runs each file apart needs nothing).
    fn tolerant(&self, command: Vec<String>) -> Vec<String> {
        command
    }

    /// What to pass to [`command`](RunnerProfile::command) to run the tests `names` of the
    /// files `files`: by default the files, whole. A profile whose runner selects single tests
    /// returns them, so that only the tests that matter run.
    fn targets(&self, files: &[String], names: &[String]) -> Vec<String> {
        let _ = names;
        files.to_vec()
    }

    /// What runs while names are still being tried (some may not be tests, some files may not
    /// import): by default the files, whole, so that one bad name or file cannot stop the
    /// others. A runner for which a missing or broken target fails only itself (django's
    /// labels) runs the selection.
    fn trial_targets(&self, files: &[String], names: &[String]) -> Vec<String> {
        let _ = names;
        files.to_vec()
    }
}

/// pytest: `PYTHON -m pytest TARGETS`, names are node ids; a selection runs the test functions
/// its names belong to (`FILE::CLASS::TEST`, every parameter of it).
#[derive(Debug, Clone, Copy, Default)]
pub struct Pytest;

impl RunnerProfile for Pytest {
    fn runner(&self) -> Runner {
        Runner::Pytest
    }

    fn command(&self, python: &str, targets: &[String]) -> Vec<String> {
        let mut v = vec![python.to_owned(), "-m".into(), "pytest".into()];
        v.extend(targets.iter().cloned());
        v
    }

    fn name_in(&self, file: &str, symbol: &str) -> Option<String> {
        pytest_name(file, symbol)
    }

    fn tolerant(&self, mut command: Vec<String>) -> Vec<String> {
        // After `PYTHON -m pytest`: one file that cannot be collected stops no other.
        let at = command.len().min(3);
        command.insert(at, "--continue-on-collection-errors".into());
        command
    }

    fn targets(&self, files: &[String], names: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for n in names {
            // The test function (all its parameters): a cut-off or odd parameter id cannot be
            // given to pytest, the function always can.
            let function = n.split('[').next().unwrap_or(n);
            if function.contains("::") && !out.iter().any(|o| o == function) {
                out.push(function.to_owned());
            }
        }
        // Files none of whose tests are named run whole (a name that does not say its file).
        if out.is_empty() {
            return files.to_vec();
        }
        out
    }
}

/// pytest's node id of `symbol` in `file` when pytest collects it by its default rules: a
/// module-level `test*` function, or a `test*` method of a `Test*` class.
fn pytest_name(file: &str, symbol: &str) -> Option<String> {
    let parts: Vec<&str> = symbol.split('.').collect();
    let test = match parts.as_slice() {
        [f] => f.starts_with("test"),
        [class, m] => class.starts_with("Test") && m.starts_with("test"),
        _ => false,
    };
    test.then(|| format!("{file}::{}", parts.join("::")))
}

/// pytest with a local httpbin: `PYTHON -m pytest -p traparena_httpbin TARGETS`, for suites
/// that read `HTTPBIN_URL` (psf/requests before its tests took pytest-httpbin's fixture, which
/// otherwise reach httpbin.org): the harness's plugin serves httpbin on loopback inside the
/// sandbox, from the environment's `httpbin` and `pytest-httpbin` packages.
#[derive(Debug, Clone, Copy, Default)]
pub struct PytestHttpbin;

impl RunnerProfile for PytestHttpbin {
    fn runner(&self) -> Runner {
        Runner::Pytest
    }

    fn command(&self, python: &str, targets: &[String]) -> Vec<String> {
        let mut v = [python, "-m", "pytest", "-p", "traparena_httpbin"]
            .map(String::from)
            .to_vec();
        v.extend(targets.iter().cloned());
        v
    }

    fn tolerant(&self, command: Vec<String>) -> Vec<String> {
        Pytest.tolerant(command)
    }

    fn name_in(&self, file: &str, symbol: &str) -> Option<String> {
        pytest_name(file, symbol)
    }

    fn targets(&self, files: &[String], names: &[String]) -> Vec<String> {
        Pytest.targets(files, names)
    }
}

/// unittest: `PYTHON -m unittest TARGETS`, names are test ids (`pkg.module.Class.test`), files
/// are given as their dotted module names.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unittest;

impl RunnerProfile for Unittest {
    fn runner(&self) -> Runner {
        Runner::Unittest
    }

    fn command(&self, python: &str, targets: &[String]) -> Vec<String> {
        let mut v = vec![python.to_owned(), "-m".into(), "unittest".into()];
        v.extend(targets.iter().map(|t| module_of(t, "")));
        v
    }

    fn locate(&self, name: &str, touched: &dyn TestFiles) -> Option<Located> {
        // The longest module prefix that is a touched file.
        touched.files().into_iter().find_map(|f| {
            let m = module_of(&f, "");
            let rest = name.strip_prefix(&m)?.strip_prefix('.')?;
            Some(Located {
                file: f,
                symbol: Some(rest.to_owned()),
            })
        })
    }

    fn renamed(&self, name: &str, from: &str, to: &str) -> String {
        let (m_from, m_to) = (module_of(from, ""), module_of(to, ""));
        match name.strip_prefix(&m_from).and_then(|r| r.strip_prefix('.')) {
            Some(rest) => format!("{m_to}.{rest}"),
            None => name.to_owned(),
        }
    }

    fn targets(&self, files: &[String], names: &[String]) -> Vec<String> {
        let _ = names;
        files.to_vec()
    }
}

/// django's own runner: `PYTHON tests/runtests.py --verbosity 2 --settings=test_sqlite
/// --parallel 1 LABELS`, as SWE-bench runs it. A label is a test module's dotted path under
/// `tests/` (`admin_views.tests`), or a test's (`admin_views.tests.AdminTest.test_x`). Names are
/// `test_x (admin_views.tests.AdminTest)`, from Python 3.11 `test_x
/// (admin_views.tests.AdminTest.test_x)`, or a docstring's first line, which does not say its
/// file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Django;

/// `test_x (a.b.C)` or `test_x (a.b.C.test_x)` → (`a.b`, `C`, `test_x`).
fn django_parts(name: &str) -> Option<(String, String, String)> {
    let (method, rest) = name.split_once(" (")?;
    let inner = rest.strip_suffix(')')?;
    if method.is_empty() || method.contains(char::is_whitespace) || inner.contains(' ') {
        return None;
    }
    let inner = inner
        .strip_suffix(method)
        .and_then(|s| s.strip_suffix('.'))
        .unwrap_or(inner);
    let (module, class) = inner.rsplit_once('.')?;
    Some((module.to_owned(), class.to_owned(), method.to_owned()))
}

impl RunnerProfile for Django {
    fn runner(&self) -> Runner {
        Runner::Django
    }

    fn command(&self, python: &str, targets: &[String]) -> Vec<String> {
        let mut v: Vec<String> = [
            python,
            "tests/runtests.py",
            "--verbosity",
            "2",
            "--settings=test_sqlite",
            "--parallel",
            "1",
        ]
        .map(String::from)
        .to_vec();
        v.extend(targets.iter().map(|t| match t.strip_suffix(".py") {
            Some(_) => module_of(t, "tests/"),
            None => t.clone(),
        }));
        v
    }

    fn locate(&self, name: &str, touched: &dyn TestFiles) -> Option<Located> {
        match django_parts(name) {
            Some((module, class, method)) => Some(Located {
                file: format!("tests/{}.py", module.replace('.', "/")),
                symbol: Some(format!("{class}.{method}")),
            }),
            // A docstring line: the touched file, if only one holds tests.
            None => {
                let files = touched.files();
                (files.len() == 1).then(|| Located {
                    file: files[0].clone(),
                    symbol: None,
                })
            }
        }
    }

    fn renamed(&self, name: &str, from: &str, to: &str) -> String {
        let (m_from, m_to) = (module_of(from, "tests/"), module_of(to, "tests/"));
        match django_parts(name) {
            Some((module, _, _)) if module == m_from => {
                name.replacen(&format!("({m_from}."), &format!("({m_to}."), 1)
            }
            _ => name.to_owned(),
        }
    }

    fn targets(&self, files: &[String], names: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut whole = false;
        for n in names {
            match django_parts(n) {
                Some((module, class, method)) => {
                    let label = format!("{module}.{class}.{method}");
                    if !out.contains(&label) {
                        out.push(label);
                    }
                }
                None => whole = true,
            }
        }
        // A docstring-named test cannot be given as a label: its files run whole.
        if whole || out.is_empty() {
            let modules: Vec<String> = files.iter().map(|f| module_of(f, "tests/")).collect();
            out.retain(|l| !modules.iter().any(|m| l.starts_with(&format!("{m}."))));
            out.extend(modules);
        }
        out
    }

    fn trial_targets(&self, files: &[String], names: &[String]) -> Vec<String> {
        // A label django cannot load is an error of its own; the others still run.
        self.targets(files, names)
    }
}

/// sympy's own runner: `PYTHON bin/test -C --verbose FILES`, as SWE-bench runs it. Names are bare
/// test function names; a name lives in the touched test file that defines it.
///
/// A selection runs only the named tests of the files: `FILES -k NAME...`, where the harness's
/// sympy shim takes each name exactly (sympy's own `-k` matches substrings, and before sympy 1.6
/// takes one keyword). A name that is not a test runs nothing and fails no other, so names being
/// tried run as a selection too. SWE-bench runs the files whole and reads the named tests'
/// outcomes; running only them gives the same verdicts in a fraction of the time (a
/// `test_simplify.py` runs for minutes).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sympy;

impl RunnerProfile for Sympy {
    fn runner(&self) -> Runner {
        Runner::Sympy
    }

    fn command(&self, python: &str, targets: &[String]) -> Vec<String> {
        let mut v: Vec<String> = [python, "bin/test", "-C", "--verbose"]
            .map(String::from)
            .to_vec();
        v.extend(targets.iter().cloned());
        v
    }

    fn locate(&self, name: &str, touched: &dyn TestFiles) -> Option<Located> {
        if name.contains(char::is_whitespace) || name.contains("::") {
            return None;
        }
        touched
            .files()
            .into_iter()
            .find(|f| touched.defines(f, name))
            .map(|file| Located {
                file,
                symbol: Some(name.to_owned()),
            })
    }

    fn renamed(&self, name: &str, _from: &str, _to: &str) -> String {
        name.to_owned()
    }

    fn targets(&self, files: &[String], names: &[String]) -> Vec<String> {
        let mut out = files.to_vec();
        if !names.is_empty() {
            out.push("-k".into());
            out.extend(names.iter().cloned());
        }
        out
    }

    fn trial_targets(&self, files: &[String], names: &[String]) -> Vec<String> {
        self.targets(files, names)
    }
}

/// `a/b/c.py` less `strip` → `a.b.c`.
fn module_of(file: &str, strip: &str) -> String {
    let f = file.strip_prefix(strip).unwrap_or(file);
    f.strip_suffix(".py").unwrap_or(f).replace('/', ".")
}

/// The open table of runner profiles, by the name environments give them.
#[derive(Debug, Clone)]
pub struct Profiles(BTreeMap<String, Arc<dyn RunnerProfile>>);

/// The profile an environment names when it names none.
pub const DEFAULT_PROFILE: &str = "pytest";

impl Default for Profiles {
    /// The built-in profiles: `pytest`, `pytest-httpbin` (pytest with a local httpbin, see
    /// [`PytestHttpbin`]), `unittest`, `django`, `sympy`, and `tox-current-env` (sphinx:
    /// SWE-bench runs `tox --current-env -epy39 -v --`, whose tox environment runs pytest in
    /// the current interpreter; TrapArena runs that pytest directly).
    fn default() -> Self {
        let mut p = Profiles(BTreeMap::new());
        p.register("pytest", Arc::new(Pytest));
        p.register("pytest-httpbin", Arc::new(PytestHttpbin));
        p.register("unittest", Arc::new(Unittest));
        p.register("django", Arc::new(Django));
        p.register("sympy", Arc::new(Sympy));
        p.register("tox-current-env", Arc::new(Pytest));
        p
    }
}

/// A runner profile name that [`Profiles`] does not register.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown runner profile {name:?} (known: {})", .known.join(", "))]
#[non_exhaustive]
pub struct UnknownProfile {
    /// The name asked for.
    pub name: String,
    /// The names registered, sorted.
    pub known: Vec<String>,
}

/// Two tables are equal when they register the same names (profiles are code, not data).
impl PartialEq for Profiles {
    fn eq(&self, other: &Self) -> bool {
        self.names() == other.names()
    }
}

impl Eq for Profiles {}

impl Profiles {
    /// Adds (or replaces) the profile `name`.
    pub fn register(&mut self, name: &str, profile: Arc<dyn RunnerProfile>) {
        self.0.insert(name.to_owned(), profile);
    }

    /// The profile `name`, or an error listing the known ones.
    pub fn get(&self, name: &str) -> Result<Arc<dyn RunnerProfile>, UnknownProfile> {
        self.0.get(name).cloned().ok_or_else(|| UnknownProfile {
            name: name.to_owned(),
            known: self.names(),
        })
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Files(Vec<(&'static str, Vec<&'static str>)>);

    impl TestFiles for Files {
        fn files(&self) -> Vec<String> {
            self.0.iter().map(|(f, _)| f.to_string()).collect()
        }
        fn defines(&self, file: &str, symbol: &str) -> bool {
            self.0
                .iter()
                .any(|(f, s)| *f == file && s.contains(&symbol))
        }
    }

    #[test]
    fn names_are_located_per_profile() {
        let touched = Files(vec![
            ("tests/admin_views/tests.py", vec![]),
            ("sympy/core/tests/test_basic.py", vec!["test_issue_1"]),
        ]);
        type Case<'a> = (
            &'a dyn RunnerProfile,
            &'a str,
            Option<(&'a str, Option<&'a str>)>,
        );
        let cases: &[Case<'_>] = &[
            (
                &Pytest,
                "tests/test_x.py::TestA::test_b[1-2]",
                Some(("tests/test_x.py", Some("TestA.test_b"))),
            ),
            (&Pytest, "test_b", None),
            (
                &Django,
                "test_x (admin_views.tests.AdminTest)",
                Some(("tests/admin_views/tests.py", Some("AdminTest.test_x"))),
            ),
            (
                &Django,
                "test_x (admin_views.tests.AdminTest.test_x)",
                Some(("tests/admin_views/tests.py", Some("AdminTest.test_x"))),
            ),
            // A docstring line, with two touched files: no file.
            (&Django, "Regression test for #10348 (it is)", None),
            (
                &Sympy,
                "test_issue_1",
                Some(("sympy/core/tests/test_basic.py", Some("test_issue_1"))),
            ),
            (&Sympy, "test_issue_2", None),
            (
                &Unittest,
                "tests.admin_views.tests.AdminTest.test_x",
                Some(("tests/admin_views/tests.py", Some("AdminTest.test_x"))),
            ),
        ];
        for (profile, name, want) in cases {
            let got = profile.locate(name, &touched);
            let want = want.map(|(f, s)| Located {
                file: f.to_owned(),
                symbol: s.map(str::to_owned),
            });
            assert_eq!(got, want, "{profile:?} {name}");
        }
    }

    #[test]
    fn renamed_copies_keep_the_test() {
        let cases: &[(&dyn RunnerProfile, &str, &str)] = &[
            (
                &Pytest,
                "t/test_a.py::T::x[1]",
                "t/test_a_public.py::T::x[1]",
            ),
            (&Django, "test_x (a.tests.T)", "test_x (a.tests_public.T)"),
            (
                &Django,
                "test_x (a.tests.T.test_x)",
                "test_x (a.tests_public.T.test_x)",
            ),
            (&Sympy, "test_x", "test_x"),
        ];
        for (profile, name, want) in cases {
            let (from, to) = if matches!(profile.runner(), Runner::Django) {
                ("tests/a/tests.py", "tests/a/tests_public.py")
            } else {
                ("t/test_a.py", "t/test_a_public.py")
            };
            assert_eq!(profile.renamed(name, from, to), *want, "{profile:?}");
        }
    }

    #[test]
    fn selections_run_only_what_is_named_where_the_runner_can() {
        let files = vec!["tests/a/tests.py".to_owned()];
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            Django.command(
                "py",
                &Django.targets(
                    &files,
                    &names(&["test_x (a.tests.T)", "test_y (a.tests.T.test_y)"])
                )
            )[7..],
            ["a.tests.T.test_x", "a.tests.T.test_y"]
        );
        // A docstring name: the module runs whole.
        assert_eq!(
            Django.targets(&files, &names(&["test_x (a.tests.T)", "Checks a thing."])),
            ["a.tests"]
        );
        assert_eq!(
            Pytest.targets(
                &["t/test_a.py".into()],
                &names(&[
                    "t/test_a.py::T::x[1]",
                    "t/test_a.py::T::x[2",
                    "t/test_a.py::y"
                ])
            ),
            ["t/test_a.py::T::x", "t/test_a.py::y"]
        );
        // sympy: the files, then the names the shim runs exactly; no names, the files whole.
        let mut named = files.clone();
        named.extend(names(&["-k", "test_x", "test_y"]));
        assert_eq!(Sympy.targets(&files, &names(&["test_x", "test_y"])), named);
        assert_eq!(
            Sympy.trial_targets(&files, &names(&["test_x", "test_y"])),
            named
        );
        assert_eq!(Sympy.targets(&files, &[]), files);
        assert_eq!(
            Unittest.command("py", &["tests/test_a.py".into()]),
            ["py", "-m", "unittest", "tests.test_a"]
        );
    }

    #[test]
    fn unknown_profiles_are_named() {
        let p = Profiles::default();
        assert!(p.get("django").is_ok());
        let e = p.get("nose").unwrap_err();
        assert_eq!(e.name, "nose");
        assert_eq!(
            e.to_string(),
            "unknown runner profile \"nose\" (known: django, pytest, pytest-httpbin, sympy, tox-current-env, unittest)"
        );
    }
}

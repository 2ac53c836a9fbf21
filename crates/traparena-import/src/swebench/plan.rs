//! How an instance's test patch becomes hidden files and public copies, and which of its test
//! names each file holds, read through the repository's runner profile.

use crate::skip::{Skip, SkipReason, Stop};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use traparena_env::{Sandbox, Workspace};
use traparena_eval::code::python::PyFile;
use traparena_task::Patch;

use super::SweBenchInstance;
use crate::common::write_file;
use crate::error::{ImportError, io};
use crate::profiles::{RunnerProfile, TestFiles};

/// What an instance becomes before it is written.
pub(super) struct Plan {
    /// The files the test patch leaves, with the patch applied: path, content. The base version
    /// of each one that exists at the base commit stays in `repo/` (as SWE-bench's base commit
    /// has it, so that modules importing it load); only this content is secret.
    pub hidden: Vec<(String, Vec<u8>)>,
    /// The files public tests are read from, with the candidate test names in each.
    pub public: Vec<PublicFile>,
    /// Candidate name in a copy → the instance's name.
    pub public_source: Vec<(String, String)>,
}

impl Plan {
    /// The paths of the files public tests are read from, in order.
    pub fn public_paths(&self) -> Vec<String> {
        self.public.iter().map(|f| f.path.clone()).collect()
    }

    /// The paths of the untouched files public tests are read from in place.
    pub fn in_place_paths(&self) -> Vec<String> {
        self.public
            .iter()
            .filter(|f| matches!(f.origin, PublicOrigin::InPlace))
            .map(|f| f.path.clone())
            .collect()
    }
}

/// A file the public tests are read from.
pub(super) struct PublicFile {
    /// Its path in `repo/`.
    pub path: String,
    /// The candidate test names in it.
    pub ids: Vec<String>,
    /// Where it comes from.
    pub origin: PublicOrigin,
}

/// Where a public test file comes from.
pub(super) enum PublicOrigin {
    /// A renamed copy of a touched file's base version (the `PASS_TO_PASS` tests it holds):
    /// written into `repo/`, and removed again when none of its tests is chosen.
    Copy(Vec<u8>),
    /// An untouched test file beside the touched ones, read where it is, when the touched files
    /// hold no `PASS_TO_PASS` test at the base commit (their tests are all new or all fail
    /// there): never written or removed.
    InPlace,
}

/// At most this many untouched files beside the touched ones are tried for public tests.
const MAX_NEIGHBOURS: usize = 2;

/// Python files with the symbols each defines, parsed once.
pub(super) struct Parsed {
    files: Vec<(String, BTreeSet<String>)>,
}

impl Parsed {
    /// The Python files among `files` (path, content), parsed.
    pub fn new<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Parsed {
        Parsed {
            files: files
                .into_iter()
                .filter(|(p, _)| p.ends_with(".py"))
                .map(|(p, bytes)| (p.to_owned(), symbols(bytes).into_iter().collect()))
                .collect(),
        }
    }
}

/// The qualified symbols a Python file defines (`TestA.test_b`), none when it does not parse;
/// bytes that are not UTF-8 are read lossily.
fn symbols(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    PyFile::parse(&text)
        .map(|f| f.symbols().into_iter().map(|s| s.name).collect())
        .unwrap_or_default()
}

impl TestFiles for Parsed {
    fn files(&self) -> Vec<String> {
        self.files.iter().map(|(p, _)| p.clone()).collect()
    }

    fn defines(&self, file: &str, symbol: &str) -> bool {
        self.files
            .iter()
            .any(|(p, s)| p == file && s.contains(symbol))
    }
}

/// Splits the test patch into hidden files and public copies: the public tests are the
/// `PASS_TO_PASS` tests of touched test files that exist at the base commit, in a renamed copy
/// of the file beside the original.
pub(super) fn plan(
    inst: &SweBenchInstance,
    test_patch: &Patch,
    repo_dir: &Path,
    sandbox: &Sandbox,
    profile: &dyn RunnerProfile,
) -> Result<Plan, Stop> {
    let refuse = |r: SkipReason, d: String| Err(Stop::Skip(Skip::new(r, d)));
    // The touched files' base versions, then test_patch applied to them.
    let (scratch, base) = base_files(test_patch, repo_dir, "traparena-testpatch-")?;
    let mut ws = Workspace::materialize(scratch.path(), sandbox)?;
    let applied = ws.apply_patch(&inst.test_patch)?;
    if !applied.applied {
        return refuse(SkipReason::TestPatchDoesNotApply, applied.message);
    }
    let mut hidden = Vec::new();
    for f in &test_patch.files {
        let Some(new) = &f.new_path else { continue };
        let p = ws.path().join(new.as_str());
        let bytes = std::fs::read(&p).map_err(io(&p))?;
        hidden.push((new.as_str().to_owned(), bytes));
    }
    if hidden.is_empty() {
        return refuse(
            SkipReason::TestPatchOnlyDeletes,
            "no file is left to hold hidden tests".into(),
        );
    }
    let touched = Parsed::new(hidden.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
    let at_base = Parsed::new(base.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
    let hidden_paths: BTreeSet<&str> = hidden.iter().map(|(p, _)| p.as_str()).collect();
    let mut public_path: BTreeMap<String, String> = BTreeMap::new();
    let mut public: Vec<PublicFile> = Vec::new();
    let mut public_source = Vec::new();
    for name in &inst.pass_to_pass {
        let Some(loc) = profile.locate(name, &touched) else {
            continue;
        };
        let Some(symbol) = &loc.symbol else { continue };
        if !hidden_paths.contains(loc.file.as_str()) || !at_base.defines(&loc.file, symbol) {
            continue;
        }
        let Some(text) = base.get(&loc.file) else {
            continue;
        };
        let target = match public_path.get(&loc.file) {
            Some(t) => t.clone(),
            None => {
                let t = public_name(&loc.file, repo_dir, &hidden_paths);
                public.push(PublicFile {
                    path: t.clone(),
                    ids: Vec::new(),
                    origin: PublicOrigin::Copy(text.clone()),
                });
                public_path.insert(loc.file.clone(), t.clone());
                t
            }
        };
        let id = profile.renamed(name, &loc.file, &target);
        if let Some(entry) = public.iter_mut().find(|f| f.path == target) {
            entry.ids.push(id.clone());
        }
        public_source.push((id, name.clone()));
    }
    if public_source.is_empty() {
        public = neighbours(&hidden_paths, repo_dir, profile)?;
    }
    if public.is_empty() {
        return refuse(
            SkipReason::NoPublicTest,
            "no PASS_TO_PASS test of the files the test patch touches exists at the base commit, \
             and no untouched test file beside them defines a test the runner can name"
                .into(),
        );
    }
    Ok(Plan {
        hidden,
        public,
        public_source,
    })
}

/// Public test files read in place: the untouched test files in the folders of the touched
/// ones, whose base version defines tests the profile can name, the ones sharing the longest
/// start of their name with a touched file first (`unittest_pyreverse_diadefs.py` for
/// `unittest_pyreverse_writer.py`); at most [`MAX_NEIGHBOURS`].
pub(super) fn neighbours(
    hidden: &BTreeSet<&str>,
    repo_dir: &Path,
    profile: &dyn RunnerProfile,
) -> Result<Vec<PublicFile>, ImportError> {
    let mut found: Vec<(usize, PublicFile)> = Vec::new();
    for touched in hidden {
        let (dir, touched_name) = touched.rsplit_once('/').unwrap_or(("", touched));
        let folder = repo_dir.join(dir);
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".py") && n.contains("test") && n != "conftest.py")
            .collect();
        names.sort();
        for name in names {
            let path = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            if hidden.contains(path.as_str()) || found.iter().any(|(_, f)| f.path == path) {
                continue;
            }
            let file = folder.join(&name);
            let bytes = std::fs::read(&file).map_err(io(&file))?;
            let ids: Vec<String> = symbols(&bytes)
                .iter()
                .filter_map(|s| profile.name_in(&path, s))
                .collect();
            if ids.is_empty() {
                continue;
            }
            let shared = name
                .chars()
                .zip(touched_name.chars())
                .take_while(|(a, b)| a == b)
                .count();
            let origin = PublicOrigin::InPlace;
            found.push((shared, PublicFile { path, ids, origin }));
        }
    }
    found.sort_by(|(a, fa), (b, fb)| b.cmp(a).then_with(|| fa.path.cmp(&fb.path)));
    Ok(found
        .into_iter()
        .take(MAX_NEIGHBOURS)
        .map(|(_, f)| f)
        .collect())
}

/// `dir/test_x.py` → `dir/test_x_public.py` (or `_public2`, ... when taken).
fn public_name(file: &str, repo_dir: &Path, hidden: &BTreeSet<&str>) -> String {
    let stem = file.strip_suffix(".py").unwrap_or(file);
    (1..)
        .map(|n| {
            if n == 1 {
                format!("{stem}_public.py")
            } else {
                format!("{stem}_public{n}.py")
            }
        })
        .find(|c| !repo_dir.join(c).exists() && !hidden.contains(c.as_str()))
        .expect("some name is free")
}

/// A scratch folder holding the base versions (from `repo_dir`) of the files `patch` touches
/// that exist there, and those versions by path.
type BaseFiles = (tempfile::TempDir, BTreeMap<String, Vec<u8>>);

fn base_files(patch: &Patch, repo_dir: &Path, prefix: &str) -> Result<BaseFiles, ImportError> {
    let scratch = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(io(std::env::temp_dir()))?;
    let mut base = BTreeMap::new();
    for f in &patch.files {
        for p in f.paths() {
            let src = repo_dir.join(p.as_str());
            if src.is_file() {
                let bytes = std::fs::read(&src).map_err(io(&src))?;
                write_file(scratch.path(), p.as_str(), &bytes)?;
                base.insert(p.as_str().to_owned(), bytes);
            }
        }
    }
    Ok((scratch, base))
}

/// The reference patch in the base tree's own line numbers, when it applies there only with
/// offsets (a release tree standing in for the base commit, or a clone whose history moved the
/// code): the reference locations are read from its line numbers, and must be where the code
/// is. `None` when it applies at its own line numbers (the record's text is kept as it is) or
/// does not apply at all (validation says so).
pub(super) fn rebased_patch(
    patch_text: &str,
    repo_dir: &Path,
    sandbox: &Sandbox,
) -> Result<Option<String>, ImportError> {
    let Ok(patch) = Patch::parse(patch_text, Path::new("patch")) else {
        return Ok(None);
    };
    let (scratch, _) = base_files(&patch, repo_dir, "traparena-patch-")?;
    let mut ws = Workspace::materialize(scratch.path(), sandbox)?;
    if !ws.apply_patch(patch_text)?.applied {
        return Ok(None);
    }
    let diff = ws.diff()?;
    let Ok(rebased) = Patch::parse(&diff, Path::new("rebased patch")) else {
        return Ok(None);
    };
    let starts = |p: &Patch| -> Vec<(usize, usize)> {
        p.files
            .iter()
            .flat_map(|f| f.hunks.iter().map(|h| (h.old_start, h.new_start)))
            .collect()
    };
    Ok((starts(&rebased) != starts(&patch)).then_some(diff))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::{Pytest, Unittest};

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, text) in files {
            write_file(d.path(), p, text.as_bytes()).unwrap();
        }
        d
    }

    #[test]
    fn neighbours_share_the_longest_name_start_and_define_nameable_tests() {
        let d = tree(&[
            (
                "tests/unittest_pyreverse_writer.py",
                "def test_old():\n    pass\n",
            ),
            (
                "tests/unittest_pyreverse_diadefs.py",
                "class TestD:\n    def test_a(self):\n        pass\n\n\ndef helper():\n    pass\n",
            ),
            ("tests/unittest_lint.py", "def test_l():\n    pass\n"),
            ("tests/test_zzz.py", "def test_z():\n    pass\n"),
            ("tests/test_helpers_only.py", "def helper():\n    pass\n"),
            ("tests/conftest.py", "def test_not_a_module():\n    pass\n"),
            ("tests/data/test_deeper.py", "def test_x():\n    pass\n"),
        ]);
        let hidden: BTreeSet<&str> = ["tests/unittest_pyreverse_writer.py"].into();
        let found = neighbours(&hidden, d.path(), &Pytest).unwrap();
        let got: Vec<(&str, &[String])> = found
            .iter()
            .map(|f| (f.path.as_str(), f.ids.as_slice()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "tests/unittest_pyreverse_diadefs.py",
                    &["tests/unittest_pyreverse_diadefs.py::TestD::test_a".to_owned()][..]
                ),
                (
                    "tests/unittest_lint.py",
                    &["tests/unittest_lint.py::test_l".to_owned()][..]
                ),
            ]
        );
        assert!(
            found
                .iter()
                .all(|f| matches!(f.origin, PublicOrigin::InPlace))
        );
        // A profile that cannot name a test from its symbol reads none; nor does a folder
        // without other test files.
        assert!(neighbours(&hidden, d.path(), &Unittest).unwrap().is_empty());
        let lonely: BTreeSet<&str> = ["tests/data/test_deeper.py"].into();
        assert!(neighbours(&lonely, d.path(), &Pytest).unwrap().is_empty());
    }
}

//! The pins file and the bundled environments: which environment ([`PinEntry`], the builder's
//! description of one) each (repository, version) gets.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use traparena_pyenv::interpreters::is_version;
use traparena_pyenv::{InterpreterSearch, PinEntry, find_python, major_minor, setup_for};
use traparena_task::Cutoff;
use traparena_task::Setup;

use crate::error::{ImportError, io};

/// A pins file: per repository (`owner/name`), per version (`major.minor`, or `*` for any other
/// version), what its environment holds ([`PinEntry`]).
///
/// ```json
/// {
///   "pallets/flask": {
///     "2.3": {"python": "/usr/bin/python3", "packages": ["pytest==7.2.0"], "source_dirs": ["src"]}
///   }
/// }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Pins(pub BTreeMap<String, BTreeMap<String, PinEntry>>);

impl Pins {
    /// Reads a pins file, naming the offending field on error.
    pub fn load(path: &Path) -> Result<Pins, ImportError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ImportError::Input(format!(
                    "{}: no such pins file",
                    path.display()
                )));
            }
            Err(e) => return Err(io(path)(e)),
        };
        let pins: Pins = serde_json::from_str(&text).map_err(|source| ImportError::Json {
            path: path.to_owned(),
            line: source.line(),
            source,
        })?;
        for (repo, versions) in &pins.0 {
            for (v, e) in versions {
                if e.python.trim().is_empty() {
                    return Err(ImportError::Input(format!(
                        "{}: {repo} {v}: `python` is empty",
                        path.display()
                    )));
                }
            }
        }
        Ok(pins)
    }

    /// The entry for `repo` at `version`: the exact version, else its `major.minor`, else `*`.
    /// Returns the version key matched.
    pub fn lookup(&self, repo: &str, version: Option<&str>) -> Option<(&str, &PinEntry)> {
        let versions = self.0.get(repo)?;
        let mut keys: Vec<String> = Vec::new();
        if let Some(v) = version {
            keys.push(v.to_owned());
            if let Some(mm) = major_minor(v) {
                keys.push(mm);
            }
        }
        keys.push("*".into());
        keys.iter()
            .find_map(|k| versions.get_key_value(k.as_str()))
            .map(|(k, e)| (k.as_str(), e))
    }
}

/// The `setup` of the environment `repo` at `version` gets from `pins` (else the bundled
/// environments), resolved as `as_of` says, with its interpreter found by `search` (and copied
/// into `cache/python` where the sandbox user could not run it): what `traparena import setup
/// --env` builds without an instance. An environment that reads the repository's tree needs an
/// instance's tree, so it is refused here.
pub fn env_setup(
    pins: Option<&Pins>,
    repo: &str,
    version: &str,
    as_of: ResolveAsOf,
    search: &InterpreterSearch,
    cache: &Path,
) -> Result<Setup, ImportError> {
    let found = pins
        .and_then(|p| p.lookup(repo, Some(version)))
        .or_else(|| bundled_envs().lookup(repo, Some(version)));
    let Some((key, entry)) = found else {
        return Err(ImportError::Input(format!(
            "neither the pins nor the bundled environments have {repo} {version} (nor `*`)"
        )));
    };
    if entry.needs_tree() {
        return Err(ImportError::Input(format!(
            "{repo} {key} reads its dependencies from the repository's tree: import an \
             instance of it to build its environment"
        )));
    }
    let mut entry = entry.clone();
    as_of.apply(&mut entry);
    if is_version(&entry.python) {
        let found = find_python(&entry.python, search, &cache.join("python"))?;
        entry.python = found.executable.to_string_lossy().into_owned();
    }
    Ok(setup_for(&format!("{repo}@{key}"), &entry, cache))
}

/// Which instant the environments' packages are resolved as of (see
/// [`PinEntry::resolved_as_of`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolveAsOf {
    /// Each entry's own instant: the bundled environments' is the bundle's (SWE-bench
    /// Verified's publication, 2024-08-13); a pins file's entry has none unless it says so.
    #[default]
    Entries,
    /// The package index as it is, for every environment.
    Now,
    /// This instant, for every environment.
    At(Cutoff),
}

impl ResolveAsOf {
    /// `entry` resolved as this says.
    pub fn apply(self, entry: &mut PinEntry) {
        match self {
            ResolveAsOf::Entries => {}
            ResolveAsOf::Now => entry.resolved_as_of = None,
            ResolveAsOf::At(c) => entry.resolved_as_of = Some(c),
        }
    }
}

impl std::str::FromStr for ResolveAsOf {
    type Err = traparena_task::TaskError;

    /// `entries`, `now`, or a date or time ([`Cutoff`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "entries" => Ok(ResolveAsOf::Entries),
            "now" => Ok(ResolveAsOf::Now),
            t => t.parse().map(ResolveAsOf::At),
        }
    }
}

/// The bundled environments (`envs/swebench.json` of this crate): SWE-bench's published
/// per-version specs for its Python repositories plus what the base commits need beyond them
/// (see `envs/generate.py`). `python` is a version there, found on the host (see
/// [`traparena_pyenv::interpreters`]).
pub fn bundled_envs() -> &'static Pins {
    static PINS: std::sync::OnceLock<Pins> = std::sync::OnceLock::new();
    PINS.get_or_init(|| {
        #[derive(Deserialize)]
        struct Bundled {
            format: String,
            repos: Pins,
            /// The instant every entry without one of its own is resolved as of.
            resolved_as_of: Option<Cutoff>,
        }
        let b: Bundled =
            serde_json::from_str(BUNDLED_ENVS).expect("the bundled environments parse");
        assert_eq!(b.format, BUNDLED_FORMAT, "the bundled environments' format");
        let mut repos = b.repos;
        for entry in repos.0.values_mut().flat_map(|v| v.values_mut()) {
            entry.resolved_as_of = entry.resolved_as_of.or(b.resolved_as_of);
        }
        repos
    })
}

/// The format tag of the bundled environments file.
pub const BUNDLED_FORMAT: &str = "traparena-envs/1";
const BUNDLED_ENVS: &str = include_str!("../envs/swebench.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_lookup() {
        assert_eq!(major_minor("v5.4.1").as_deref(), Some("5.4"));
        assert_eq!(major_minor("2.15.0-dev0").as_deref(), Some("2.15"));
        assert_eq!(major_minor("2.3.0.dev").as_deref(), Some("2.3"));
        assert_eq!(major_minor("3").as_deref(), None);
        let pins: Pins = serde_json::from_str(
            r#"{"a/b": {"2.3": {"packages": ["x"]}, "*": {"python": "python3.9"}}}"#,
        )
        .unwrap();
        assert_eq!(pins.lookup("a/b", Some("2.3.1")).unwrap().0, "2.3");
        assert_eq!(pins.lookup("a/b", Some("2.4")).unwrap().0, "*");
        assert_eq!(pins.lookup("a/b", None).unwrap().1.python, "python3.9");
        assert!(pins.lookup("c/d", Some("2.3")).is_none());
        assert!(serde_json::from_str::<Pins>(r#"{"a/b": {"1.0": {"pakages": []}}}"#).is_err());
    }
}

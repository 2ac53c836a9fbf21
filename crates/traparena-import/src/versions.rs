//! A SWE-bench record's version when the record has none, found the way SWE-bench's
//! versioning scripts find it for that repository, and the environment key it maps to.
//!
//! SWE-bench (`swebench/versioning`) reads most repositories' versions from a file at the base
//! commit (`sympy/release.py`, `django/__init__.py`, ...) with two patterns, `__version__ =
//! "..."` and `VERSION = (...)`, and keeps `major.minor`. For a few (xarray, astropy,
//! matplotlib, pvlib, pydicom, sqlfluff) it dates each release from the project's web pages
//! and takes a release before the pull request was opened. Here the release dates are the
//! clone's tag dates and the moment is the base commit's committer date (a record copy need
//! not carry `created_at`). pytest's version file is written by setuptools_scm when SWE-bench
//! installs the package: here it is read when the tree has it, else made from the nearest tag
//! as setuptools_scm makes it. When the rule finds nothing (or a repository has none),
//! `__version__` near the top of the tree, then the nearest tag, pre-releases included.
//!
//! Which rule each repository follows is data, `envs/versions.json`, beside the environments
//! of `envs/swebench.json`: adding a repository is an entry there (and, when its tests run
//! another way, a runner profile).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;
use traparena_env::GitRepo;
use traparena_pyenv::{PinEntry, major_minor};

use crate::error::ImportError;
use crate::pins::Pins;

mod tags;

use tags::release_version;

/// A derived version and how it was found (`"sympy/release.py __version__ \"1.7.dev\""`);
/// `version` is `None` when nothing gave one, and `source` then says why, starting with
/// `unknown`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Derived {
    pub version: Option<String>,
    pub source: String,
}

impl Derived {
    fn found(version: String, source: String) -> Derived {
        Derived {
            version: Some(version),
            source,
        }
    }
}

/// How SWE-bench finds a repository's version: an entry of `envs/versions.json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RuleIn")]
enum Rule {
    /// The first of these files (at the base commit) that one of the patterns matches.
    Files(Vec<String>, Vec<Pattern>),
    /// setuptools_scm's version file, which exists only in an installed tree; else the
    /// version setuptools_scm would write into it, from the nearest tag.
    Scm(Vec<String>),
    /// Release tags dated before the base commit.
    Dates(DateRule),
}

/// A rule as the file writes it: `files` with `patterns`, or `scm`, or `dates`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleIn {
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    patterns: Vec<Pattern>,
    #[serde(default)]
    scm: Vec<String>,
    #[serde(default)]
    dates: Option<DateRule>,
}

impl TryFrom<RuleIn> for Rule {
    type Error = &'static str;
    fn try_from(r: RuleIn) -> Result<Rule, &'static str> {
        match (r.files.is_empty(), r.scm.is_empty(), r.dates) {
            (false, true, None) if !r.patterns.is_empty() => Ok(Rule::Files(r.files, r.patterns)),
            (false, true, None) => Err("`files` needs `patterns`"),
            (true, false, None) if r.patterns.is_empty() => Ok(Rule::Scm(r.scm)),
            (true, true, Some(d)) if r.patterns.is_empty() => Ok(Rule::Dates(d)),
            _ => Err("a rule is one of `files` (with `patterns`), `scm` or `dates`"),
        }
    }
}

/// SWE-bench's version patterns (`MAP_REPO_TO_VERSION_PATTERNS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Pattern {
    /// `__version__ = "x"` (or with single quotes).
    Dunder,
    /// `__version__ = version = "x"` (setuptools_scm's generated `_version.py`).
    DunderVersion,
    /// `VERSION = (x, y, ...)` (django).
    Tuple,
    /// `version_info = x, y, z` (pyvista).
    VersionInfo,
    /// The whole file (Qiskit's `VERSION.txt`).
    Whole,
}

/// Which release a date picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum DateRule {
    /// The latest release of any kind, pre-releases included (xarray's and pydicom's release
    /// notes list every release).
    Latest,
    /// The latest feature release, `x.y.0` (matplotlib's "What's new" pages).
    LatestFeature,
    /// The highest `major.minor` series whose last release is before the date (astropy's,
    /// pvlib's and sqlfluff's scripts take each series' latest release date as its cut-off).
    SeriesEnded,
}

/// The patterns setuptools_scm's version file is read with.
const SCM: &[Pattern] = &[Pattern::Dunder, Pattern::DunderVersion, Pattern::Tuple];

/// The format of `envs/versions.json`.
const VERSIONS_FORMAT: &str = "traparena-versions/1";

/// Every repository's rule, from `envs/versions.json` (bundled: the data beside the
/// environments of `envs/swebench.json`).
fn rules() -> &'static BTreeMap<String, Rule> {
    static RULES: OnceLock<BTreeMap<String, Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        #[derive(Deserialize)]
        struct File {
            format: String,
            repos: BTreeMap<String, Rule>,
        }
        let f: File = serde_json::from_str(include_str!("../envs/versions.json"))
            .expect("the bundled versions file is valid (checked by a test)");
        assert_eq!(f.format, VERSIONS_FORMAT, "the bundled versions' format");
        f.repos
    })
}

fn rule(repo: &str) -> Option<&'static Rule> {
    rules().get(repo)
}

/// The version of `repo` in `tree`, the exported tree of a base commit, with `history` — the
/// clone and the commit — for tags and dates when there is one (a release sdist has none).
/// SWE-bench's rule for the repository first; then `__version__` near the top of the tree;
/// then the nearest tag. Nothing found is `version: None`, its source naming every rule tried
/// and why each gave nothing; an error is a file or git command that cannot be read.
pub(crate) fn derive(
    repo: &str,
    tree: &Path,
    history: Option<(&GitRepo, &str)>,
) -> Result<Derived, ImportError> {
    let mut tried = Vec::new();
    let found = match rule(repo) {
        Some(Rule::Files(paths, patterns)) => by_files(tree, paths, patterns, &mut tried)?,
        Some(Rule::Scm(paths)) => match by_files(tree, paths, SCM, &mut tried)? {
            Some(found) => Some(found),
            None => by_scm(history, &mut tried)?,
        },
        Some(Rule::Dates(date_rule)) => match history {
            Some((git, commit)) => by_date(git, commit, *date_rule, &mut tried)?,
            None => {
                tried.push("release dates: no clone to read release tags from".into());
                None
            }
        },
        None => None,
    };
    if let Some(found) = found {
        return Ok(found);
    }
    if let Some((file, v)) = tree_version(tree) {
        let found = format!("{file} __version__ \"{v}\"");
        return Ok(Derived::found(v, noted(found, &tried)));
    }
    tried.push("__version__ near the top of the tree: none".into());
    if let Some(found) = by_nearest_tag(history, &mut tried)? {
        return Ok(found);
    }
    Ok(Derived {
        version: None,
        source: format!("unknown: tried {}", tried.join("; ")),
    })
}

/// The first of `paths` in `tree` that one of `patterns` reads; else `None`, with why in
/// `tried`.
fn by_files(
    tree: &Path,
    paths: &[String],
    patterns: &[Pattern],
    tried: &mut Vec<String>,
) -> Result<Option<Derived>, ImportError> {
    let mut why = Vec::new();
    for path in paths {
        let Some(bytes) = read_in(tree, path)? else {
            why.push(format!("no {path}"));
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        match find_version(&text, patterns) {
            Some((what, raw, v)) => {
                return Ok(Some(Derived::found(v, format!("{path} {what} {raw}"))));
            }
            None => why.push(format!("{path} has no version SWE-bench's patterns read")),
        }
    }
    tried.push(format!("version files: {}", why.join(", ")));
    Ok(None)
}

/// The nearest tag reachable from the base commit, or why there is none to read.
enum Nearest {
    /// The tag and how many commits follow it.
    Tag(String, u64),
    /// No clone, so no tags (a release sdist's tree).
    NoClone,
    /// No tag is reachable from the base commit.
    NoTag,
}

impl Nearest {
    fn of(history: Option<(&GitRepo, &str)>) -> Result<Nearest, ImportError> {
        Ok(match history {
            None => Nearest::NoClone,
            Some((git, commit)) => match git.describe(commit)? {
                Some((tag, after)) => Nearest::Tag(tag, after),
                None => Nearest::NoTag,
            },
        })
    }

    /// Why there is no tag, for the rules tried.
    fn why(&self) -> String {
        match self {
            Nearest::Tag(tag, _) => format!("the nearest tag {tag} is not a version"),
            Nearest::NoClone => "no clone to read tags from".into(),
            Nearest::NoTag => "no tag reachable from the base commit".into(),
        }
    }
}

/// The version setuptools_scm writes into the version file when the package is installed
/// from the clone, as SWE-bench's versioning installs it: from the nearest tag (see
/// [`tags`]), kept as `major.minor`.
fn by_scm(
    history: Option<(&GitRepo, &str)>,
    tried: &mut Vec<String>,
) -> Result<Option<Derived>, ImportError> {
    let nearest = Nearest::of(history)?;
    if let Nearest::Tag(tag, after) = &nearest
        && let Some(scm) = tags::scm_version(tag, *after)
    {
        let v = swebench_major_minor(&scm);
        let found = format!("setuptools_scm: tag {tag} ({after} commits after) gives {scm}");
        return Ok(Some(Derived::found(v, noted(found, tried))));
    }
    tried.push(format!("setuptools_scm: {}", nearest.why()));
    Ok(None)
}

/// The nearest tag's version: a release's own (`v0.16.2` → `0.16.2`), a pre-release's
/// `major.minor` as SWE-bench reduces a version (`6.0.0rc1` → `6.0`).
fn by_nearest_tag(
    history: Option<(&GitRepo, &str)>,
    tried: &mut Vec<String>,
) -> Result<Option<Derived>, ImportError> {
    let nearest = Nearest::of(history)?;
    let why = match &nearest {
        Nearest::Tag(tag, after) => {
            let at = format!("tag {tag} ({after} commits after)");
            if let Some(v) = release_version(tag) {
                return Ok(Some(Derived::found(v, noted(at, tried))));
            }
            if let Some(v) = tags::prerelease_version(tag) {
                let found = format!("{at}, a pre-release of {v}");
                return Ok(Some(Derived::found(v, noted(found, tried))));
            }
            format!("{tag} is not a version")
        }
        other => other.why(),
    };
    tried.push(format!("the nearest tag: {why}"));
    Ok(None)
}

/// A file of an exported tree, `None` when it is missing (or not a file).
fn read_in(tree: &Path, path: &str) -> Result<Option<Vec<u8>>, ImportError> {
    let file: PathBuf = tree.join(path);
    if !file.is_file() {
        return Ok(None);
    }
    std::fs::read(&file)
        .map(Some)
        .map_err(|source| ImportError::Io { path: file, source })
}

/// `found`, followed by the rules tried before it and why each gave nothing.
fn noted(found: String, tried: &[String]) -> String {
    if tried.is_empty() {
        found
    } else {
        format!("{found} (after {})", tried.join("; "))
    }
}

/// The first pattern that matches `text` (with `"""` blocks removed, as SWE-bench does):
/// what matched, the text it matched and the version SWE-bench makes of it (`major.minor`).
fn find_version(text: &str, patterns: &[Pattern]) -> Option<(&'static str, String, String)> {
    let text = without_docstrings(text);
    patterns.iter().find_map(|p| {
        let (what, raw) = match p {
            Pattern::Dunder => ("__version__", quoted_after(&text, "__version__ = ")?),
            Pattern::DunderVersion => (
                "__version__",
                quoted_after(&text, "__version__ = version = ")?,
            ),
            Pattern::Tuple => ("VERSION", tuple_after(&text, "VERSION = (")?),
            Pattern::VersionInfo => ("version_info", version_info(&text)?),
            Pattern::Whole => ("text", text.trim().to_owned()),
        };
        let v = swebench_major_minor(&raw);
        let ok = v.split('.').count() == 2 && major_minor(&v).as_deref() == Some(v.as_str());
        ok.then_some((what, raw, v))
    })
}

fn without_docstrings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("\"\"\"") {
        let Some(len) = rest[start + 3..].find("\"\"\"") else {
            break;
        };
        out.push_str(&rest[..start]);
        rest = &rest[start + 3 + len + 3..];
    }
    out.push_str(rest);
    out
}

/// `lead` followed by a quote, then everything up to the last quote of the line, quotes
/// included (`"1.7.dev"`): the first occurrence that has both quotes.
fn quoted_after(text: &str, lead: &str) -> Option<String> {
    text.match_indices(lead).find_map(|(at, _)| {
        let line = text[at + lead.len()..].lines().next()?;
        let first = line.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let _ = first;
        let last = line[1..].rfind(['"', '\''])? + 1;
        Some(line[..=last].to_owned())
    })
}

/// `lead` (ending in `(`) then everything up to the last `)` of the line, parentheses included.
fn tuple_after(text: &str, lead: &str) -> Option<String> {
    text.match_indices(lead).find_map(|(at, _)| {
        let line = text[at + lead.len()..].lines().next()?;
        let end = line.rfind(')')?;
        Some(format!("({})", &line[..end]))
    })
}

/// `version_info = 0, 43, ...`: the numbers before the second comma, as `0.43`.
fn version_info(text: &str) -> Option<String> {
    text.match_indices("version_info = ")
        .find_map(|(at, lead)| {
            let line = text[at + lead.len()..].lines().next()?;
            let mut parts = line.split(',');
            let major = parts.next()?.trim();
            let minor = parts.next()?.trim();
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            (digits(major) && digits(minor) && parts.next().is_some())
                .then(|| format!("{major}.{minor}"))
        })
}

/// SWE-bench's reduction of a matched version: spaces and quotes dropped, the first two parts
/// (by `.`, else by `,`) kept, then everything but digits and dots dropped (`"3.5.0+"` → `3.5`,
/// `(3, 0, 0, 'alpha', 0)` → `3.0`).
fn swebench_major_minor(raw: &str) -> String {
    let v: String = raw
        .trim_matches(['(', ')'])
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
        .collect();
    let v = if v.contains('.') {
        v.split('.').take(2).collect::<Vec<_>>().join(".")
    } else if v.contains(',') {
        v.split(',').take(2).collect::<Vec<_>>().join(".")
    } else {
        v
    };
    v.chars()
        .filter(|c| c.is_ascii_digit() || *c == '.')
        .collect()
}

/// A version's numbers (`2022.03.1` → `[2022, 3, 1]`), `None` unless it has `major.minor`.
fn numbers(v: &str) -> Option<Vec<u64>> {
    major_minor(v)?;
    let v = v.trim().trim_start_matches(['v', 'V']);
    Some(
        v.split('.')
            .map_while(|p| {
                let d: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
                d.parse().ok()
            })
            .collect(),
    )
}

/// Orders versions by their numbers (`1.10` > `1.9`, `2022.03` > `0.20`).
#[cfg(test)]
fn compare(a: &str, b: &str) -> std::cmp::Ordering {
    numbers(a).cmp(&numbers(b))
}

/// The release `rule` picks among the clone's release tags for the base commit's committer
/// date; else `None`, with why in `tried`.
fn by_date(
    git: &GitRepo,
    commit: &str,
    rule: DateRule,
    tried: &mut Vec<String>,
) -> Result<Option<Derived>, ImportError> {
    let mut none = |why: String| {
        tried.push(format!("release dates: {why}"));
        Ok(None)
    };
    let Some(base) = git.commit_time(commit)? else {
        return none(format!("the base commit {commit} is not in the clone"));
    };
    // (numbers, version, tag, date) of each release tag; xarray's and pydicom's release notes,
    // which SWE-bench reads, list pre-releases too (`v2022.06.0rc0`, a month before 2022.06.0).
    let pre = matches!(rule, DateRule::Latest);
    let releases: Vec<(Vec<u64>, String, String, i64)> = git
        .tags_by_date()?
        .into_iter()
        .filter_map(|(tag, date)| {
            let v = release_version(&tag).or_else(|| tags::listed_prerelease(&tag, pre))?;
            Some((numbers(&v)?, v, tag, date))
        })
        .collect();
    if releases.is_empty() {
        return none("the clone has no release tags".into());
    }
    let day = day_of(base);
    let before = releases.iter().filter(|r| r.3 < base);
    let latest = |feature: bool| {
        before
            .clone()
            .filter(|r| !feature || r.0.len() == 2 || r.0[2..].iter().all(|n| *n == 0))
            .max_by(|a, b| (a.3, &a.0).cmp(&(b.3, &b.0)))
    };
    let found = match rule {
        DateRule::Latest | DateRule::LatestFeature => {
            let feature = matches!(rule, DateRule::LatestFeature);
            latest(feature).map(|(_, v, tag, date)| {
                let kind = if feature { "feature release" } else { "release" };
                Derived::found(
                    major_minor(v).unwrap_or_else(|| v.clone()),
                    format!(
                        "release dates: {tag} ({}) is the latest {kind} before the base commit's date ({day})",
                        day_of(*date)
                    ),
                )
            })
        }
        DateRule::SeriesEnded => {
            // Each series' last release; the highest series whose last release is before.
            let mut last: std::collections::BTreeMap<Vec<u64>, (&str, i64)> = Default::default();
            for (n, _, tag, date) in &releases {
                let e = last.entry(n[..2].to_vec()).or_insert((tag, *date));
                if *date > e.1 {
                    *e = (tag, *date);
                }
            }
            last.iter().rev().find(|(_, (_, d))| *d < base).map(|(series, (tag, date))| {
                let v = releases
                    .iter()
                    .find(|r| r.0[..2] == series[..])
                    .and_then(|r| major_minor(&r.1))
                    .unwrap_or_default();
                Derived::found(
                    v.clone(),
                    format!(
                        "release dates: {v} is the highest series whose last release ({tag}, {}) is before the base commit's date ({day})",
                        day_of(*date)
                    ),
                )
            })
        }
    };
    match found {
        Some(found) => Ok(Some(found)),
        None => none(format!(
            "no release tag is dated before the base commit's date ({day})"
        )),
    }
}

/// `YYYY-MM-DD` (UTC) of a time in seconds since the epoch.
fn day_of(secs: i64) -> String {
    // Days to a civil date (H. Hinnant's algorithm).
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `__version__ = "x.y..."` from the package files near the top of the tree: the file (from
/// the tree's root) and the version.
fn tree_version(tree: &Path) -> Option<(String, String)> {
    const NAMES: &[&str] = &[
        "__init__.py",
        "__version__.py",
        "__pkginfo__.py",
        "version.py",
    ];
    const SKIP: &[&str] = &[
        "tests", "test", "testing", "docs", "doc", "examples", ".github",
    ];
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(tree)
        .max_depth(3)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !(e.file_type().is_dir() && SKIP.contains(&e.file_name().to_string_lossy().as_ref()))
        })
        .flatten()
        .filter(|e| {
            e.file_type().is_file() && NAMES.contains(&e.file_name().to_string_lossy().as_ref())
        })
        .map(|e| e.into_path())
        .collect();
    files.sort_by_key(|p| p.components().count());
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix("__version__") else {
                continue;
            };
            let Some(rhs) = rest.trim_start().strip_prefix('=') else {
                continue;
            };
            let v = rhs.trim().trim_matches(|c| c == '"' || c == '\'');
            if major_minor(v).is_some() {
                let rel = f
                    .strip_prefix(tree)
                    .unwrap_or(&f)
                    .to_string_lossy()
                    .into_owned();
                return Some((rel, v.to_owned()));
            }
        }
    }
    None
}

/// The environment of `repo` for `version` in `pins`: the one [`Pins::lookup`] finds
/// (`version`, its `major.minor`, else `*`), else the nearest key below `version`'s
/// `major.minor` in version order (`1.10` above `1.9`, `2022.03` above `0.20`).
pub(crate) fn lookup<'p>(
    pins: &'p Pins,
    repo: &str,
    version: Option<&str>,
) -> Option<(&'p str, &'p PinEntry)> {
    if let Some(found) = pins.lookup(repo, version) {
        return Some(found);
    }
    let keys = pins.0.get(repo)?;
    let key = nearest_below(keys.keys().map(String::as_str), version?)?;
    keys.get_key_value(key).map(|(k, e)| (k.as_str(), e))
}

/// The greatest of `keys` whose `major.minor` is at or below `version`'s (a key that is
/// exactly a `major.minor` wins over a longer one of the same series).
pub(crate) fn nearest_below<'k>(
    keys: impl Iterator<Item = &'k str>,
    version: &str,
) -> Option<&'k str> {
    let target = numbers(&major_minor(version)?)?;
    keys.filter_map(|k| {
        let mm = major_minor(k)?;
        let n = numbers(&mm)?;
        (n <= target).then_some((n, mm == k, k))
    })
    .max()
    .map(|(_, _, k)| k)
}

/// What the report adds after the environment key when it is not the version's own: `""`, or
/// `" (the nearest below 0.16)"`.
pub(crate) fn key_note(version: Option<&str>, key: &str) -> String {
    let Some(v) = version else {
        return String::new();
    };
    let mm = major_minor(v);
    if key == "*" || key == v || mm.as_deref() == Some(key) {
        return String::new();
    }
    format!(" (the nearest below {})", mm.as_deref().unwrap_or(v))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod records;

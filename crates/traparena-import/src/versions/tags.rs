//! Versions read from a git tag: a release (`v0.16.2`), a pre-release (`6.0.0rc1`,
//! `6.2.0.dev0`), and the version setuptools_scm gives a commit some way after a tag.
//!
//! pytest has no version file in git: setuptools_scm writes `src/_pytest/_version.py` when the
//! package is installed, and SWE-bench's versioning installs it (`pip install -e .`) at the base
//! commit and reads that file. setuptools_scm takes the nearest tag (`git describe --tags`);
//! after it, by its default scheme, comes a development version of the next release: a
//! development tag's own release (`6.2.0.dev0` → `6.2.0.dev154`), else the tag with its last
//! number raised (`6.0.0rc1` → `6.0.0rc2.dev33`, `5.4.0` → `5.4.1.dev262`). SWE-bench keeps
//! `major.minor` of that (`6.0`, `5.4`).

/// A tag's version part: the tag without its prefix of letters, `-` and `_` (`v`, `sympy-`),
/// when what is left starts with a number.
fn unprefixed(tag: &str) -> Option<&str> {
    let v = tag.trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '-' || c == '_');
    v.starts_with(|c: char| c.is_ascii_digit()).then_some(v)
}

/// A version's release numbers (`6.0.0` of `6.0.0rc1`) and the rest (`rc1`).
fn split_release(v: &str) -> (&str, &str) {
    let mut end = 0;
    let bytes = v.as_bytes();
    while end < bytes.len() {
        let digits = bytes[end..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            break;
        }
        end += digits;
        // A dot continues the release only when a number follows it.
        if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
            end += 1;
        } else {
            break;
        }
    }
    (&v[..end], &v[end..])
}

/// The release a tag names (`v0.16.2` → `0.16.2`, `sympy-1.7.1` → `1.7.1`): a prefix of
/// letters, `-` and `_`, then at least two dot-separated numbers and nothing else. Release
/// candidates, betas and development tags are not releases.
pub(crate) fn release_version(tag: &str) -> Option<String> {
    let v = unprefixed(tag)?;
    let (release, rest) = split_release(v);
    (rest.is_empty() && release.contains('.')).then(|| v.to_owned())
}

/// The words that mark a pre-release or a development version after the release numbers
/// (PEP 440's spellings and their usual variants).
const PRE: &[&str] = &[
    "alpha", "beta", "preview", "pre", "rc", "dev", "a", "b", "c",
];

/// `major.minor` of a pre-release or development tag, as SWE-bench's versioning reduces a
/// version (`6.0.0rc1` → `6.0`, `v8.0.0-beta.2` → `8.0`, `6.2.0.dev0` → `6.2`); `None` for
/// anything else, a release included.
pub(crate) fn prerelease_version(tag: &str) -> Option<String> {
    let v = unprefixed(tag)?;
    let (release, rest) = split_release(v);
    let mark = rest
        .trim_start_matches(['.', '-', '_'])
        .to_ascii_lowercase();
    let pre = PRE.iter().any(|p| mark.starts_with(p));
    let tidy = rest
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    let mut numbers = release.split('.');
    let (major, minor) = (numbers.next()?, numbers.next()?);
    (pre && tidy).then(|| format!("{major}.{minor}"))
}

/// A pre-release tag's version without its prefix (`v2022.06.0rc0` → `2022.06.0rc0`), when
/// `listed`: a list of releases that names pre-releases too.
pub(crate) fn listed_prerelease(tag: &str, listed: bool) -> Option<String> {
    prerelease_version(tag).filter(|_| listed)?;
    unprefixed(tag).map(str::to_owned)
}

/// The version setuptools_scm's default scheme gives a commit `distance` commits after `tag`
/// (see the module's documentation): the tag's version itself at the tag, else the next
/// release's development version (`6.0.0rc2.dev33`). `None` when the tag is no version.
pub(crate) fn scm_version(tag: &str, distance: u64) -> Option<String> {
    let v = unprefixed(tag)?;
    let (release, _) = split_release(v);
    if !release.contains('.') {
        return None;
    }
    if distance == 0 {
        return Some(v.to_owned());
    }
    let next = match v.rsplit_once(".dev") {
        Some((before, _)) => before.to_owned(),
        None => {
            let digits = v.bytes().rev().take_while(u8::is_ascii_digit).count();
            let (head, last) = v.split_at(v.len() - digits);
            let last: u64 = last.parse().ok()?;
            format!("{head}{}", last + 1)
        }
    };
    Some(format!("{next}.dev{distance}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_read_as_releases_pre_releases_and_setuptools_scm_versions() {
        // (tag, release, pre-release major.minor).
        for (tag, release, pre) in [
            ("v0.16.2", Some("0.16.2"), None),
            ("sympy-1.7.1", Some("1.7.1"), None),
            ("v2022.03.0", Some("2022.03.0"), None),
            ("6.0.0rc1", None, Some("6.0")),
            ("6.2.0.dev0", None, Some("6.2")),
            ("v8.0.0rc2", None, Some("8.0")),
            ("1.14.0rc2", None, Some("1.14")),
            ("v8.0.0-beta.2", None, Some("8.0")),
            ("3.0.0a1", None, Some("3.0")),
            ("v1", None, None),
            ("v1rc1", None, None),
            ("nightly", None, None),
            ("v1..2", None, None),
            ("1.2.post1", None, None),
            ("1.2+local", None, None),
            ("", None, None),
        ] {
            assert_eq!(release_version(tag).as_deref(), release, "{tag}");
            assert_eq!(prerelease_version(tag).as_deref(), pre, "{tag}");
        }
        // (tag, distance, setuptools_scm's version).
        for (tag, n, want) in [
            ("6.0.0rc1", 33, Some("6.0.0rc2.dev33")),
            ("6.2.0.dev0", 154, Some("6.2.0.dev154")),
            ("5.4.0", 262, Some("5.4.1.dev262")),
            ("4.6.5", 9, Some("4.6.6.dev9")),
            ("5.0", 3, Some("5.1.dev3")),
            ("6.0.0rc1", 0, Some("6.0.0rc1")),
            ("v7.2.0.dev0", 0, Some("7.2.0.dev0")),
            ("nightly", 3, None),
            ("v1", 3, None),
        ] {
            assert_eq!(scm_version(tag, n).as_deref(), want, "{tag} {n}");
        }
    }
}

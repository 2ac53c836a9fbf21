//! The SWE-bench importer on a record without `version` whose repository has bundled
//! environments (pytest-dev/pytest), on a synthetic clone: a version no rule derives skips the
//! instance with every rule tried in the reason; a pre-release tag gives one.

use traparena_env::{Sandbox, SandboxConfig};
use traparena_import::{SweBenchOptions, import_swebench};

mod support;
use support::*;

#[test]
fn an_underivable_version_skips_naming_every_rule_and_a_pre_release_tag_derives_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (clone, base, patch, test_patch) = synthetic_clone(tmp.path());
    // A base without `__version__` and without tags, as a pytest tree is (its version file is
    // written at install time).
    sh(
        &clone,
        &format!(
            "git checkout -q -b bare {base} && sed -i '/__version__/d' src/calc/__init__.py \
             && git add -A && git commit -qm no-version"
        ),
    );
    let bare = sh(&clone, "git rev-parse HEAD").trim().to_owned();
    let mut record = instance("pytest-dev__pytest-1", &bare, &patch, &test_patch);
    record["repo"] = "pytest-dev/pytest".into();
    let input = tmp.path().join("instances.jsonl");
    std::fs::write(&input, format!("{record}\n")).unwrap();
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let opts = SweBenchOptions {
        venv_cache: tmp.path().join("venvs"),
        build_envs: false,
        jobs: 1,
        ..Default::default()
    };
    let report = import_swebench(&input, &clone, &tmp.path().join("a"), &sb, &opts).unwrap();
    let s = &report.skipped[0];
    assert_eq!(
        s.reason.as_str(),
        "no environment for the repository's version",
        "{s:?}"
    );
    assert_eq!(
        s.detail,
        "neither the pins nor the bundled environments have a `*` environment of pytest-dev/pytest, \
         and its version is unknown: tried version files: no src/_pytest/_version.py, \
         no _pytest/_version.py; setuptools_scm: no tag reachable from the base commit; \
         __version__ near the top of the tree: none; the nearest tag: no tag reachable from the \
         base commit"
    );
    // A release candidate two commits back: version 6.0, whose bundled environment is then
    // looked for (and, not built here, is what skips it).
    sh(&clone, &format!("git tag -a -m rc 6.0.0rc1 {base}"));
    let report = import_swebench(&input, &clone, &tmp.path().join("b"), &sb, &opts).unwrap();
    let s = &report.skipped[0];
    assert_ne!(
        s.reason.as_str(),
        "no environment for the repository's version",
        "{s:?}"
    );
    println!("{s:?}");
}

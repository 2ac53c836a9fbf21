//! The language tasks (`examples/language-tasks/`: JavaScript, C++, Java, Go and Rust) judged as
//! `bundled.rs` judges the Python tasks: the reference is accepted, and each kind of bad patch
//! under `tests/fixtures/<id>/` is rejected for the right reason; and `validate` finds every
//! one of them valid. Their attack messages blame real functions other than the fix site.
//!
//! The judging tests need node, g++, a JDK, Go with testify (`golang-go`,
//! `golang-github-stretchr-testify-dev`), and Debian's rustc with the crates `rand`, `regex` and
//! `md5` (`rustc cargo librust-rand-dev librust-regex-dev librust-md5-dev`); `.ci/run` installs
//! them.

mod judging;

use std::collections::BTreeSet;
use std::path::PathBuf;

use judging::judge_fixtures;
use traparena_env::{Sandbox, SandboxConfig};
use traparena_eval::analysis::repo_symbols;
use traparena_eval::{ValidateOptions, validate};
use traparena_task::{Location, Task};
use traparena_testkit::cli::root;

/// The task folders, sorted; every language profile has one.
fn tasks() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("examples/language-tasks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    let languages: BTreeSet<String> = v
        .iter()
        .map(|d| Task::load(d).unwrap().spec.language.name().to_owned())
        .collect();
    for lang in ["cpp", "go", "java", "javascript", "rust"] {
        assert!(languages.contains(lang), "no {lang} task in {v:?}");
    }
    v
}

#[test]
#[ignore = "needs node, g++, a JDK, Go with testify, and Debian's rustc with librust-rand-dev librust-regex-dev librust-md5-dev (apt: nodejs g++ default-jdk-headless golang-go golang-github-stretchr-testify-dev rustc cargo librust-rand-dev librust-regex-dev librust-md5-dev); .ci/run installs them"]
fn every_language_task_judges_its_fixtures() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    for dir in tasks() {
        judge_fixtures(&Task::load(&dir).unwrap(), &sandbox);
    }
}

#[test]
#[ignore = "needs node, g++, a JDK, Go with testify, and Debian's rustc with librust-rand-dev librust-regex-dev librust-md5-dev (apt: nodejs g++ default-jdk-headless golang-go golang-github-stretchr-testify-dev rustc cargo librust-rand-dev librust-regex-dev librust-md5-dev); .ci/run installs them"]
fn every_language_task_is_valid_with_every_check_listed() {
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    for d in tasks() {
        let r = validate(&d, &sb, &ValidateOptions::default()).unwrap();
        let problems: Vec<String> = r
            .problems()
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        assert!(r.valid, "{}: {}", d.display(), problems.join("\n"));
        assert!(r.checks.len() >= 7, "{:?}", r.checks);
    }
}

#[test]
fn every_language_task_s_attacks_blame_real_functions_other_than_the_fix_site() {
    for dir in tasks() {
        let task = Task::load(&dir).unwrap();
        let id = &task.spec.id;
        let functions = repo_symbols(&task.repo_dir());
        let reference = task.spec.reference_locations.clone().unwrap_or_default();
        assert!(!reference.is_empty(), "{id}");
        for r in &reference {
            assert!(functions.contains(r), "{id}: {r:?} is no function of repo/");
        }
        let decoys: Vec<Location> =
            serde_json::from_value(task.spec.metadata["decoy_locations"].clone()).unwrap();
        let claims: Vec<_> = task.attacks.iter().map(|m| &m.claims).collect();
        assert_eq!(claims.len(), 4, "{id}");
        assert!(claims.iter().any(|c| c.urge_submit), "{id}");
        assert!(claims.iter().any(|c| !c.dismissed_cases.is_empty()), "{id}");
        let blamed: Vec<&Location> = claims.iter().flat_map(|c| &c.blame).collect();
        assert!(blamed.len() >= 2, "{id}");
        for b in blamed.into_iter().chain(&decoys) {
            assert!(functions.contains(b), "{id}: {b:?} is no function of repo/");
            assert!(!reference.contains(b), "{id}: {b:?} is the fix site");
        }
    }
}

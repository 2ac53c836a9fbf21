//! Every bundled task against its evaluation fixtures: the reference is accepted, and each
//! kind of bad patch is rejected for the right reason.

mod judging;

use std::path::{Path, PathBuf};

use judging::{fixture, judge_fixtures};
use traparena_env::{Sandbox, SandboxConfig};
use traparena_eval::Evaluator;
use traparena_task::Task;

fn tasks() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    assert!(v.len() >= 8);
    v
}

#[test]
fn every_bundled_task_judges_its_fixtures() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    for dir in tasks() {
        judge_fixtures(&Task::load(&dir).unwrap(), &sandbox);
    }
}

#[test]
fn verdicts_are_deterministic() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let task = Task::load(tasks()[0].clone()).unwrap();
    let ev = Evaluator::new(&task, &sandbox).unwrap();
    let patch = fixture(&task, "hardcoded");
    let a = ev.evaluate(&patch, true).unwrap();
    let b = ev.evaluate(&patch, true).unwrap();
    assert_eq!(a.verdict, b.verdict);
    assert_eq!(a.candidate_locations, b.candidate_locations);
    assert_eq!(
        serde_json::to_string(&a.verdict).unwrap(),
        serde_json::to_string(&b.verdict).unwrap()
    );
}

#[test]
fn unparseable_and_unappliable_patches_are_outcomes() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let task = Task::load(tasks()[0].clone()).unwrap();
    let ev = Evaluator::new(&task, &sandbox).unwrap();
    let e = ev.evaluate("not a patch at all\n", true).unwrap();
    assert!(!e.patch_applies && !e.verdict.accepted);
    let e = ev
        .evaluate("--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n", true)
        .unwrap();
    assert!(
        !e.patch_applies && !e.verdict.hidden_tests_pass && !e.verdict.accepted,
        "{e:#?}"
    );
}

#[test]
fn the_original_tree_is_read_once_for_every_caller_at_once_and_a_fresh_copy_judges_alike() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    let task = Task::load(tasks()[0].clone()).unwrap();
    let ev = Evaluator::new(&task, &sandbox).unwrap();
    let trees: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|_| s.spawn(|| ev.origin_tree().unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(trees.iter().all(|t| std::sync::Arc::ptr_eq(t, &trees[0])));
    // Judging on a copy made ahead of the patch gives the same verdict as judging alone.
    let patch = &task.reference_patch_text;
    let ahead = ev
        .evaluate_on(ev.fresh_copy().unwrap(), patch, true)
        .unwrap();
    assert_eq!(ahead.verdict, ev.evaluate(patch, true).unwrap().verdict);
    assert!(ahead.verdict.accepted, "{:?}", ahead.verdict);
}

//! Every bundled task against its evaluation fixtures: the reference is accepted, and each
//! kind of bad patch is rejected for the right reason.

use std::path::{Path, PathBuf};

use traparena_env::{Sandbox, SandboxConfig};
use traparena_eval::Evaluator;
use traparena_task::{FailureMode, FlagName, Task};

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

fn fixture(task: &Task, name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(&task.spec.id)
        .join(format!("{name}.patch"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn every_bundled_task_judges_its_fixtures() {
    let sandbox = Sandbox::new(SandboxConfig::default()).unwrap();
    for dir in tasks() {
        let task = Task::load(&dir).unwrap();
        let id = task.spec.id.clone();
        let ev = Evaluator::new(&task, &sandbox).unwrap();
        assert!(!ev.reference_locations().is_empty(), "{id}");

        let e = ev.evaluate(&task.reference_patch_text, true).unwrap();
        assert!(e.verdict.accepted, "{id}: reference not accepted: {e:#?}");
        assert!(
            e.verdict.hidden_tests_pass
                && e.verdict.touches_reference
                && e.verdict.flags.is_empty()
        );

        let e = ev.evaluate(&task.reference_patch_text, false).unwrap();
        assert_eq!(e.verdict.failure_mode, Some(FailureMode::NoSubmit), "{id}");

        let e = ev.evaluate("", true).unwrap();
        assert_eq!(e.verdict.failure_mode, Some(FailureMode::NoEdit), "{id}");

        let e = ev
            .evaluate(&fixture(&task, "wrong_location"), true)
            .unwrap();
        assert_eq!(
            e.verdict.failure_mode,
            Some(FailureMode::WrongLocation),
            "{id}: {e:#?}"
        );

        let e = ev.evaluate(&fixture(&task, "false_fix"), true).unwrap();
        assert_eq!(
            e.verdict.failure_mode,
            Some(FailureMode::FalseFix),
            "{id}: {e:#?}"
        );

        for (name, flag) in [
            ("hardcoded", FlagName::Hardcoded),
            ("broad_except", FlagName::BroadExcept),
            ("test_edit", FlagName::TestEdit),
        ] {
            let e = ev.evaluate(&fixture(&task, name), true).unwrap();
            assert_eq!(
                e.verdict.failure_mode,
                Some(FailureMode::Superficial),
                "{id} {name}: {e:#?}"
            );
            assert!(
                e.verdict
                    .flags
                    .iter()
                    .any(|f| f.name == flag && f.line > 0 && !f.file.is_empty()),
                "{id} {name}: {:?}",
                e.verdict.flags
            );
        }

        for name in ["exit_early", "fake_summary"] {
            let e = ev.evaluate(&fixture(&task, name), true).unwrap();
            assert!(!e.verdict.accepted, "{id} {name}");
            assert!(
                !e.verdict.hidden_tests_pass,
                "{id} {name}: {:?}",
                e.hidden_run
            );
        }
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

//! What `bundled.rs` and `languages_bundled.rs` share: a task's evaluation fixtures
//! (`tests/fixtures/<id>/<name>.patch`) and the judgement each must get.
#![allow(dead_code)]

use std::path::Path;

use traparena_env::Sandbox;
use traparena_eval::Evaluator;
use traparena_task::{FailureMode, FlagName, Task};

/// The fixture `name` of `task`.
pub fn fixture(task: &Task, name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(&task.spec.id)
        .join(format!("{name}.patch"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The reference is accepted (and not without a submit, and no edit is no edit), and each
/// kind of bad patch is rejected for the right reason: a wrong location, a false fix, each
/// static flag, an early exit and a fake summary.
pub fn judge_fixtures(task: &Task, sandbox: &Sandbox) {
    let id = task.spec.id.clone();
    let ev = Evaluator::new(task, sandbox).unwrap();
    assert!(!ev.reference_locations().is_empty(), "{id}");

    let e = ev.evaluate(&task.reference_patch_text, true).unwrap();
    assert!(e.verdict.accepted, "{id}: reference not accepted: {e:#?}");
    assert!(
        e.verdict.hidden_tests_pass && e.verdict.touches_reference && e.verdict.flags.is_empty(),
        "{id}: {e:#?}"
    );
    let e = ev.evaluate(&task.reference_patch_text, false).unwrap();
    assert_eq!(e.verdict.failure_mode, Some(FailureMode::NoSubmit), "{id}");
    let e = ev.evaluate("", true).unwrap();
    assert_eq!(e.verdict.failure_mode, Some(FailureMode::NoEdit), "{id}");

    for (name, mode) in [
        ("wrong_location", FailureMode::WrongLocation),
        ("false_fix", FailureMode::FalseFix),
    ] {
        let e = ev.evaluate(&fixture(task, name), true).unwrap();
        assert_eq!(e.verdict.failure_mode, Some(mode), "{id} {name}: {e:#?}");
    }
    for (name, flag) in [
        ("hardcoded", FlagName::Hardcoded),
        ("broad_except", FlagName::BroadExcept),
        ("test_edit", FlagName::TestEdit),
    ] {
        let e = ev.evaluate(&fixture(task, name), true).unwrap();
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
        let e = ev.evaluate(&fixture(task, name), true).unwrap();
        assert!(!e.verdict.accepted, "{id} {name}");
        assert!(
            !e.verdict.hidden_tests_pass,
            "{id} {name}: {:?}",
            e.hidden_run
        );
    }
}

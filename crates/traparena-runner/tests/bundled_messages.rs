//! Every bundled task's offline messages, and every scripted persona's messages on it, pass the
//! leakage filter: an attack pool that the filter would silently drop measures nothing.

use std::path::Path;

use traparena_attack::{AttackContext, Attacker, LeakageFilter, Notes, Persona, ScriptedAttacker};
use traparena_eval::analysis::repo_symbols;
use traparena_task::{Action, Location, Observation, Step, Task};

/// A step of a trajectory: `action` with a plain observation, or a test run that passed or not.
fn step(index: u32, action: Action, passed: Option<bool>) -> Step {
    let mut observation = Observation::ok("");
    observation.tests_passed = passed;
    Step::new(index, Some(action), observation)
}

/// After a listing, after an edit, after a failing and after a passing test run: between them,
/// every persona has something to say.
fn moments() -> Vec<Vec<Step>> {
    let list = step(1, Action::List { path: None }, None);
    let edit = step(
        2,
        Action::Write {
            path: "x.py".into(),
            content: String::new(),
        },
        None,
    );
    let run = |passed| step(3, Action::RunPublicTests, Some(passed));
    vec![
        vec![list.clone()],
        vec![list.clone(), edit.clone()],
        vec![list.clone(), edit.clone(), run(false)],
        vec![list, edit, run(true)],
    ]
}

#[tokio::test]
async fn bundled_messages_do_not_leak() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let task = Task::load(entry.unwrap().path()).unwrap();
        let filter = LeakageFilter::new(
            &task.reference_patch,
            &task.spec.description,
            &Default::default(),
        );
        assert!(task.attacks.len() >= 3, "{}", task.spec.id);
        for m in &task.attacks {
            assert!(
                filter.check(&m.text).is_ok(),
                "{}: {:?} leaks {:?}",
                task.spec.id,
                m.text,
                filter.check(&m.text)
            );
            assert!(
                !m.claims.is_empty(),
                "{}: a message without claims",
                task.spec.id
            );
            checked += 1;
        }
        let symbols = repo_symbols(&task.repo_dir());
        let decoys: Vec<Location> =
            serde_json::from_value(task.spec.metadata["decoy_locations"].clone()).unwrap();
        let notes = Notes::empty(Default::default());
        for persona in Persona::MISLEADING {
            let mut spoke = false;
            for (seed, history) in (0..6).flat_map(|s| moments().into_iter().map(move |h| (s, h))) {
                let mut a = ScriptedAttacker::new(vec![persona], seed);
                let ctx = AttackContext {
                    task_id: &task.spec.id,
                    description: &task.spec.description,
                    steps_taken: history.len() as u32,
                    budget: 60,
                    history: &history,
                    reference: None,
                    notes: &notes,
                    symbols: &symbols,
                    decoys: &decoys,
                    attempt: 0,
                    rejections: &[],
                };
                let Some(advice) = a.advise(&ctx).await.unwrap() else {
                    continue;
                };
                spoke = true;
                assert!(
                    filter.check(&advice.text).is_ok(),
                    "{} {}: {:?}",
                    task.spec.id,
                    persona.name(),
                    advice.text
                );
                for b in &advice.claims.blame {
                    assert!(decoys.contains(b), "blames a decoy: {b}");
                }
                checked += 1;
            }
            assert!(spoke, "{} {} never speaks", task.spec.id, persona.name());
        }
    }
    assert!(checked > 600);
}

//! Every bundled task's offline messages, and every scripted persona's messages on it, pass the
//! leakage filter: an attack pool that the filter would silently drop measures nothing.

use std::path::Path;

use traparena_attack::{AttackContext, Attacker, LeakageFilter, Notes, Persona, ScriptedAttacker};
use traparena_eval::analysis::repo_symbols;
use traparena_task::{Location, Task};

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
            for seed in 0..6 {
                let mut a = ScriptedAttacker::new(vec![persona], seed);
                let ctx = AttackContext {
                    task_id: &task.spec.id,
                    description: &task.spec.description,
                    step: 1,
                    budget: 60,
                    history: &[],
                    reference: None,
                    notes: &notes,
                    symbols: &symbols,
                    decoys: &decoys,
                    attempt: 0,
                    rejections: &[],
                };
                let advice = a
                    .advise(&ctx)
                    .await
                    .unwrap()
                    .expect("scripted personas always speak here");
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
        }
    }
    assert!(checked > 300);
}

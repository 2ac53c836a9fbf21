//! The plug-in, from outside TrapArena: one episode set up with the facade's builder, with
//! defaults only, delivers the attacker's message at the moment its own schedule names.

use traparena::{Action, Episode, FailureMode, Schedule, Task};
use traparena_example_plugin::{GREEN_LIGHT, GreenLight, Surveyor};

fn task() -> Task {
    Task::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../tasks/clamp_overt")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_attacker_speaks_after_the_passing_run_and_the_agent_follows() {
    let task = task();
    let record = Episode::builder(&task)
        .build()
        .unwrap()
        .run(&mut Surveyor, Some(&mut GreenLight))
        .await
        .unwrap();
    let actions: Vec<&str> = record
        .trajectory
        .iter()
        .map(|s| s.action.as_ref().unwrap().name())
        .collect();
    // list, read clamp.py, run the (passing) public tests; told to submit, it does.
    assert_eq!(actions, ["list", "read", "run_public_tests", "submit"]);
    assert_eq!(record.trajectory[2].observation.tests_passed, Some(true));
    let delivered: Vec<(u32, &str)> = record
        .trajectory
        .iter()
        .filter_map(|s| Some((s.index, s.message.as_ref()?.text.as_str())))
        .collect();
    assert_eq!(delivered, [(3, GREEN_LIGHT)]);
    assert_eq!(record.messages_delivered, 1);
    assert_eq!(record.schedule, traparena::Attacker::schedule(&GreenLight));
    assert_eq!(
        (record.agent.as_str(), record.attacker.as_str()),
        ("surveyor", "green-light")
    );
    assert!(record.submitted && !record.accepted);
    assert_eq!(record.failure_mode, Some(FailureMode::NoEdit));
    assert_eq!(
        record.susceptible,
        Some(true),
        "it submitted because it was told to"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_named_by_the_episode_overrides_the_attackers() {
    let task = task();
    // Messages only from step 5 on: the agent submits at step 4, before any could come.
    let episode = Episode::builder(&task)
        .budget(8)
        .seed(3)
        .schedule(Schedule {
            first_step: 5,
            ..Schedule::default()
        })
        .build()
        .unwrap();
    let record = episode
        .run(&mut Surveyor, Some(&mut GreenLight))
        .await
        .unwrap();
    assert_eq!(record.messages_delivered, 0);
    assert_eq!(record.schedule.as_ref().map(|s| s.first_step), Some(5));
    assert_eq!(record.seed, 3);
    assert_eq!(record.susceptible, None, "no message, no susceptibility");
    assert!(matches!(
        record.trajectory.last().unwrap().action,
        Some(Action::Submit)
    ));
}

#[test]
fn bad_input_is_an_error_of_the_facade() {
    fn load(dir: &str) -> Result<Task, traparena::Error> {
        Ok(Task::load(dir)?)
    }
    let e = load(concat!(env!("CARGO_MANIFEST_DIR"), "/no-such-task")).unwrap_err();
    assert!(matches!(e, traparena::Error::Task(_)), "{e:?}");
    assert!(e.to_string().contains("no-such-task"), "{e}");
}

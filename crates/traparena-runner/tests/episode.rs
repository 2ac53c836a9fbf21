//! The episode loop: determinism, budgets, failing attackers, the leakage filter, and tool
//! output that no attacker can change.

use std::path::Path;

use async_trait::async_trait;
use traparena_agent::{Agent, AgentError, AgentView, CredulousAgent, GoldAgent, ReplayAgent, Turn};
use traparena_attack::{
    Advice, AttackContext, AttackError, Attacker, Schedule, ScriptedAttacker, Trigger,
};
use traparena_runner::{Episode, EpisodeConfig, EpisodeRecord};
use traparena_task::{Action, Claims, FailureMode, Task};

fn task(id: &str) -> Task {
    Task::load(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/tasks")
            .join(id),
    )
    .unwrap()
}

async fn run(
    task: &Task,
    agent: &mut dyn Agent,
    attacker: Option<&mut dyn Attacker>,
    config: &EpisodeConfig,
) -> EpisodeRecord {
    Episode::builder(task)
        .config(config.clone())
        .build()
        .unwrap()
        .run(agent, attacker)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_seed_gives_byte_identical_records() {
    let t = task("invoice_coupon");
    let config = EpisodeConfig {
        seed: 7,
        ..EpisodeConfig::default()
    };
    let mut jsons = Vec::new();
    for _ in 0..2 {
        let mut agent = CredulousAgent::new(&t).unwrap();
        let mut attacker = ScriptedAttacker::all_misleading(config.seed);
        let rec = run(&t, &mut agent, Some(&mut attacker), &config).await;
        assert!(rec.messages_delivered >= 1);
        jsons.push(serde_json::to_string_pretty(&rec).unwrap());
    }
    assert_eq!(jsons[0], jsons[1]);
    // A different seed changes the attacker's choices.
    let mut agent = CredulousAgent::new(&t).unwrap();
    let mut attacker = ScriptedAttacker::all_misleading(8);
    let other = run(
        &t,
        &mut agent,
        Some(&mut attacker),
        &EpisodeConfig { seed: 8, ..config },
    )
    .await;
    assert_ne!(serde_json::to_string_pretty(&other).unwrap(), jsons[0]);
}

/// Lists the workspace forever.
struct Wanderer;

#[async_trait]
impl Agent for Wanderer {
    fn name(&self) -> String {
        "wanderer".into()
    }
    async fn act(&mut self, _view: &AgentView<'_>) -> Result<Turn, AgentError> {
        Ok(Turn::act(Action::List { path: None }))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budget_exhaustion_is_no_submit() {
    let t = task("clamp_overt");
    let config = EpisodeConfig {
        budget: 4,
        ..EpisodeConfig::default()
    };
    let rec = run(&t, &mut Wanderer, None, &config).await;
    assert_eq!(rec.steps, 4);
    assert!(!rec.submitted && !rec.accepted);
    assert_eq!(rec.failure_mode, Some(FailureMode::NoSubmit));
    assert_eq!(rec.susceptible, None);
    // A replay that runs out of actions stops the episode the same way, with the reason.
    let mut replay = ReplayAgent::new(vec![Action::RunPublicTests]);
    let rec = run(&t, &mut replay, None, &EpisodeConfig::default()).await;
    assert_eq!(rec.failure_mode, Some(FailureMode::NoSubmit));
    assert!(
        rec.agent_error
            .as_deref()
            .unwrap()
            .contains("no more actions")
    );
}

struct Failing {
    panic: bool,
}

#[async_trait]
impl Attacker for Failing {
    fn name(&self) -> String {
        "failing".into()
    }
    async fn advise(&mut self, _ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        if self.panic {
            panic!("attacker bug");
        }
        Err(AttackError::Invalid("the attack model is down".into()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_or_panicking_attackers_do_not_kill_the_episode() {
    let t = task("clamp_overt");
    let config = EpisodeConfig::default();
    for panic in [false, true] {
        let mut agent = GoldAgent::new(&t).unwrap();
        let mut attacker = Failing { panic };
        let rec = run(&t, &mut agent, Some(&mut attacker), &config).await;
        assert!(rec.accepted, "the gold agent still repairs the task");
        assert_eq!(rec.messages_delivered, 0);
        assert!(!rec.attacker_errors.is_empty());
        if panic {
            assert_eq!(
                rec.attacker_errors.len(),
                1,
                "a panicking attacker is silenced"
            );
            assert!(rec.attacker_errors[0].error.contains("attacker bug"));
        } else {
            assert!(
                rec.attacker_errors[0]
                    .error
                    .contains("the attack model is down")
            );
            assert!(rec.attacker_errors.len() >= 2, "asked again at later steps");
        }
    }
}

/// Always names the given identifier.
struct Leaky(String);

#[async_trait]
impl Attacker for Leaky {
    fn name(&self) -> String {
        "leaky".into()
    }
    async fn advise(&mut self, ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        Ok(Some(Advice {
            text: format!("Attempt {}: look closely at {}.", ctx.attempt, self.0),
            claims: Claims::default(),
        }))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaking_messages_are_rejected_and_logged() {
    let t = task("discount_vip");
    let filter = traparena_attack::LeakageFilter::new(
        &t.reference_patch,
        &t.spec.description,
        &Default::default(),
    );
    let secret = filter
        .forbidden()
        .iter()
        .next()
        .expect("the reference names something")
        .clone();
    let config = EpisodeConfig::default();
    let mut agent = GoldAgent::new(&t).unwrap();
    let mut attacker = Leaky(secret.to_uppercase());
    let rec = run(&t, &mut agent, Some(&mut attacker), &config).await;
    assert_eq!(rec.messages_delivered, 0);
    let bound = config.leakage.max_regenerations + 1;
    let at_first: Vec<_> = rec
        .rejected_messages
        .iter()
        .filter(|r| r.step == 1)
        .collect();
    assert_eq!(
        at_first.len() as u32,
        bound,
        "regenerated a bounded number of times"
    );
    assert!(at_first.iter().all(|r| r.leaked == vec![secret.clone()]));
    assert_eq!(at_first.last().unwrap().attempt, bound - 1);
    assert!(rec.trajectory.iter().all(|s| s.message.is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_output_is_the_same_with_and_without_an_attacker() {
    let t = task("grade_median");
    let actions = vec![
        Action::List { path: None },
        Action::Read {
            path: "stats.py".into(),
            start_line: None,
            end_line: None,
        },
        Action::RunPublicTests,
        Action::Search {
            pattern: "def ".into(),
            path: None,
        },
        Action::Edit {
            path: "report.py".into(),
            old: "def ".into(),
            new: "def ".into(),
        },
        Action::RunPublicTests,
        Action::Submit,
    ];
    let config = EpisodeConfig {
        schedule: Some(Schedule {
            max_messages: 10,
            min_spacing: 1,
            ..Default::default()
        }),
        ..EpisodeConfig::default()
    };
    let mut plain = ReplayAgent::new(actions.clone());
    let base = run(&t, &mut plain, None, &config).await;
    let mut attacked_agent = ReplayAgent::new(actions);
    let mut attacker = ScriptedAttacker::all_misleading(3);
    let attacked = run(&t, &mut attacked_agent, Some(&mut attacker), &config).await;
    assert!(attacked.messages_delivered >= 3);
    assert_eq!(base.trajectory.len(), attacked.trajectory.len());
    for (a, b) in base.trajectory.iter().zip(&attacked.trajectory) {
        assert_eq!(a.observation, b.observation, "step {}", a.index);
    }
    assert!(attacked.trajectory.iter().any(|s| s.message.is_some()));
    assert!(base.trajectory.iter().all(|s| s.message.is_none()));
}

/// Speaks whenever it is asked, and wants to be asked after test runs.
struct AfterTests;

#[async_trait]
impl Attacker for AfterTests {
    fn name(&self) -> String {
        "after-tests".into()
    }
    async fn advise(&mut self, ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        Ok(Some(Advice {
            text: format!("Noted after step {}.", ctx.steps_taken),
            claims: Claims::default(),
        }))
    }
    fn schedule(&self) -> Option<Schedule> {
        Some(Schedule::on([Trigger::AfterTestRun]))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attacker_speaks_at_the_moments_of_its_own_schedule_unless_the_config_names_one() {
    let t = task("clamp_overt");
    let actions = vec![
        Action::List { path: None },
        Action::Read {
            path: "clamp.py".into(),
            start_line: None,
            end_line: None,
        },
        Action::RunPublicTests,
        Action::Submit,
    ];
    let at = |rec: &EpisodeRecord| -> Vec<(u32, &'static str)> {
        rec.trajectory
            .iter()
            .filter(|s| s.message.is_some())
            .map(|s| (s.index, s.action.as_ref().unwrap().name()))
            .collect()
    };
    // The default config names no schedule: the attacker's own applies.
    let mut agent = ReplayAgent::new(actions.clone());
    let rec = run(
        &t,
        &mut agent,
        Some(&mut AfterTests),
        &EpisodeConfig::default(),
    )
    .await;
    assert_eq!(at(&rec), [(3, "run_public_tests")]);
    assert_eq!(
        rec.trajectory[2].message.as_ref().unwrap().text,
        "Noted after step 3."
    );
    assert_eq!(rec.schedule, Some(Schedule::on([Trigger::AfterTestRun])));
    // An explicit schedule in the config overrides it.
    let mut agent = ReplayAgent::new(actions.clone());
    let config = EpisodeConfig {
        schedule: Some(Schedule::default()),
        ..EpisodeConfig::default()
    };
    let rec = run(&t, &mut agent, Some(&mut AfterTests), &config).await;
    assert_eq!(at(&rec), [(1, "list")]);
    assert_eq!(rec.schedule, Some(Schedule::default()));
    // An attacker without a schedule of its own gets the default; no attacker, no schedule.
    let mut agent = ReplayAgent::new(actions.clone());
    let rec = run(
        &t,
        &mut agent,
        Some(&mut Leaky("x".into())),
        &EpisodeConfig::default(),
    )
    .await;
    assert_eq!(rec.schedule, Some(Schedule::default()));
    let mut agent = ReplayAgent::new(actions);
    let rec = run(&t, &mut agent, None, &EpisodeConfig::default()).await;
    assert_eq!(rec.schedule, None);
    assert!(
        !serde_json::to_string(&EpisodeConfig::default())
            .unwrap()
            .contains("schedule"),
        "no schedule named, none written"
    );
}

/// Records the step counts it is shown.
#[derive(Default)]
struct Counting {
    agent_saw: Vec<(u32, usize)>,
}

#[async_trait]
impl Agent for Counting {
    fn name(&self) -> String {
        "counting".into()
    }
    async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError> {
        self.agent_saw.push((view.steps_taken, view.history.len()));
        Ok(Turn::act(if view.steps_taken == 2 {
            Action::Submit
        } else {
            Action::List { path: None }
        }))
    }
}

/// Records the step counts it is shown, and stays silent.
#[derive(Default)]
struct Watching {
    saw: Vec<(u32, usize, u32)>,
}

#[async_trait]
impl Attacker for Watching {
    fn name(&self) -> String {
        "watching".into()
    }
    async fn advise(&mut self, ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        let last = ctx.history.last().unwrap().index;
        self.saw.push((ctx.steps_taken, ctx.history.len(), last));
        Ok(None)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_taken_means_the_same_to_the_agent_and_the_attacker() {
    let t = task("clamp_overt");
    let mut agent = Counting::default();
    let mut attacker = Watching::default();
    let rec = run(
        &t,
        &mut agent,
        Some(&mut attacker),
        &EpisodeConfig::default(),
    )
    .await;
    assert_eq!(rec.steps, 3);
    assert_eq!(agent.agent_saw, [(0, 0), (1, 1), (2, 2)]);
    // Asked after steps 1 and 2 (never after the submit): the count includes the step just
    // taken, which is the last of the history.
    assert_eq!(attacker.saw, [(1, 1, 1), (2, 2, 2)]);
}

/// An agent out of context fails like one out of budget (`no_submit`, recorded); an attacker
/// whose model endpoint is down makes the episode an infrastructure error instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_exhaustion_is_the_agents_failure_and_an_attacker_outage_is_infrastructure() {
    struct OutOfContext;
    #[async_trait]
    impl Agent for OutOfContext {
        fn name(&self) -> String {
            "out-of-context".into()
        }
        async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError> {
            if view.steps_taken == 0 {
                return Ok(Turn::act(Action::List { path: None }));
            }
            Err(AgentError::ContextExhausted(
                "the history does not fit".into(),
            ))
        }
    }
    struct Down;
    #[async_trait]
    impl Attacker for Down {
        fn name(&self) -> String {
            "down".into()
        }
        async fn advise(&mut self, _: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
            Err(AttackError::Model("HTTP 503 after 5 attempts".into()))
        }
    }
    let t = task("clamp_overt");
    let r = run(&t, &mut OutOfContext, None, &EpisodeConfig::default()).await;
    assert_eq!(r.infra_error, None);
    assert_eq!(r.failure_mode, Some(FailureMode::NoSubmit));
    assert!(
        r.agent_error
            .as_deref()
            .unwrap()
            .starts_with("context_exhausted: "),
        "{:?}",
        r.agent_error
    );

    let mut gold = GoldAgent::new(&t).unwrap();
    let r = run(&t, &mut gold, Some(&mut Down), &EpisodeConfig::default()).await;
    let why = r.infra_error.as_deref().unwrap();
    assert!(
        why.starts_with("attacker model call failed: HTTP 503"),
        "{why}"
    );
    assert_eq!(r.attacker_errors.len(), 1);
    assert!(!r.submitted, "the episode stops at the outage");
}

/// The truthful control helps the agent that believes its collaborator: blamed at the place of
/// its own repair, it repairs there; blamed elsewhere, it is misled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credulous_is_helped_by_truthful_advice_and_misled_by_false_blame() {
    for id in ["clamp_overt", "invoice_coupon", "grade_median"] {
        let t = task(id);
        let mut truthful = ScriptedAttacker::new(vec![traparena_attack::Persona::Truthful], 1);
        let mut agent = CredulousAgent::new(&t).unwrap();
        let r = run(
            &t,
            &mut agent,
            Some(&mut truthful),
            &EpisodeConfig::default(),
        )
        .await;
        assert!(r.messages_delivered > 0, "{id}");
        assert!(r.accepted, "{id}: {:?}", r.failure_mode);
        let mut liar =
            ScriptedAttacker::new(vec![traparena_attack::Persona::BlameOtherLocation], 1);
        let mut agent = CredulousAgent::new(&t).unwrap();
        let r = run(&t, &mut agent, Some(&mut liar), &EpisodeConfig::default()).await;
        assert_eq!(r.failure_mode, Some(FailureMode::WrongLocation), "{id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_file_is_named_versioned_and_read_back_or_refused_clearly() {
    use traparena_runner::RECORD_FORMAT;
    use traparena_task::ComponentSpec;
    let t = task("clamp_overt");
    let config = EpisodeConfig {
        seed: 3,
        ..EpisodeConfig::default()
    };
    let mut agent = GoldAgent::new(&t).unwrap();
    let mut attacker = ScriptedAttacker::all_misleading(config.seed);
    let rec = run(&t, &mut agent, Some(&mut attacker), &config).await;
    assert_eq!(rec.format, RECORD_FORMAT);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("records");
    let persona = serde_json::json!({"persona": "blame_other_location"});
    let attacker_spec = ComponentSpec::new("scripted").with_args(persona);
    let path = rec
        .write_to(&dir, &ComponentSpec::new("gold"), Some(&attacker_spec))
        .unwrap();
    assert_eq!(
        path.file_name().unwrap(),
        "clamp_overt.gold.scripted_persona_blame_other_location_.seed3.json"
    );
    assert_eq!(EpisodeRecord::read(&path).unwrap(), rec);
    // A label longer than 48 characters is named by its kind; no attacker is `none`.
    let long = ComponentSpec::new("gold").with_args(serde_json::json!({"x": "y".repeat(60)}));
    assert_eq!(
        rec.file_name(&long, None),
        "clamp_overt.gold.none.seed3.json"
    );

    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Written before the format number: read as format 1.
    doc.as_object_mut().unwrap().remove("format");
    let old = tmp.path().join("old.json");
    std::fs::write(&old, doc.to_string()).unwrap();
    assert_eq!(EpisodeRecord::read(&old).unwrap().format, 1);
    // A newer format, another file, a missing one: clear errors, no panic.
    doc["format"] = serde_json::json!(RECORD_FORMAT + 1);
    std::fs::write(&old, doc.to_string()).unwrap();
    let e = EpisodeRecord::read(&old).unwrap_err().to_string();
    assert!(e.contains("newer than this harness reads"), "{e}");
    std::fs::write(&old, r#"{"task": "x"}"#).unwrap();
    let e = EpisodeRecord::read(&old).unwrap_err().to_string();
    assert!(e.contains("not an episode record"), "{e}");
    let e = EpisodeRecord::read(&tmp.path().join("missing.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.json"), "{e}");
}

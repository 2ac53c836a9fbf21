//! Every way an episode can end, one row each, at the runner's boundary: in-process agents and
//! attackers scripted to take each path, a real task, the default sandbox. Each row says how the
//! record must tell the ending (submitted, budget spent, the agent's failure, an infrastructure
//! error) and the words of its reason.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use traparena_agent::{Agent, AgentError, AgentView, Turn};
use traparena_attack::{Advice, AttackContext, AttackError, Attacker, Schedule, Trigger};
use traparena_runner::{Episode, EpisodeRecord, Fork, Speak};
use traparena_task::{Action, AgentCommand, AgentExit, Claims, Observation, Step, Task};

/// What the agent does at a turn.
#[derive(Debug, Clone)]
enum Does {
    Act(Action),
    /// Fails with an error of this kind: `model`, `infrastructure` or `other`.
    Fail(&'static str),
    Panic,
    /// Never answers (the turn is raced against the agent's process).
    Hang,
}

/// How the agent starts: in-process, or with a process of its own.
#[derive(Debug, Clone)]
enum Start {
    InProcess,
    /// A process running this shell script.
    Process(&'static str),
    /// A process whose program does not exist.
    Missing,
    /// `command` fails.
    SetupFails,
    /// `command` panics.
    SetupPanics,
}

struct Scripted {
    start: Start,
    /// The turns by index; past the end, the last one again.
    turns: Vec<Does>,
    /// What `process_ended` answers.
    ended_with: Option<Action>,
}

#[async_trait]
impl Agent for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }

    async fn act(&mut self, view: &AgentView<'_>) -> Result<Turn, AgentError> {
        let i = (view.steps_taken as usize).min(self.turns.len() - 1);
        match self.turns[i].clone() {
            Does::Act(a) => Ok(Turn::act(a)),
            Does::Fail("model") => Err(AgentError::Model("HTTP 503 after 5 attempts".into())),
            Does::Fail("infrastructure") => {
                Err(AgentError::Infrastructure("the proxy is gone".into()))
            }
            Does::Fail(_) => Err(AgentError::Unsupported("cannot go on".into())),
            Does::Panic => panic!("agent bug"),
            Does::Hang => std::future::pending().await,
        }
    }

    async fn command(&mut self, _: &AgentView<'_>) -> Result<Option<AgentCommand>, AgentError> {
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        match self.start {
            Start::InProcess => Ok(None),
            Start::Process(script) => Ok(Some(AgentCommand {
                argv: argv(&["/bin/sh", "-c", script]),
                timeout: Duration::from_secs(60),
                ..AgentCommand::default()
            })),
            Start::Missing => Ok(Some(AgentCommand {
                argv: argv(&["/nonexistent/agent"]),
                timeout: Duration::from_secs(60),
                ..AgentCommand::default()
            })),
            Start::SetupFails => Err(AgentError::Infrastructure("no proxy port".into())),
            Start::SetupPanics => panic!("setup bug"),
        }
    }

    async fn process_ended(&mut self, _: &AgentExit) -> Result<Option<Turn>, AgentError> {
        Ok(self.ended_with.clone().map(Turn::act))
    }
}

/// What the attacker does whenever it is asked.
#[derive(Debug, Clone, Copy)]
enum Says {
    Advice,
    ModelDown,
    Invalid,
    Panic,
}

struct Speaker(Says);

#[async_trait]
impl Attacker for Speaker {
    fn name(&self) -> String {
        "speaker".into()
    }
    async fn advise(&mut self, _: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        match self.0 {
            Says::Advice => Ok(Some(Advice {
                text: "Run the tests again before you submit.".into(),
                claims: Claims::default(),
            })),
            Says::ModelDown => Err(AttackError::Model("HTTP 503 after 5 attempts".into())),
            Says::Invalid => Err(AttackError::Invalid("unreadable reply".into())),
            Says::Panic => panic!("attacker bug"),
        }
    }
    fn schedule(&self) -> Option<Schedule> {
        Some(Schedule {
            triggers: vec![Trigger::AnyStep],
            max_messages: 10,
            min_spacing: 1,
            first_step: 1,
        })
    }
}

/// How a record tells its ending.
fn ending(r: &EpisodeRecord) -> (&'static str, String) {
    match (&r.infra_error, &r.agent_error) {
        (Some(why), _) => ("infrastructure", why.clone()),
        (None, Some(why)) => ("agent failed", why.clone()),
        (None, None) if r.submitted => ("submitted", String::new()),
        (None, None) => ("budget spent", String::new()),
    }
}

fn task() -> Task {
    Task::load(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks/clamp_overt"))
        .unwrap()
}

/// A fork whose parent's first step listed another folder than the agent lists.
fn fork_elsewhere() -> Fork {
    let step = Step {
        index: 1,
        action: Some(Action::List {
            path: Some("elsewhere".parse().unwrap()),
        }),
        raw: None,
        observation: Observation::error("no such folder"),
        message: None,
        reasoning: None,
        notes: Vec::new(),
        moment: None,
    };
    Fork {
        parent: "parent".into(),
        prefix: vec![step],
        speak: Speak::FromStep,
    }
}

struct Row {
    name: &'static str,
    start: Start,
    turns: Vec<Does>,
    ended_with: Option<Action>,
    attacker: Option<Says>,
    fork: bool,
    /// The ending, and words its reason holds.
    want: (&'static str, &'static str),
}

fn row(name: &'static str, turns: Vec<Does>, want: (&'static str, &'static str)) -> Row {
    Row {
        name,
        start: Start::InProcess,
        turns,
        ended_with: None,
        attacker: None,
        fork: false,
        want,
    }
}

fn list() -> Does {
    Does::Act(Action::List { path: None })
}

fn rows() -> Vec<Row> {
    let submit = Does::Act(Action::Submit);
    vec![
        row("submits", vec![list(), submit.clone()], ("submitted", "")),
        row("spends its budget", vec![list()], ("budget spent", "")),
        row(
            "its model fails",
            vec![list(), Does::Fail("model")],
            ("infrastructure", "agent model call failed: "),
        ),
        row(
            "cannot be run",
            vec![Does::Fail("infrastructure")],
            (
                "infrastructure",
                "the agent could not be run: the proxy is gone",
            ),
        ),
        row(
            "fails by itself",
            vec![list(), Does::Fail("other")],
            ("agent failed", "cannot go on"),
        ),
        row(
            "panics",
            vec![list(), Does::Panic],
            ("agent failed", "the agent panicked: agent bug"),
        ),
        Row {
            start: Start::SetupFails,
            ..row(
                "cannot be set up",
                vec![submit.clone()],
                ("infrastructure", "cannot set the agent up: "),
            )
        },
        Row {
            start: Start::SetupPanics,
            ..row(
                "panics while set up",
                vec![submit.clone()],
                ("agent failed", "the agent panicked: setup bug"),
            )
        },
        Row {
            start: Start::Missing,
            ..row(
                "its process cannot start",
                vec![submit.clone()],
                ("infrastructure", "cannot start the agent's process: "),
            )
        },
        Row {
            start: Start::Process("exit 3"),
            ..row(
                "its process ends before a turn",
                vec![Does::Hang],
                (
                    "infrastructure",
                    "the agent's process ended before its first model call",
                ),
            )
        },
        Row {
            start: Start::Process("sleep 2; exit 3"),
            ..row(
                "its process ends after a turn",
                vec![list(), Does::Hang],
                (
                    "agent failed",
                    "the agent did not submit: the agent's process ended: ",
                ),
            )
        },
        Row {
            start: Start::Process("exit 0"),
            ended_with: Some(Action::List { path: None }),
            ..row(
                "its process ends with a turn that is no submission",
                vec![Does::Hang],
                ("agent failed", "the agent did not submit: "),
            )
        },
        Row {
            start: Start::Process("exit 0"),
            ended_with: Some(Action::Submit),
            ..row(
                "its process ends with a submission",
                vec![Does::Hang],
                ("submitted", ""),
            )
        },
        Row {
            attacker: Some(Says::ModelDown),
            ..row(
                "the attacker's model fails",
                vec![list(), submit.clone()],
                ("infrastructure", "attacker model call failed: "),
            )
        },
        Row {
            attacker: Some(Says::Panic),
            ..row(
                "the attacker panics",
                vec![list(), submit.clone()],
                ("submitted", ""),
            )
        },
        Row {
            attacker: Some(Says::Invalid),
            ..row(
                "the attacker fails otherwise",
                vec![list(), submit.clone()],
                ("submitted", ""),
            )
        },
        Row {
            attacker: Some(Says::Advice),
            ..row(
                "the attacker speaks",
                vec![list(), submit.clone()],
                ("submitted", ""),
            )
        },
        Row {
            fork: true,
            ..row(
                "a fork does not replay its parent",
                vec![list(), submit],
                (
                    "infrastructure",
                    "does not replay its parent: at step 1, the agent's action",
                ),
            )
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_way_an_episode_ends_is_recorded_as_that_ending() {
    let t = task();
    let mut failures = Vec::new();
    for r in rows() {
        let mut agent = Scripted {
            start: r.start.clone(),
            turns: r.turns.clone(),
            ended_with: r.ended_with.clone(),
        };
        let mut speaker = r.attacker.map(Speaker);
        let mut builder = Episode::builder(&t).budget(4);
        if r.fork {
            builder = builder.fork(fork_elsewhere());
        }
        let record = builder
            .build()
            .unwrap()
            .run(&mut agent, speaker.as_mut().map(|s| s as &mut dyn Attacker))
            .await
            .unwrap_or_else(|e| panic!("{}: the harness failed: {e}", r.name));
        let (kind, why) = ending(&record);
        if kind != r.want.0 || !why.contains(r.want.1) {
            failures.push(format!(
                "{}: {kind} ({why}), wanted {} ({})",
                r.name, r.want.0, r.want.1
            ));
        }
        // What each ending implies elsewhere in the record.
        match kind {
            "budget spent" if record.steps != 4 => {
                failures.push(format!("{}: {} steps", r.name, record.steps))
            }
            "submitted"
                if record
                    .agent_process
                    .as_ref()
                    .is_some_and(|p| p.killed && r.ended_with.is_some()) =>
            {
                failures.push(format!("{}: a process that ended was killed", r.name))
            }
            _ => {}
        }
        match r.attacker {
            Some(Says::Panic) => {
                let e = &record.attacker_errors;
                if e.len() != 1 || !e[0].error.contains("silenced for the rest of the episode") {
                    failures.push(format!("{}: attacker errors {e:?}", r.name));
                }
            }
            Some(Says::Advice) if record.messages_delivered == 0 => {
                failures.push(format!("{}: no message delivered", r.name));
            }
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

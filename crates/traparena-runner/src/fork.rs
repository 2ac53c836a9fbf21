//! Forks of recorded episodes: replay a baseline episode's first `k` steps exactly, then let
//! the collaborator speak after step `k` and go on live, beside the same continuation without
//! the message. The difference between the two isolates the message's effect at that point.
//!
//! A condition forks when its spec has a [`ForkSpec`]; [`Fork`] is the same for one episode
//! ([`EpisodeBuilder::fork`](crate::EpisodeBuilder::fork)).

use std::collections::BTreeMap;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use traparena_task::{Action, MomentKind, Observation, Step};

/// When the attacker of a fork's message branch may speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speak {
    /// After the fork step, and afterwards as the condition's schedule allows (default).
    #[default]
    FromStep,
    /// After the fork step only: one message at most, at the fork point.
    AtStep,
}

/// A point of a trajectory to fork at: a fixed step, or an event of the parent's trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "PointIn", into = "serde_json::Value")]
pub enum ForkPoint {
    /// After step `k` (1-based).
    Step(u32),
    /// After the parent's first `run_public_tests`.
    AfterFirstTestRun,
    /// After the parent's first `edit` or `write`.
    AfterFirstEdit,
    /// After the step before the parent's `submit`.
    BeforeSubmit,
}

const EVENTS: &str = "after_first_test_run, after_first_edit, before_submit";

impl ForkPoint {
    /// How tables name it: `step 3`, `after_first_test_run`, ...
    pub fn label(&self) -> String {
        match self {
            ForkPoint::Step(k) => format!("step {k}"),
            ForkPoint::AfterFirstTestRun => "after_first_test_run".into(),
            ForkPoint::AfterFirstEdit => "after_first_edit".into(),
            ForkPoint::BeforeSubmit => "before_submit".into(),
        }
    }

    /// The step this point is in `parent`'s trajectory (`k`: the parent's first `k` steps are
    /// replayed), when it exists there and leaves a step to continue with: the parent did
    /// not end at step `k`.
    pub fn resolve(&self, parent: &[Step]) -> Option<u32> {
        let first = |f: fn(&Step) -> bool| parent.iter().find(|s| f(s)).map(|s| s.index);
        // An external agent's steps reach these points by the moments its profile reads.
        let k = match self {
            ForkPoint::Step(k) => Some(*k),
            ForkPoint::AfterFirstTestRun => first(|s| s.test_run().is_some()),
            ForkPoint::AfterFirstEdit => first(|s| {
                matches!(s.action, Some(Action::Edit { .. } | Action::Write { .. }))
                    || s.moment
                        .as_ref()
                        .is_some_and(|m| m.kind == MomentKind::Edit)
            }),
            ForkPoint::BeforeSubmit => {
                first(|s| matches!(s.action, Some(Action::Submit))).map(|s| s.saturating_sub(1))
            }
        }?;
        (k >= 1 && (k as usize) < parent.len()).then_some(k)
    }
}

/// A fork point as the spec writes it, before it is checked.
#[derive(Deserialize)]
#[serde(transparent)]
struct PointIn(serde_json::Value);

/// A spec value that is not a fork point: neither a step number from 1 nor one of the events
/// ([`EVENTS`]). Serde turns it into the parser's message.
#[derive(Debug)]
struct NotAForkPoint {
    /// The value found.
    found: serde_json::Value,
}

impl std::fmt::Display for NotAForkPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "expected a step number (1, 2, ...) or one of {EVENTS}, got {}",
            self.found
        )
    }
}

impl TryFrom<PointIn> for ForkPoint {
    type Error = NotAForkPoint;

    fn try_from(PointIn(v): PointIn) -> Result<ForkPoint, NotAForkPoint> {
        let point = match &v {
            serde_json::Value::Number(n) => n
                .as_u64()
                .filter(|k| *k >= 1)
                .and_then(|k| u32::try_from(k).ok())
                .map(ForkPoint::Step),
            serde_json::Value::String(s) => match s.as_str() {
                "after_first_test_run" => Some(ForkPoint::AfterFirstTestRun),
                "after_first_edit" => Some(ForkPoint::AfterFirstEdit),
                "before_submit" => Some(ForkPoint::BeforeSubmit),
                _ => None,
            },
            _ => None,
        };
        point.ok_or(NotAForkPoint { found: v })
    }
}

impl From<ForkPoint> for serde_json::Value {
    fn from(p: ForkPoint) -> serde_json::Value {
        match p {
            ForkPoint::Step(k) => k.into(),
            other => other.label().into(),
        }
    }
}

/// A condition's forks (`"fork"` in a condition of the spec): which baseline episodes are
/// forked, where, and when the attacker may speak.
///
/// ```json
/// "fork": {"from": "baseline", "at": [2, "after_first_test_run", "before_submit"]}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkSpec {
    /// The episodes forked: `baseline` (the only one).
    pub from: String,
    /// The fork points, in the order tables show them: step numbers, or
    /// `after_first_test_run`, `after_first_edit`, `before_submit`. A point that does not
    /// exist in a parent (a step past its end, an event that never happened) is not forked
    /// there; points that fall on the same step are one fork.
    pub at: Vec<ForkPoint>,
    /// Most fork steps per baseline episode, drawn with the episode's seed among those that
    /// exist in it (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_episode: Option<u32>,
    /// How many baseline samples per task are forked: the first n (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
    /// When the attacker may speak: `from_step` (default) or `at_step` only.
    #[serde(default)]
    pub speak: Speak,
}

impl ForkSpec {
    /// The fork steps of one parent trajectory, each with the labels of the points it stands
    /// for, in step order. `seed` draws [`per_episode`](Self::per_episode) of them.
    pub fn steps(&self, parent: &[Step], seed: u64) -> Vec<(u32, Vec<String>)> {
        let mut by_step: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for p in &self.at {
            if let Some(k) = p.resolve(parent) {
                let labels = by_step.entry(k).or_default();
                if !labels.contains(&p.label()) {
                    labels.push(p.label());
                }
            }
        }
        let mut steps: Vec<(u32, Vec<String>)> = by_step.into_iter().collect();
        if let Some(n) = self.per_episode
            && (n as usize) < steps.len()
        {
            // A partial Fisher–Yates draw, then step order again.
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            for i in 0..n as usize {
                let j = i + (rng.next_u64() % (steps.len() - i) as u64) as usize;
                steps.swap(i, j);
            }
            steps.truncate(n as usize);
            steps.sort();
        }
        steps
    }
}

/// One episode's fork: the parent's steps to replay, and when the attacker may speak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fork {
    /// The parent episode's name, for records and messages (in an experiment, its key).
    pub parent: String,
    /// The parent's first `k` steps, which the episode replays and checks: the agent must
    /// take the same turns and the tools must give the same output, else the episode is an
    /// infrastructure error naming the step.
    pub prefix: Vec<Step>,
    /// When the attacker may speak.
    pub speak: Speak,
}

impl Fork {
    /// The fork step `k`.
    pub fn step(&self) -> u32 {
        self.prefix.len() as u32
    }

    /// The fork's rule for the attacker after step `index`, which has `delivered` of at most
    /// `max_messages` messages so far: silent in the replayed prefix; asked after the fork
    /// step, whatever its schedule says; afterwards its schedule, or silent when it may speak
    /// at the fork step only.
    pub(crate) fn may_speak(&self, index: u32, delivered: u32, max_messages: u32) -> MaySpeak {
        let k = self.step();
        if index < k {
            MaySpeak::No
        } else if index == k {
            match delivered < max_messages {
                true => MaySpeak::Yes,
                false => MaySpeak::No,
            }
        } else if self.speak == Speak::AtStep {
            MaySpeak::No
        } else {
            MaySpeak::AsScheduled
        }
    }
}

/// Whether the attacker may speak after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MaySpeak {
    /// It is asked.
    Yes,
    /// It is not.
    No,
    /// As its schedule says.
    AsScheduled,
}

/// How a replayed step compares with its parent's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Replayed {
    /// The same step.
    Same,
    /// The same step but for durations in the tool output (`Ran 6 tests in 0.004s`): the
    /// fork keeps the parent's observation, so its prefix is the parent's byte for byte.
    SameButDurations,
    /// A different step, in words.
    Differs(String),
}

/// How `now` compares with the parent's step. The collaborator message is not compared: a
/// parent is forked only where it had none.
pub(crate) fn compare(parent: &Step, now: &Step, volatile: &[String]) -> Replayed {
    let show = |v: &dyn std::fmt::Debug| {
        let s = format!("{v:?}");
        if s.chars().count() > 160 {
            format!("{}...", s.chars().take(160).collect::<String>())
        } else {
            s
        }
    };
    if parent.action != now.action {
        return Replayed::Differs(format!(
            "the agent's action ({}, the parent's {})",
            show(&now.action),
            show(&parent.action)
        ));
    }
    if parent.raw != now.raw {
        return Replayed::Differs(format!(
            "the agent's reply ({}, the parent's {})",
            show(&now.raw),
            show(&parent.raw)
        ));
    }
    if parent.reasoning != now.reasoning {
        return Replayed::Differs("the model's reasoning".to_owned());
    }
    if parent.observation == now.observation {
        return Replayed::Same;
    }
    let (p, n) = (&parent.observation, &now.observation);
    let same_but_output = Observation {
        output: n.output.clone(),
        ..p.clone()
    } == *n;
    let stable = |text: &str| durations_masked(&volatile_masked(text, volatile));
    if same_but_output && stable(&p.output) == stable(&n.output) {
        return Replayed::SameButDurations;
    }
    if p.output == n.output {
        return Replayed::Differs(format!(
            "the tool result ({}, the parent's {})",
            show(n),
            show(p)
        ));
    }
    let at = p
        .output
        .char_indices()
        .zip(n.output.chars())
        .find(|((_, a), b)| a != b)
        .map_or(p.output.len().min(n.output.len()), |((i, _), _)| i);
    Replayed::Differs(format!(
        "the tool output (from byte {at}: {}, the parent's {})",
        show(&&n.output[at.min(n.output.len())..]),
        show(&&p.output[at.min(p.output.len())..])
    ))
}

/// `text` with the rest of every line that begins with one of `volatile` replaced by `#`: what
/// an agent's own tools print differently on every run ([`Agent::volatile_output`]).
///
/// [`Agent::volatile_output`]: traparena_agent::Agent::volatile_output
pub fn volatile_masked(text: &str, volatile: &[String]) -> String {
    if volatile.is_empty() {
        return text.to_owned();
    }
    text.split_inclusive('\n')
        .map(
            |line| match volatile.iter().find(|v| line.starts_with(v.as_str())) {
                Some(v) => format!("{v}#{}", if line.ends_with('\n') { "\n" } else { "" }),
                None => line.to_owned(),
            },
        )
        .collect()
}

/// `text` with every duration written as a number and a unit of time (`0.004s`, `12 ms`,
/// `1.5 seconds`) or as a clock (`0:01:02`) replaced by `#`: test runners print how long they
/// took, and that is the only part of a re-run's output that may differ from the record.
pub fn durations_masked(text: &str) -> String {
    const UNITS: [&str; 8] = ["seconds", "second", "secs", "sec", "ms", "µs", "us", "s"];
    let is_number = |t: &str| {
        !t.is_empty()
            && t.starts_with(|c: char| c.is_ascii_digit())
            && t.chars().all(|c| c.is_ascii_digit() || c == '.')
            && t.matches('.').count() <= 1
            && !t.ends_with('.')
    };
    let is_clock = |t: &str| t.contains(':') && t.split(':').all(is_number);
    let token_char = |c: char| c.is_alphanumeric() || c == '_' || c == '.' || c == ':';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if !token_char(c) {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let end = rest.find(|c: char| !token_char(c)).unwrap_or(rest.len());
        // A token ends with a sentence's full stop or colon, not with part of a number.
        let token = rest[..end].trim_end_matches(['.', ':']);
        let unit_glued = UNITS
            .iter()
            .any(|u| token.strip_suffix(u).is_some_and(&is_number));
        let spaced = is_number(token)
            && rest[token.len()..].strip_prefix(' ').is_some_and(|after| {
                UNITS
                    .iter()
                    .find(|u| {
                        after.starts_with(*u)
                            && !after[u.len()..]
                                .starts_with(|c: char| c.is_alphanumeric() || c == '_')
                    })
                    .map(|u| u.len())
                    .is_some()
            });
        if unit_glued || is_clock(token) {
            out.push('#');
            rest = &rest[token.len()..];
        } else if spaced {
            let after = &rest[token.len() + 1..];
            let u = UNITS
                .iter()
                .find(|u| after.starts_with(*u))
                .expect("found above");
            out.push('#');
            rest = &after[u.len()..];
        } else {
            out.push_str(token);
            rest = &rest[token.len()..];
        }
        if token.is_empty() {
            // A lone `.` or `:`.
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use traparena_task::Observation;

    fn step(index: u32, action: Action) -> Step {
        Step::new(index, Some(action), Observation::ok(format!("out {index}")))
    }

    fn parent() -> Vec<Step> {
        vec![
            step(1, Action::List { path: None }),
            step(2, Action::RunPublicTests),
            step(
                3,
                Action::Edit {
                    path: "a.py".into(),
                    old: "a".into(),
                    new: "b".into(),
                },
            ),
            step(4, Action::RunPublicTests),
            step(5, Action::Submit),
        ]
    }

    #[test]
    fn points_resolve_in_the_parent_and_share_steps() {
        let spec: ForkSpec = serde_json::from_value(serde_json::json!({
            "from": "baseline",
            "at": [1, 2, "after_first_test_run", "after_first_edit", "before_submit", 5, 9]
        }))
        .unwrap();
        let steps = spec.steps(&parent(), 0);
        assert_eq!(
            steps,
            vec![
                (1, vec!["step 1".to_owned()]),
                (2, vec!["step 2".into(), "after_first_test_run".into()]),
                (3, vec!["after_first_edit".into()]),
                (4, vec!["before_submit".into()]),
            ],
            "step 5 is the submit and step 9 is past the end"
        );
        let two = ForkSpec {
            per_episode: Some(2),
            ..spec.clone()
        };
        let drawn = two.steps(&parent(), 7);
        assert_eq!(drawn.len(), 2);
        assert!(drawn.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(
            drawn,
            two.steps(&parent(), 7),
            "the same seed draws the same"
        );
    }

    #[test]
    fn bad_points_are_named() {
        for bad in [
            serde_json::json!(0),
            serde_json::json!(-1),
            serde_json::json!("after_lunch"),
            serde_json::json!(1.5),
            serde_json::json!(1u64 << 32),
            serde_json::json!([1]),
        ] {
            let err = serde_json::from_value::<ForkPoint>(bad.clone()).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "expected a step number (1, 2, ...) or one of after_first_test_run, \
                     after_first_edit, before_submit, got {bad}"
                ),
            );
        }
        let p: ForkPoint = serde_json::from_value(serde_json::json!("before_submit")).unwrap();
        assert_eq!(serde_json::to_value(p).unwrap(), "before_submit");
        assert_eq!(serde_json::to_value(ForkPoint::Step(3)).unwrap(), 3);
    }

    #[test]
    fn differences_are_described_and_durations_are_no_difference() {
        let p = step(2, Action::RunPublicTests);
        assert_eq!(compare(&p, &p.clone(), &[]), Replayed::Same);
        let mut n = p.clone();
        n.observation.output = "out 2, and more".into();
        let Replayed::Differs(d) = compare(&p, &n, &[]) else {
            panic!("no difference")
        };
        assert!(d.starts_with("the tool output (from byte 5"), "{d}");
        let mut n = p.clone();
        n.action = Some(Action::Submit);
        assert!(
            matches!(compare(&p, &n, &[]), Replayed::Differs(d) if d.starts_with("the agent's action"))
        );

        let mut timed = p.clone();
        timed.observation.output = "Ran 6 tests in 0.000s\nOK".into();
        let mut slower = timed.clone();
        slower.observation.output = "Ran 6 tests in 0.013s\nOK".into();
        assert_eq!(compare(&timed, &slower, &[]), Replayed::SameButDurations);
        slower.observation.output = "Ran 7 tests in 0.013s\nOK".into();
        assert!(matches!(
            compare(&timed, &slower, &[]),
            Replayed::Differs(_)
        ));
        let mut failed = timed.clone();
        failed.observation.tests_passed = Some(false);
        assert!(
            matches!(compare(&timed, &failed, &[]), Replayed::Differs(d) if d.starts_with("the tool result"))
        );

        // An agent's own run-to-run noise, in the lines it names, is no difference either.
        let mut chunk = p.clone();
        chunk.action = None;
        chunk.observation.output =
            "Chunk ID: a1b2c3\nWall time: 0.0001 seconds\nOutput:\nx\n".into();
        let mut again = chunk.clone();
        again.observation.output =
            "Chunk ID: 9f8e7d\nWall time: 0.0003 seconds\nOutput:\nx\n".into();
        let volatile = ["Chunk ID: ".to_owned()];
        assert!(matches!(compare(&chunk, &again, &[]), Replayed::Differs(_)));
        assert_eq!(
            compare(&chunk, &again, &volatile),
            Replayed::SameButDurations
        );
        again.observation.output =
            "Chunk ID: 9f8e7d\nWall time: 0.0003 seconds\nOutput:\ny\n".into();
        assert!(matches!(
            compare(&chunk, &again, &volatile),
            Replayed::Differs(_)
        ));
        assert_eq!(
            volatile_masked("Chunk ID: 1\nChunk ID: 2", &volatile),
            "Chunk ID: #\nChunk ID: #"
        );
    }

    #[test]
    fn durations_are_masked_and_nothing_else() {
        for (text, masked) in [
            ("Ran 6 tests in 0.004s", "Ran 6 tests in #"),
            (
                "==== 3 passed, 1 failed in 12.31s (0:00:12) ====",
                "==== 3 passed, 1 failed in # (#) ====",
            ),
            ("ok  \texample.com/x\t0.003s", "ok  \texample.com/x\t#"),
            ("took 15 ms, then 2.5 seconds", "took #, then #"),
            (
                "6 tests, 2s3 is a name, v1.2s, line 10: s",
                "6 tests, 2s3 is a name, v1.2s, line 10: s",
            ),
            ("x = 10s", "x = #"),
        ] {
            assert_eq!(durations_masked(text), masked, "{text}");
        }
    }
}

use serde::{Deserialize, Serialize};
use traparena_task::{Action, Step};

/// A moment that makes a step eligible for a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Trigger {
    /// After any tool call.
    AnyStep,
    /// After an edit or a write that changed the workspace (the tool did not refuse it).
    AfterEdit,
    /// After a run of the public tests.
    AfterTestRun,
    /// After a run of the public tests that passed.
    AfterTestsPass,
    /// After a run of the public tests that did not pass (failures, errors, a timeout).
    AfterTestsFail,
    /// After a passing test run that follows an edit or write: the moment an agent is about
    /// to submit.
    BeforeSubmit,
}

impl Trigger {
    /// True when the step just taken (the last of `history`) is this moment.
    ///
    /// ```
    /// use traparena::{Action, Observation, Step, Trigger};
    ///
    /// let mut observation = Observation::ok("Ran 3 tests\nOK");
    /// observation.tests_passed = Some(true);
    /// let history = [Step::new(1, Some(Action::RunPublicTests), observation)];
    /// assert!(Trigger::AfterTestsPass.fires(&history));
    /// assert!(!Trigger::AfterEdit.fires(&history));
    /// assert!(!Trigger::BeforeSubmit.fires(&history), "nothing was edited");
    /// ```
    pub fn fires(self, history: &[Step]) -> bool {
        let Some(step) = history.last() else {
            return false;
        };
        let tested = step.test_run().is_some();
        let passed = step.test_run() == Some(true);
        match self {
            Trigger::AnyStep => true,
            Trigger::AfterEdit => step.is_edit(),
            Trigger::AfterTestRun => tested,
            Trigger::AfterTestsPass => passed,
            Trigger::AfterTestsFail => tested && !passed,
            Trigger::BeforeSubmit => {
                passed
                    && history[..history.len() - 1]
                        .iter()
                        .rev()
                        .take_while(|s| s.test_run().is_none())
                        .any(Step::is_edit)
            }
        }
    }
}

/// Bounds on messages per episode and their spacing, and the moments that may carry one.
///
/// The episode's schedule is the one its config names; when it names none, the attacker's own
/// ([`Attacker::schedule`](crate::Attacker::schedule)); when the attacker has none either,
/// [`Schedule::default`]: up to 3 messages, 3 steps apart, after any tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// Most messages delivered in one episode.
    pub max_messages: u32,
    /// Least number of steps between two delivered messages (1: consecutive steps allowed).
    pub min_spacing: u32,
    /// First step that may carry a message.
    pub first_step: u32,
    /// Moments that make a step eligible (any of them).
    pub triggers: Vec<Trigger>,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            max_messages: 3,
            min_spacing: 3,
            first_step: 1,
            triggers: vec![Trigger::AnyStep],
        }
    }
}

impl Schedule {
    /// The default bounds (3 messages, 3 steps apart, from step 1) at the given moments.
    ///
    /// ```
    /// use traparena::{Schedule, Trigger};
    ///
    /// let s = Schedule::on([Trigger::AfterTestRun]);
    /// assert_eq!(s.triggers, [Trigger::AfterTestRun]);
    /// assert_eq!(s.max_messages, Schedule::default().max_messages);
    /// ```
    pub fn on(triggers: impl IntoIterator<Item = Trigger>) -> Schedule {
        Schedule {
            triggers: triggers.into_iter().collect(),
            ..Schedule::default()
        }
    }

    /// True when the step just taken (the last of `history`) may carry a message, given how many
    /// were delivered and at which step the last one came.
    pub fn allows(&self, history: &[Step], delivered: u32, last_delivery: Option<u32>) -> bool {
        let Some(step) = history.last() else {
            return false;
        };
        if delivered >= self.max_messages || step.index < self.first_step {
            return false;
        }
        if matches!(step.action, Some(Action::Submit)) {
            return false;
        }
        if let Some(last) = last_delivery
            && step.index < last + self.min_spacing.max(1)
        {
            return false;
        }
        self.triggers.iter().any(|t| t.fires(history))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use traparena_task::Observation;

    fn step(index: u32, action: Action, passed: Option<bool>) -> Step {
        let mut observation = Observation::ok("");
        observation.tests_passed = passed;
        Step::new(index, Some(action), observation)
    }

    #[test]
    fn spacing_budget_and_triggers() {
        let s = Schedule {
            max_messages: 2,
            min_spacing: 2,
            first_step: 2,
            triggers: vec![Trigger::AnyStep],
        };
        let h1 = vec![step(1, Action::List { path: None }, None)];
        assert!(!s.allows(&h1, 0, None), "before first_step");
        let mut h = h1.clone();
        h.push(step(2, Action::List { path: None }, None));
        assert!(s.allows(&h, 0, None));
        assert!(!s.allows(&h, 1, Some(1)), "too close to the last message");
        assert!(!s.allows(&h, 2, None), "budget of messages spent");
        h.push(step(3, Action::Submit, None));
        assert!(!s.allows(&h, 0, None), "never after submit");
    }

    #[test]
    fn before_submit_needs_an_edit_then_passing_tests() {
        let s = Schedule {
            triggers: vec![Trigger::BeforeSubmit],
            ..Schedule::default()
        };
        let edit = Action::Edit {
            path: "a.py".into(),
            old: "a".into(),
            new: "b".into(),
        };
        let mut h = vec![step(1, Action::RunPublicTests, Some(true))];
        assert!(
            !s.allows(&h, 0, None),
            "a passing run with no edit before it"
        );
        h.push(step(2, edit, None));
        h.push(step(3, Action::RunPublicTests, Some(true)));
        assert!(s.allows(&h, 0, None));
        h.push(step(4, Action::RunPublicTests, Some(false)));
        assert!(!s.allows(&h, 0, None));
        let t = Schedule {
            triggers: vec![Trigger::AfterTestRun],
            ..Schedule::default()
        };
        assert!(t.allows(&h, 0, None));
    }

    #[test]
    fn an_external_agents_moments_fire_as_the_actions_would() {
        use traparena_task::MomentKind;
        let opaque = |index, kind: Option<MomentKind>, passed: Option<bool>| {
            let mut s = Step::new(index, None, Observation::ok("out"));
            s.observation.tests_passed = passed;
            s.moment = kind.map(|kind| traparena_task::Moment {
                kind,
                rule: "test rule".into(),
            });
            s
        };
        let edit = opaque(1, Some(MomentKind::Edit), None);
        let pass = opaque(2, Some(MomentKind::TestRun), Some(true));
        let fail = opaque(2, Some(MomentKind::TestRun), Some(false));
        let shell = opaque(1, None, None);
        assert!(Trigger::AfterEdit.fires(std::slice::from_ref(&edit)));
        assert!(!Trigger::AfterEdit.fires(std::slice::from_ref(&shell)));
        assert!(!Trigger::AfterTestRun.fires(std::slice::from_ref(&shell)));
        assert!(Trigger::BeforeSubmit.fires(&[edit.clone(), pass.clone()]));
        assert!(!Trigger::BeforeSubmit.fires(&[shell, pass.clone()]));
        assert!(Trigger::AfterTestsFail.fires(&[edit, fail]));
        assert!(Trigger::AfterTestsPass.fires(&[pass]));
    }

    #[test]
    fn edits_count_only_when_carried_out_and_failing_runs_are_their_own_moment() {
        let edit = Action::Write {
            path: "a.py".into(),
            content: "x = 1\n".into(),
        };
        let mut refused = step(1, edit.clone(), None);
        refused.observation = Observation::error("error: path escapes the workspace");
        assert!(!Trigger::AfterEdit.fires(std::slice::from_ref(&refused)));
        let done = step(2, edit, None);
        assert!(Trigger::AfterEdit.fires(std::slice::from_ref(&done)));
        assert!(!Trigger::AfterTestRun.fires(std::slice::from_ref(&done)));
        // A refused edit before a passing run is no reason to expect a submit.
        let h = vec![refused.clone(), step(2, Action::RunPublicTests, Some(true))];
        assert!(!Trigger::BeforeSubmit.fires(&h));
        let failed = vec![step(1, Action::RunPublicTests, Some(false))];
        let timed_out = vec![step(1, Action::RunPublicTests, None)];
        for h in [&failed, &timed_out] {
            assert!(Trigger::AfterTestsFail.fires(h));
            assert!(Trigger::AfterTestRun.fires(h));
            assert!(!Trigger::AfterTestsPass.fires(h));
        }
        let passed = vec![step(1, Action::RunPublicTests, Some(true))];
        assert!(!Trigger::AfterTestsFail.fires(&passed));
        assert!(!Trigger::AnyStep.fires(&[]), "no step, no moment");
        assert_eq!(
            serde_json::to_string(
                &Schedule::on([Trigger::AfterEdit, Trigger::AfterTestsFail]).triggers
            )
            .unwrap(),
            r#"["after_edit","after_tests_fail"]"#
        );
    }
}

use serde::{Deserialize, Serialize};
use traparena_task::{Action, Step};

/// When a step is eligible for a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// After any tool call.
    AnyStep,
    /// After a run of the public tests.
    AfterTestRun,
    /// After a run of the public tests that passed.
    AfterTestsPass,
    /// After a passing test run that follows an edit or write: the moment an agent is about
    /// to submit.
    BeforeSubmit,
}

/// Bounds on messages per episode and their spacing.
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
        self.triggers.iter().any(|t| trigger_fires(*t, history))
    }
}

fn trigger_fires(t: Trigger, history: &[Step]) -> bool {
    let Some(step) = history.last() else {
        return false;
    };
    let tested = matches!(step.action, Some(Action::RunPublicTests));
    let passed = tested && step.observation.tests_passed == Some(true);
    match t {
        Trigger::AnyStep => true,
        Trigger::AfterTestRun => tested,
        Trigger::AfterTestsPass => passed,
        Trigger::BeforeSubmit => {
            passed
                && history[..history.len() - 1]
                    .iter()
                    .rev()
                    .take_while(|s| !matches!(s.action, Some(Action::RunPublicTests)))
                    .any(|s| matches!(s.action, Some(Action::Edit { .. } | Action::Write { .. })))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use traparena_task::Observation;

    fn step(index: u32, action: Action, passed: Option<bool>) -> Step {
        let mut observation = Observation::ok("");
        observation.tests_passed = passed;
        Step {
            index,
            action: Some(action),
            raw: None,
            observation,
            message: None,
        }
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
}

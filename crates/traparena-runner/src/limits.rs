//! Spending limits of an experiment ([`Limits`], the spec's `limits` and the command's
//! `--max-cost` / `--max-tokens`) and what was spent against them ([`Spent`]).

use serde::{Deserialize, Serialize};
use traparena_task::Usage;

/// Spending limits: an experiment that reaches one starts no further episode and no further
/// curator step; the episodes in flight finish and are written. Resuming with a higher limit
/// continues it. What is spent counts every results line and curator step in the folder,
/// those of earlier runs included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Most US dollars to spend on model calls (target, attacker and curator). Calls whose
    /// cost is unknown (no prices, no cost reported) count as nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// Most tokens (prompt + completion, every role) to spend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

impl Limits {
    /// True when no limit is set.
    pub fn is_unset(&self) -> bool {
        self.max_cost.is_none() && self.max_tokens.is_none()
    }

    /// These limits where set, else `other`'s (each limit apart).
    pub fn or(self, other: Limits) -> Limits {
        Limits {
            max_cost: self.max_cost.or(other.max_cost),
            max_tokens: self.max_tokens.or(other.max_tokens),
        }
    }

    /// Checks the values: a cost limit is a finite, non-negative number of dollars. The error
    /// names the field (`max_cost`) and says what is wrong.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        match self.max_cost {
            Some(c) if !c.is_finite() || c < 0.0 => Err((
                "max_cost",
                format!("{c} is not an amount of US dollars (finite and not negative)"),
            )),
            _ => Ok(()),
        }
    }

    /// The limit `spent` reached, said in one phrase (`the cost limit of $0.01 ($0.0123
    /// spent)`), or `None` while under every limit.
    pub fn reached(&self, spent: &Spent) -> Option<String> {
        if let Some(max) = self.max_cost
            && spent.usd() >= max
        {
            return Some(format!(
                "the cost limit of ${max} (${:.6} spent)",
                spent.usd()
            ));
        }
        if let Some(max) = self.max_tokens
            && spent.tokens >= max
        {
            return Some(format!(
                "the token limit of {max} ({} tokens spent)",
                spent.tokens
            ));
        }
        None
    }
}

/// What an experiment has spent: dollars (in billionths, summed exactly) and tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// Known cost, in billionths of a US dollar.
    pub nano_usd: u64,
    /// Prompt + completion tokens.
    pub tokens: u64,
    /// Calls whose cost is unknown (so `nano_usd` is a lower bound).
    pub unknown_cost_calls: u64,
}

impl Spent {
    /// Adds one role's usage.
    pub fn add(&mut self, u: &Usage) {
        self.tokens += u.tokens();
        if let Some(c) = u.cost {
            self.nano_usd += c.nano_usd;
            self.unknown_cost_calls += c.unknown_calls;
        }
    }

    /// The known cost in US dollars.
    pub fn usd(&self) -> f64 {
        self.nano_usd as f64 / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use traparena_task::Cost;

    #[test]
    fn a_limit_is_reached_at_or_above_it() {
        let l = Limits {
            max_cost: Some(0.01),
            max_tokens: Some(100),
        };
        let mut s = Spent::default();
        assert_eq!(l.reached(&s), None);
        s.add(&Usage {
            prompt_tokens: 60,
            completion_tokens: 40,
            ..Usage::default()
        });
        assert!(l.reached(&s).unwrap().starts_with("the token limit of 100"));
        let cost = Usage {
            cost: Some(Cost {
                nano_usd: 10_000_000,
                computed_calls: 1,
                ..Cost::default()
            }),
            ..Usage::default()
        };
        let mut s = Spent::default();
        s.add(&cost);
        assert!(
            l.reached(&s)
                .unwrap()
                .starts_with("the cost limit of $0.01")
        );
        assert!(
            Limits {
                max_cost: Some(-1.0),
                max_tokens: None
            }
            .check()
            .is_err()
        );
        assert!(
            Limits {
                max_cost: Some(f64::NAN),
                max_tokens: None
            }
            .check()
            .is_err()
        );
    }
}

//! What a model call cost: a model's [`Prices`] (the `prices` of a
//! [`ModelSpec`](crate::spec::ModelSpec)) and one call's [`CallCost`], the provider's own figure
//! when its response reports one (OpenRouter's `usage.cost`), else computed from the prices.

use serde::{Deserialize, Serialize};

use traparena_task::{Cost, Usage};

use crate::TokenUsage;
use crate::spec::SpecError;

/// A model's prices in US dollars per million tokens: the `prices` of a model spec.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// Dollars per million prompt (input) tokens.
    pub input: f64,
    /// Dollars per million completion (output) tokens, reasoning tokens included.
    pub output: f64,
    /// Dollars per million prompt tokens the provider read from its cache, where it reports
    /// them (`prompt_tokens_details.cached_tokens`); unset, cached tokens cost `input`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
}

impl Prices {
    /// Checks that every price is a finite, non-negative number; the error names the field
    /// (`model.prices.input`, ...).
    pub fn check(&self) -> Result<(), SpecError> {
        let fields = [
            ("input", Some(self.input)),
            ("output", Some(self.output)),
            ("cached_input", self.cached_input),
        ];
        for (name, price) in fields {
            if let Some(p) = price.filter(|p| !p.is_finite() || *p < 0.0) {
                return Err(SpecError {
                    field: format!("model.prices.{name}"),
                    message: format!(
                        "{p} is not a price (dollars per million tokens, finite and not negative)"
                    ),
                });
            }
        }
        Ok(())
    }

    /// What `usage` costs at these prices, in billionths of a dollar.
    pub fn nano_usd(&self, usage: &TokenUsage) -> u64 {
        let cached = usage.cached_tokens.min(usage.prompt_tokens);
        let fresh = usage.prompt_tokens - cached;
        // $P per million tokens is P × 1,000 billionths of a dollar per token.
        let nano = (fresh as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + usage.completion_tokens as f64 * self.output)
            * 1e3;
        nano.round() as u64
    }
}

/// What one call cost, and how that is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallCost {
    /// The provider reported it in the response (`usage.cost`), in billionths of a dollar.
    Reported(u64),
    /// Computed from the model's prices, in billionths of a dollar.
    Computed(u64),
    /// The model has prices, but the response carried no usage to apply them to.
    Unknown,
}

impl CallCost {
    /// The cost of a call whose response reported `usage`, for a model with `prices` (if
    /// any): the provider's figure first, then the prices; `None` when neither is there.
    pub fn of(usage: &TokenUsage, prices: Option<&Prices>) -> Option<CallCost> {
        if let Some(n) = usage.reported_cost_nano_usd {
            return Some(CallCost::Reported(n));
        }
        let prices = prices?;
        Some(if usage.reported {
            CallCost::Computed(prices.nano_usd(usage))
        } else {
            CallCost::Unknown
        })
    }
}

impl TokenUsage {
    /// One call's counts as the task model's [`Usage`]: one call, a response without `usage`
    /// counted as a call without usage, and its cost ([`CallCost::of`]: the provider's figure,
    /// else computed from `prices`). The one reading of a call for every component (the `llm`
    /// agent, attacker and curator, and external agents).
    pub fn task_usage(&self, prices: Option<&Prices>) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            reasoning_tokens: self.reasoning_tokens,
            calls_without_usage: u64::from(!self.reported),
            calls: 1,
            cached_tokens: self.cached_tokens,
            cost: CallCost::of(self, prices).map(|c| match c {
                CallCost::Reported(n) => Cost {
                    nano_usd: n,
                    reported_calls: 1,
                    ..Cost::default()
                },
                CallCost::Computed(n) => Cost {
                    nano_usd: n,
                    computed_calls: 1,
                    ..Cost::default()
                },
                CallCost::Unknown => Cost {
                    unknown_calls: 1,
                    ..Cost::default()
                },
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u64, cached: u64, completion: u64) -> TokenUsage {
        TokenUsage {
            prompt_tokens: prompt,
            cached_tokens: cached,
            completion_tokens: completion,
            reported: true,
            ..TokenUsage::default()
        }
    }

    #[test]
    fn prices_apply_per_million_tokens_with_cached_input_apart() {
        let p = Prices {
            input: 2.5,
            output: 10.0,
            cached_input: Some(1.25),
        };
        // 1,000 fresh × $2.5/M + 1,000 cached × $1.25/M + 100 × $10/M = $0.00475
        assert_eq!(p.nano_usd(&usage(2000, 1000, 100)), 4_750_000);
        let no_cache = Prices {
            cached_input: None,
            ..p
        };
        assert_eq!(no_cache.nano_usd(&usage(2000, 1000, 100)), 6_000_000);
    }

    #[test]
    fn the_provider_figure_wins_and_missing_usage_is_unknown() {
        let p = Prices {
            input: 1.0,
            output: 1.0,
            cached_input: None,
        };
        let mut u = usage(1000, 0, 0);
        assert_eq!(
            CallCost::of(&u, Some(&p)),
            Some(CallCost::Computed(1_000_000))
        );
        assert_eq!(CallCost::of(&u, None), None);
        u.reported_cost_nano_usd = Some(7);
        assert_eq!(CallCost::of(&u, None), Some(CallCost::Reported(7)));
        assert_eq!(
            CallCost::of(&TokenUsage::default(), Some(&p)),
            Some(CallCost::Unknown)
        );
    }

    #[test]
    fn bad_prices_name_the_field() {
        let bad = Prices {
            input: 1.0,
            output: f64::NAN,
            cached_input: None,
        };
        assert_eq!(bad.check().unwrap_err().field, "model.prices.output");
        let neg = Prices {
            input: 1.0,
            output: 1.0,
            cached_input: Some(-1.0),
        };
        assert_eq!(neg.check().unwrap_err().field, "model.prices.cached_input");
    }
}

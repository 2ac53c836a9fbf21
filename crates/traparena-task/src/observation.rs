use serde::{Deserialize, Serialize};

/// Counts read from a test runner's report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCounts {
    /// Tests executed.
    pub run: u64,
    /// Tests that failed.
    pub failed: u64,
    /// Tests (or collections) that raised an error.
    pub errored: u64,
    /// Tests skipped.
    pub skipped: u64,
}

/// The authentic result of one tool call, written by the environment and nothing else.
///
/// A collaborator message is never part of it: episode records keep messages in a separate
/// field, and agents that speak text render them after this output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The tool's output as the agent reads it.
    pub output: String,
    /// True when the action was refused or failed (a tool error the agent sees).
    pub error: bool,
    /// True when the output was cut at the byte limit (the output says so too).
    pub truncated: bool,
    /// For `run_public_tests`: the counts from the runner, when it reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestCounts>,
    /// For `run_public_tests`: whether the public tests passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_passed: Option<bool>,
}

impl Observation {
    /// A successful tool result.
    pub fn ok(output: impl Into<String>) -> Self {
        Observation {
            output: output.into(),
            error: false,
            truncated: false,
            tests: None,
            tests_passed: None,
        }
    }
    /// A tool error the agent sees.
    pub fn error(output: impl Into<String>) -> Self {
        Observation {
            error: true,
            ..Observation::ok(output)
        }
    }
}

/// Tokens a model spent, as the server reported them, and what they cost where that is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (generated) tokens.
    pub completion_tokens: u64,
    /// Reasoning tokens, where the server reports them (included in `completion_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    /// Model calls whose response carried no `usage`: their tokens are missing from the counts
    /// above, which are then a lower bound.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub calls_without_usage: u64,
    /// Model calls made (counted by the model-backed components; 0 in lines written before
    /// calls were counted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub calls: u64,
    /// Prompt tokens the server read from its cache, where it reports them
    /// (`prompt_tokens_details.cached_tokens`; included in `prompt_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// What the calls cost, when the model has prices or its provider reports a cost (`None`,
    /// and not written, otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Prompt plus completion tokens.
    pub fn tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// What was spent since `before` (an earlier reading of the same running total).
    pub fn since(&self, before: &Usage) -> Usage {
        let cost = match (self.cost, before.cost) {
            (Some(a), Some(b)) => Some(Cost {
                nano_usd: a.nano_usd.saturating_sub(b.nano_usd),
                reported_calls: a.reported_calls.saturating_sub(b.reported_calls),
                computed_calls: a.computed_calls.saturating_sub(b.computed_calls),
                unknown_calls: a.unknown_calls.saturating_sub(b.unknown_calls),
            }),
            (a, _) => a,
        };
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_sub(before.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_sub(before.completion_tokens),
            reasoning_tokens: self
                .reasoning_tokens
                .saturating_sub(before.reasoning_tokens),
            calls_without_usage: self
                .calls_without_usage
                .saturating_sub(before.calls_without_usage),
            calls: self.calls.saturating_sub(before.calls),
            cached_tokens: self.cached_tokens.saturating_sub(before.cached_tokens),
            cost,
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.prompt_tokens += o.prompt_tokens;
        self.completion_tokens += o.completion_tokens;
        self.reasoning_tokens += o.reasoning_tokens;
        self.calls_without_usage += o.calls_without_usage;
        self.calls += o.calls;
        self.cached_tokens += o.cached_tokens;
        self.cost = Cost::sum(self.cost, o.cost);
    }
}

/// What model calls cost, in US dollars, and how it was known.
///
/// Kept in billionths of a dollar, so that sums are exact and do not depend on the order the
/// calls are added in; written as `usd`, a number of dollars. A call's cost is the one its
/// provider reported (OpenRouter's `usage.cost`) when it reported one, else computed from the
/// model's prices; a call of a priced model whose response carried no usage has an unknown
/// cost, and `usd` is then a lower bound.
///
/// ```
/// use traparena_task::Cost;
///
/// let c = Cost { nano_usd: 1_250_000, computed_calls: 2, ..Cost::default() };
/// assert_eq!(c.usd(), 0.00125);
/// assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"usd":0.00125,"computed_calls":2}"#);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cost {
    /// The cost in billionths of a US dollar (JSON: `usd`, in dollars).
    #[serde(rename = "usd", with = "usd")]
    pub nano_usd: u64,
    /// Calls whose cost the provider reported.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reported_calls: u64,
    /// Calls whose cost was computed from the model's prices.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub computed_calls: u64,
    /// Calls of a priced model whose cost is unknown (the response carried no usage): the
    /// cost is then a lower bound.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unknown_calls: u64,
}

impl Cost {
    /// The cost in US dollars.
    pub fn usd(&self) -> f64 {
        self.nano_usd as f64 / 1e9
    }

    /// Billionths of a dollar from dollars (rounded; `None` for a negative or non-finite
    /// amount).
    pub fn nano_from_usd(usd: f64) -> Option<u64> {
        (usd.is_finite() && usd >= 0.0).then(|| (usd * 1e9).round() as u64)
    }

    /// The sum of two optional costs: `None` only when both are.
    pub fn sum(a: Option<Cost>, b: Option<Cost>) -> Option<Cost> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Cost {
                nano_usd: a.nano_usd + b.nano_usd,
                reported_calls: a.reported_calls + b.reported_calls,
                computed_calls: a.computed_calls + b.computed_calls,
                unknown_calls: a.unknown_calls + b.unknown_calls,
            }),
            (a, b) => a.or(b),
        }
    }

    /// Where the cost came from: `provider`, `prices`, `provider+prices`, or `unknown` when no
    /// call's cost is known.
    pub fn source(&self) -> &'static str {
        match (self.reported_calls > 0, self.computed_calls > 0) {
            (true, true) => "provider+prices",
            (true, false) => "provider",
            (false, true) => "prices",
            (false, false) => "unknown",
        }
    }
}

mod usd {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(nano: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(*nano as f64 / 1e9)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let usd = f64::deserialize(d)?;
        super::Cost::nano_from_usd(usd).ok_or_else(|| {
            serde::de::Error::custom(format!("usd: {usd} is not a non-negative amount"))
        })
    }
}

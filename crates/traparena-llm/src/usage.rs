//! Token accounting per role.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use traparena_model::{ChatModel, ChatRequest, ChatResponse, ModelError, TokenUsage};

/// Whose model call it was, for accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The repair agent under test.
    Target,
    /// An LLM attacker writing collaborator messages.
    Attacker,
    /// The curator rewriting the attacker's notes.
    Curator,
}

impl Role {
    /// Every role, in a fixed order.
    pub const ALL: [Role; 3] = [Role::Target, Role::Attacker, Role::Curator];

    /// The role's lower-case name (`target`, `attacker`, `curator`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Target => "target",
            Role::Attacker => "attacker",
            Role::Curator => "curator",
        }
    }

    fn index(self) -> usize {
        match self {
            Role::Target => 0,
            Role::Attacker => 1,
            Role::Curator => 2,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Accumulated counts over many calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UsageTotals {
    /// Successful calls counted.
    pub calls: u64,
    /// Of which calls whose response carried no `usage` (their tokens are missing below).
    pub calls_without_usage: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Reasoning tokens (part of the completion tokens).
    pub reasoning_tokens: u64,
}

impl UsageTotals {
    /// Adds one call.
    pub fn add(&mut self, usage: &TokenUsage) {
        self.calls += 1;
        if !usage.reported {
            self.calls_without_usage += 1;
        }
        self.prompt_tokens += usage.prompt_tokens;
        self.completion_tokens += usage.completion_tokens;
        self.reasoning_tokens += usage.reasoning_tokens;
    }

    /// Adds another total.
    pub fn merge(&mut self, other: &UsageTotals) {
        self.calls += other.calls;
        self.calls_without_usage += other.calls_without_usage;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }

    /// Prompt plus completion tokens.
    pub fn total_tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

/// A thread-safe accumulator of token usage per [`Role`]. Share it in an `Arc` between the
/// [`Metered`] wrappers of one episode (or one experiment).
#[derive(Debug, Default)]
pub struct UsageLedger {
    totals: Mutex<[UsageTotals; 3]>,
}

impl UsageLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one call of `role`.
    pub fn record(&self, role: Role, usage: &TokenUsage) {
        let mut totals = self.totals.lock().unwrap_or_else(PoisonError::into_inner);
        totals[role.index()].add(usage);
    }

    /// The totals of one role.
    pub fn totals(&self, role: Role) -> UsageTotals {
        self.totals.lock().unwrap_or_else(PoisonError::into_inner)[role.index()]
    }

    /// The totals of every role, in [`Role::ALL`] order.
    pub fn by_role(&self) -> [(Role, UsageTotals); 3] {
        let totals = *self.totals.lock().unwrap_or_else(PoisonError::into_inner);
        Role::ALL.map(|r| (r, totals[r.index()]))
    }

    /// The sum over all roles.
    pub fn overall(&self) -> UsageTotals {
        let mut sum = UsageTotals::default();
        for (_, t) in self.by_role() {
            sum.merge(&t);
        }
        sum
    }
}

/// A [`ChatModel`] wrapper that adds every successful call's usage to a [`UsageLedger`]
/// under a fixed [`Role`]. Failed calls add nothing (their usage is unknown).
#[derive(Clone)]
pub struct Metered {
    inner: Arc<dyn ChatModel>,
    role: Role,
    ledger: Arc<UsageLedger>,
}

impl fmt::Debug for Metered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metered")
            .field("model", &self.inner.model())
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl Metered {
    /// Wraps `inner`, accounting its calls to `role` in `ledger`.
    pub fn new(inner: Arc<dyn ChatModel>, role: Role, ledger: Arc<UsageLedger>) -> Self {
        Metered {
            inner,
            role,
            ledger,
        }
    }

    /// The role calls are accounted to.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The ledger.
    pub fn ledger(&self) -> &Arc<UsageLedger> {
        &self.ledger
    }
}

#[async_trait]
impl ChatModel for Metered {
    fn model(&self) -> &str {
        self.inner.model()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let response = self.inner.chat(request).await?;
        self.ledger.record(self.role, &response.token_usage());
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_sums_per_role() {
        let ledger = UsageLedger::new();
        let u = TokenUsage {
            prompt_tokens: 10,
            completion_tokens: 4,
            reasoning_tokens: 1,
            reported: true,
        };
        ledger.record(Role::Target, &u);
        ledger.record(Role::Target, &u);
        ledger.record(Role::Curator, &TokenUsage::default());
        let t = ledger.totals(Role::Target);
        assert_eq!(
            (
                t.calls,
                t.prompt_tokens,
                t.completion_tokens,
                t.reasoning_tokens
            ),
            (2, 20, 8, 2)
        );
        assert_eq!(t.total_tokens(), 28);
        assert_eq!(ledger.totals(Role::Attacker), UsageTotals::default());
        let c = ledger.totals(Role::Curator);
        assert_eq!((c.calls, c.calls_without_usage), (1, 1));
        assert_eq!(ledger.overall().calls, 3);
        assert_eq!(
            serde_json::to_string(&Role::Attacker).unwrap(),
            "\"attacker\""
        );
    }
}

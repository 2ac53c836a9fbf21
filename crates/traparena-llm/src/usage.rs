//! Token accounting, on the one path the runner reads: every model call's counts
//! ([`ChatResponse::token_usage`](traparena_model::ChatResponse::token_usage)) are added to
//! the [`Usage`] of the component that made the call, which reports it through
//! `Turn::usage` (the agent, per turn) or `Attacker::usage` / `Curator::usage` (running
//! totals). The runner sums those into the episode record and the results folder.

use traparena_model::{CallCost, Prices, TokenUsage};
use traparena_task::{Cost, Usage};

/// One call's counts as the task model's [`Usage`]; a response without `usage` counts as one
/// call without usage. Its cost is the provider's figure, else computed from `prices`
/// ([`CallCost::of`]).
pub(crate) fn task_usage(u: TokenUsage, prices: Option<&Prices>) -> Usage {
    Usage {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        reasoning_tokens: u.reasoning_tokens,
        calls_without_usage: u64::from(!u.reported),
        calls: 1,
        cached_tokens: u.cached_tokens,
        cost: CallCost::of(&u, prices).map(|c| match c {
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

//! Token accounting, on the one path the runner reads: every model call's counts
//! ([`ChatResponse::token_usage`](traparena_model::ChatResponse::token_usage)) are added to
//! the [`Usage`] of the component that made the call, which reports it through
//! `Turn::usage` (the agent, per turn) or `Attacker::usage` / `Curator::usage` (running
//! totals). The runner sums those into the episode record and the results folder.

use traparena_model::TokenUsage;
use traparena_task::Usage;

/// One call's counts as the task model's [`Usage`]; a response without `usage` counts as one
/// call without usage.
pub(crate) fn task_usage(u: TokenUsage) -> Usage {
    Usage {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        reasoning_tokens: u.reasoning_tokens,
        calls_without_usage: u64::from(!u.reported),
    }
}

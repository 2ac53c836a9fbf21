//! Model-backed agents and attackers for the command line: endpoints from environment
//! variables (the CLI is the only place that reads them).

use traparena::agent::Agent;
use traparena::attack::Attacker;
use traparena::task::Task;

/// Options of model-backed agents and attackers.
#[derive(Debug, Clone, clap::Args)]
pub struct LlmArgs {
    /// Record model calls to, or replay them from, this cassette file (JSONL).
    #[arg(long)]
    pub cassette: Option<std::path::PathBuf>,
}

/// The `llm` agent.
pub fn build_agent(_task: &Task, _seed: u64, _args: &LlmArgs) -> Result<Box<dyn Agent>, String> {
    Err("the llm agent is not available in this build yet".into())
}

/// The `adaptive` (reference) and `blind` trajectory-conditioned attackers.
pub fn build_attacker(
    kind: &str,
    _task: &Task,
    _seed: u64,
    _args: &LlmArgs,
) -> Result<Box<dyn Attacker>, String> {
    Err(format!(
        "the {kind} attacker is not available in this build yet"
    ))
}

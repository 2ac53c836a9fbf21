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

/// Tokens a model spent, as the server reported them.
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
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.prompt_tokens += o.prompt_tokens;
        self.completion_tokens += o.completion_tokens;
        self.reasoning_tokens += o.reasoning_tokens;
        self.calls_without_usage += o.calls_without_usage;
    }
}

//! The trajectory-conditioned attacker (docs/models.md): a chat model writes
//! m_t ~ A(· | s, h_t, z, M_r) with its claims, in a blind and a reference variant.
//!
//! This module holds the attacker, its settings and its side of the [`Attacker`] trait; its
//! work is in:
//! - [`prompt`]: the system prompt and the request (with the leakage filter's rejections on a
//!   regeneration), and the reply's JSON schema;
//! - [`history`]: the compact summary of the trajectory h_t;
//! - [`parse`]: reading the reply into a message and its claims.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use traparena_attack::{Advice, AttackContext, AttackError, Attacker};
use traparena_model::{ChatModel, Reply};
use traparena_task::Usage;

use crate::prompts::{self, one_line};
use crate::reply::no_answer;

mod history;
mod parse;
mod prompt;

pub use history::summarize_history;
pub use prompt::message_schema;

/// Which reference information the attacker sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttackerVariant {
    /// No reference information (z empty).
    Blind,
    /// The reference locations and patch (the command line calls it `adaptive`).
    Reference,
}

/// Settings of an [`LlmAttacker`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmAttackerConfig {
    /// Blind or reference.
    pub variant: AttackerVariant,
    /// Sampling temperature (default 0.7).
    pub temperature: f64,
    /// Maximum response length in tokens (default 1,024).
    pub max_tokens: Option<u32>,
    /// Sampling seed sent with every request.
    pub seed: Option<u64>,
    /// Longest message delivered, in characters (default 600); a longer one is cut at its
    /// last sentence end within the limit.
    pub max_message_chars: usize,
    /// Characters of the trajectory summary h_t in the prompt (default 8,000): the oldest
    /// steps are left out first.
    pub history_chars: usize,
    /// Characters of the repository's function list in the prompt (default 3,000).
    pub symbols_chars: usize,
    /// Characters of the reference patch in the prompt (default 6,000).
    pub patch_chars: usize,
    /// The model's prices, for the cost of its calls (a cost the provider reports is taken
    /// instead); `None`: only reported costs are counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<traparena_model::Prices>,
}

impl LlmAttackerConfig {
    /// Defaults for `variant`.
    pub fn new(variant: AttackerVariant) -> Self {
        LlmAttackerConfig {
            variant,
            temperature: 0.7,
            max_tokens: Some(1024),
            seed: None,
            max_message_chars: 600,
            history_chars: 8000,
            symbols_chars: 3000,
            patch_chars: 6000,
            prices: None,
        }
    }
}

/// An attacker that asks a chat model for each message and its claims.
///
/// It reads the repair description s, a compact summary of the trajectory h_t (every action,
/// the last three tool outputs in some detail, its own earlier messages), the reference
/// information z (reference variant only: [`Attacker::access`] is `reference`), the curator's
/// notes M_r, the repository's functions and the task's decoy locations. It asks for
/// `{"message", "blame", "urge_submit", "dismissed_cases"}` under a JSON-schema response format;
/// blamed places are matched against the repository's files and functions. When the reply is
/// not JSON, the reply text is the message and its claims are extracted by
/// [`claims_from_text`](traparena_attack::claims_from_text). On a regeneration after the leakage filter rejected a message, the
/// rejections are part of the prompt. An empty message means silence.
///
/// ```
/// use std::sync::Arc;
/// use traparena::llm::{AttackerVariant, LlmAttacker, LlmAttackerConfig};
/// use traparena::model::{ChatResponse, ScriptedModel};
/// use traparena::{AttackContext, Attacker, Location, NoteLimits, Notes};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let reply = r#"{"message": "The bug is in fraction, fix it there.",
///                 "blame": [{"file": "clamp.py", "symbol": "fraction"}],
///                 "urge_submit": false, "dismissed_cases": []}"#;
/// let model = Arc::new(ScriptedModel::new("m", [ChatResponse::from_text("m", reply)]));
/// let mut attacker = LlmAttacker::new(model, LlmAttackerConfig::new(AttackerVariant::Blind));
/// let symbols = [Location::symbol("clamp.py", "fraction").unwrap()];
/// let notes = Notes::empty(NoteLimits::default());
/// let ctx = AttackContext {
///     task_id: "t", description: "clamp is wrong", steps_taken: 1, budget: 10, history: &[],
///     reference: None, notes: &notes, symbols: &symbols, decoys: &[], attempt: 0,
///     rejections: &[],
/// };
/// let advice = attacker.advise(&ctx).await.unwrap().unwrap();
/// assert_eq!(advice.claims.blame, symbols);
/// # }
/// ```
pub struct LlmAttacker {
    model: Arc<dyn ChatModel>,
    config: LlmAttackerConfig,
    usage: Usage,
}

impl fmt::Debug for LlmAttacker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmAttacker")
            .field("model", &self.model.model())
            .field("config", &self.config)
            .field("usage", &self.usage)
            .finish()
    }
}

impl LlmAttacker {
    /// An attacker asking `model`.
    pub fn new(model: Arc<dyn ChatModel>, config: LlmAttackerConfig) -> Self {
        LlmAttacker {
            model,
            config,
            usage: Usage::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &LlmAttackerConfig {
        &self.config
    }
}

#[async_trait]
impl Attacker for LlmAttacker {
    fn name(&self) -> String {
        let kind = match self.config.variant {
            AttackerVariant::Blind => "blind",
            AttackerVariant::Reference => "adaptive",
        };
        format!("{kind}:{}", self.model.model())
    }

    async fn advise(&mut self, ctx: &AttackContext<'_>) -> Result<Option<Advice>, AttackError> {
        let request = self.request(ctx);
        let response = self
            .model
            .chat(&request)
            .await
            .map_err(|e| AttackError::Model(Box::new(e)))?;
        self.usage += response
            .token_usage()
            .task_usage(self.config.prices.as_ref());
        // The message comes from the answer only: nothing of the attacker's reasoning (a draft,
        // the reference it read) may reach the target. No answer is an error, never silence.
        let reply = response.message().map(Reply::of).unwrap_or_default();
        let Some(answer) = reply.answer.as_deref() else {
            return Err(AttackError::Invalid(no_answer(
                "attacker",
                &reply,
                response.finish_reason(),
            )));
        };
        if response.finish_reason() == Some("length") {
            return Err(AttackError::Invalid(format!(
                "the attacker's reply stopped at the response length limit: {}",
                one_line(answer, 200)
            )));
        }
        self.read_reply(answer, ctx.symbols)
    }

    fn access(&self) -> traparena_attack::Access {
        match self.config.variant {
            AttackerVariant::Reference => traparena_attack::Access::Reference,
            AttackerVariant::Blind => traparena_attack::Access::Blind,
        }
    }

    fn usage(&self) -> Usage {
        self.usage
    }

    fn prompt_hash(&self) -> Option<String> {
        let schema = message_schema(self.config.max_message_chars).to_string();
        let mut templates = vec![
            prompts::ATTACKER_SYSTEM,
            self.knowledge(),
            prompts::ATTACKER_REQUEST,
            prompts::ATTACKER_RETRY,
        ];
        if self.config.variant == AttackerVariant::Reference {
            templates.push(prompts::ATTACKER_REFERENCE_BLOCK);
        }
        Some(prompts::prompt_hash(&templates, &[&schema]))
    }
}

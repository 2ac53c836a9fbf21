//! The arguments `run` gives the model-backed kinds (`llm`, `adaptive`): flags, and endpoints
//! from environment variables (the CLI is the only place that reads them). The kinds
//! themselves are built through the registry, as in experiments.
//!
//! | variable | role |
//! |---|---|
//! | `TRAPARENA_LLM_MODEL`, `TRAPARENA_LLM_BASE_URL`, `TRAPARENA_LLM_API_KEY` | the `llm` agent (model and base URL required) |
//! | `TRAPARENA_ATTACKER_MODEL`, `..._BASE_URL`, `..._API_KEY` | the `adaptive` attacker (reference or blind); each falls back to the `LLM` variable |
//! | `TRAPARENA_CURATOR_*` | the curator, likewise |
//!
//! An API key falls back only together with the base URL (or when both base URLs are the
//! same), so the target's key is never sent to another host.

use std::path::PathBuf;

use serde_json::{Value, json};

/// The `llm` agent's action protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProtocolArg {
    /// Native tool calls.
    Tools,
    /// JSON actions constrained by a JSON-schema response format.
    Json,
    /// Free text holding a JSON action.
    Text,
}

/// The API the target model's server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ModelApiArg {
    /// OpenAI Chat Completions (vLLM, llama.cpp, SGLang, Ollama, OpenAI, OpenRouter).
    #[default]
    ChatCompletions,
    /// Anthropic Messages (Anthropic's API; the base URL ends in `/v1`).
    AnthropicMessages,
    /// OpenAI Responses.
    OpenaiResponses,
}

/// How a cassette is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CassetteModeArg {
    /// Replay what is recorded, call the model (and record) for the rest.
    Auto,
    /// Always call the model and record every response.
    Record,
    /// Answer only from the cassette; no model server is needed or contacted.
    Replay,
}

/// Options of model-backed agents and attackers.
#[derive(Debug, Clone, clap::Args)]
pub struct LlmArgs {
    /// The llm agent's action protocol: native tool calls, JSON actions under a JSON-schema
    /// response format, or free text holding a JSON action.
    #[arg(long, value_enum, default_value = "json")]
    pub protocol: ProtocolArg,
    /// The llm agent's sampling temperature.
    #[arg(long, default_value_t = 0.7)]
    pub temperature: f64,
    /// The llm agent's maximum response length, in tokens (one response, not a spending cap:
    /// `experiment --max-tokens` is that).
    #[arg(long, default_value_t = 16_384)]
    pub max_response_tokens: u32,
    /// Tell the llm agent to verify collaborator claims before acting on them.
    #[arg(long)]
    pub defence: bool,
    /// Most characters of conversation the llm agent sends (older tool output is cut first).
    #[arg(long, default_value_t = 48_000)]
    pub history_chars: usize,
    /// Record model calls to, or replay them from, this cassette file (JSONL). Calls are
    /// keyed per episode: task id, seed and role.
    #[arg(long)]
    pub cassette: Option<PathBuf>,
    /// What to do with the cassette.
    #[arg(long, value_enum, default_value = "auto", requires = "cassette")]
    pub cassette_mode: CassetteModeArg,
    /// The model-backed attacker's sampling temperature.
    #[arg(long, default_value_t = 0.7)]
    pub attacker_temperature: f64,
    /// The model-backed attacker's maximum response length, in tokens (reasoning models need
    /// room to think before they answer).
    #[arg(long, default_value_t = 1024)]
    pub attacker_max_response_tokens: u32,
    /// Seconds one model call may take (connecting, sending, reading the whole response).
    #[arg(long, default_value_t = 600)]
    pub model_timeout: u64,
    /// Retries of a failed model call (408, 429, 5xx, timeouts, dropped connections).
    #[arg(long, default_value_t = 4)]
    pub model_retries: u32,
    /// Milliseconds of backoff before the first retry (doubling up to 30 s).
    #[arg(long, default_value_t = 1000)]
    pub model_backoff_ms: u64,
    /// Send `max_completion_tokens` instead of `max_tokens` (hosted reasoning models; a refusal
    /// of `max_tokens` also switches it automatically, once, and the record says so).
    #[arg(long)]
    pub max_completion_tokens: bool,
    /// Send no temperature (models that take only their default; a refusal of the temperature
    /// also drops it automatically, once, and the record says so).
    #[arg(long)]
    pub no_temperature: bool,
    /// The target model's context window, in tokens. Without it the server is asked (vLLM and
    /// SGLang `/v1/models`, llama.cpp `/props`); pass the same value when replaying a cassette
    /// recorded with one, since it shapes the requests.
    #[arg(long)]
    pub context_window: Option<u32>,
    /// The API the target model's server speaks; requests are translated into it (what an
    /// external agent speaks to the proxy is its own business).
    #[arg(long, value_enum, default_value = "chat-completions")]
    pub model_api: ModelApiArg,
}

impl LlmArgs {
    fn cassette(&self) -> Option<Value> {
        let mode = match self.cassette_mode {
            CassetteModeArg::Auto => "auto",
            CassetteModeArg::Record => "record",
            CassetteModeArg::Replay => "replay",
        };
        self.cassette
            .as_ref()
            .map(|p| json!({"path": p, "mode": mode}))
    }

    fn replay(&self) -> bool {
        self.cassette.is_some() && self.cassette_mode == CassetteModeArg::Replay
    }

    fn model(&self, endpoint: Endpoint) -> Value {
        let mut m = json!({
            "model": endpoint.model,
            "timeout_s": self.model_timeout.max(1),
            "max_retries": self.model_retries,
            "backoff_ms": self.model_backoff_ms,
        });
        if let Some(url) = endpoint.base_url {
            m["base_url"] = json!(url);
        }
        if let Some(var) = endpoint.api_key_env {
            m["api_key_env"] = json!(var);
        }
        if self.max_completion_tokens {
            m["max_completion_tokens"] = json!(true);
        }
        if self.no_temperature {
            m["omit_temperature"] = json!(true);
        }
        m
    }
}

impl LlmArgs {
    /// The target model of `who` (the agent as the command line names it): the `LLM` endpoint,
    /// in the API `--model-api` names.
    fn target(&self, who: &str) -> Result<Value, MissingVariable> {
        let mut model = self.model(endpoint("LLM", who, self.replay())?);
        match self.model_api {
            ModelApiArg::ChatCompletions => {}
            ModelApiArg::AnthropicMessages => model["api"] = json!("anthropic_messages"),
            ModelApiArg::OpenaiResponses => model["api"] = json!("openai_responses"),
        }
        Ok(model)
    }
}

/// The `llm` agent's arguments from the flags and `TRAPARENA_LLM_*`.
pub fn agent_args(args: &LlmArgs) -> Result<Value, MissingVariable> {
    let mut model = args.target("the llm agent")?;
    if let Some(n) = args.context_window {
        model["context_window"] = json!(n);
    }
    let mut out = json!({
        "model": model,
        "protocol": match args.protocol {
            ProtocolArg::Tools => "tools",
            ProtocolArg::Json => "json",
            ProtocolArg::Text => "text",
        },
        "temperature": args.temperature,
        "max_tokens": args.max_response_tokens,
        "history_chars": args.history_chars,
    });
    if let Some(c) = args.cassette() {
        out["cassette"] = c;
    }
    Ok(out)
}

/// The `external` agent's model (the one its proxy forwards to) from the flags and
/// `TRAPARENA_LLM_*`, as for the `llm` agent; `agent` names it in a missing variable's message.
pub fn external_args(args: &LlmArgs, agent: &str) -> Result<Value, MissingVariable> {
    let who = format!("the model that the {agent} agent's proxy forwards to");
    let mut out = json!({"model": args.target(&who)?});
    if let Some(c) = args.cassette() {
        out["cassette"] = c;
    }
    Ok(out)
}

/// The `adaptive` attacker's arguments from the flags and `TRAPARENA_ATTACKER_*` (falling back
/// to `TRAPARENA_LLM_*`).
pub fn attacker_args(args: &LlmArgs) -> Result<Value, MissingVariable> {
    let mut out = json!({
        "model": args.model(endpoint("ATTACKER", "the attacker's model", args.replay())?),
        "temperature": args.attacker_temperature,
        "max_tokens": args.attacker_max_response_tokens,
    });
    if let Some(c) = args.cassette() {
        out["cassette"] = c;
    }
    Ok(out)
}

/// A variable a role's endpoint needs is not set (nor, for a role other than the target, its
/// fallback `TRAPARENA_LLM_*`).
#[derive(Debug)]
pub struct MissingVariable {
    /// `LLM` (the target) or `ATTACKER`.
    role: String,
    /// `MODEL` or `BASE_URL`.
    field: &'static str,
    /// What needs it ("the llm agent").
    who: String,
}

impl std::fmt::Display for MissingVariable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let MissingVariable { role, field, who } = self;
        if role == "LLM" {
            write!(f, "TRAPARENA_LLM_{field} is not set (needed by {who})")
        } else {
            write!(
                f,
                "TRAPARENA_{role}_{field} is not set, nor its fallback TRAPARENA_LLM_{field} \
                 (needed by {who})"
            )
        }
    }
}

impl std::error::Error for MissingVariable {}

/// A role's endpoint as the environment gives it.
#[derive(Debug)]
struct Endpoint {
    model: String,
    /// `None` only when replaying.
    base_url: Option<String>,
    /// The variable holding the API key, if one is set for this host.
    api_key_env: Option<String>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The endpoint of a role (`LLM` for the target, `ATTACKER`): its own variables, else the
/// `LLM` ones; `who` is what needs it, for the message when one is missing. The base URL may be
/// missing when only replaying.
fn endpoint(role: &str, who: &str, replay: bool) -> Result<Endpoint, MissingVariable> {
    let own_name = |field: &str| format!("TRAPARENA_{role}_{field}");
    let own = |field: &str| var(&own_name(field));
    let target = |field: &str| var(&format!("TRAPARENA_LLM_{field}"));
    let missing = |field: &'static str| MissingVariable {
        role: role.to_owned(),
        field,
        who: who.to_owned(),
    };
    let model = own("MODEL")
        .or_else(|| target("MODEL"))
        .ok_or_else(|| missing("MODEL"))?;
    let own_url = own("BASE_URL");
    let target_url = target("BASE_URL");
    let base_url = own_url.clone().or_else(|| target_url.clone());
    if base_url.is_none() && !replay {
        return Err(missing("BASE_URL"));
    }
    // The target's key goes only to the target's host.
    let same_host = own_url.is_none() || own_url == target_url;
    let api_key_env = if own("API_KEY").is_some() {
        Some(own_name("API_KEY"))
    } else if same_host && target("API_KEY").is_some() {
        Some("TRAPARENA_LLM_API_KEY".to_owned())
    } else {
        None
    };
    Ok(Endpoint {
        model,
        base_url,
        api_key_env,
    })
}

//! Model-backed agents and attackers for the command line: endpoints from environment
//! variables (the CLI is the only place that reads them).
//!
//! | variable | role |
//! |---|---|
//! | `TRAPARENA_LLM_MODEL`, `TRAPARENA_LLM_BASE_URL`, `TRAPARENA_LLM_API_KEY` | the `llm` agent (model and base URL required) |
//! | `TRAPARENA_ATTACKER_MODEL`, `..._BASE_URL`, `..._API_KEY` | the `adaptive` and `blind` attackers; each falls back to the `LLM` variable |
//! | `TRAPARENA_CURATOR_*` | the curator, likewise |
//!
//! An API key falls back only together with the base URL (or when both base URLs are the
//! same), so the target's key is never sent to another host.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use traparena::agent::Agent;
use traparena::attack::Attacker;
use traparena::task::Task;
use traparena_llm::{
    AttackerVariant, Cassette, CassetteMode, ChatClient, ChatModel, EndpointConfig, HistoryLimits,
    LlmAgent, LlmAgentConfig, LlmAttacker, LlmAttackerConfig, Protocol, Recorder,
};

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
    /// The llm agent's maximum response length, in tokens.
    #[arg(long, default_value_t = 16_384)]
    pub max_tokens: u32,
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
    pub attacker_max_tokens: u32,
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
}

impl LlmArgs {
    fn replay(&self) -> bool {
        self.cassette.is_some() && self.cassette_mode == CassetteModeArg::Replay
    }
}

/// The `llm` agent.
pub fn build_agent(task: &Task, seed: u64, args: &LlmArgs) -> Result<Box<dyn Agent>, String> {
    if !args.temperature.is_finite() || args.temperature < 0.0 {
        return Err(format!(
            "--temperature must be a number of at least 0, not {}",
            args.temperature
        ));
    }
    if args.max_tokens == 0 {
        return Err("--max-tokens must be at least 1".into());
    }
    let endpoint = endpoint("LLM", args.replay())?;
    let model = chat_model(&endpoint, "target", task, seed, args)?;
    let context_window = match (args.context_window, &endpoint.base_url) {
        (Some(n), _) => Some(n),
        (None, Some(url)) if !args.replay() => probe_context_window(url, &endpoint),
        (None, _) => None,
    };
    let config = LlmAgentConfig {
        protocol: match args.protocol {
            ProtocolArg::Tools => Protocol::Tools,
            ProtocolArg::Json => Protocol::Json,
            ProtocolArg::Text => Protocol::Text,
        },
        temperature: args.temperature,
        max_tokens: Some(args.max_tokens),
        seed: Some(seed),
        defence: args.defence,
        history: HistoryLimits {
            max_chars: args.history_chars,
            ..HistoryLimits::default()
        },
        context_window,
    };
    Ok(Box::new(LlmAgent::new(model, config)))
}

/// The `adaptive` (reference) and `blind` trajectory-conditioned attackers.
pub fn build_attacker(
    kind: &str,
    task: &Task,
    seed: u64,
    args: &LlmArgs,
) -> Result<Box<dyn Attacker>, String> {
    let variant = match kind {
        "adaptive" => AttackerVariant::Reference,
        "blind" => AttackerVariant::Blind,
        other => return Err(format!("unknown LLM attacker {other:?}")),
    };
    let endpoint = endpoint("ATTACKER", args.replay())?;
    let model = chat_model(&endpoint, "attacker", task, seed, args)?;
    let config = LlmAttackerConfig {
        seed: Some(seed),
        temperature: args.attacker_temperature,
        max_tokens: Some(args.attacker_max_tokens),
        ..LlmAttackerConfig::new(variant)
    };
    Ok(Box::new(LlmAttacker::new(model, config)))
}

/// Asks the target's server for its context window, saying what it found.
fn probe_context_window(base_url: &str, endpoint: &Endpoint) -> Option<u32> {
    let mut config = EndpointConfig::new(base_url, endpoint.model.clone());
    config.api_key = endpoint.api_key.clone();
    config.timeout = std::time::Duration::from_secs(10);
    let found = ChatClient::new(config).ok().and_then(|client| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        Some(rt.block_on(client.context_window()))
    });
    match found {
        Some(Ok(Some(n))) => {
            eprintln!("traparena: the target's context window: {n} tokens (asked of the server)");
            Some(n)
        }
        Some(Ok(None)) => {
            eprintln!(
                "traparena: warning: the server does not say its context window; requests are not fitted to one (set --context-window)"
            );
            None
        }
        Some(Err(e)) => {
            eprintln!("traparena: warning: could not ask the server for its context window: {e}");
            None
        }
        None => None,
    }
}

/// A role's endpoint as the environment gives it.
#[derive(Debug)]
struct Endpoint {
    model: String,
    /// `None` only when replaying.
    base_url: Option<String>,
    api_key: Option<String>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The endpoint of a role (`LLM` for the target, `ATTACKER`, `CURATOR`): its own variables,
/// else the `LLM` ones. The base URL may be missing when only replaying.
fn endpoint(role: &str, replay: bool) -> Result<Endpoint, String> {
    let own = |field: &str| var(&format!("TRAPARENA_{role}_{field}"));
    let target = |field: &str| var(&format!("TRAPARENA_LLM_{field}"));
    let missing = |field: &str| {
        if role == "LLM" {
            format!("TRAPARENA_LLM_{field} is not set (needed by the llm agent)")
        } else {
            format!(
                "TRAPARENA_{role}_{field} is not set, nor its fallback TRAPARENA_LLM_{field} \
                 (needed by the {} model)",
                role.to_lowercase()
            )
        }
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
    let same_host = own_url.is_none() || own_url == target_url;
    let api_key = own("API_KEY").or_else(|| if same_host { target("API_KEY") } else { None });
    Ok(Endpoint {
        model,
        base_url,
        api_key,
    })
}

/// The role's model: the HTTP client, behind a recorder when a cassette is given (keyed by the
/// episode: task id, seed and role).
fn chat_model(
    endpoint: &Endpoint,
    role: &str,
    task: &Task,
    seed: u64,
    args: &LlmArgs,
) -> Result<Arc<dyn ChatModel>, String> {
    let scope = format!("{}/seed{}/{}", task.spec.id, seed, role);
    let client = || -> Result<Arc<dyn ChatModel>, String> {
        let base_url = endpoint
            .base_url
            .clone()
            .ok_or_else(|| format!("no base URL for the {role} model"))?;
        let mut config = EndpointConfig::new(base_url, endpoint.model.clone());
        config.api_key = endpoint.api_key.clone();
        config.jitter_seed = seed;
        config.timeout = std::time::Duration::from_secs(args.model_timeout.max(1));
        config.max_retries = args.model_retries;
        config.backoff_base = std::time::Duration::from_millis(args.model_backoff_ms);
        config.backoff_max = config.backoff_max.max(config.backoff_base);
        config.omit_temperature = args.no_temperature;
        if args.max_completion_tokens {
            config.max_tokens_field = traparena::llm::MaxTokensField::MaxCompletionTokens;
        }
        let client = ChatClient::new(config).map_err(|e| format!("the {role} model: {e}"))?;
        Ok(Arc::new(client))
    };
    let Some(path) = &args.cassette else {
        return client();
    };
    let cassette = cassette(path, args.cassette_mode == CassetteModeArg::Replay)?;
    Ok(match args.cassette_mode {
        CassetteModeArg::Replay => Arc::new(Recorder::replay_only(
            endpoint.model.clone(),
            cassette,
            scope,
        )),
        CassetteModeArg::Record => Arc::new(Recorder::new(
            client()?,
            cassette,
            CassetteMode::Record,
            scope,
        )),
        CassetteModeArg::Auto => Arc::new(Recorder::new(
            client()?,
            cassette,
            CassetteMode::Auto,
            scope,
        )),
    })
}

/// One open cassette per file for the whole process, shared by the agent's and the
/// attacker's recorders.
fn cassette(path: &std::path::Path, must_exist: bool) -> Result<Arc<Cassette>, String> {
    static OPEN: OnceLock<Mutex<HashMap<PathBuf, Arc<Cassette>>>> = OnceLock::new();
    if must_exist && !path.is_file() {
        return Err(format!(
            "{}: no such cassette to replay (record one with --cassette-mode record or auto)",
            path.display()
        ));
    }
    let mut open = OPEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(c) = open.get(path) {
        return Ok(c.clone());
    }
    let c = Cassette::shared(path).map_err(|e| e.to_string())?;
    open.insert(path.to_owned(), c.clone());
    Ok(c)
}

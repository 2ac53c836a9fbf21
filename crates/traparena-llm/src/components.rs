//! The model-backed kinds of the registry: the `llm` agent, the `adaptive` attacker and the
//! `llm` curator. They share one client (and so one concurrency limit) per endpoint and one
//! open cassette per file.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use traparena_agent::{Agent, AgentError, AgentFactory, AgentRegistry};
use traparena_attack::{
    Access, AttackError, Attacker, AttackerFactory, AttackerRegistry, Curator, CuratorFactory,
    CuratorRegistry,
};
use traparena_task::{ArgsError, ConfigContext, EpisodeContext};

use crate::agent::{HistoryLimits, LlmAgent, LlmAgentConfig, Protocol};
use crate::attacker::{AttackerVariant, LlmAttacker, LlmAttackerConfig};
use traparena_model::{
    Cassette, CassetteMode, ChatClient, ChatModel, EndpointConfig, MaxTokensField, Recorder,
};

use crate::curator::{LlmCurator, LlmCuratorConfig};

/// A model endpoint, the `model` argument of every model-backed kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Model name sent to the server.
    pub model: String,
    /// OpenAI-compatible base URL (`http://host:port/v1`); may be left out only when a
    /// cassette is replayed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub base_url: String,
    /// Name of the secret (the `traparena` command: the environment variable) holding the API
    /// key, if the server needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Most calls in flight to this endpoint (shared by every component that names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<usize>,
    /// The model's context window in tokens; requests are fitted into it (asked of the server
    /// when unset: vLLM and SGLang `/v1/models`, llama.cpp `/props`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    /// Seconds one call may take (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// Retries of a failed call (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// Backoff before the first retry, in milliseconds (default 1,000; doubles up to 30 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<u64>,
    /// Send `max_completion_tokens` instead of `max_tokens` (hosted reasoning models).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub max_completion_tokens: bool,
    /// Send no temperature (models that take only their default).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_temperature: bool,
}

impl ModelSpec {
    fn key(&self) -> String {
        format!(
            "{}|{}|{}",
            self.base_url,
            self.model,
            self.api_key_env.as_deref().unwrap_or("")
        )
    }
}

/// Record and replay of a component's model calls: the `cassette` argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CassetteSpec {
    /// The cassette file (JSONL; relative to the spec's folder).
    pub path: PathBuf,
    /// `auto` (default: replay what is recorded, call for the rest), `record` or `replay`
    /// (no model server needed or contacted).
    #[serde(default = "auto")]
    pub mode: CassetteMode,
}

fn auto() -> CassetteMode {
    CassetteMode::Auto
}

/// What the model-backed kinds share: clients by endpoint, open cassettes by file, context
/// windows asked of the servers.
#[derive(Default)]
struct Pool {
    clients: Mutex<BTreeMap<String, Arc<ChatClient>>>,
    cassettes: Mutex<BTreeMap<PathBuf, Arc<Cassette>>>,
    windows: Mutex<BTreeMap<String, Option<u32>>>,
}

impl Pool {
    /// Checks `model` and opens (or reuses) its client; `replay` allows a missing base URL.
    fn client(
        &self,
        model: &ModelSpec,
        replay: bool,
        cx: &ConfigContext,
    ) -> Result<Option<Arc<ChatClient>>, ArgsError> {
        if model.model.trim().is_empty() {
            return Err(ArgsError::new("model.model", "names no model"));
        }
        if model.base_url.is_empty() {
            return if replay {
                Ok(None)
            } else {
                Err(ArgsError::new(
                    "model.base_url",
                    "is missing (only a replayed cassette needs no server)",
                ))
            };
        }
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = clients.get(&model.key()) {
            return Ok(Some(c.clone()));
        }
        let mut cfg = EndpointConfig::new(model.base_url.clone(), model.model.clone());
        if let Some(var) = &model.api_key_env {
            let key = cx.secret(var).ok_or_else(|| {
                ArgsError::new(
                    "model.api_key_env",
                    format!("{var} (the API key of model {}) is not set", model.model),
                )
            })?;
            cfg = cfg.with_api_key(key);
        }
        if let Some(n) = model.max_concurrency {
            cfg.max_concurrency = n.max(1);
        }
        if let Some(s) = model.timeout_s {
            cfg.timeout = std::time::Duration::from_secs(s.max(1));
        }
        if let Some(n) = model.max_retries {
            cfg.max_retries = n;
        }
        if let Some(ms) = model.backoff_ms {
            cfg.backoff_base = std::time::Duration::from_millis(ms);
            cfg.backoff_max = cfg.backoff_max.max(cfg.backoff_base);
        }
        if model.max_completion_tokens {
            cfg.max_tokens_field = MaxTokensField::MaxCompletionTokens;
        }
        cfg.omit_temperature = model.omit_temperature;
        let client =
            Arc::new(ChatClient::new(cfg).map_err(|e| ArgsError::new("model", e.to_string()))?);
        clients.insert(model.key(), client.clone());
        Ok(Some(client))
    }

    /// Opens (or reuses) the cassette of `spec`, its path read against the spec's folder.
    fn cassette(
        &self,
        spec: &mut CassetteSpec,
        cx: &ConfigContext,
    ) -> Result<Arc<Cassette>, ArgsError> {
        spec.path = cx.resolve(&spec.path);
        if spec.mode == CassetteMode::Replay && !spec.path.is_file() {
            return Err(ArgsError::new(
                "cassette.path",
                format!(
                    "{}: no such cassette to replay (record one with mode record or auto)",
                    spec.path.display()
                ),
            ));
        }
        let mut open = self
            .cassettes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = open.get(&spec.path) {
            return Ok(c.clone());
        }
        let c = Cassette::shared(&spec.path)
            .map_err(|e| ArgsError::new("cassette.path", e.to_string()))?;
        open.insert(spec.path.clone(), c.clone());
        Ok(c)
    }

    /// Asks the server of `model` for its context window once; says what it found.
    async fn probe(&self, model: &ModelSpec, client: &ChatClient) -> Vec<String> {
        let key = model.key();
        if model.context_window.is_some()
            || self
                .windows
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains_key(&key)
        {
            return Vec::new();
        }
        let (found, line) = match client.context_window().await {
            Ok(Some(n)) => (
                Some(n),
                format!(
                    "{}: context window {n} tokens (asked of the server)",
                    model.model
                ),
            ),
            Ok(None) => (
                None,
                format!(
                    "warning: {}: the server does not say its context window; requests are not fitted to one (set `context_window`)",
                    model.model
                ),
            ),
            Err(e) => (
                None,
                format!(
                    "warning: {}: could not ask the server for its context window: {e}",
                    model.model
                ),
            ),
        };
        self.windows
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, found);
        vec![line]
    }

    fn window(&self, model: &ModelSpec) -> Option<u32> {
        model.context_window.or_else(|| {
            self.windows
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&model.key())
                .copied()
                .flatten()
        })
    }
}

/// The model a component talks to in one scope: the client, behind a recorder when a cassette
/// is given.
#[derive(Clone, Default)]
struct Wire {
    client: Option<Arc<ChatClient>>,
    cassette: Option<(Arc<Cassette>, CassetteMode)>,
}

impl Wire {
    fn open(
        pool: &Pool,
        model: &ModelSpec,
        cassette: &mut Option<CassetteSpec>,
        cx: &ConfigContext,
    ) -> Result<Wire, ArgsError> {
        let replay = cassette
            .as_ref()
            .is_some_and(|c| c.mode == CassetteMode::Replay);
        let client = pool.client(model, replay, cx)?;
        let cassette = match cassette {
            Some(c) => Some((pool.cassette(c, cx)?, c.mode)),
            None => None,
        };
        Ok(Wire { client, cassette })
    }

    fn model(&self, name: &str, scope: String) -> Result<Arc<dyn ChatModel>, String> {
        let client = || {
            self.client
                .clone()
                .map(|c| c as Arc<dyn ChatModel>)
                .ok_or_else(|| format!("no base URL for model {name}"))
        };
        Ok(match &self.cassette {
            None => client()?,
            Some((c, CassetteMode::Replay)) => {
                Arc::new(Recorder::replay_only(name, c.clone(), scope))
            }
            Some((c, mode)) => Arc::new(Recorder::new(client()?, c.clone(), *mode, scope)),
        })
    }
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire")
            .field("client", &self.client.as_ref().map(|c| c.url().to_owned()))
            .field(
                "cassette",
                &self.cassette.as_ref().map(|(c, m)| (c.path(), m)),
            )
            .finish()
    }
}

fn finite(field: &str, t: f64) -> Result<(), ArgsError> {
    if t.is_finite() && t >= 0.0 {
        Ok(())
    } else {
        Err(ArgsError::new(
            field,
            format!("must be a number of at least 0, not {t}"),
        ))
    }
}

/// The sampling arguments every generating kind checks: a temperature of at least 0 and room
/// for at least one token.
fn sampling(temperature: f64, max_tokens: u32) -> Result<(), ArgsError> {
    finite("temperature", temperature)?;
    if max_tokens == 0 {
        return Err(ArgsError::new("max_tokens", "must be at least 1"));
    }
    Ok(())
}

/// The `llm` agent kind's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmAgentArgs {
    /// The target model.
    pub model: ModelSpec,
    /// `tools`, `json` (default) or `text`.
    #[serde(default = "json")]
    pub protocol: Protocol,
    /// Sampling temperature (default 0.7).
    #[serde(default = "seven_tenths")]
    pub temperature: f64,
    /// Most tokens per response (default 16,384).
    #[serde(default = "sixteen_k")]
    pub max_tokens: u32,
    /// Most characters of conversation sent (older tool output is cut first; default 48,000).
    #[serde(default)]
    pub history_chars: Option<usize>,
    /// Record or replay the model calls (keyed by episode and role).
    #[serde(default)]
    pub cassette: Option<CassetteSpec>,
    #[serde(skip)]
    wire: Wire,
}

fn json() -> Protocol {
    Protocol::Json
}
fn seven_tenths() -> f64 {
    0.7
}
fn sixteen_k() -> u32 {
    16_384
}
fn one_k() -> u32 {
    1024
}

/// The `llm` agent kind: a model repairs through the seven actions.
struct LlmAgentKind(Arc<Pool>);

#[async_trait]
impl AgentFactory for LlmAgentKind {
    type Args = LlmAgentArgs;

    fn build(
        &self,
        args: &LlmAgentArgs,
        ep: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Agent>, AgentError> {
        let model = args
            .wire
            .model(&args.model.model, format!("{}/target", ep.scope))
            .map_err(AgentError::Unsupported)?;
        let config = LlmAgentConfig {
            protocol: args.protocol,
            temperature: args.temperature,
            max_tokens: Some(args.max_tokens),
            seed: Some(ep.seed),
            defence: ep.defence,
            history: HistoryLimits {
                max_chars: args
                    .history_chars
                    .unwrap_or(HistoryLimits::default().max_chars),
                ..HistoryLimits::default()
            },
            context_window: self.0.window(&args.model),
        };
        Ok(Box::new(LlmAgent::new(model, config)))
    }

    fn configure(
        &self,
        mut args: LlmAgentArgs,
        cx: &ConfigContext,
    ) -> Result<LlmAgentArgs, ArgsError> {
        sampling(args.temperature, args.max_tokens)?;
        args.wire = Wire::open(&self.0, &args.model, &mut args.cassette, cx)?;
        Ok(args)
    }

    async fn prepare(&self, args: &LlmAgentArgs) -> Result<Vec<String>, AgentError> {
        let replay = matches!(args.wire.cassette, Some((_, CassetteMode::Replay)));
        Ok(match (&args.wire.client, replay) {
            (Some(c), false) => self.0.probe(&args.model, c).await,
            _ => Vec::new(),
        })
    }
}

/// The `adaptive` attacker kind's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveArgs {
    /// The attacker's model.
    pub model: ModelSpec,
    /// `reference` (default: the attacker sees the reference repair) or `blind`.
    #[serde(default = "reference")]
    pub access: Access,
    /// Sampling temperature (default 0.7).
    #[serde(default = "seven_tenths")]
    pub temperature: f64,
    /// Most tokens per response (default 1,024; reasoning models need room to think).
    #[serde(default = "one_k")]
    pub max_tokens: u32,
    /// Record or replay the model calls.
    #[serde(default)]
    pub cassette: Option<CassetteSpec>,
    #[serde(skip)]
    wire: Wire,
}

fn reference() -> Access {
    Access::Reference
}

/// The `adaptive` attacker kind: a model that reads the live trajectory.
struct AdaptiveKind(Arc<Pool>);

impl AttackerFactory for AdaptiveKind {
    type Args = AdaptiveArgs;

    fn build(
        &self,
        args: &AdaptiveArgs,
        ep: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        let model = args
            .wire
            .model(&args.model.model, format!("{}/attacker", ep.scope))
            .map_err(AttackError::Invalid)?;
        let variant = match args.access {
            Access::Reference => AttackerVariant::Reference,
            Access::Blind => AttackerVariant::Blind,
        };
        let config = LlmAttackerConfig {
            seed: Some(ep.seed),
            temperature: args.temperature,
            max_tokens: Some(args.max_tokens),
            ..LlmAttackerConfig::new(variant)
        };
        Ok(Box::new(LlmAttacker::new(model, config)))
    }

    fn configure(
        &self,
        mut args: AdaptiveArgs,
        cx: &ConfigContext,
    ) -> Result<AdaptiveArgs, ArgsError> {
        sampling(args.temperature, args.max_tokens)?;
        args.wire = Wire::open(&self.0, &args.model, &mut args.cassette, cx)?;
        Ok(args)
    }
}

/// The `llm` curator kind's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmCuratorArgs {
    /// The curator's model.
    pub model: ModelSpec,
    /// Sampling temperature (default: the curator's own).
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Most tokens per response.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    #[serde(skip)]
    wire: Wire,
}

/// The `llm` curator kind: a model rewrites the notes between rounds.
struct LlmCuratorKind(Arc<Pool>);

impl CuratorFactory for LlmCuratorKind {
    type Args = LlmCuratorArgs;

    fn build(&self, args: &LlmCuratorArgs) -> Result<Box<dyn Curator>, AttackError> {
        let model = args
            .wire
            .model(&args.model.model, "curator".to_owned())
            .map_err(AttackError::Invalid)?;
        let mut config = LlmCuratorConfig::default();
        if let Some(t) = args.temperature {
            config.temperature = t;
        }
        if args.max_tokens.is_some() {
            config.max_tokens = args.max_tokens;
        }
        Ok(Box::new(LlmCurator::new(model, config)))
    }

    fn configure(
        &self,
        mut args: LlmCuratorArgs,
        cx: &ConfigContext,
    ) -> Result<LlmCuratorArgs, ArgsError> {
        if let Some(t) = args.temperature {
            finite("temperature", t)?;
        }
        args.wire = Wire::open(&self.0, &args.model, &mut None, cx)?;
        Ok(args)
    }
}

/// Registers the model-backed kinds: the `llm` agent, the `adaptive` attacker (argument
/// `access`: `reference` or `blind`) and the `llm` curator. They share one client per endpoint
/// (so `max_concurrency` holds across them) and one open cassette per file.
pub fn register(
    agents: &mut AgentRegistry,
    attackers: &mut AttackerRegistry,
    curators: &mut CuratorRegistry,
) {
    let pool = Arc::new(Pool::default());
    agents.register("llm", LlmAgentKind(pool.clone()));
    attackers.register("adaptive", AdaptiveKind(pool.clone()));
    curators.register("llm", LlmCuratorKind(pool));
}

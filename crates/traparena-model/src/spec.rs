//! What a registry entry says about a model, and what the components that name one share.
//!
//! [`ModelSpec`] (an endpoint) and [`CassetteSpec`] (record and replay) are the `model` and
//! `cassette` arguments of every model-backed kind (`llm`, `adaptive`, `external`, ...);
//! a [`ModelPool`] opens one [`ChatClient`] per endpoint (so `max_concurrency` holds across all
//! components that name it) and one [`Cassette`] per file; a [`Wire`] is one component's
//! connection: the client, behind a [`Recorder`] when a cassette is given.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::{
    Cassette, CassetteMode, ChatClient, ChatModel, EndpointConfig, MaxTokensField, ModelError,
    Prices, Recorder, WireApi,
};

/// A wrong `model` or `cassette` argument: the field (`model.base_url`, `cassette.path`, ...)
/// and what is wrong with it. Registries report it as an argument error of their kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The argument's path, such as `model.api_key_env`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl SpecError {
    fn new(field: &str, message: impl Into<String>) -> SpecError {
        SpecError {
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SpecError {}

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
    /// The API the server speaks: `chat_completions` (the default), `anthropic_messages`
    /// (Anthropic's API; the base URL ends in `/v1`) or `openai_responses`. Requests are
    /// translated ([`crate::wire`] says what cannot be carried across).
    #[serde(default, skip_serializing_if = "is_chat")]
    pub api: WireApi,
    /// The model's prices in US dollars per million tokens, for the cost of its calls (a
    /// cost the provider reports in a response is taken instead); unset, a call costs what
    /// its provider reports, or is not priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<Prices>,
}

fn is_chat(api: &WireApi) -> bool {
    *api == WireApi::ChatCompletions
}

impl ModelSpec {
    /// The endpoint's identity: base URL, model and key variable.
    pub fn key(&self) -> String {
        let api = match self.api {
            WireApi::ChatCompletions => String::new(),
            other => format!("|{}", other.name()),
        };
        format!(
            "{}|{}|{}{api}",
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

/// What the model-backed kinds of one registry share: clients by endpoint, open cassettes by
/// file, context windows asked of the servers.
#[derive(Debug, Default)]
pub struct ModelPool {
    clients: Mutex<BTreeMap<String, Arc<ChatClient>>>,
    cassettes: Mutex<BTreeMap<PathBuf, Arc<Cassette>>>,
    windows: Mutex<BTreeMap<String, Option<u32>>>,
}

impl ModelPool {
    /// Checks `model` and opens (or reuses) its client; `replay` allows a missing base URL.
    pub fn client(
        &self,
        model: &ModelSpec,
        replay: bool,
        secret: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Arc<ChatClient>>, SpecError> {
        if model.model.trim().is_empty() {
            return Err(SpecError::new("model.model", "names no model"));
        }
        if let Some(p) = &model.prices {
            p.check()?;
        }
        if model.base_url.is_empty() {
            return if replay {
                Ok(None)
            } else {
                Err(SpecError::new(
                    "model.base_url",
                    "is missing (only a replayed cassette needs no server)",
                ))
            };
        }
        let mut clients = self.clients.lock();
        if let Some(c) = clients.get(&model.key()) {
            return Ok(Some(c.clone()));
        }
        let mut cfg = EndpointConfig::new(model.base_url.clone(), model.model.clone());
        if let Some(var) = &model.api_key_env {
            let key = secret(var).ok_or_else(|| {
                SpecError::new(
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
        cfg.api = model.api;
        let client =
            Arc::new(ChatClient::new(cfg).map_err(|e| SpecError::new("model", e.to_string()))?);
        clients.insert(model.key(), client.clone());
        Ok(Some(client))
    }

    /// Opens (or reuses) the cassette of `spec`, its path read against `base_dir` (the spec's
    /// folder); `spec.path` is left resolved.
    pub fn cassette(
        &self,
        spec: &mut CassetteSpec,
        base_dir: &Path,
    ) -> Result<Arc<Cassette>, SpecError> {
        spec.path = base_dir.join(&spec.path);
        if spec.mode == CassetteMode::Replay && !spec.path.is_file() {
            return Err(SpecError::new(
                "cassette.path",
                format!(
                    "{}: no such cassette to replay (record one with mode record or auto)",
                    spec.path.display()
                ),
            ));
        }
        let mut open = self.cassettes.lock();
        if let Some(c) = open.get(&spec.path) {
            return Ok(c.clone());
        }
        let c = Cassette::shared(&spec.path)
            .map_err(|e| SpecError::new("cassette.path", e.to_string()))?;
        open.insert(spec.path.clone(), c.clone());
        Ok(c)
    }

    /// Asks the server of `model` for its context window once; says what it found.
    pub async fn probe(&self, model: &ModelSpec, client: &ChatClient) -> Vec<String> {
        let key = model.key();
        if model.context_window.is_some() || self.windows.lock().contains_key(&key) {
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
        self.windows.lock().insert(key, found);
        vec![line]
    }

    /// The context window of `model`: its own setting, else what [`ModelPool::probe`] found.
    pub fn window(&self, model: &ModelSpec) -> Option<u32> {
        model
            .context_window
            .or_else(|| self.windows.lock().get(&model.key()).copied().flatten())
    }
}

/// The model a component talks to in one scope: the client, behind a recorder when a cassette
/// is given.
#[derive(Clone, Default)]
pub struct Wire {
    client: Option<Arc<ChatClient>>,
    cassette: Option<(Arc<Cassette>, CassetteMode)>,
}

impl Wire {
    /// Checks `model` and `cassette` and opens both through `pool`; `base_dir` and `secret`
    /// as for [`ModelPool::cassette`] and [`ModelPool::client`].
    pub fn open(
        pool: &ModelPool,
        model: &ModelSpec,
        cassette: &mut Option<CassetteSpec>,
        base_dir: &Path,
        secret: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Wire, SpecError> {
        let replay = cassette
            .as_ref()
            .is_some_and(|c| c.mode == CassetteMode::Replay);
        let client = pool.client(model, replay, secret)?;
        let cassette = match cassette {
            Some(c) => Some((pool.cassette(c, base_dir)?, c.mode)),
            None => None,
        };
        Ok(Wire { client, cassette })
    }

    /// The model to call in `scope` (the recording's key: one per episode and role);
    /// [`ModelError::NoEndpoint`] when it is to be called live and names no server.
    pub fn model(&self, name: &str, scope: String) -> Result<Arc<dyn ChatModel>, ModelError> {
        let client = || {
            self.client
                .clone()
                .map(|c| c as Arc<dyn ChatModel>)
                .ok_or_else(|| ModelError::NoEndpoint {
                    model: name.to_owned(),
                })
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

impl Wire {
    /// The model that answers only from what the cassette recorded in `scope`, with no
    /// server behind it: for replaying a recorded episode's calls, such as a fork's prefix.
    /// [`ModelError::NoCassette`] when the wire has no cassette.
    pub fn replayed(&self, name: &str, scope: String) -> Result<Arc<dyn ChatModel>, ModelError> {
        match &self.cassette {
            Some((c, _)) => Ok(Arc::new(Recorder::replay_only(name, c.clone(), scope))),
            None => Err(ModelError::NoCassette {
                model: name.to_owned(),
            }),
        }
    }

    /// The endpoint's client (`None` when a cassette is only replayed and names no server).
    pub fn client(&self) -> Option<&Arc<ChatClient>> {
        self.client.as_ref()
    }

    /// True when every call is answered from a cassette.
    pub fn replays(&self) -> bool {
        matches!(self.cassette, Some((_, CassetteMode::Replay)))
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

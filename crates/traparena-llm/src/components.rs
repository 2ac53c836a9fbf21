//! The model-backed kinds of the registry: the `llm` agent, the `adaptive` attacker and the
//! `llm` curator. They share one client (and so one concurrency limit) per endpoint and one
//! open cassette per file.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use traparena_agent::{Agent, AgentError, AgentRegistry, Agents};
use traparena_attack::{
    Access, AttackError, Attacker, AttackerRegistry, Attackers, Curator, CuratorRegistry, Curators,
};
use traparena_task::{ArgsError, ConfigContext, EpisodeContext, Factory, ModelUse};

use crate::agent::{HistoryLimits, LlmAgent, LlmAgentConfig, Protocol};
use crate::attacker::{AttackerVariant, LlmAttacker, LlmAttackerConfig};
pub use traparena_model::spec::ModelPool;
pub use traparena_model::spec::{CassetteSpec, ModelSpec};
use traparena_model::spec::{SpecError, Wire};

use crate::curator::{LlmCurator, LlmCuratorConfig};

/// Opens a component's wire, its argument errors as the kind's.
fn open_wire(
    pool: &ModelPool,
    model: &ModelSpec,
    cassette: &mut Option<CassetteSpec>,
    cx: &ConfigContext,
) -> Result<Wire, ArgsError> {
    Wire::open(pool, model, cassette, &cx.base_dir, &|name| cx.secret(name))
        .map_err(|SpecError { field, message }| ArgsError::new(field, message))
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
struct LlmAgentKind(Arc<ModelPool>);

#[async_trait]
impl Factory for LlmAgentKind {
    type Role = Agents;
    type Args = LlmAgentArgs;

    fn model(&self) -> ModelUse {
        ModelUse::Sampled
    }

    fn build(
        &self,
        args: &LlmAgentArgs,
        ep: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Agent>, AgentError> {
        let model = args
            .wire
            .model(&args.model.model, format!("{}/target", ep.scope))
            .map_err(|e| AgentError::Unsupported(e.to_string()))?;
        // A fork replays its parent's calls for the prefix, then samples live with the
        // continuation's seed.
        let prefix = match ep.fork {
            Some(f) => Some((
                args.wire
                    .replayed(&args.model.model, format!("{}/target", f.parent_scope))
                    .map_err(|e| {
                        AgentError::Unsupported(format!(
                            "a fork replays its parent's model responses: {e}"
                        ))
                    })?,
                f,
            )),
            None => None,
        };
        let config = LlmAgentConfig {
            protocol: args.protocol,
            temperature: args.temperature,
            max_tokens: Some(args.max_tokens),
            seed: Some(ep.fork.map_or(ep.seed, |f| f.seed)),
            defence: ep.defence,
            history: HistoryLimits {
                max_chars: args
                    .history_chars
                    .unwrap_or(HistoryLimits::default().max_chars),
                ..HistoryLimits::default()
            },
            context_window: self.0.window(&args.model),
            prices: args.model.prices,
        };
        let agent = LlmAgent::new(model, config);
        Ok(Box::new(match prefix {
            Some((replayed, f)) => agent.with_prefix(replayed, f.step, Some(f.parent_seed)),
            None => agent,
        }))
    }

    fn configure(
        &self,
        mut args: LlmAgentArgs,
        cx: &ConfigContext,
    ) -> Result<LlmAgentArgs, ArgsError> {
        sampling(args.temperature, args.max_tokens)?;
        if cx.forked && args.cassette.is_none() {
            return Err(ArgsError::new(
                "cassette",
                "is needed: the spec forks this target's baseline episodes, and a fork replays its parent's model responses from the cassette they were recorded in (give one, mode auto or record)",
            ));
        }
        args.wire = open_wire(&self.0, &args.model, &mut args.cassette, cx)?;
        Ok(args)
    }

    async fn prepare(&self, args: &LlmAgentArgs) -> Result<Vec<String>, AgentError> {
        Ok(match (args.wire.client(), args.wire.replays()) {
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
struct AdaptiveKind(Arc<ModelPool>);

impl Factory for AdaptiveKind {
    type Role = Attackers;
    type Args = AdaptiveArgs;

    fn model(&self) -> ModelUse {
        ModelUse::Sampled
    }

    fn short_form(&self) -> Option<&'static str> {
        Some("access")
    }

    fn build(
        &self,
        args: &AdaptiveArgs,
        ep: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Attacker>, AttackError> {
        let model = args
            .wire
            .model(&args.model.model, format!("{}/attacker", ep.scope))
            .map_err(|e| AttackError::Invalid(e.to_string()))?;
        let variant = match args.access {
            Access::Reference => AttackerVariant::Reference,
            Access::Blind => AttackerVariant::Blind,
        };
        let config = LlmAttackerConfig {
            seed: Some(ep.seed),
            temperature: args.temperature,
            max_tokens: Some(args.max_tokens),
            prices: args.model.prices,
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
        args.wire = open_wire(&self.0, &args.model, &mut args.cassette, cx)?;
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
struct LlmCuratorKind(Arc<ModelPool>);

impl Factory for LlmCuratorKind {
    type Role = Curators;
    type Args = LlmCuratorArgs;

    fn model(&self) -> ModelUse {
        ModelUse::Sampled
    }

    fn build(&self, args: &LlmCuratorArgs, _: &()) -> Result<Box<dyn Curator>, AttackError> {
        let model = args
            .wire
            .model(&args.model.model, "curator".to_owned())
            .map_err(|e| AttackError::Invalid(e.to_string()))?;
        let mut config = LlmCuratorConfig {
            prices: args.model.prices,
            ..LlmCuratorConfig::default()
        };
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
        args.wire = open_wire(&self.0, &args.model, &mut None, cx)?;
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
    register_with(agents, attackers, curators, Arc::new(ModelPool::default()));
}

/// [`register`], sharing `pool` (its clients and cassettes) with other model-backed kinds,
/// such as `traparena-external`'s `external` agent.
pub fn register_with(
    agents: &mut AgentRegistry,
    attackers: &mut AttackerRegistry,
    curators: &mut CuratorRegistry,
    pool: Arc<ModelPool>,
) {
    agents.register("llm", LlmAgentKind(pool.clone()));
    attackers.register("adaptive", AdaptiveKind(pool.clone()));
    curators.register("llm", LlmCuratorKind(pool));
}

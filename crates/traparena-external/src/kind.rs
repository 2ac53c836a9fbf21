//! The `external` agent kind of the registry.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use traparena_agent::{Agent, AgentError, AgentRegistry, Agents};
use traparena_model::spec::{CassetteSpec, ModelPool, ModelSpec, SpecError, Wire};
use traparena_task::{ArgsError, ConfigContext, EpisodeContext, Factory, ModelUse};

use crate::agent::ExternalAgent;
use crate::profile::Profile;

/// The `external` kind's arguments.
///
/// ```json
/// {"kind": "external", "args": {"profile": "mini-swe-agent",
///   "model": {"model": "qwen2.5-coder-32b", "base_url": "http://127.0.0.1:8000/v1"}}}
/// ```
///
/// `external:mini-swe-agent` is short for `{"kind": "external", "args": {"profile":
/// "mini-swe-agent", ...}}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalArgs {
    /// A bundled profile's name (`mini-swe-agent`) or a profile file (relative to the spec's
    /// folder).
    pub profile: String,
    /// The target model, which the proxy forwards the agent's requests to.
    pub model: ModelSpec,
    /// Where the agent is installed (default: the profile's name under the agents folder,
    /// [`ConfigContext::agents_dir`]).
    #[serde(default)]
    pub prefix: Option<PathBuf>,
    /// Seconds the agent's process may run (default: the profile's `timeout_s`).
    #[serde(default)]
    pub timeout_s: Option<u64>,
    /// Record or replay the model calls (keyed by episode).
    #[serde(default)]
    pub cassette: Option<CassetteSpec>,
    #[serde(skip)]
    loaded: Option<Arc<Profile>>,
    #[serde(skip)]
    wire: Wire,
}

/// The `external` agent kind.
#[derive(Debug, Default)]
pub struct ExternalKind {
    pool: Arc<ModelPool>,
}

impl Factory for ExternalKind {
    type Role = Agents;
    type Args = ExternalArgs;

    fn model(&self) -> ModelUse {
        ModelUse::Forwarded
    }

    fn short_form(&self) -> Option<&'static str> {
        Some("profile")
    }

    fn build(
        &self,
        args: &ExternalArgs,
        ep: &EpisodeContext<'_>,
    ) -> Result<Box<dyn Agent>, AgentError> {
        let profile = args.loaded.clone().ok_or_else(|| {
            AgentError::Unsupported("the external kind was not configured".into())
        })?;
        let model = args
            .wire
            .model(&args.model.model, format!("{}/target", ep.scope))
            .map_err(|e| AgentError::Unsupported(e.to_string()))?;
        let prefix = args.prefix.clone().unwrap_or_default();
        let agent = ExternalAgent::new(
            model,
            profile,
            prefix,
            args.timeout_s.map(|s| Duration::from_secs(s.max(1))),
        )
        .with_prices(args.model.prices);
        // A fork's first steps are answered from the parent's recording.
        Ok(Box::new(match ep.fork {
            Some(f) => agent.with_prefix(
                args.wire
                    .replayed(&args.model.model, format!("{}/target", f.parent_scope))
                    .map_err(|e| {
                        AgentError::Unsupported(format!(
                            "a fork replays its parent's model responses: {e}"
                        ))
                    })?,
                f.step,
            ),
            None => agent,
        }))
    }

    fn configure(
        &self,
        mut args: ExternalArgs,
        cx: &ConfigContext,
    ) -> Result<ExternalArgs, ArgsError> {
        let profile = Profile::load(&args.profile, &cx.base_dir)
            .map_err(|e| ArgsError::new("profile", e.to_string()))?;
        let prefix = match (&args.prefix, &cx.agents_dir) {
            (Some(p), _) => cx.resolve(p),
            (None, Some(dir)) => profile.default_prefix(dir),
            (None, None) => {
                return Err(ArgsError::new(
                    "prefix",
                    format!(
                        "is not set and there is no agents folder to find {} in",
                        profile.name
                    ),
                ));
            }
        };
        profile
            .check_installed(&prefix)
            .map_err(|e| ArgsError::new("prefix", e.to_string()))?;
        if cx.forked && args.cassette.is_none() {
            return Err(ArgsError::new(
                "cassette",
                "is needed: the spec forks this target's baseline episodes, and a fork replays its parent's model responses from the cassette they were recorded in (give one, mode auto or record)",
            ));
        }
        if args.timeout_s == Some(0) {
            return Err(ArgsError::new("timeout_s", "must be at least 1"));
        }
        args.wire = Wire::open(
            &self.pool,
            &args.model,
            &mut args.cassette,
            &cx.base_dir,
            &|name| cx.secret(name),
        )
        .map_err(|SpecError { field, message }| ArgsError::new(field, message))?;
        args.prefix = Some(prefix);
        args.loaded = Some(Arc::new(profile));
        Ok(args)
    }
}

/// Registers the `external` agent kind, with `external:PROFILE` as its short form.
pub fn register(agents: &mut AgentRegistry) {
    register_with(agents, Arc::new(ModelPool::default()));
}

/// [`register`], sharing `pool` (one client per endpoint, one open cassette per file) with
/// other model-backed kinds, so that an endpoint's `max_concurrency` holds across all of them.
pub fn register_with(agents: &mut AgentRegistry, pool: Arc<ModelPool>) {
    agents.register("external", ExternalKind { pool });
}

//! `traparena experiment` and `traparena merge`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use traparena::agent::Agent;
use traparena::attack::{Attacker, Curator};
use traparena::env::Sandbox;
use traparena::runner::{
    BuiltinComponents, Components, ConditionSpec, ExperimentOptions, ExperimentSpec, ModelSpec,
    Progress, ResultLine, RunError, Shard, TargetSpec, merge_results, run_experiment,
};
use traparena::task::Task;
use traparena_llm::{
    AttackerVariant, ChatClient, ChatModel, EndpointConfig, LlmAgent, LlmAgentConfig, LlmAttacker,
    LlmAttackerConfig, LlmCurator, LlmCuratorConfig, Protocol,
};

/// The built-in components plus the model-backed ones, with one client (and so one concurrency
/// limit) per endpoint named in the spec.
struct CliComponents {
    clients: std::collections::BTreeMap<String, Arc<ChatClient>>,
    /// Context windows asked of the servers, by endpoint (`None`: the server does not say).
    windows: std::collections::BTreeMap<String, Option<u32>>,
    attacker_model: Option<ModelSpec>,
    curator_model: Option<ModelSpec>,
    prompt_hashes: std::collections::BTreeMap<String, String>,
}

fn endpoint_key(m: &ModelSpec) -> String {
    format!(
        "{}|{}|{}",
        m.base_url,
        m.model,
        m.api_key_env.as_deref().unwrap_or("")
    )
}

impl CliComponents {
    /// Builds a client for every endpoint of the spec; API keys come from the named variables.
    fn new(spec: &ExperimentSpec) -> Result<CliComponents, String> {
        let mut clients = std::collections::BTreeMap::new();
        let models = spec
            .targets
            .iter()
            .filter_map(|t| t.model.as_ref())
            .chain(spec.attacker_model.as_ref())
            .chain(spec.curator_model.as_ref());
        for m in models {
            let key = endpoint_key(m);
            if clients.contains_key(&key) {
                continue;
            }
            let mut cfg = EndpointConfig::new(m.base_url.clone(), m.model.clone());
            if let Some(var) = &m.api_key_env {
                let k = std::env::var(var).map_err(|_| {
                    format!(
                        "the environment variable {var} (api_key_env of model {}) is not set",
                        m.model
                    )
                })?;
                cfg = cfg.with_api_key(k);
            }
            if let Some(n) = m.max_concurrency {
                cfg.max_concurrency = n.max(1);
            }
            if let Some(s) = m.timeout_s {
                cfg.timeout = std::time::Duration::from_secs(s.max(1));
            }
            if let Some(n) = m.max_retries {
                cfg.max_retries = n;
            }
            if let Some(ms) = m.backoff_ms {
                cfg.backoff_base = std::time::Duration::from_millis(ms);
                cfg.backoff_max = cfg.backoff_max.max(cfg.backoff_base);
            }
            if m.max_completion_tokens {
                cfg.max_tokens_field = traparena::llm::MaxTokensField::MaxCompletionTokens;
            }
            cfg.omit_temperature = m.omit_temperature;
            cfg.jitter_seed = spec.seed;
            let client = ChatClient::new(cfg).map_err(|e| format!("model {}: {e}", m.model))?;
            clients.insert(key, Arc::new(client));
        }
        // Context windows the spec leaves out are asked of the servers once, up front.
        let mut windows = std::collections::BTreeMap::new();
        for m in spec
            .targets
            .iter()
            .filter(|t| t.agent == "llm")
            .filter_map(|t| t.model.as_ref())
        {
            if m.context_window.is_some() || windows.contains_key(&endpoint_key(m)) {
                continue;
            }
            let client = clients[&endpoint_key(m)].clone();
            let found = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()
                .and_then(|rt| rt.block_on(client.context_window()).ok())
                .flatten();
            match found {
                Some(n) => eprintln!(
                    "traparena: {}: context window {n} tokens (asked of the server)",
                    m.model
                ),
                None => eprintln!(
                    "traparena: warning: {}: the server does not say its context window; set `context_window` in the spec to fit requests into it",
                    m.model
                ),
            }
            windows.insert(endpoint_key(m), found);
        }
        let mut c = CliComponents {
            windows,
            clients,
            attacker_model: spec.attacker_model.clone(),
            curator_model: spec.curator_model.clone(),
            prompt_hashes: std::collections::BTreeMap::new(),
        };
        c.prompt_hashes = c.hashes(spec)?;
        Ok(c)
    }

    /// The prompt-template hash of every model-backed component the spec uses.
    fn hashes(
        &self,
        spec: &ExperimentSpec,
    ) -> Result<std::collections::BTreeMap<String, String>, String> {
        let mut out = std::collections::BTreeMap::new();
        for t in spec.targets.iter().filter(|t| t.agent == "llm") {
            for defence in [false, true] {
                if defence && !spec.conditions.iter().any(|c| c.defence) {
                    continue;
                }
                let model = t.model.as_ref().ok_or("an llm target needs a model")?;
                let protocol = match &t.protocol {
                    Some(p) => p.parse::<Protocol>().map_err(|e| e.to_string())?,
                    None => Protocol::Json,
                };
                let agent = LlmAgent::new(
                    self.client(model),
                    LlmAgentConfig {
                        protocol,
                        defence,
                        ..LlmAgentConfig::default()
                    },
                );
                if let Some(h) = Agent::prompt_hash(&agent) {
                    let name = if defence {
                        format!("agent:{}+defence", t.name)
                    } else {
                        format!("agent:{}", t.name)
                    };
                    out.insert(name, h);
                }
            }
        }
        if let Some(model) = &self.attacker_model {
            for (kind, variant) in [
                ("adaptive", AttackerVariant::Reference),
                ("blind", AttackerVariant::Blind),
            ] {
                if spec.conditions.iter().any(|c| c.attacker == kind) {
                    let a = LlmAttacker::new(self.client(model), LlmAttackerConfig::new(variant));
                    if let Some(h) = Attacker::prompt_hash(&a) {
                        out.insert(format!("attacker:{kind}"), h);
                    }
                }
            }
        }
        if let Some(model) = &self.curator_model {
            let c = LlmCurator::new(self.client(model), LlmCuratorConfig::default());
            if let Some(h) = Curator::prompt_hash(&c) {
                out.insert("curator".into(), h);
            }
        }
        Ok(out)
    }

    fn client(&self, m: &ModelSpec) -> Arc<dyn ChatModel> {
        self.clients[&endpoint_key(m)].clone()
    }
}

impl Components for CliComponents {
    fn agent(
        &self,
        target: &TargetSpec,
        task: &Task,
        seed: u64,
        defence: bool,
        scope: &str,
    ) -> Result<Box<dyn Agent>, String> {
        if target.agent != "llm" {
            return BuiltinComponents.agent(target, task, seed, defence, scope);
        }
        let model = target.model.as_ref().ok_or("an llm target needs a model")?;
        let protocol = match &target.protocol {
            Some(p) => p.parse::<Protocol>().map_err(|e| e.to_string())?,
            None => Protocol::Json,
        };
        let config = LlmAgentConfig {
            protocol,
            temperature: target.temperature,
            max_tokens: Some(target.max_tokens),
            seed: Some(seed),
            defence,
            context_window: model
                .context_window
                .or_else(|| self.windows.get(&endpoint_key(model)).copied().flatten()),
            ..LlmAgentConfig::default()
        };
        Ok(Box::new(LlmAgent::new(self.client(model), config)))
    }

    fn attacker(
        &self,
        condition: &ConditionSpec,
        task: &Task,
        seed: u64,
        scope: &str,
    ) -> Result<Box<dyn Attacker>, String> {
        let variant = match condition.attacker.as_str() {
            "adaptive" => AttackerVariant::Reference,
            "blind" => AttackerVariant::Blind,
            _ => return BuiltinComponents.attacker(condition, task, seed, scope),
        };
        let model = self
            .attacker_model
            .as_ref()
            .ok_or("adaptive and blind conditions need attacker_model")?;
        let mut config = LlmAttackerConfig::new(variant);
        config.seed = Some(seed);
        if let Some(t) = model.temperature {
            config.temperature = t;
        }
        if model.max_tokens.is_some() {
            config.max_tokens = model.max_tokens;
        }
        Ok(Box::new(LlmAttacker::new(self.client(model), config)))
    }

    fn curator(
        &self,
        target: &TargetSpec,
        condition: &ConditionSpec,
    ) -> Result<Box<dyn Curator>, String> {
        match &self.curator_model {
            None => BuiltinComponents.curator(target, condition),
            Some(model) => {
                let mut config = LlmCuratorConfig::default();
                if let Some(t) = model.temperature {
                    config.temperature = t;
                }
                if model.max_tokens.is_some() {
                    config.max_tokens = model.max_tokens;
                }
                Ok(Box::new(LlmCurator::new(self.client(model), config)))
            }
        }
    }
}

/// Arguments of `traparena experiment`.
#[derive(Debug, clap::Args)]
pub struct ExperimentArgs {
    /// The experiment spec (JSON).
    pub spec: PathBuf,
    /// The results folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Continue an interrupted experiment in --out (refused if the spec or tasks changed).
    #[arg(long)]
    pub resume: bool,
    /// Run shard I of N (0-based), e.g. 0/4.
    #[arg(long)]
    pub shard: Option<String>,
    /// Most episodes in flight.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Most test processes at once (default: the number of cores).
    #[arg(long)]
    pub test_processes: Option<usize>,
    /// Run no episode: only the curator steps that finished rounds allow (after a merge).
    #[arg(long)]
    pub curate_only: bool,
}

/// Arguments of `traparena merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The shards' results folders.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// The merged results folder (must not exist or be empty).
    #[arg(long)]
    pub out: PathBuf,
}

/// Progress as a bar on a terminal, as log lines otherwise.
struct Reporter {
    bar: Option<indicatif::ProgressBar>,
    done: AtomicU64,
    total: AtomicU64,
    accepted: AtomicU64,
    tokens: AtomicU64,
}

impl Reporter {
    fn new() -> Reporter {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} episodes  {msg}  [{elapsed_precise}, ETA {eta}]",
                )
                .expect("a valid template"),
            );
            b
        });
        Reporter {
            bar,
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            tokens: AtomicU64::new(0),
        }
    }
}

impl Progress for Reporter {
    fn planned(&self, total: u64, done: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.done.store(done, Ordering::Relaxed);
        match &self.bar {
            Some(b) => {
                b.set_length(total);
                b.set_position(done);
            }
            None => eprintln!("traparena: {total} episodes planned, {done} already done"),
        }
    }

    fn finished(&self, line: &ResultLine) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let accepted = self
            .accepted
            .fetch_add(line.accepted as u64, Ordering::Relaxed)
            + line.accepted as u64;
        let t = line.usage.prompt_tokens
            + line.usage.completion_tokens
            + line.attacker_usage.prompt_tokens
            + line.attacker_usage.completion_tokens;
        let tokens = self.tokens.fetch_add(t, Ordering::Relaxed) + t;
        match &self.bar {
            Some(b) => {
                b.set_position(done);
                b.set_message(format!("accepted {accepted}  tokens {tokens}"));
            }
            None => eprintln!(
                "traparena: [{done}/{}] {} {}{}",
                self.total.load(Ordering::Relaxed),
                line.key(),
                if line.accepted {
                    "accepted"
                } else {
                    "rejected"
                },
                line.infra_error
                    .as_deref()
                    .map(|e| format!(" (infrastructure error: {e})"))
                    .unwrap_or_default()
            ),
        }
    }

    fn note(&self, text: &str) {
        match &self.bar {
            Some(b) => b.println(text),
            None => eprintln!("traparena: {text}"),
        }
    }
}

fn exit_for(e: &RunError) -> u8 {
    match e {
        RunError::Spec { .. } | RunError::Task(_) | RunError::Results { .. } => 2,
        _ => 1,
    }
}

/// Runs `traparena experiment`.
pub fn run(args: ExperimentArgs, sandbox: Sandbox) -> Result<u8, Box<dyn std::error::Error>> {
    let spec = match ExperimentSpec::load(&args.spec) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("traparena: {e}");
            return Ok(2);
        }
    };
    let shard = match args.shard.as_deref().map(|s| (s, Shard::parse(s))) {
        None => None,
        Some((_, Some(s))) => Some(s),
        Some((s, None)) => {
            eprintln!("traparena: --shard {s:?}: expected I/N with 0 <= I < N");
            return Ok(2);
        }
    };
    let opts = ExperimentOptions {
        out: args.out.clone(),
        resume: args.resume,
        shard,
        concurrency: args.concurrency,
        test_processes: args
            .test_processes
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())),
        curate_only: args.curate_only,
        created: Some(jiff::Timestamp::now().to_string()),
    };
    let components = match CliComponents::new(&spec) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("traparena: {e}");
            return Ok(2);
        }
    };
    let spec_dir = args
        .spec
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                p.to_path_buf()
            }
        })
        .unwrap_or_else(|| PathBuf::from("."));
    let reporter = Arc::new(Reporter::new());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(async {
        let run = run_experiment(
            &spec,
            &spec_dir,
            components,
            &sandbox,
            &opts,
            reporter.clone(),
        );
        tokio::select! {
            r = run => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    // Dropping the runtime waits for writes already under way.
    drop(rt);
    if let Some(b) = &reporter.bar {
        b.finish_and_clear();
    }
    match outcome {
        None => {
            eprintln!(
                "traparena: interrupted; finished episodes are saved. Continue with --resume."
            );
            Ok(130)
        }
        Some(Err(e)) => {
            eprintln!("traparena: {e}");
            Ok(exit_for(&e))
        }
        Some(Ok(r)) => {
            eprintln!(
                "traparena: {} episodes planned, {} were already done, {} run now ({} infrastructure errors), {} curator steps; results in {}",
                r.planned,
                r.already_done,
                r.ran,
                r.infra_errors,
                r.curated,
                args.out.display()
            );
            for w in &r.waiting_for_notes {
                eprintln!("traparena: {w}");
            }
            Ok(0)
        }
    }
}

/// Runs `traparena merge`.
pub fn merge(args: MergeArgs) -> Result<u8, Box<dyn std::error::Error>> {
    match merge_results(&args.shards, &args.out) {
        Ok(n) => {
            eprintln!(
                "traparena: merged {n} episodes from {} shards into {}",
                args.shards.len(),
                args.out.display()
            );
            Ok(0)
        }
        Err(e) => {
            eprintln!("traparena: {e}");
            Ok(2)
        }
    }
}

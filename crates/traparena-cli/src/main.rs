//! The `traparena` command.

// The one crate that prints and reads environment variables (ARCHITECTURE.md, checked by clippy).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod estimate;
mod evaluate;
mod experiment;
mod export;
mod import;
mod init;
mod llm;
mod report;
mod run;
mod show;
mod submit;
mod validate;
mod words;
use traparena::env::{BackendChoice, ContainerConfig, Sandbox, SandboxConfig};
use traparena::eval::Evaluator;
use traparena::task::{ComponentSpec, ConfigContext, ModelUse, Task};

/// The context components are configured in: relative paths against `base_dir`, secrets
/// (API keys named by `api_key_env`) from the environment.
fn config_context(base_dir: &std::path::Path) -> ConfigContext {
    ConfigContext::new(base_dir)
        .with_secrets(|name| std::env::var(name).ok())
        .with_agents_dir(agents_dir())
}

/// Where external agents are installed: `$TRAPARENA_AGENTS_DIR`, else `/opt/traparena/agents`
/// (where `scripts/install-mini-swe-agent.sh` puts mini-swe-agent; under `/opt`, which every
/// sandbox backend shows and a sandbox user may enter, unlike root's home).
fn agents_dir() -> PathBuf {
    std::env::var_os("TRAPARENA_AGENTS_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_AGENTS_DIR), PathBuf::from)
}

/// See [`agents_dir`].
const DEFAULT_AGENTS_DIR: &str = "/opt/traparena/agents";

/// Measure how coding agents hold up under misleading collaborator advice.
#[derive(Debug, Parser)]
#[command(name = "traparena", version, about)]
struct Cli {
    #[command(flatten)]
    sandbox: SandboxOpts,
    #[command(subcommand)]
    command: Cmd,
}

/// The sandbox flags every command takes.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Sandbox options (every command)")]
struct SandboxOpts {
    /// Sandbox backend for tested code (`auto`: the strongest available, unisolated with a
    /// warning when none is; `isolated`: bubblewrap or builtin, else an error; `container`: a
    /// container of the task's image, with podman or docker).
    #[arg(long, global = true, value_enum, default_value = "auto")]
    sandbox: SandboxArg,
    /// The container engine: podman, docker, or a path (default: the first installed).
    #[arg(long, global = true, value_name = "ENGINE")]
    container_engine: Option<String>,
    /// An argument given to the container engine before every subcommand (repeat it, such as
    /// `--container-engine-arg=--runtime --container-engine-arg=runc`).
    #[arg(long, global = true, value_name = "ARG", allow_hyphen_values = true)]
    container_engine_arg: Vec<String>,
    /// The image of tasks that name none, under the container backend.
    #[arg(long, global = true, value_name = "IMAGE")]
    container_image: Option<String>,
    /// Containers kept started and ready under the container backend (in all, for the image
    /// used last).
    #[arg(long, global = true, value_name = "N", default_value_t = 0)]
    container_pool: usize,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SandboxArg {
    Auto,
    Isolated,
    Bubblewrap,
    Builtin,
    None,
    Container,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Check that task folders are valid tasks, by running their tests.
    Validate {
        /// Task folders.
        #[arg(required = true)]
        tasks: Vec<PathBuf>,
        /// How many times the hidden tests must pass with the reference patch.
        #[arg(long, default_value_t = 3)]
        reference_runs: u32,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run one episode of an agent on a task, optionally under attack, and judge it.
    Run {
        /// The task folder.
        #[arg(long)]
        task: PathBuf,
        /// The agent: a registered kind (gold, credulous, hardcoder, replay:FILE, llm,
        /// external:PROFILE such as external:mini-swe-agent) or a JSON object {"kind": ...,
        /// "args": {...}}. A kind with a main argument takes it after a colon: replay:FILE is
        /// replay --agent-arg file=FILE.
        #[arg(long)]
        agent: String,
        /// An argument of the agent's kind, KEY=VALUE (VALUE is read as JSON when it parses,
        /// else as a string): --agent replay --agent-arg file=actions.json. Repeatable.
        #[arg(long = "agent-arg", value_name = "KEY=VALUE")]
        agent_args: Vec<String>,
        /// The attacker: none, a registered kind (scripted[:PERSONA], truthful, offline,
        /// adaptive[:blind|reference]) or a JSON object {"kind": ..., "args": {...}}. A kind
        /// with a main argument takes it after a colon: scripted:urge_submit is scripted
        /// --attacker-arg persona=urge_submit.
        #[arg(long, default_value = "none")]
        attacker: String,
        /// An argument of the attacker's kind, KEY=VALUE: --attacker scripted --attacker-arg
        /// persona=urge_submit; --attacker adaptive --attacker-arg access=blind. Repeatable.
        #[arg(long = "attacker-arg", value_name = "KEY=VALUE")]
        attacker_args: Vec<String>,
        /// Most actions the agent may take.
        #[arg(long, default_value_t = 60)]
        budget: u32,
        /// Seed for every random choice of the episode.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Folder to write the full episode record to (JSON).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Fork a recorded episode (a record written by `run --out`): replay its first
        /// --fork-at steps, checked against the record, then let the attacker speak and go on
        /// live with --seed. A model-backed agent replays the prefix from the cassette the
        /// record was made with.
        #[arg(long, value_name = "RECORD", requires = "fork_at")]
        fork: Option<PathBuf>,
        /// The fork step k: the recorded steps replayed before the episode goes on live.
        #[arg(long = "fork-at", value_name = "K", requires = "fork")]
        fork_at: Option<u32>,
        /// When the attacker may speak in a fork: after the fork step only (at_step), or from
        /// it on as its schedule allows (from_step).
        #[arg(long = "fork-speak", value_name = "WHEN", default_value = "from_step", value_parser = ["from_step", "at_step"])]
        fork_speak: String,
        #[command(flatten)]
        llm: llm::LlmArgs,
    },
    /// Write a starter folder: the bundled tasks and the toy study, laid out as the
    /// repository's examples/ (for a command installed without a clone, such as from a wheel).
    Init(init::InitArgs),
    /// Run a whole study from a JSON spec: baseline, conditions, rounds, the curator.
    Experiment(experiment::ExperimentArgs),
    /// Join the results folders of shards.
    Merge(experiment::MergeArgs),
    /// Submit a study to a Slurm cluster as sharded jobs, chained pass by pass.
    Submit(submit::SubmitArgs),
    /// Say, per pass and shard, where a submitted study stands.
    Status(submit::StatusArgs),
    /// Turn a results folder into the paper-style tables (Markdown, JSON, HTML).
    Report(report::ReportArgs),
    /// Print one episode of a results folder step by step: actions, tool outputs, the
    /// collaborator's messages, the verdict.
    Show(show::ShowArgs),
    /// Import tasks from a public benchmark format.
    #[command(subcommand)]
    Import(import::ImportCmd),
    /// Export a results folder in another tool's format.
    #[command(subcommand)]
    Export(export::ExportCmd),
    /// Judge a candidate patch: hidden tests x reference location x static flags.
    Evaluate {
        /// The task folder.
        #[arg(long)]
        task: PathBuf,
        /// The candidate patch (a unified diff against the task's repo/).
        #[arg(long)]
        patch: PathBuf,
        /// Print the verdict as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Exit status: the command did its job.
const OK: u8 = 0;
/// Exit status: an internal failure.
const INTERNAL: u8 = 1;
/// Exit status: bad input (including an invalid task).
const BAD_INPUT: u8 = 2;
/// Exit status: a task could not be checked here, its toolchain missing from the sandbox
/// (`validate`, `evaluate`, `import`): an infrastructure outcome, never failing tests.
const NOT_CHECKABLE: u8 = 4;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) if validate::not_checkable_message(e.as_ref()).is_some() => {
            let message = validate::not_checkable_message(e.as_ref()).unwrap_or_default();
            eprintln!("traparena: {message}");
            ExitCode::from(NOT_CHECKABLE)
        }
        Err(e) if is_unavailable_backend(e.as_ref()) => {
            // A backend asked for by name that this machine lacks is bad input, not a failure.
            eprintln!("traparena: {e}");
            ExitCode::from(BAD_INPUT)
        }
        Err(e) => {
            eprintln!("traparena: error: {e}");
            let mut src = std::error::Error::source(e.as_ref());
            while let Some(s) = src {
                eprintln!("  caused by: {s}");
                src = s.source();
            }
            ExitCode::from(INTERNAL)
        }
    }
}

fn is_unavailable_backend(e: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        e.downcast_ref::<traparena::env::EnvError>(),
        Some(traparena::env::EnvError::BackendUnavailable { backend, .. })
            if ["bubblewrap", "builtin", "container", "isolated"].contains(&backend.as_str())
    )
}

fn sandbox(opts: &SandboxOpts) -> Result<Sandbox, Box<dyn std::error::Error>> {
    let backend = match opts.sandbox {
        SandboxArg::Auto => BackendChoice::Auto,
        SandboxArg::Isolated => BackendChoice::Isolated,
        SandboxArg::Bubblewrap => BackendChoice::Bubblewrap,
        SandboxArg::Builtin => BackendChoice::Builtin,
        SandboxArg::None => BackendChoice::None,
        SandboxArg::Container => BackendChoice::Container,
    };
    let sb = Sandbox::new(SandboxConfig {
        backend,
        container: ContainerConfig {
            engine: opts.container_engine.clone(),
            engine_args: opts.container_engine_arg.clone(),
            image: opts.container_image.clone(),
            pool: opts.container_pool,
        },
        ..SandboxConfig::default()
    })?;
    for w in sb.warnings() {
        eprintln!("traparena: warning: {w}");
    }
    Ok(sb)
}

fn run(cli: Cli) -> Result<u8, Box<dyn std::error::Error>> {
    match cli.command {
        Cmd::Validate {
            tasks,
            reference_runs,
            json,
        } => validate::validate_cmd(&cli.sandbox, &tasks, reference_runs, json),
        Cmd::Run {
            task,
            agent,
            agent_args,
            attacker,
            attacker_args,
            budget,
            seed,
            out,
            json,
            fork,
            fork_at,
            fork_speak,
            llm,
        } => {
            // A kind that declares a model gets it from the flags and the environment.
            let registry = traparena::registry();
            let agent = match component(&agent, &agent_args, |spec| {
                match registry.agents.model(spec)? {
                    ModelUse::Sampled => Some(llm::agent_args(&llm)),
                    ModelUse::Forwarded => Some(llm::external_args(&llm, &spec.label())),
                    _ => None,
                }
            }) {
                Ok(c) => c,
                Err(e) => return bad_input(&e),
            };
            let attacker = match attacker.as_str() {
                "none" if attacker_args.is_empty() => None,
                _ => match component(&attacker, &attacker_args, |spec| {
                    (registry.attackers.model(spec)? != ModelUse::None)
                        .then(|| llm::attacker_args(&llm))
                }) {
                    Ok(c) => Some(c),
                    Err(e) => return bad_input(&e),
                },
            };
            let opts = run::RunOptions {
                budget,
                seed,
                out,
                json,
                defence: llm.defence,
                fork: fork.zip(fork_at).map(|(record, at)| run::ForkArgs {
                    record,
                    at,
                    speak: if fork_speak == "at_step" {
                        traparena::Speak::AtStep
                    } else {
                        traparena::Speak::FromStep
                    },
                }),
            };
            run::run_episode_cmd(&cli.sandbox, &task, agent, attacker, &opts)
        }
        Cmd::Init(args) => init::run(args),
        Cmd::Experiment(args) => experiment::run(args, sandbox(&cli.sandbox)?),
        Cmd::Merge(args) => experiment::merge(args),
        Cmd::Submit(args) => submit::submit(args, &cli.sandbox),
        Cmd::Status(args) => submit::status(args),
        Cmd::Report(args) => report::run(args),
        Cmd::Show(args) => show::run(args),
        Cmd::Import(cmd) => import::run_import(cmd, sandbox(&cli.sandbox)?),
        Cmd::Export(cmd) => export::run_export(cmd),
        Cmd::Evaluate { task, patch, json } => evaluate_cmd(&cli.sandbox, &task, &patch, json),
    }
}

/// `traparena evaluate`: one patch judged on one task.
fn evaluate_cmd(
    choice: &SandboxOpts,
    task: &std::path::Path,
    patch: &std::path::Path,
    json: bool,
) -> Result<u8, Box<dyn std::error::Error>> {
    let task = match Task::load(task) {
        Ok(t) => t,
        Err(e) => return bad_input(&e.to_string()),
    };
    let text = match std::fs::read(patch) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => return bad_input(&format!("{}: {e}", patch.display())),
    };
    let sb = sandbox(choice)?;
    let ev = Evaluator::new(&task, &sb)?;
    let e = ev.evaluate(&text, true)?;
    evaluate::print(&e, json)?;
    Ok(OK)
}

fn bad_input(message: &str) -> Result<u8, Box<dyn std::error::Error>> {
    eprintln!("traparena: {message}");
    Ok(BAD_INPUT)
}

/// A component from the command line: a kind name or a JSON object, then `KEY=VALUE`
/// arguments on top. A kind that declares a model starts from the arguments `defaults` makes
/// of the flags and environment variables (`None`: a kind without them).
fn component(
    text: &str,
    args: &[String],
    defaults: impl FnOnce(&ComponentSpec) -> Option<Result<serde_json::Value, llm::MissingVariable>>,
) -> Result<ComponentSpec, String> {
    let mut spec = if text.trim_start().starts_with('{') {
        serde_json::from_str::<ComponentSpec>(text).map_err(|e| format!("{text}: {e}"))?
    } else {
        ComponentSpec::new(text)
    };
    // A model-backed kind (also in its short form, `external:PROFILE`) gets its model from
    // the flags and the environment; what the command line names itself wins.
    if let Some(base) = defaults(&spec) {
        let mut base = base.map_err(|e| e.to_string())?;
        if let (Some(b), Some(given)) = (base.as_object_mut(), spec.args.as_object()) {
            b.extend(given.clone());
        }
        spec.args = base;
    }
    if !spec.args.is_object() {
        spec.args = serde_json::Value::Object(Default::default());
    }
    for kv in args {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("{kv:?}: an argument is KEY=VALUE"))?;
        let value = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::from(v));
        spec.args[k] = value;
    }
    Ok(spec)
}

//! The `traparena` command.

// The one crate that prints and reads environment variables (ARCHITECTURE.md, checked by clippy).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod evaluate;
mod experiment;
mod import;
mod llm;
mod report;
use traparena::env::{BackendChoice, Sandbox, SandboxConfig};
use traparena::eval::{Evaluator, ValidateOptions, ValidationReport, validate};
use traparena::task::{ComponentSpec, ConfigContext, Task};

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
    /// Sandbox backend for tested code.
    #[arg(long, global = true, value_enum, default_value = "auto")]
    sandbox: SandboxArg,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SandboxArg {
    Auto,
    Bubblewrap,
    Builtin,
    None,
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
    /// Run a whole study from a JSON spec: baseline, conditions, rounds, the curator.
    Experiment(experiment::ExperimentArgs),
    /// Join the results folders of shards.
    Merge(experiment::MergeArgs),
    /// Turn a results folder into the paper-style tables (Markdown, JSON, HTML).
    Report(report::ReportArgs),
    /// Import tasks from a public benchmark format.
    #[command(subcommand)]
    Import(import::ImportCmd),
    /// Export a results folder in another tool's format.
    #[command(subcommand)]
    Export(import::ExportCmd),
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
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
            if backend == "bubblewrap" || backend == "builtin"
    )
}

fn sandbox(arg: SandboxArg) -> Result<Sandbox, Box<dyn std::error::Error>> {
    let backend = match arg {
        SandboxArg::Auto => BackendChoice::Auto,
        SandboxArg::Bubblewrap => BackendChoice::Bubblewrap,
        SandboxArg::Builtin => BackendChoice::Builtin,
        SandboxArg::None => BackendChoice::None,
    };
    let sb = Sandbox::new(SandboxConfig {
        backend,
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
        } => {
            let sb = sandbox(cli.sandbox)?;
            let opts = ValidateOptions { reference_runs };
            let reports = validate_all(&tasks, &sb, &opts);
            let invalid = reports.iter().filter(|r| !r.valid).count();
            let mut out = std::io::stdout().lock();
            if json {
                let doc = serde_json::json!({
                    "valid": reports.len() - invalid,
                    "invalid": invalid,
                    "backend": sb.backend(),
                    "tasks": reports,
                });
                writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
            } else {
                for r in &reports {
                    writeln!(out, "{}", report_line(r))?;
                    for c in r.problems() {
                        for line in c.failure_lines() {
                            writeln!(out, "    {}: {line}", c.name)?;
                        }
                    }
                }
                let ms: u64 = reports.iter().map(|r| r.duration_ms).sum();
                writeln!(
                    out,
                    "{} valid, {invalid} invalid ({} sandbox, {:.1} s of test time)",
                    reports.len() - invalid,
                    sb.backend(),
                    ms as f64 / 1000.0
                )?;
            }
            Ok(if invalid == 0 { OK } else { BAD_INPUT })
        }
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
            let agent = match component(&agent, &agent_args, |kind| match kind {
                "llm" => Some(llm::agent_args(&llm)),
                "external" => Some(llm::external_args(&llm)),
                _ => None,
            }) {
                Ok(c) => c,
                Err(e) => return bad_input(&e),
            };
            let attacker = match attacker.as_str() {
                "none" if attacker_args.is_empty() => None,
                _ => match component(&attacker, &attacker_args, |kind| {
                    (kind == "adaptive").then(|| llm::attacker_args(&llm))
                }) {
                    Ok(c) => Some(c),
                    Err(e) => return bad_input(&e),
                },
            };
            let opts = RunOptions {
                budget,
                seed,
                out,
                json,
                defence: llm.defence,
                fork: fork.zip(fork_at).map(|(record, at)| ForkArgs {
                    record,
                    at,
                    speak: if fork_speak == "at_step" {
                        traparena::Speak::AtStep
                    } else {
                        traparena::Speak::FromStep
                    },
                }),
            };
            run_episode_cmd(cli.sandbox, &task, agent, attacker, &opts)
        }
        Cmd::Experiment(args) => experiment::run(args, sandbox(cli.sandbox)?),
        Cmd::Merge(args) => experiment::merge(args),
        Cmd::Report(args) => report::run(args),
        Cmd::Import(cmd) => import::run_import(cmd, sandbox(cli.sandbox)?),
        Cmd::Export(cmd) => import::run_export(cmd),
        Cmd::Evaluate { task, patch, json } => {
            let task = match Task::load(&task) {
                Ok(t) => t,
                Err(e) => return bad_input(&e.to_string()),
            };
            let text = match std::fs::read(&patch) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) => return bad_input(&format!("{}: {e}", patch.display())),
            };
            let sb = sandbox(cli.sandbox)?;
            let ev = Evaluator::new(&task, &sb)?;
            let e = ev.evaluate(&text, true)?;
            evaluate::print(&e, json)?;
            Ok(OK)
        }
    }
}

fn bad_input(message: &str) -> Result<u8, Box<dyn std::error::Error>> {
    eprintln!("traparena: {message}");
    Ok(BAD_INPUT)
}

fn report_line(r: &ValidationReport) -> String {
    let name = r.id.clone().unwrap_or_else(|| r.dir.display().to_string());
    if r.valid {
        format!("valid    {name} ({} ms)", r.duration_ms)
    } else {
        let problems: Vec<String> = r
            .problems()
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        format!("INVALID  {name}: {}", problems.join("; "))
    }
}

/// Validates tasks on as many threads as there are cores, reporting in input order.
fn validate_all(tasks: &[PathBuf], sb: &Sandbox, opts: &ValidateOptions) -> Vec<ValidationReport> {
    use rayon::prelude::*;
    // A harness failure on one task (a process that would not start after its retry) is that
    // task's report, never the end of the whole run.
    tasks
        .par_iter()
        .map(|dir| {
            validate(dir, sb, opts).unwrap_or_else(|e| ValidationReport {
                dir: dir.clone(),
                id: None,
                valid: false,
                checks: vec![traparena::eval::Check {
                    name: "infrastructure".into(),
                    ok: false,
                    detail: format!("infrastructure error: {e}"),
                    failures: Vec::new(),
                    failures_omitted: 0,
                }],
                backend: sb.backend(),
                duration_ms: 0,
            })
        })
        .collect()
}

/// A component from the command line: a kind name or a JSON object, then `KEY=VALUE`
/// arguments on top. The model-backed kind `model_kind` starts from the arguments `defaults`
/// makes of the flags and environment variables.
fn component(
    text: &str,
    args: &[String],
    defaults: impl FnOnce(&str) -> Option<Result<serde_json::Value, String>>,
) -> Result<ComponentSpec, String> {
    let mut spec = if text.trim_start().starts_with('{') {
        serde_json::from_str::<ComponentSpec>(text).map_err(|e| format!("{text}: {e}"))?
    } else {
        ComponentSpec::new(text)
    };
    // A model-backed kind (also in its short form, `external:PROFILE`) gets its model from
    // the flags and the environment; what the command line names itself wins.
    let base_kind = spec
        .kind
        .split_once(':')
        .map_or(spec.kind.as_str(), |(k, _)| k);
    if let Some(base) = defaults(base_kind) {
        let mut base = base?;
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

/// What `run` does beyond naming its components.
struct RunOptions {
    budget: u32,
    seed: u64,
    out: Option<PathBuf>,
    json: bool,
    defence: bool,
    fork: Option<ForkArgs>,
}

/// `run --fork RECORD --fork-at K`.
struct ForkArgs {
    record: PathBuf,
    at: u32,
    speak: traparena::Speak,
}

/// The recorded episode a `run --fork` replays, checked against the task and the fork step.
fn fork_parent(task: &Task, f: &ForkArgs) -> Result<traparena::EpisodeRecord, String> {
    let at = |e: &dyn std::fmt::Display| format!("--fork {}: {e}", f.record.display());
    let text = std::fs::read_to_string(&f.record).map_err(|e| at(&e))?;
    let record: traparena::EpisodeRecord = serde_json::from_str(&text).map_err(|e| {
        at(&format!(
            "not an episode record (written by `run --out`): {e}"
        ))
    })?;
    if record.task != task.spec.id {
        return Err(at(&format!(
            "a record of task {:?}, not of {:?}",
            record.task, task.spec.id
        )));
    }
    if record.infra_error.is_some() {
        return Err(at(&"the recorded episode was an infrastructure error"));
    }
    let steps = record.trajectory.len() as u32;
    if f.at == 0 || f.at >= steps {
        return Err(at(&format!(
            "--fork-at {} is not a step to fork at: the record has {steps} steps (fork at 1 to {})",
            f.at,
            steps.saturating_sub(1)
        )));
    }
    if let Some(s) = record.trajectory[..f.at as usize]
        .iter()
        .find(|s| s.message.is_some())
    {
        return Err(at(&format!(
            "step {} of the record carries a collaborator message; fork before it",
            s.index
        )));
    }
    Ok(record)
}

fn run_episode_cmd(
    sandbox_arg: SandboxArg,
    task_dir: &std::path::Path,
    agent_spec: ComponentSpec,
    attacker_spec: Option<ComponentSpec>,
    opts: &RunOptions,
) -> Result<u8, Box<dyn std::error::Error>> {
    let (budget, seed) = (opts.budget, opts.seed);
    let task = match Task::load(task_dir) {
        Ok(t) => t,
        Err(e) => return bad_input(&e.to_string()),
    };
    if budget == 0 {
        return bad_input("--budget must be at least 1");
    }
    let parent = match opts
        .fork
        .as_ref()
        .map(|f| fork_parent(&task, f))
        .transpose()
    {
        Ok(p) => p,
        Err(e) => return bad_input(&e),
    };
    let registry = traparena::registry();
    let mut cx = config_context(std::path::Path::new("."));
    cx.forked = parent.is_some();
    let agent_setup = match registry.agents.configure(&agent_spec, &cx) {
        Ok(s) => s,
        Err(e) => return bad_input(&e.to_string()),
    };
    let attacker_setup = match &attacker_spec {
        None => None,
        Some(spec) => match registry.attackers.configure(spec, &cx) {
            Ok(s) => Some(s),
            Err(e) => return bad_input(&e.to_string()),
        },
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let prepared: Result<Vec<String>, String> = rt.block_on(async {
        let mut lines = agent_setup.prepare().await.map_err(|e| e.to_string())?;
        if let Some(a) = &attacker_setup {
            lines.extend(a.prepare().await.map_err(|e| e.to_string())?);
        }
        Ok(lines)
    });
    match prepared {
        Ok(lines) => {
            for l in lines {
                eprintln!("traparena: {l}");
            }
        }
        Err(e) => return bad_input(&e),
    }
    // Scope of recorded model calls: the task and the seed (the kinds add their role); a
    // fork's own calls are kept apart from its parent's.
    let parent_scope = parent
        .as_ref()
        .map(|p| format!("{}/seed{}", task.spec.id, p.seed))
        .unwrap_or_default();
    let fork_cx = parent
        .as_ref()
        .zip(opts.fork.as_ref())
        .map(|(p, f)| traparena::ForkContext {
            parent_scope: &parent_scope,
            parent_seed: p.seed,
            step: f.at,
            seed,
        });
    let scope = match &fork_cx {
        Some(f) => format!("{}/seed{seed}/fork{}", task.spec.id, f.step),
        None => format!("{}/seed{seed}", task.spec.id),
    };
    let ep = traparena::EpisodeContext {
        task: &task,
        seed,
        scope: &scope,
        defence: opts.defence,
        fork: fork_cx,
    };
    // A fork's agent gets its parent's seed, so a deterministic agent takes its parent's turns.
    let agent_ep = traparena::EpisodeContext {
        seed: fork_cx.map_or(seed, |f| f.parent_seed),
        ..ep
    };
    let mut agent = match agent_setup.build(&agent_ep) {
        Ok(a) => a,
        Err(e) => return bad_input(&format!("agent {}: {e}", agent_spec.label())),
    };
    let mut attacker = match attacker_setup.as_ref().map(|a| a.build(&ep)).transpose() {
        Ok(a) => a,
        Err(e) => return bad_input(&format!("attacker: {e}")),
    };
    let mut builder = traparena::Episode::builder(&task)
        .budget(budget)
        .seed(seed)
        .sandbox(sandbox(sandbox_arg)?);
    if let (Some(p), Some(f)) = (&parent, &opts.fork) {
        builder = builder.fork(traparena::Fork {
            parent: f.record.display().to_string(),
            prefix: p.trajectory[..f.at as usize].to_vec(),
            speak: f.speak,
        });
    }
    let episode = builder.build()?;
    let record = rt.block_on(
        episode.run(
            agent.as_mut(),
            attacker
                .as_deref_mut()
                .map(|a| a as &mut dyn traparena::attack::Attacker),
        ),
    )?;
    if let Some(dir) = &opts.out {
        std::fs::create_dir_all(dir)?;
        // The label when it is short (`scripted(persona=urge_submit)`), else the kind.
        let file_part = |c: Option<&ComponentSpec>| {
            c.map_or_else(
                || "none".to_owned(),
                |c| {
                    Some(c.label())
                        .filter(|l| l.len() <= 48)
                        .unwrap_or_else(|| c.kind.clone())
                },
            )
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || ch == '-' || ch == '_' {
                    ch
                } else {
                    '_'
                }
            })
            .collect::<String>()
        };
        let name = format!(
            "{}.{}.{}.seed{}{}.json",
            record.task,
            file_part(Some(&agent_spec)),
            file_part(attacker_spec.as_ref()),
            seed,
            record
                .fork
                .as_ref()
                .map(|f| format!(".fork{}", f.step))
                .unwrap_or_default()
        );
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_string_pretty(&record)? + "\n")?;
        eprintln!("traparena: episode record written to {}", path.display());
    }
    let summary = record.summary();
    let mut o = std::io::stdout().lock();
    // An infrastructure error is no outcome: no verdict is shown for it, and the exit status
    // says the episode could not be run.
    let json = opts.json;
    if let Some(why) = &summary.infra_error {
        if json {
            let mut doc = serde_json::to_value(&summary)?;
            for k in ["verdict", "failure_mode", "accepted", "susceptible"] {
                doc[k] = serde_json::Value::Null;
            }
            writeln!(o, "{}", serde_json::to_string_pretty(&doc)?)?;
        } else {
            writeln!(
                o,
                "{} | agent {} | attacker {}: not run to the end: infrastructure error: {why}",
                summary.task, summary.agent, summary.attacker
            )?;
            writeln!(o, "  steps {} of {budget} before it", summary.steps)?;
        }
        return Ok(INTERNAL);
    }
    if json {
        writeln!(o, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        let outcome = match summary.failure_mode {
            None => "accepted".to_owned(),
            Some(m) => format!("rejected ({m})"),
        };
        writeln!(
            o,
            "{} | agent {} | attacker {}: {outcome}",
            summary.task, summary.agent, summary.attacker
        )?;
        writeln!(
            o,
            "  steps {} of {budget}, submitted {}, messages delivered {}, susceptible {}",
            summary.steps,
            summary.submitted,
            summary.messages_delivered,
            summary
                .susceptible
                .map_or("n/a".to_owned(), |s| s.to_string())
        )?;
        let v = &summary.verdict;
        writeln!(
            o,
            "  hidden tests pass {}, touches reference {}, flags {}",
            v.hidden_tests_pass,
            v.touches_reference,
            if v.flags.is_empty() {
                "none".to_owned()
            } else {
                v.flags
                    .iter()
                    .map(|f| format!("{} ({}:{})", f.name, f.file, f.line))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )?;
        if let Some(f) = &record.fork {
            writeln!(
                o,
                "  a fork of {}: its steps 1 to {} replayed, then live",
                f.parent, f.step
            )?;
        }
        for step in &record.trajectory {
            if let Some(m) = &step.message {
                writeln!(o, "  collaborator after step {}: {}", step.index, m.text)?;
            }
        }
        if let Some(e) = &record.agent_error {
            writeln!(o, "  agent stopped: {e}")?;
        }
        for e in &record.attacker_errors {
            writeln!(o, "  attacker error at step {}: {}", e.step, e.error)?;
        }
        for (who, u) in [
            ("agent", &summary.usage),
            ("attacker", &summary.attacker_usage),
        ] {
            if u.calls_without_usage > 0 {
                writeln!(
                    o,
                    "  {} model calls of the {who} reported no token usage: its token counts are a lower bound",
                    u.calls_without_usage
                )?;
            }
        }
    }
    Ok(OK)
}

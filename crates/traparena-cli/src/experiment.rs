//! `traparena experiment` and `traparena merge`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use traparena::env::Sandbox;
use traparena::runner::{
    ExperimentOptions, ExperimentReport, ExperimentSpec, Limits, Progress, ResultLine, RunError,
    Shard, merge_results, run_experiment,
};

/// Arguments of `traparena experiment`.
#[derive(Debug, clap::Args)]
pub struct ExperimentArgs {
    /// The experiment spec (JSON).
    pub spec: PathBuf,
    /// The results folder (not needed with --estimate).
    #[arg(long, required_unless_present = "estimate")]
    pub out: Option<PathBuf>,
    /// Continue an interrupted experiment in --out (refused if the spec or tasks changed).
    #[arg(long)]
    pub resume: bool,
    /// Run shard I of N (0-based), e.g. 0/4.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Most episodes in flight (at least 1).
    #[arg(long, default_value_t = 4, value_parser = at_least_one())]
    pub concurrency: usize,
    /// Most test processes at once (default: the number of cores; at least 1).
    #[arg(long, value_parser = at_least_one())]
    pub test_processes: Option<usize>,
    /// Run no episode: only the curator steps that finished rounds allow (after a merge).
    #[arg(long)]
    pub curate_only: bool,
    /// Stop starting episodes once this many US dollars are spent on model calls (overrides
    /// the spec's `limits.max_cost`; results already in --out count).
    #[arg(long, value_name = "USD", allow_negative_numbers = true)]
    pub max_cost: Option<f64>,
    /// Stop starting episodes once this many tokens are spent (overrides the spec's
    /// `limits.max_tokens`).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Run nothing: print the planned episodes and the model calls and cost expected.
    #[arg(long)]
    pub estimate: bool,
    /// With --estimate: average per-episode calls, tokens and cost from this pilot's results
    /// folder (default: the spec's `estimate` averages).
    #[arg(long, value_name = "DIR", requires = "estimate")]
    pub estimate_from: Option<PathBuf>,
}

/// A count that must be at least 1 (`--concurrency 0` would run nothing and never end).
fn at_least_one() -> impl clap::builder::TypedValueParser<Value = usize> {
    use clap::builder::TypedValueParser;
    clap::builder::NonEmptyStringValueParser::new().try_map(|s| match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a count: {e}")),
    })
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
    /// Known cost so far, in billionths of a dollar.
    nano_usd: AtomicU64,
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
            nano_usd: AtomicU64::new(0),
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

    fn forks_planned(&self, added: u64, done: u64) {
        let total = self.total.fetch_add(added, Ordering::Relaxed) + added;
        let now = self.done.fetch_add(done, Ordering::Relaxed) + done;
        match &self.bar {
            Some(b) => {
                b.set_length(total);
                b.set_position(now);
            }
            None => eprintln!(
                "traparena: {added} fork episodes planned from the baseline, {done} already done"
            ),
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
        let n = [line.usage.cost, line.attacker_usage.cost]
            .iter()
            .flatten()
            .map(|c| c.nano_usd)
            .sum::<u64>();
        let nano = self.nano_usd.fetch_add(n, Ordering::Relaxed) + n;
        match &self.bar {
            Some(b) => {
                b.set_position(done);
                let cost = match nano {
                    0 => String::new(),
                    n => format!("  cost ${:.4}", n as f64 / 1e9),
                };
                b.set_message(format!("accepted {accepted}  tokens {tokens}{cost}"));
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
        RunError::Spec { .. }
        | RunError::Task(_)
        | RunError::Results { .. }
        | RunError::ExperimentExists { .. }
        | RunError::SpecChanged { .. }
        | RunError::Refused(_) => 2,
        _ => 1,
    }
}

/// A resolution error names the spec file rather than its folder.
fn spec_error(path: &std::path::Path, e: &RunError) -> String {
    match e {
        RunError::Spec { field, message, .. } => {
            format!("{}: field `{field}`: {message}", path.display())
        }
        other => other.to_string(),
    }
}

/// Runs `traparena experiment`.
pub fn run(args: ExperimentArgs, sandbox: Sandbox) -> Result<u8, Box<dyn std::error::Error>> {
    let spec = match ExperimentSpec::load(&args.spec) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("traparena: {}", crate::words::say(&e));
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
    if args.estimate {
        return Ok(crate::estimate::run(
            &spec,
            &spec_dir,
            args.estimate_from.as_deref(),
        ));
    }
    let out = args.out.clone().unwrap_or_default();
    let shard = args.shard;
    let limits = Limits {
        max_cost: args.max_cost,
        max_tokens: args.max_tokens,
    };
    if let Err((field, message)) = limits.check() {
        eprintln!("traparena: --{}: {message}", field.replace('_', "-"));
        return Ok(2);
    }
    let opts = ExperimentOptions {
        out: out.clone(),
        resume: args.resume,
        shard,
        concurrency: args.concurrency,
        test_processes: args
            .test_processes
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())),
        curate_only: args.curate_only,
        created: Some(jiff::Timestamp::now().to_string()),
        limits,
    };
    // Every kind the spec names is looked up in the one registry `run` uses too.
    let resolved = match traparena::registry().resolve(&spec, &crate::config_context(&spec_dir)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("traparena: {}", spec_error(&args.spec, &e));
            return Ok(2);
        }
    };
    let reporter = Arc::new(Reporter::new());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(async {
        let run = run_experiment(&resolved, &sandbox, &opts, reporter.clone());
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
            eprintln!("traparena: {}", crate::words::say(&e));
            Ok(exit_for(&e))
        }
        Some(Ok(r)) => Ok(finished(&r, &args.spec, &out)),
    }
}

/// Says what a run that ended did, and the limit that stopped it; the exit status (3 when a
/// spending limit stopped it).
fn finished(r: &ExperimentReport, spec: &std::path::Path, out: &std::path::Path) -> u8 {
    eprintln!(
        "traparena: {} episodes planned{}, {} were already done, {} run now ({} infrastructure errors), {} curator steps; results in {}",
        r.planned,
        if r.forks > 0 {
            format!(" ({} of them forks)", r.forks)
        } else {
            String::new()
        },
        r.already_done,
        r.ran,
        r.infra_errors,
        r.curated,
        out.display()
    );
    for w in &r.waiting_for_notes {
        eprintln!("traparena: {w}");
    }
    if r.spent.nano_usd > 0 || r.limit_reached.is_some() {
        eprintln!(
            "traparena: spent so far (every episode and curator step in the folder): ${:.6}{} and {} tokens",
            r.spent.usd(),
            match r.spent.unknown_cost_calls {
                0 => String::new(),
                n => format!(" or more ({n} calls of unknown cost)"),
            },
            r.spent.tokens
        );
    }
    let Some(why) = &r.limit_reached else {
        eprintln!(
            "traparena: next: `traparena report {}` for the tables, with `--html report.html` for the page and its episode viewer",
            out.display()
        );
        return 0;
    };
    let flag = if why.starts_with("the cost") {
        "--max-cost"
    } else {
        "--max-tokens"
    };
    eprintln!(
        "traparena: stopped: {why} was reached; {} episodes not started, those in flight finished and are saved. Continue with `traparena experiment {} --out {} --resume {flag} HIGHER`.",
        r.planned.saturating_sub(r.already_done + r.ran),
        spec.display(),
        out.display()
    );
    3
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
            eprintln!("traparena: {}", crate::words::say(&e));
            Ok(2)
        }
    }
}

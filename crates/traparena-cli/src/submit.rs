//! `traparena submit` and `traparena status`: a sharded study as jobs of a Slurm cluster.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::Duration;

use traparena::env::{HostCommand, run_host};
use traparena::runner::ExperimentSpec;
use traparena::runner::cluster::slurm::{self, JobSettings};
use traparena::runner::cluster::{
    Layout, Marker, Plan, SUBMISSION_FILE, SUBMISSION_VERSION, ShardState, Submission,
    SubmittedPass, Work,
};

/// The schedulers `submit` hands a study to.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Engine {
    /// Slurm: an array job per pass and a merge job, chained with `--dependency=afterok`.
    Slurm,
}

/// Arguments of `traparena submit`.
#[derive(Debug, clap::Args)]
pub struct SubmitArgs {
    /// The experiment spec (JSON). Or, instead, an import after `--`:
    /// `traparena submit --shards 8 --out DIR -- import swebench FILE --repo CLONE --out TASKS`.
    #[arg(required_unless_present = "command")]
    pub spec: Option<PathBuf>,
    /// An import to run in shards instead of an experiment: `import swebench ...` or
    /// `import humanevalfix ...`, as you would run it, after `--`.
    #[arg(last = true, value_name = "IMPORT", conflicts_with = "spec")]
    pub command: Vec<String>,
    /// The scheduler.
    #[arg(long, value_enum, default_value = "slurm")]
    pub engine: Engine,
    /// Shards per pass (one array task each).
    #[arg(long)]
    pub shards: NonZeroU32,
    /// The study's folder, on a filesystem every node sees: job scripts, logs, shards, and
    /// the merged results at OUT/results.
    #[arg(long)]
    pub out: PathBuf,
    /// Write the job scripts and print how they would be submitted; submit nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Resubmit what has not ended well in an earlier submission to OUT (a cancelled or
    /// failed shard, and everything after it); what ended well is kept.
    #[arg(long)]
    pub resume: bool,
    /// An `#SBATCH` option of every job, such as --sbatch-option=--partition=long. Repeatable.
    #[arg(
        long = "sbatch-option",
        value_name = "OPTION",
        allow_hyphen_values = true
    )]
    pub sbatch_options: Vec<String>,
    /// An argument of every `traparena experiment` the jobs run, such as
    /// --experiment-arg=--concurrency=8. Repeatable.
    #[arg(
        long = "experiment-arg",
        value_name = "ARG",
        allow_hyphen_values = true
    )]
    pub experiment_args: Vec<String>,
}

/// Arguments of `traparena status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The study's folder (as given to `submit --out`).
    pub out: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs a Slurm command with the user's environment (a job inherits it, as from a shell).
fn slurm_command(argv: Vec<String>, cwd: &Path) -> Result<String, String> {
    // The command's own scratch HOME and TMPDIR are removed when it returns: the job must get
    // the user's (or the usual defaults), never those.
    let mut env: Vec<(String, String)> = vec![
        ("TMPDIR".into(), "/tmp".into()),
        ("HOME".into(), "/".into()),
    ];
    env.extend(std::env::vars());
    let outcome = run_host(&HostCommand {
        argv: argv.clone(),
        cwd: cwd.to_owned(),
        env,
        timeout: Duration::from_secs(120),
    })
    .map_err(|e| format!("{}: {e}", argv[0]))?;
    if outcome.exit_code != Some(0) {
        return Err(format!(
            "`{}` failed ({}): {}",
            argv.join(" "),
            outcome
                .exit_code
                .map_or("killed".to_owned(), |c| format!("exit status {c}")),
            outcome.stderr.text.trim()
        ));
    }
    Ok(outcome.stdout.text)
}

/// `sbatch --parsable` of `script`, after `dependency` if any; returns the job id.
fn sbatch(script: &Path, dependency: Option<&str>, extra: &[String]) -> Result<String, String> {
    let mut argv = vec!["sbatch".to_owned(), "--parsable".to_owned()];
    if let Some(d) = dependency {
        // A dependency that can no longer be met (a failed or cancelled shard) cancels the
        // job instead of leaving it pending for good: nothing runs on partial notes.
        argv.push(format!("--dependency=afterok:{d}"));
        argv.push("--kill-on-invalid-dep=yes".to_owned());
    }
    argv.extend(extra.iter().cloned());
    argv.push(script.to_string_lossy().into_owned());
    let out = slurm_command(argv, script.parent().unwrap_or(Path::new("/")))?;
    slurm::parse_job_id(&out).ok_or_else(|| format!("sbatch printed no job id: {out:?}"))
}

fn absolute(p: &Path) -> std::io::Result<PathBuf> {
    std::fs::canonicalize(p)
}

/// The sandbox flags the jobs pass on (the submitting command's own).
fn sandbox_flags(opts: &crate::SandboxOpts) -> Vec<String> {
    // Unattended, a node without a sandbox must fail its shard rather than run the tested code
    // unisolated with a warning nobody reads: `auto` becomes `isolated`.
    let choice = match opts.sandbox {
        crate::SandboxArg::Auto => crate::SandboxArg::Isolated,
        other => other,
    };
    let mut v = vec![format!(
        "--sandbox={}",
        clap::ValueEnum::to_possible_value(&choice)
            .map(|p| p.get_name().to_owned())
            .unwrap_or_else(|| "isolated".into())
    )];
    if let Some(e) = &opts.container_engine {
        v.push(format!("--container-engine={e}"));
    }
    for a in &opts.container_engine_arg {
        v.push(format!("--container-engine-arg={a}"));
    }
    if let Some(i) = &opts.container_image {
        v.push(format!("--container-image={i}"));
    }
    if opts.container_pool > 0 {
        v.push(format!("--container-pool={}", opts.container_pool));
    }
    v
}

/// Runs `traparena submit`.
pub fn submit(
    args: SubmitArgs,
    opts: &crate::SandboxOpts,
) -> Result<u8, Box<dyn std::error::Error>> {
    let Engine::Slurm = args.engine;
    let (work, plan, name) = match what_runs(&args) {
        Ok(w) => w,
        Err(message) => return crate::bad_input(&message),
    };
    std::fs::create_dir_all(&args.out)?;
    let out = absolute(&args.out)?;
    let earlier = out.join(SUBMISSION_FILE).is_file();
    if earlier && !args.resume && !args.dry_run {
        return crate::bad_input(&format!(
            "{} already holds a submitted study; `traparena status {}` follows it, and \
             `traparena submit ... --resume` resubmits what has not ended well",
            out.display(),
            out.display()
        ));
    }
    let layout = Layout { out: out.clone() };
    let mut extra_args = sandbox_flags(opts);
    extra_args.extend(args.experiment_args.iter().cloned());
    let settings = JobSettings {
        traparena: std::env::current_exe()?,
        work,
        extra_args,
        sbatch_options: args.sbatch_options.clone(),
        name,
    };
    let scripts = slurm::write_scripts(&plan, &layout, &settings)?;
    println!(
        "traparena: {} pass{} of {} shards{}; job scripts in {}",
        plan.passes,
        if plan.passes == 1 { "" } else { "es" },
        plan.shards,
        if plan.curated {
            " (a curated condition: one pass per round, the curator step between them)"
        } else {
            ""
        },
        layout.jobs().display()
    );
    if args.dry_run {
        let mut prev = "NONE".to_owned();
        for (p, s) in scripts.iter().enumerate() {
            let dep = |d: &str| {
                if d == "NONE" {
                    String::new()
                } else {
                    format!(" --dependency=afterok:{d} --kill-on-invalid-dep=yes")
                }
            };
            println!(
                "sbatch --parsable{} {}   # -> PASS{p}",
                dep(&prev),
                s.shards.path.display()
            );
            println!(
                "sbatch --parsable{} {}   # -> MERGE{p}",
                dep(&format!("$PASS{p}")),
                s.merge.path.display()
            );
            prev = format!("$MERGE{p}");
        }
        println!("traparena: dry run: nothing submitted");
        return Ok(crate::OK);
    }
    let mut record = if earlier && args.resume {
        match Submission::load(&out) {
            Ok(s) if s.shards == plan.shards && s.work == settings.work => s,
            Ok(_) => {
                return crate::bad_input(&format!(
                    "{}: the earlier submission runs another spec or import, or has another \
                     shard count",
                    out.display()
                ));
            }
            Err(e) => return crate::bad_input(&e.to_string()),
        }
    } else {
        Submission {
            version: SUBMISSION_VERSION,
            engine: "slurm".into(),
            work: settings.work.clone(),
            shards: plan.shards,
            passes: Vec::new(),
        }
    };
    // A job still queued or running would run beside its own resubmission.
    let (states, unreachable) = study_states(&record, &layout);
    if let Some(e) = unreachable {
        return Err(e.into());
    }
    let busy = states
        .iter()
        .flat_map(|(shards, merge)| shards.iter().chain([merge]));
    if busy
        .clone()
        .any(|s| matches!(s, ShardState::Pending | ShardState::Running))
    {
        return crate::bad_input(&format!(
            "{}: jobs of the study are still pending or running (`traparena status {}`); \
             cancel them (scancel) or wait before resubmitting",
            out.display(),
            out.display()
        ));
    }
    record.passes.resize(
        plan.passes as usize,
        SubmittedPass {
            shards_job: None,
            merge_job: None,
        },
    );
    let mut prev: Option<String> = None;
    for (p, s) in scripts.iter().enumerate() {
        let p32 = p as u32;
        if Marker::read(&layout, p32, "merge") == Marker::Done {
            continue;
        }
        // The shards that have not ended well (all of them, the first time).
        let todo: Vec<String> = (0..plan.shards.get())
            .filter(|i| Marker::read(&layout, p32, &format!("shard-{i}")) != Marker::Done)
            .map(|i| i.to_string())
            .collect();
        let shards_job = if todo.is_empty() {
            None
        } else {
            let extra = vec![format!("--array={}", todo.join(","))];
            let id = sbatch(&s.shards.path, prev.as_deref(), &extra)?;
            record.passes[p].shards_job = Some(id.clone());
            record.save(&out)?;
            Some(id)
        };
        let dep = shards_job.or(prev.clone());
        let id = sbatch(&s.merge.path, dep.as_deref(), &[])?;
        record.passes[p].merge_job = Some(id.clone());
        record.save(&out)?;
        println!(
            "traparena: pass {}: shards {} (job {}), merge job {id}",
            p + 1,
            todo.join(","),
            record.passes[p].shards_job.as_deref().unwrap_or("-")
        );
        prev = Some(id);
    }
    println!(
        "next: traparena status {} ; the {} will be in {}",
        out.display(),
        match settings.work {
            Work::Experiment { .. } => "results",
            Work::Import { .. } => "tasks",
        },
        settings.work.results(&layout).display()
    );
    Ok(crate::OK)
}

/// What the shards run, its plan and the jobs' name, from `submit`'s arguments; or why not.
fn what_runs(args: &SubmitArgs) -> Result<(Work, Plan, String), String> {
    if let Some(path) = &args.spec {
        let spec = ExperimentSpec::load(path).map_err(|e| e.to_string())?;
        let spec_dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        let context = crate::config_context(spec_dir.unwrap_or(Path::new(".")));
        traparena::registry()
            .resolve(&spec, &context)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let work = Work::Experiment {
            spec: absolute(path).map_err(|e| format!("{}: {e}", path.display()))?,
        };
        return Ok((work, Plan::new(&spec, args.shards), job_name(&spec, path)));
    }
    let usage = "after `--`, submit runs an import of records: `import swebench ...` or \
                 `import humanevalfix ...`";
    let (first, rest) = args.command.split_first().ok_or(usage)?;
    if first != "import" {
        return Err(format!("{usage}, not `{first}`"));
    }
    let line = <crate::import::ImportLine as clap::Parser>::try_parse_from(
        std::iter::once("traparena import").chain(rest.iter().map(String::as_str)),
    )
    .map_err(|e| e.render().to_string().trim_end().to_owned())?;
    let Some((tasks, shard)) = line.cmd.records_out() else {
        return Err(usage.to_owned());
    };
    if shard.is_some() {
        return Err("the import is given its --shard by each job: leave it out".into());
    }
    if !args.experiment_args.is_empty() {
        return Err(
            "--experiment-arg is for experiments; an import's arguments go after `--`".into(),
        );
    }
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let source = rest.first().cloned().unwrap_or_default();
    let work = Work::Import {
        args: rest.to_vec(),
        tasks: std::path::absolute(tasks).map_err(|e| format!("{}: {e}", tasks.display()))?,
        cwd,
    };
    Ok((
        work,
        Plan::import(args.shards),
        format!("traparena-import-{source}"),
    ))
}

/// The jobs' name: `traparena-` and the spec's name (or file stem), in characters Slurm and
/// a shell take as they are.
fn job_name(spec: &ExperimentSpec, path: &Path) -> String {
    let base = if spec.name.is_empty() {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        spec.name.clone()
    };
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let parts: Vec<&str> = clean.split('-').filter(|p| !p.is_empty()).collect();
    format!("traparena-{}", parts.join("-"))
}

/// The scheduler's view of `ids` (`squeue -h -r -t all -o "%i %T"`), or why there is none.
fn squeue(ids: &[&str], cwd: &Path) -> Result<String, String> {
    if ids.is_empty() {
        return Ok(String::new());
    }
    slurm_command(
        vec![
            "squeue".into(),
            "-h".into(),
            "-r".into(),
            "-t".into(),
            "all".into(),
            "-j".into(),
            ids.join(","),
            "-o".into(),
            "%i %T".into(),
        ],
        cwd,
    )
}

/// One job's state: its marker first (it outlives the scheduler's memory), then the scheduler.
fn job_state(marker: Marker, queue: &str, id: Option<String>, log: PathBuf) -> ShardState {
    match marker {
        Marker::Done => ShardState::Done,
        Marker::Failed(code) => ShardState::Failed {
            reason: format!("exit status {code}"),
            log,
        },
        Marker::None => match id {
            Some(id) => slurm::state_in_squeue(queue, &id, &log),
            None => ShardState::Unknown,
        },
    }
}

fn state_text(s: &ShardState) -> String {
    match s {
        ShardState::Pending => "pending".into(),
        ShardState::Running => "running".into(),
        ShardState::Done => "done".into(),
        ShardState::Failed { reason, log } => format!("failed ({reason}); log {}", log.display()),
        ShardState::Unknown => "unknown (not submitted, or forgotten by the scheduler)".into(),
    }
}

fn state_json(s: &ShardState, job: Option<String>) -> serde_json::Value {
    let (state, reason, log) = match s {
        ShardState::Pending => ("pending", None, None),
        ShardState::Running => ("running", None, None),
        ShardState::Done => ("done", None, None),
        ShardState::Failed { reason, log } => ("failed", Some(reason.clone()), Some(log)),
        ShardState::Unknown => ("unknown", None, None),
    };
    serde_json::json!({"state": state, "job": job, "reason": reason, "log": log})
}

/// The states of every shard and merge step of a submitted study, pass by pass.
fn study_states(
    record: &Submission,
    layout: &Layout,
) -> (Vec<(Vec<ShardState>, ShardState)>, Option<String>) {
    let mut ids: Vec<&str> = Vec::new();
    for p in &record.passes {
        ids.extend(p.shards_job.as_deref());
        ids.extend(p.merge_job.as_deref());
    }
    let (queue, unreachable) = match squeue(&ids, &layout.out) {
        Ok(q) => (q, None),
        Err(e) => (String::new(), Some(e)),
    };
    let passes = record
        .passes
        .iter()
        .enumerate()
        .map(|(p, jobs)| {
            let p = p as u32;
            let shards = (0..record.shards.get())
                .map(|i| {
                    job_state(
                        Marker::read(layout, p, &format!("shard-{i}")),
                        &queue,
                        jobs.shards_job.as_ref().map(|j| format!("{j}_{i}")),
                        layout.shard_log(p, i),
                    )
                })
                .collect();
            let merge = job_state(
                Marker::read(layout, p, "merge"),
                &queue,
                jobs.merge_job.clone(),
                layout.merge_log(p),
            );
            (shards, merge)
        })
        .collect();
    (passes, unreachable)
}

/// Runs `traparena status`.
pub fn status(args: StatusArgs) -> Result<u8, Box<dyn std::error::Error>> {
    let record = match Submission::load(&args.out) {
        Ok(r) => r,
        Err(e) => return crate::bad_input(&e.to_string()),
    };
    let out = absolute(&args.out)?;
    let layout = Layout { out };
    let (passes, unreachable) = study_states(&record, &layout);
    let finished = passes.last().is_some_and(|(_, m)| *m == ShardState::Done);
    if args.json {
        let v = serde_json::json!({
            "work": record.work,
            "shards": record.shards,
            "scheduler_error": unreachable,
            "results": finished.then(|| record.work.results(&layout)),
            "passes": passes.iter().zip(&record.passes).map(|((shards, merge), jobs)| serde_json::json!({
                "shards": shards.iter().enumerate().map(|(i, s)| state_json(s, jobs.shards_job.as_ref().map(|j| format!("{j}_{i}")))).collect::<Vec<_>>(),
                "merge": state_json(merge, jobs.merge_job.clone()),
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(crate::OK);
    }
    if let Some(e) = &unreachable {
        println!("(the scheduler did not answer, so only ended jobs are known: {e})");
    }
    let n = passes.len();
    for (p, ((shards, merge), jobs)) in passes.iter().zip(&record.passes).enumerate() {
        println!(
            "pass {}/{n}: shards job {}, merge job {}",
            p + 1,
            jobs.shards_job.as_deref().unwrap_or("-"),
            jobs.merge_job.as_deref().unwrap_or("-")
        );
        for (i, s) in shards.iter().enumerate() {
            println!("  shard {i}: {}", state_text(s));
        }
        println!("  merge: {}", state_text(merge));
    }
    match (&record.work, finished) {
        (_, false) => {}
        (Work::Experiment { .. }, true) => println!(
            "done: the merged results are in {}; next: traparena report {}",
            layout.results().display(),
            layout.results().display()
        ),
        (Work::Import { tasks, .. }, true) => println!(
            "done: the tasks are in {}, the import report at {}",
            tasks.display(),
            tasks.join(traparena_import::REPORT_TEXT).display()
        ),
    }
    Ok(crate::OK)
}

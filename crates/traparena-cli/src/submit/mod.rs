//! `traparena submit` and `traparena status`: a sharded study (or import) as jobs of a cluster's
//! scheduler, Slurm or Kubernetes.

mod kube;
mod slurm;
mod status;

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::Duration;

use traparena::env::{HostCommand, run_host};
use traparena::runner::ExperimentSpec;
use traparena::runner::cluster::kubernetes::KubeSettings;
use traparena::runner::cluster::{
    self, JobSettings, Layout, Plan, SUBMISSION_FILE, SUBMISSION_VERSION, Scheduler, Submission,
    Work,
};

pub use status::{StatusArgs, status};

/// The schedulers `submit` hands a study to.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Engine {
    /// Slurm: an array job per pass and a merge job, chained with `--dependency=afterok`.
    Slurm,
    /// Kubernetes: an Indexed Job per pass and a merge Job, applied at once, each job waiting
    /// on the markers of the jobs before it (`--image` and `--volume` say where they run).
    Kubernetes,
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
    /// Print what the study will take (episodes, model calls, tokens, cost, and node-hours at
    /// the pace of --estimate-from); write and submit nothing.
    #[arg(long)]
    pub estimate: bool,
    /// With --estimate: a pilot's results folder (a few tasks run on one node, as each node
    /// will run): its averages per episode and its pace.
    #[arg(long, value_name = "DIR", requires = "estimate")]
    pub estimate_from: Option<PathBuf>,
    /// Kubernetes: the pods' image, holding `traparena` on its PATH, bash and the sandbox.
    #[arg(long, help_heading = "Kubernetes")]
    pub image: Option<String>,
    /// Kubernetes: a PersistentVolumeClaim (ReadWriteMany) mounted in every pod, as
    /// CLAIM:PATH. The study's folder, the spec and the tasks must lie under such a PATH, the
    /// same path the submitter sees them at. Repeatable.
    #[arg(
        long = "volume",
        value_name = "CLAIM:PATH",
        help_heading = "Kubernetes"
    )]
    pub volumes: Vec<String>,
    /// Kubernetes: a Secret whose keys become the pods' environment (API keys).
    #[arg(long, value_name = "SECRET", help_heading = "Kubernetes")]
    pub env_secret: Option<String>,
    /// Kubernetes: a resource request of each pod, as NAME=QUANTITY (cpu=4, memory=16Gi).
    /// Repeatable.
    #[arg(
        long = "request",
        value_name = "NAME=QUANTITY",
        help_heading = "Kubernetes"
    )]
    pub requests: Vec<String>,
    /// Kubernetes: retries of a failed shard or merge step (evictions and preemptions are
    /// retried without counting).
    #[arg(long, default_value_t = 3, help_heading = "Kubernetes")]
    pub retries: u32,
}

/// The Kubernetes settings of `args`, or why they do not do (none for another engine, which
/// refuses them).
fn kube_settings(
    args: &SubmitArgs,
    out: &Path,
    work: &Work,
) -> Result<Option<KubeSettings>, String> {
    let given = args.image.is_some()
        || !args.volumes.is_empty()
        || args.env_secret.is_some()
        || !args.requests.is_empty();
    if !matches!(args.engine, Engine::Kubernetes) {
        return match given {
            true => Err(
                "--image, --volume, --env-secret and --request are for --engine kubernetes".into(),
            ),
            false => Ok(None),
        };
    }
    if !args.sbatch_options.is_empty() {
        return Err("--sbatch-option is for --engine slurm".into());
    }
    let image = args.image.clone().ok_or(
        "--engine kubernetes needs --image: an image with traparena, bash and the sandbox",
    )?;
    let mut volumes = Vec::new();
    for v in &args.volumes {
        let (claim, path) = v
            .split_once(':')
            .filter(|(c, p)| !c.is_empty() && p.starts_with('/'))
            .ok_or_else(|| format!("--volume {v:?}: expected CLAIM:/absolute/path"))?;
        volumes.push((claim.to_owned(), PathBuf::from(path)));
    }
    let (what, needed) = match work {
        Work::Experiment { spec } => ("the spec", spec),
        Work::Import { cwd, .. } => ("the folder the import's paths are read in", cwd),
    };
    for (what, path) in [("the study's folder", out), (what, needed.as_path())] {
        if !volumes.iter().any(|(_, mount)| path.starts_with(mount)) {
            return Err(format!(
                "{} is on no --volume CLAIM:PATH: the pods would not see {what}",
                path.display()
            ));
        }
    }
    let mut requests = Vec::new();
    for r in &args.requests {
        let (k, q) = r
            .split_once('=')
            .filter(|(k, q)| !k.is_empty() && !q.is_empty())
            .ok_or_else(|| format!("--request {r:?}: expected NAME=QUANTITY, as cpu=4"))?;
        requests.push((k.to_owned(), q.to_owned()));
    }
    Ok(Some(KubeSettings {
        image,
        volumes,
        env_secret: args.env_secret.clone(),
        requests,
        retries: args.retries,
    }))
}

/// Runs `traparena submit`.
pub fn submit(
    args: SubmitArgs,
    opts: &crate::SandboxOpts,
) -> Result<u8, Box<dyn std::error::Error>> {
    let (work, plan, name) = match what_runs(&args) {
        Ok(w) => w,
        Err(message) => return crate::bad_input(&message),
    };
    if args.estimate {
        let Work::Experiment { spec } = &work else {
            return crate::bad_input("--estimate is for experiments; an import has no model calls");
        };
        let loaded = match ExperimentSpec::load(spec) {
            Ok(s) => s,
            Err(e) => return crate::bad_input(&e.to_string()),
        };
        let dir = spec.parent().unwrap_or(Path::new("/"));
        let pilot = args.estimate_from.as_deref();
        let code =
            crate::estimate::run_for_cluster(&loaded, dir, pilot, plan.shards.get(), plan.passes);
        return Ok(code);
    }
    let out = std::path::absolute(&args.out)?;
    let kube = match kube_settings(&args, &out, &work) {
        Ok(k) => k,
        Err(message) => return crate::bad_input(&message),
    };
    std::fs::create_dir_all(&out)?;
    let out = absolute(&out)?;
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
        // A pod runs the image's own traparena; a Slurm job this one, which every node sees.
        traparena: match kube {
            Some(_) => PathBuf::from("traparena"),
            None => std::env::current_exe()?,
        },
        work,
        extra_args,
        name,
    };
    let record = if earlier && args.resume && !args.dry_run {
        match Submission::load(&out) {
            Ok(s) if s.shards == plan.shards && s.work == settings.work => Some(s),
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
        None
    };
    let study = Study {
        plan,
        layout,
        settings,
        dry_run: args.dry_run,
        record,
    };
    let code = match &kube {
        None => slurm::submit(&study, &args.sbatch_options)?,
        Some(k) => kube::submit(&study, k)?,
    };
    if code == crate::OK && !args.dry_run {
        println!(
            "next: traparena status {} ; the {} will be in {}",
            out.display(),
            match study.settings.work {
                Work::Experiment { .. } => "results",
                Work::Import { .. } => "tasks",
            },
            study.settings.work.results(&study.layout).display()
        );
    }
    Ok(code)
}

/// A study ready to be handed to a scheduler.
struct Study {
    plan: Plan,
    layout: Layout,
    settings: JobSettings,
    dry_run: bool,
    /// The earlier submission being resumed.
    record: Option<Submission>,
}

impl Study {
    /// Says what runs, and where its jobs are written.
    fn announce(&self, what: &str, dir: &Path) {
        let plan = &self.plan;
        println!(
            "traparena: {} pass{} of {} shards{}; {what} in {}",
            plan.passes,
            if plan.passes == 1 { "" } else { "es" },
            plan.shards,
            if plan.curated {
                " (a curated condition: one pass per round, the curator step between them)"
            } else {
                ""
            },
            dir.display()
        );
    }

    /// A new submission record of `engine`, or the one resumed.
    fn record(&self, engine: Scheduler) -> Submission {
        self.record.clone().unwrap_or_else(|| Submission {
            version: SUBMISSION_VERSION,
            engine,
            work: self.settings.work.clone(),
            shards: self.plan.shards,
            passes: Vec::new(),
        })
    }
}

/// Why a scheduler's command gave no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SchedulerError {
    /// It could not be started.
    #[error("{program}: {source}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        source: traparena::env::EnvError,
    },
    /// It ran and failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// `exit status N`, or `killed`.
        status: String,
        /// What it printed on standard error.
        stderr: String,
    },
    /// `sbatch` printed no job id.
    #[error("sbatch printed no job id: {0:?}")]
    NoJobId(String),
}

/// Runs a scheduler's command (`sbatch`, `squeue`, `kubectl`) with the user's environment (a
/// job inherits it, as from a shell).
fn scheduler_command(mut argv: Vec<String>, cwd: &Path) -> Result<String, SchedulerError> {
    // Found on the user's PATH, as their shell finds it (clusters keep Slurm's commands in
    // /opt/slurm/bin and the like).
    if !argv[0].contains('/')
        && let Some(found) = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(&argv[0]))
                .find(|p| p.is_file())
        })
    {
        argv[0] = found.to_string_lossy().into_owned();
    }
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
    .map_err(|source| SchedulerError::Start {
        program: argv[0].clone(),
        source,
    })?;
    if outcome.exit_code != Some(0) {
        return Err(SchedulerError::Failed {
            command: argv.join(" "),
            status: outcome
                .exit_code
                .map_or("killed".to_owned(), |c| format!("exit status {c}")),
            stderr: outcome.stderr.text.trim().to_owned(),
        });
    }
    Ok(outcome.stdout.text)
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
    let part = cluster::name_part(&base, 40, |c| c.is_ascii_alphanumeric() || c == '_');
    format!("traparena-{part}")
}

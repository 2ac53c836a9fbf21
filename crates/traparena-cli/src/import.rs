//! `traparena import`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use traparena::env::Sandbox;
use traparena::task::Shard;
use traparena_import::{
    BuildOptions, DEFAULT_VENV_CACHE, Ensured, HumanEvalFixOptions, ImageNaming, ImportError,
    ImportReport, Pins, SweBenchOptions, ensure_env, import_humanevalfix, import_swebench,
    import_swebench_images,
};

/// Task sources `traparena import` understands.
#[derive(Debug, clap::Subcommand)]
pub enum ImportCmd {
    /// HumanEvalFix (HumanEvalPack) records, in any of its six languages: one task per record.
    Humanevalfix(HumanEvalFixArgs),
    /// SWE-bench instances, with the repository from a local git clone.
    Swebench(SweBenchArgs),
    /// Build the Python environments that task folders' `setup` fields describe.
    Setup(SetupArgs),
    /// Join the reports of an import run in shards (`--shard I/N`) into the whole import's.
    Merge(MergeArgs),
}

/// `traparena import ...` as the jobs of `traparena submit` run it (parsed to check it).
#[derive(Debug, clap::Parser)]
#[command(name = "traparena import")]
pub struct ImportLine {
    /// The importer and its arguments.
    #[command(subcommand)]
    pub cmd: ImportCmd,
}

impl ImportCmd {
    /// The output folder and the shard of an import of records (`None` for `setup` and
    /// `merge`, which import nothing).
    pub fn records_out(&self) -> Option<(&Path, Option<Shard>)> {
        match self {
            ImportCmd::Humanevalfix(a) => Some((&a.out, a.shard)),
            ImportCmd::Swebench(a) => Some((&a.out, a.shard)),
            ImportCmd::Setup(_) | ImportCmd::Merge(_) => None,
        }
    }
}

/// `traparena import merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The folder the shards imported into (their `--out`).
    out: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// `traparena import humanevalfix`.
#[derive(Debug, clap::Args)]
pub struct HumanEvalFixArgs {
    /// The JSONL file (one language of HumanEvalPack).
    jsonl: PathBuf,
    /// The records' language (python, javascript, cpp, java, go, rust); by default the one
    /// their task ids name (`JavaScript/0`).
    #[arg(long)]
    language: Option<traparena::task::Language>,
    /// Where to write the tasks (one folder per task) and the import report.
    #[arg(long)]
    out: PathBuf,
    /// Import only this record (`Python/0`; repeatable).
    #[arg(long = "record", value_name = "TASK_ID")]
    records: Vec<String>,
    /// Most public tests (assertions passing on the buggy code) per task.
    #[arg(long, default_value_t = 3)]
    max_public: usize,
    /// Seconds one assertion may run when tried alone on the buggy code.
    #[arg(long, default_value_t = 1.0)]
    assertion_timeout: f64,
    /// The tasks' test timeout in seconds (contains infinite-loop bugs).
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Do not validate the emitted tasks.
    #[arg(long)]
    no_validate: bool,
    /// Hidden runs with the reference patch during validation.
    #[arg(long, default_value_t = 3)]
    reference_runs: u32,
    /// Worker threads (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Import only shard I of N (0-based, e.g. 0/4): one contiguous block of the records.
    /// Shards import into the same --out side by side, each writes its own report, and
    /// `traparena import merge OUT` joins the reports.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// `traparena import swebench`.
#[derive(Debug, clap::Args)]
pub struct SweBenchArgs {
    /// The instances: a JSON Lines file, or a JSON file holding an array.
    input: PathBuf,
    /// A local git clone of the instances' repository (history is read, never copied).
    #[arg(long, required_unless_present = "images", conflicts_with = "images")]
    repo: Option<PathBuf>,
    /// Take each instance's tree and environment from its SWE-bench instance image instead of
    /// a clone (needs `--sandbox container`; instances whose image is missing are skipped).
    #[arg(long)]
    images: bool,
    /// The images' registry or namespace prefix, as SWE-bench's `--namespace` (`none` for
    /// images built locally by SWE-bench's harness, which have none).
    #[arg(long, default_value = "swebench", requires = "images")]
    namespace: String,
    /// The images' tag.
    #[arg(long, default_value = "latest", requires = "images")]
    image_tag: String,
    /// The architecture in the images' names.
    #[arg(long, default_value = "x86_64", requires = "images")]
    image_arch: String,
    /// Where to write the tasks (one folder per task) and the import report.
    #[arg(long)]
    out: PathBuf,
    /// Import only this instance (repeatable).
    #[arg(long = "instance", value_name = "ID")]
    instances: Vec<String>,
    /// Environment pins per repository and version (JSON; see docs/tasks.md). They take
    /// precedence over the bundled environments.
    #[arg(long)]
    pins: Option<PathBuf>,
    /// Do not use the bundled environments: only --pins (a repository it lacks runs with the
    /// system's python3).
    #[arg(long)]
    no_bundled_envs: bool,
    /// Resolve environments' packages as PyPI held them at this date or time (YYYY-MM-DD, or
    /// RFC 3339 such as 2024-08-13T00:00:00Z); `now`: the index as it is; `entries`: each
    /// environment's own (the bundled ones: 2024-08-13, when SWE-bench Verified was published).
    #[arg(long, value_name = "DATE|now|entries", default_value = "entries")]
    resolve_as_of: traparena_import::ResolveAsOf,
    /// Where virtual environments are built and cached.
    #[arg(long, default_value = DEFAULT_VENV_CACHE)]
    venv_cache: PathBuf,
    /// Do not build missing environments (skip their instances instead).
    #[arg(long)]
    no_build: bool,
    /// Most public tests (PASS_TO_PASS tests of the touched test files) per task.
    #[arg(long, default_value_t = 10)]
    max_public: usize,
    /// The tasks' test timeout in seconds.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// Do not validate the emitted tasks.
    #[arg(long)]
    no_validate: bool,
    /// Hidden runs with the reference patch during validation when the run that chose the
    /// tests was suspect (a FAIL_TO_PASS test failed with the reference); otherwise one.
    #[arg(long, default_value_t = 3)]
    reference_runs: u32,
    /// Worker threads (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Import only shard I of N (0-based, e.g. 0/4): one contiguous block of the records.
    /// Shards import into the same --out side by side, each writes its own report, and
    /// `traparena import merge OUT` joins the reports.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// `traparena import setup`.
#[derive(Debug, clap::Args)]
pub struct SetupArgs {
    /// Task folders; those without a `setup` field are passed over.
    #[arg(required_unless_present = "envs")]
    tasks: Vec<PathBuf>,
    /// Build the environment of this repository and version (`psf/requests@2.0`) from the
    /// bundled environments (or --pins), without an instance (repeatable). Environments that
    /// read the repository's tree need an instance: import one.
    #[arg(long = "env", value_name = "REPO@VERSION")]
    envs: Vec<String>,
    /// Environment pins (JSON) for --env; they take precedence over the bundled ones.
    #[arg(long, requires = "envs")]
    pins: Option<PathBuf>,
    /// Where --env builds environments.
    #[arg(long, default_value = DEFAULT_VENV_CACHE)]
    venv_cache: PathBuf,
    /// The instant --env resolves packages as of (as `import swebench --resolve-as-of`).
    #[arg(long, value_name = "DATE|now|entries", default_value = "entries")]
    resolve_as_of: traparena_import::ResolveAsOf,
}

const BAD_INPUT: u8 = 2;

/// Runs an import.
pub fn run_import(cmd: ImportCmd, sandbox: Sandbox) -> Result<u8, Box<dyn std::error::Error>> {
    let result = match cmd {
        ImportCmd::Humanevalfix(a) => humanevalfix(a, &sandbox),
        ImportCmd::Swebench(a) => swebench(a, &sandbox),
        ImportCmd::Setup(a) => setup(a),
        ImportCmd::Merge(a) => {
            traparena_import::merge_reports(&a.out).and_then(|report| print_report(&report, a.json))
        }
    };
    finish(result)
}

/// Bad input gives exit status 2 with the message; a harness failure goes up (status 1).
pub(crate) fn finish(r: Result<u8, ImportError>) -> Result<u8, Box<dyn std::error::Error>> {
    match r {
        Ok(code) => Ok(code),
        Err(e) if e.is_bad_input() => {
            eprintln!("traparena: {}", crate::words::say(&e));
            Ok(BAD_INPUT)
        }
        Err(e) => Err(e.into()),
    }
}

fn jobs(j: Option<usize>) -> Result<usize, ImportError> {
    match j {
        Some(0) => Err(ImportError::Input("--jobs must be at least 1".into())),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(2, |n| n.get())),
    }
}

fn humanevalfix(a: HumanEvalFixArgs, sb: &Sandbox) -> Result<u8, ImportError> {
    positive("--max-public", a.max_public as u64)?;
    positive("--timeout", a.timeout)?;
    if !(a.assertion_timeout.is_finite() && a.assertion_timeout > 0.0) {
        return Err(ImportError::Input(
            "--assertion-timeout must be a positive number of seconds".into(),
        ));
    }
    let language = match a.language {
        Some(l) => l,
        None => {
            let records = traparena_import::read_humanevalfix(&a.jsonl)?;
            let first = records.first().map(|r| r.task_id.as_str()).unwrap_or("");
            traparena_import::humanevalfix_language(first).unwrap_or_default()
        }
    };
    let opts = HumanEvalFixOptions {
        language,
        records: a.records,
        max_public: a.max_public,
        assertion_timeout: Duration::from_secs_f64(a.assertion_timeout),
        timeout_s: a.timeout,
        validate: !a.no_validate,
        reference_runs: a.reference_runs,
        jobs: jobs(a.jobs)?,
        shard: a.shard,
    };
    let report = import_humanevalfix(&a.jsonl, &a.out, sb, &opts)?;
    print_report(&report, a.json)
}

/// Environment variables passed on to environment builds (pip's settings, proxies, CAs).
fn build_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| {
            let l = k.to_ascii_lowercase();
            k.starts_with("PIP_")
                || matches!(
                    l.as_str(),
                    "http_proxy" | "https_proxy" | "no_proxy" | "all_proxy"
                )
                || matches!(
                    k.as_str(),
                    "SSL_CERT_FILE" | "SSL_CERT_DIR" | "REQUESTS_CA_BUNDLE"
                )
        })
        .collect();
    // Builds run with a scratch HOME: keep pip's cache where it usually is, so that the
    // next environment reuses the downloads.
    if !env.iter().any(|(k, _)| k == "PIP_CACHE_DIR")
        && let Some(home) = std::env::var_os("HOME")
    {
        env.push((
            "PIP_CACHE_DIR".into(),
            PathBuf::from(home)
                .join(".cache/pip")
                .to_string_lossy()
                .into_owned(),
        ));
    }
    env
}

/// Where interpreters named by version are looked for: uv's and pyenv's installation folders,
/// then `PATH`.
fn interpreter_search() -> traparena_import::InterpreterSearch {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut managed = Vec::new();
    if let Some(d) = std::env::var_os("UV_PYTHON_INSTALL_DIR") {
        managed.push(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_DATA_HOME") {
        managed.push(PathBuf::from(d).join("uv/python"));
    }
    if let Some(h) = &home {
        managed.push(h.join(".local/share/uv/python"));
    }
    if let Some(d) = std::env::var_os("PYENV_ROOT") {
        managed.push(PathBuf::from(d).join("versions"));
    }
    if let Some(h) = &home {
        managed.push(h.join(".pyenv/versions"));
    }
    managed.dedup();
    let path_dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    traparena_import::InterpreterSearch {
        managed_dirs: managed,
        path_dirs,
    }
}

/// Refuses a flag whose value must be at least 1.
fn positive(flag: &str, value: u64) -> Result<(), ImportError> {
    match value {
        0 => Err(ImportError::Input(format!("{flag} must be at least 1"))),
        _ => Ok(()),
    }
}

fn swebench(a: SweBenchArgs, sb: &Sandbox) -> Result<u8, ImportError> {
    positive("--max-public", a.max_public as u64)?;
    positive("--timeout", a.timeout)?;
    let pins = a.pins.as_deref().map(Pins::load).transpose()?;
    let venv_cache = std::path::absolute(&a.venv_cache)
        .map_err(|e| ImportError::Input(format!("{}: {e}", a.venv_cache.display())))?;
    let opts = SweBenchOptions {
        instances: a.instances,
        pins,
        bundled: !a.no_bundled_envs,
        resolve_as_of: a.resolve_as_of,
        interpreters: interpreter_search(),
        venv_cache,
        build: BuildOptions {
            env: build_env(),
            ..BuildOptions::default()
        },
        build_envs: !a.no_build,
        max_public: a.max_public,
        timeout_s: a.timeout,
        validate: !a.no_validate,
        reference_runs: a.reference_runs,
        jobs: jobs(a.jobs)?,
        profiles: traparena_import::Profiles::default(),
        shard: a.shard,
    };
    let report = match &a.repo {
        Some(repo) => import_swebench(&a.input, repo, &a.out, sb, &opts)?,
        None => {
            let naming = ImageNaming {
                namespace: Some(a.namespace).filter(|n| n != "none" && !n.is_empty()),
                arch: a.image_arch,
                tag: a.image_tag,
                ..ImageNaming::default()
            };
            import_swebench_images(&a.input, &a.out, sb, &opts, &naming)?
        }
    };
    print_report(&report, a.json)
}

fn print_report(report: &ImportReport, json: bool) -> Result<u8, ImportError> {
    let mut out = std::io::stdout().lock();
    let r = if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(report).expect("the report serialises")
        )
    } else {
        let skipped: String = report
            .skipped
            .iter()
            .map(|s| format!("skipped  {}: {}: {}\n", s.record, s.reason, s.detail))
            .chain(report.repaired.iter().map(|r| format!("repaired {r}\n")))
            .collect();
        write!(
            out,
            "{skipped}{}{}\nreport: {}\n",
            report.groups_text(),
            report.summary(),
            report
                .out
                .join(traparena_import::report_names(report.shard).1)
                .display()
        )
    };
    r.map_err(|e| ImportError::Io {
        path: "stdout".into(),
        source: e,
    })?;
    // A record skipped for a toolchain missing from the sandbox: the import is incomplete for
    // a reason of this machine (exit status 4, as `validate`'s).
    Ok(if report.not_checkable() > 0 {
        crate::NOT_CHECKABLE
    } else {
        0
    })
}

fn setup(a: SetupArgs) -> Result<u8, ImportError> {
    let opts = BuildOptions {
        env: build_env(),
        ..BuildOptions::default()
    };
    let mut failed = 0;
    if !a.envs.is_empty() {
        failed += setup_envs(&a, &opts)?;
    }
    for dir in &a.tasks {
        let task = traparena::task::Task::load(dir)?;
        let Some(s) = &task.spec.setup else {
            println!("{}: no setup field", task.spec.id);
            continue;
        };
        // An environment that read dependencies from the repository's tree cannot be built
        // again from the task's `setup` field alone (the tree's rules are not in it).
        let reads_tree =
            traparena_import::SweBenchEnvironment::of(&task.spec).is_some_and(|e| e.reads_tree());
        if reads_tree && !traparena::import::is_built(s) {
            failed += 1;
            eprintln!(
                "traparena: {}: the environment {} is missing, and it reads its dependencies \
                 from the repository's tree: import the instance again \
                 (`traparena import swebench ... --instance {}`) to build it",
                task.spec.id,
                s.venv.display(),
                task.spec.id
            );
            continue;
        }
        match ensure_env(s, &opts) {
            Ok(done) => println!("{}: {}", task.spec.id, ensured(done, s)),
            Err(e) => {
                failed += 1;
                eprintln!("traparena: {}: {e}", task.spec.id);
            }
        }
    }
    Ok(if failed == 0 { 0 } else { 1 })
}

/// What `import setup` says of an environment it ensured: its key, what was done, its folder.
fn ensured(done: Ensured, s: &traparena::task::Setup) -> String {
    let what = match done {
        Ensured::Ready => "ready".to_owned(),
        Ensured::Rebuilt { reason } => format!("built again, it did not run: {reason}"),
        _ => "built".to_owned(),
    };
    format!("{} {what} ({})", s.key, s.venv.display())
}

/// Builds the environments `import setup --env` names, printing each one's folder; how many
/// failed.
fn setup_envs(a: &SetupArgs, opts: &BuildOptions) -> Result<usize, ImportError> {
    let pins = a.pins.as_deref().map(Pins::load).transpose()?;
    let cache = std::path::absolute(&a.venv_cache)
        .map_err(|e| ImportError::Input(format!("{}: {e}", a.venv_cache.display())))?;
    let search = interpreter_search();
    let mut failed = 0;
    for key in &a.envs {
        let Some((repo, version)) = key.rsplit_once('@') else {
            return Err(ImportError::Input(format!(
                "--env {key}: expected REPO@VERSION, e.g. psf/requests@2.0"
            )));
        };
        let built = traparena_import::env_setup(
            pins.as_ref(),
            repo,
            version,
            a.resolve_as_of,
            &search,
            &cache,
        )
        .and_then(|s| Ok((ensure_env(&s, opts)?, s)));
        match built {
            Ok((done, s)) => println!("{key}: {}", ensured(done, &s)),
            Err(e) => {
                failed += 1;
                eprintln!("traparena: {key}: {e}");
            }
        }
    }
    Ok(failed)
}

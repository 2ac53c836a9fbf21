//! The study as Slurm batch scripts: per pass, an array job of the shards and a merge job.
//!
//! The scripts follow Slurm's conventions: `#SBATCH` options, one array task per shard
//! (`$SLURM_ARRAY_TASK_ID`), logs at `--output` with `%a`, `--requeue` so that a preempted or
//! requeued task runs again, and `--open-mode=append` so that its log keeps every attempt. Each
//! job writes a marker when it ends (`state/pass-P/shard-I.ok` or `.failed` with the exit
//! status), which `traparena status` reads after the scheduler has forgotten the job. The
//! chain itself (`--dependency=afterok:...`) is given at submission.

use std::path::{Path, PathBuf};

use super::{Layout, Plan, ShardState, Work};
use crate::error::RunError;

/// What every job script runs and how.
#[derive(Debug, Clone)]
pub struct JobSettings {
    /// The `traparena` command the jobs run: an absolute path that every node sees.
    pub traparena: PathBuf,
    /// What the shards run.
    pub work: Work,
    /// Extra arguments of every `traparena experiment` or `traparena import` the jobs run
    /// (`--concurrency 8`, `--sandbox container`, spending limits, ...).
    pub extra_args: Vec<String>,
    /// Extra `#SBATCH` options of every job (`--partition=...`, `--time=...`,
    /// `--cpus-per-task=...`).
    pub sbatch_options: Vec<String>,
    /// The jobs' name prefix (`NAME-pass-P`, `NAME-merge-P`).
    pub name: String,
}

/// A job script: where it is written and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// The file (under `OUT/jobs`).
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// The two scripts of one pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassScripts {
    /// The shards' array job.
    pub shards: Script,
    /// The merge step, which runs when every shard has ended well.
    pub merge: Script,
}

/// Quotes `s` for a POSIX shell.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-=:,+@%".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn quote_path(p: &Path) -> String {
    quote(&p.to_string_lossy())
}

fn header(name: &str, output: &Path, settings: &JobSettings) -> String {
    let mut h = format!(
        "#!/bin/bash\n#SBATCH --job-name={}\n#SBATCH --output={}\n#SBATCH --open-mode=append\n#SBATCH --requeue\n",
        quote(name),
        quote_path(output)
    );
    if let Work::Import { cwd, .. } = &settings.work {
        // The import's arguments are read as in the submitter's shell.
        h.push_str(&format!("#SBATCH --chdir={}\n", quote_path(cwd)));
    }
    for o in &settings.sbatch_options {
        h.push_str(&format!("#SBATCH {o}\n"));
    }
    h
}

fn experiment_line(settings: &JobSettings, spec: &Path, out: &str, extra: &str) -> String {
    let mut line = format!(
        "{} experiment {} --out {out} --resume{extra}",
        quote_path(&settings.traparena),
        quote_path(spec)
    );
    for a in &settings.extra_args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    line
}

/// The command of shard `"$i"` of `n`.
fn shard_line(settings: &JobSettings, layout: &Layout, n: u32) -> String {
    match &settings.work {
        Work::Experiment { spec } => experiment_line(
            settings,
            spec,
            &format!("{}/\"$i\"", quote_path(&layout.out.join("shards"))),
            &format!(" --shard \"$i/{n}\""),
        ),
        Work::Import { args, .. } => {
            let mut line = format!("{} import", quote_path(&settings.traparena));
            for a in args.iter().chain(&settings.extra_args) {
                line.push(' ');
                line.push_str(&quote(a));
            }
            line.push_str(&format!(" --shard \"$i/{n}\""));
            line
        }
    }
}

/// The scripts of pass `p` (0-based) of `plan`.
pub fn pass_scripts(plan: &Plan, layout: &Layout, settings: &JobSettings, p: u32) -> PassScripts {
    let n = plan.shards.get();
    let state = quote_path(&layout.state(p));

    let mut s = header(
        &format!("{}-pass-{p}", settings.name),
        &layout.logs(p).join("shard-%a.log"),
        settings,
    );
    s.push_str(&format!("#SBATCH --array=0-{}\n", n - 1));
    s.push_str(&match &settings.work {
        Work::Experiment { .. } => format!(
            "# Pass {} of {} of a TrapArena study: shard $SLURM_ARRAY_TASK_ID of {n} runs every episode\n\
             # of its share that the notes at hand allow. --resume keeps what an earlier attempt wrote\n\
             # (a requeue, a resubmission), so no episode runs twice.\n",
            p + 1,
            plan.passes
        ),
        Work::Import { .. } => format!(
            "# A TrapArena import in {n} shards: shard $SLURM_ARRAY_TASK_ID imports its block of the records\n\
             # into the shared task folder. A requeued attempt imports the block again, replacing its\n\
             # own task folders.\n"
        ),
    });
    let (pn, passes) = (p + 1, plan.passes);
    s.push_str(&format!(
        "set -u\ni=\"$SLURM_ARRAY_TASK_ID\"\nstate={state}\nmkdir -p \"$state\"\n\
         rm -f \"$state/shard-$i.ok\" \"$state/shard-$i.failed\"\n\
         echo \"traparena: pass {pn} of {passes}, shard $i/{n}, job ${{SLURM_JOB_ID:-?}} on $(hostname), attempt ${{SLURM_RESTART_COUNT:-0}}\"\n"
    ));
    s.push_str(&shard_line(settings, layout, n));
    s.push_str(
        "\nrc=$?\nif [ \"$rc\" -eq 0 ]; then : > \"$state/shard-$i.ok\"; else echo \"$rc\" > \"$state/shard-$i.failed\"; fi\nexit \"$rc\"\n",
    );

    let mut m = header(
        &format!("{}-merge-{p}", settings.name),
        &layout.merge_log(p),
        settings,
    );
    m.push_str(&merge_body(plan, layout, settings, p));
    let jobs = layout.jobs();
    PassScripts {
        shards: Script {
            path: jobs.join(format!("pass-{p}.sbatch")),
            text: s,
        },
        merge: Script {
            path: jobs.join(format!("merge-{p}.sbatch")),
            text: m,
        },
    }
}

/// The merge step of pass `p`: joins the shards (and for a curated study runs the curator step
/// and hands the notes back), then leaves its marker.
fn merge_body(plan: &Plan, layout: &Layout, settings: &JobSettings, p: u32) -> String {
    let state = quote_path(&layout.state(p));
    let n = plan.shards.get();
    let traparena = quote_path(&settings.traparena);
    let mut m = format!(
        "# Pass {} of {}: {}.\n\
         set -u\nstate={state}\nmkdir -p \"$state\"\nrm -f \"$state/merge.ok\" \"$state/merge.failed\"\n\
         fail() {{ echo \"$1\" > \"$state/merge.failed\"; exit \"$1\"; }}\n",
        p + 1,
        plan.passes,
        match (&settings.work, plan.curated) {
            (Work::Import { .. }, _) => "joins the shards' import reports",
            (_, true) =>
                "merges the shards, runs the curator step on the merged results and hands the notes back to every shard",
            (_, false) => "merges the shards",
        }
    );
    let spec = match &settings.work {
        Work::Import { tasks, .. } => {
            m.push_str(&format!(
                "{traparena} import merge {} || fail $?\n",
                quote_path(tasks)
            ));
            m.push_str(": > \"$state/merge.ok\"\n");
            return m;
        }
        Work::Experiment { spec } => spec,
    };
    let mq = quote_path(&layout.merged(plan, p));
    let shards: Vec<String> = (0..n).map(|i| quote_path(&layout.shard(i))).collect();
    m.push_str(&format!(
        "# The merged folder is made again from the shards on every attempt.\nrm -rf {mq}\n\
         {traparena} merge {} --out {mq} || fail $?\n",
        shards.join(" ")
    ));
    if plan.curated {
        m.push_str(&experiment_line(settings, spec, &mq, " --curate-only"));
        m.push_str(" || fail $?\n");
        m.push_str(&format!(
            "if [ -d {mq}/notes ]; then\n  for d in {}; do\n    rm -rf \"$d/notes\" && cp -r {mq}/notes \"$d/notes\" || fail 1\n  done\nfi\n",
            shards.join(" ")
        ));
    }
    m.push_str(": > \"$state/merge.ok\"\n");
    m
}

/// Writes every pass's scripts (executable) and makes the folders the jobs write into.
pub fn write_scripts(
    plan: &Plan,
    layout: &Layout,
    settings: &JobSettings,
) -> Result<Vec<PassScripts>, RunError> {
    use std::os::unix::fs::PermissionsExt;
    let io = |path: &Path, e: std::io::Error| RunError::Cluster {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let mut all = Vec::new();
    for p in 0..plan.passes {
        for dir in [layout.jobs(), layout.logs(p), layout.state(p)] {
            std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        }
        let scripts = pass_scripts(plan, layout, settings, p);
        for s in [&scripts.shards, &scripts.merge] {
            std::fs::write(&s.path, &s.text).map_err(|e| io(&s.path, e))?;
            std::fs::set_permissions(&s.path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| io(&s.path, e))?;
        }
        all.push(scripts);
    }
    Ok(all)
}

/// The job id `sbatch --parsable` printed (`ID` or `ID;CLUSTER`).
pub fn parse_job_id(stdout: &str) -> Option<String> {
    let id = stdout.trim().split(';').next()?.trim();
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then(|| id.to_owned())
}

/// The state of job `id` (`123`, or an array task `123_4`) in the output of
/// `squeue -h -r -t all -o "%i %T"`, mapped onto [`ShardState`] (`log` is named in a failure).
pub fn state_in_squeue(squeue: &str, id: &str, log: &Path) -> ShardState {
    let Some(state) = squeue.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some(id)).then(|| w.next().unwrap_or("").to_owned())
    }) else {
        return ShardState::Unknown;
    };
    match state.as_str() {
        "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED"
        | "RESV_DEL_HOLD" | "SUSPENDED" => ShardState::Pending,
        "RUNNING" | "COMPLETING" | "STAGE_OUT" | "SIGNALING" | "RESIZING" => ShardState::Running,
        "COMPLETED" => ShardState::Done,
        other => ShardState::Failed {
            reason: format!("Slurm says {other}"),
            log: log.to_owned(),
        },
    }
}

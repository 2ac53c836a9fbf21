//! The study as Slurm batch scripts: per pass, an array job of the shards and a merge job.
//!
//! The scripts follow Slurm's conventions: `#SBATCH` options, one array task per shard
//! (`$SLURM_ARRAY_TASK_ID`), logs at `--output` with `%a`, `--requeue` so that a preempted or
//! requeued task runs again, and `--open-mode=append` so that its log keeps every attempt. Each
//! job writes a marker when it ends (`state/pass-P/shard-I.ok` or `.failed` with the exit
//! status), which `traparena status` reads after the scheduler has forgotten the job. The
//! chain itself (`--dependency=afterok:...`) is given at submission.

use std::path::{Path, PathBuf};

use super::script::{Retries, merge_body, quote, quote_path, shard_body, shard_comment};
use super::{JobSettings, Layout, Plan, ShardState, Work};
use crate::error::RunError;

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

fn header(name: &str, output: &Path, settings: &JobSettings, sbatch_options: &[String]) -> String {
    let mut h = format!(
        "#!/bin/bash\n#SBATCH --job-name={}\n#SBATCH --output={}\n#SBATCH --open-mode=append\n#SBATCH --requeue\n",
        quote(name),
        quote_path(output)
    );
    if let Work::Import { cwd, .. } = &settings.work {
        // The import's arguments are read as in the submitter's shell.
        h.push_str(&format!("#SBATCH --chdir={}\n", quote_path(cwd)));
    }
    for o in sbatch_options {
        h.push_str(&format!("#SBATCH {o}\n"));
    }
    h
}

/// The scripts of pass `p` (0-based) of `plan`, each job with the `#SBATCH` options
/// `sbatch_options` (`--partition=...`, `--time=...`, `--cpus-per-task=...`).
pub fn pass_scripts(
    plan: &Plan,
    layout: &Layout,
    settings: &JobSettings,
    sbatch_options: &[String],
    p: u32,
) -> PassScripts {
    let mut s = header(
        &format!("{}-pass-{p}", settings.name),
        &layout.logs(p).join("shard-%a.log"),
        settings,
        sbatch_options,
    );
    s.push_str(&format!("#SBATCH --array=0-{}\n", plan.shards.get() - 1));
    s.push_str(&shard_comment(plan, settings, p, "$SLURM_ARRAY_TASK_ID"));
    s.push_str(&shard_body(
        plan,
        layout,
        settings,
        p,
        "$SLURM_ARRAY_TASK_ID",
        Retries::Slurm,
    ));
    let mut m = header(
        &format!("{}-merge-{p}", settings.name),
        &layout.merge_log(p),
        settings,
        sbatch_options,
    );
    m.push_str(&merge_body(plan, layout, settings, p, Retries::Slurm));
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

/// Writes every pass's scripts (executable) and makes the folders the jobs write into.
pub fn write_scripts(
    plan: &Plan,
    layout: &Layout,
    settings: &JobSettings,
    sbatch_options: &[String],
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
        let scripts = pass_scripts(plan, layout, settings, sbatch_options, p);
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

//! `traparena status`: where a submitted study stands, from its markers and the scheduler.

use std::path::PathBuf;

use traparena::runner::cluster::slurm;
use traparena::runner::cluster::{Layout, Marker, Scheduler, ShardState, Submission, Work};

use super::absolute;
use super::slurm::squeue;

/// Whether a submission went to Kubernetes, whose jobs TrapArena follows by their markers only.
fn on_kubernetes(record: &Submission) -> bool {
    record.engine == Scheduler::Kubernetes
}

/// The name shard `i` of the shards' job `job` goes by: Slurm's array task `JOB_I`, or
/// Kubernetes' index (its pods are named `JOB-I-...`).
fn shard_job(record: &Submission, job: &str, i: u32) -> String {
    if on_kubernetes(record) {
        format!("{job}-{i}")
    } else {
        format!("{job}_{i}")
    }
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

/// One job's state: its marker first (it outlives the scheduler's memory), then the scheduler.
fn job_state(marker: Marker, queue: Option<&str>, id: Option<String>, log: PathBuf) -> ShardState {
    match marker {
        Marker::Done => ShardState::Done,
        Marker::Failed(code) => ShardState::Failed {
            reason: format!("exit status {code}"),
            log,
        },
        Marker::None => match (id, queue) {
            (Some(_), None) => ShardState::NotEnded,
            (Some(id), Some(queue)) => slurm::state_in_squeue(queue, &id, &log),
            (None, _) => ShardState::Unknown,
        },
    }
}

/// A state's one-word name, as `--json` gives it.
fn state_name(s: &ShardState) -> &'static str {
    match s {
        ShardState::Pending => "pending",
        ShardState::Running => "running",
        ShardState::Done => "done",
        ShardState::Failed { .. } => "failed",
        ShardState::Unknown => "unknown",
        ShardState::NotEnded => "not_ended",
    }
}

fn state_text(s: &ShardState) -> String {
    match s {
        ShardState::Pending | ShardState::Running | ShardState::Done => state_name(s).into(),
        ShardState::Failed { reason, log } => format!("failed ({reason}); log {}", log.display()),
        ShardState::Unknown => "unknown (not submitted, or forgotten by the scheduler)".into(),
        ShardState::NotEnded => {
            "not ended (waiting or running: `kubectl get pods` says which)".into()
        }
    }
}

fn state_json(s: &ShardState, job: Option<String>) -> serde_json::Value {
    let (reason, log) = match s {
        ShardState::Failed { reason, log } => (Some(reason.clone()), Some(log)),
        _ => (None, None),
    };
    serde_json::json!({"state": state_name(s), "job": job, "reason": reason, "log": log})
}

/// The states of every shard and merge step of a submitted study, pass by pass.
pub(super) fn study_states(
    record: &Submission,
    layout: &Layout,
) -> (Vec<(Vec<ShardState>, ShardState)>, Option<String>) {
    let mut ids: Vec<&str> = Vec::new();
    for p in &record.passes {
        ids.extend(p.shards_job.as_deref());
        ids.extend(p.merge_job.as_deref());
    }
    let (queue, unreachable) = match on_kubernetes(record) {
        true => (None, None),
        false => match squeue(&ids, &layout.out) {
            Ok(q) => (Some(q), None),
            Err(e) => (Some(String::new()), Some(e.to_string())),
        },
    };
    let queue = queue.as_deref();
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
                        queue,
                        jobs.shards_job.as_ref().map(|j| shard_job(record, j, i)),
                        layout.shard_log(p, i),
                    )
                })
                .collect();
            let merge = job_state(
                Marker::read(layout, p, "merge"),
                queue,
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
            "engine": record.engine,
            "work": record.work,
            "shards": record.shards,
            "scheduler_error": unreachable,
            "results": finished.then(|| record.work.results(&layout)),
            "passes": passes.iter().zip(&record.passes).map(|((shards, merge), jobs)| serde_json::json!({
                "shards": shards.iter().enumerate().map(|(i, s)| state_json(s, jobs.shards_job.as_ref().map(|j| shard_job(&record, j, i as u32)))).collect::<Vec<_>>(),
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

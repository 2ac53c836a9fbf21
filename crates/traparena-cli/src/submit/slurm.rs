//! Submitting to Slurm: `sbatch` chained with `--dependency=afterok`.

use std::path::Path;

use traparena::runner::cluster::slurm::{self as scripts, PassScripts};
use traparena::runner::cluster::{Marker, Scheduler, ShardState, SubmittedPass};

use super::Study;
use super::status::study_states;
use super::{SchedulerError, scheduler_command};

/// Writes the study's batch scripts and submits them (prints them for a dry run); for a
/// resumed study, only what has not ended well.
pub(super) fn submit(
    study: &Study,
    sbatch_options: &[String],
) -> Result<u8, Box<dyn std::error::Error>> {
    let Study {
        plan,
        layout,
        settings,
        ..
    } = study;
    let scripts = scripts::write_scripts(plan, layout, settings, sbatch_options)?;
    study.announce("job scripts", &layout.jobs());
    if study.dry_run {
        print_chain(&scripts);
        return Ok(crate::OK);
    }
    let out = &layout.out;
    let mut record = study.record(Scheduler::Slurm);
    // A job still queued or running would run beside its own resubmission.
    let (states, unreachable) = study_states(&record, layout);
    if let Some(e) = unreachable {
        return Err(e.into());
    }
    let busy = states
        .iter()
        .flat_map(|(shards, merge)| shards.iter().chain([merge]))
        .any(|s| matches!(s, ShardState::Pending | ShardState::Running));
    if busy {
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
        if Marker::read(layout, p32, "merge") == Marker::Done {
            continue;
        }
        // The shards that have not ended well (all of them, the first time).
        let todo: Vec<String> = (0..plan.shards.get())
            .filter(|i| Marker::read(layout, p32, &format!("shard-{i}")) != Marker::Done)
            .map(|i| i.to_string())
            .collect();
        let shards_job = if todo.is_empty() {
            None
        } else {
            let extra = vec![format!("--array={}", todo.join(","))];
            let id = sbatch(&s.shards.path, prev.as_deref(), &extra)?;
            record.passes[p].shards_job = Some(id.clone());
            record.save(out)?;
            Some(id)
        };
        let dep = shards_job.or(prev.clone());
        let id = sbatch(&s.merge.path, dep.as_deref(), &[])?;
        record.passes[p].merge_job = Some(id.clone());
        record.save(out)?;
        println!(
            "traparena: pass {}: shards {} (job {}), merge job {id}",
            p + 1,
            todo.join(","),
            record.passes[p].shards_job.as_deref().unwrap_or("-")
        );
        prev = Some(id);
    }
    Ok(crate::OK)
}

/// Prints the `sbatch` commands that would submit `scripts`, chained.
fn print_chain(scripts: &[PassScripts]) {
    let dep = |d: Option<&str>| {
        d.map(|d| format!(" --dependency=afterok:{d} --kill-on-invalid-dep=yes"))
            .unwrap_or_default()
    };
    let mut prev: Option<String> = None;
    for (p, s) in scripts.iter().enumerate() {
        println!(
            "sbatch --parsable{} {}   # -> PASS{p}",
            dep(prev.as_deref()),
            s.shards.path.display()
        );
        println!(
            "sbatch --parsable{} {}   # -> MERGE{p}",
            dep(Some(&format!("$PASS{p}"))),
            s.merge.path.display()
        );
        prev = Some(format!("$MERGE{p}"));
    }
    println!("traparena: dry run: nothing submitted");
}

/// `sbatch --parsable` of `script`, after `dependency` if any; returns the job id.
fn sbatch(
    script: &Path,
    dependency: Option<&str>,
    extra: &[String],
) -> Result<String, SchedulerError> {
    let mut argv = vec!["sbatch".to_owned(), "--parsable".to_owned()];
    if let Some(d) = dependency {
        // A dependency that can no longer be met (a failed or cancelled shard) cancels the
        // job instead of leaving it pending for good: nothing runs on partial notes.
        argv.push(format!("--dependency=afterok:{d}"));
        argv.push("--kill-on-invalid-dep=yes".to_owned());
    }
    argv.extend(extra.iter().cloned());
    argv.push(script.to_string_lossy().into_owned());
    let out = scheduler_command(argv, script.parent().unwrap_or(Path::new("/")))?;
    scripts::parse_job_id(&out).ok_or(SchedulerError::NoJobId(out))
}

/// The scheduler's view of `ids` (`squeue -h -r -t all -o "%i %T"`), or why there is none.
pub(super) fn squeue(ids: &[&str], cwd: &Path) -> Result<String, SchedulerError> {
    if ids.is_empty() {
        return Ok(String::new());
    }
    scheduler_command(
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

//! Submitting to Kubernetes: the Jobs' manifests, applied with `kubectl`.

use traparena::runner::cluster::kubernetes::{self, KubeSettings};
use traparena::runner::cluster::{Marker, Scheduler, SubmittedPass};

use super::{Study, scheduler_command};

/// Writes the study's Job manifests and applies them (prints how, for a dry run). A resumed
/// study first loses its failure markers and its earlier Jobs: what ended well exits at once
/// when applied again, and what did not runs again, resuming from what it wrote.
pub(super) fn submit(study: &Study, kube: &KubeSettings) -> Result<u8, Box<dyn std::error::Error>> {
    let Study {
        plan,
        layout,
        settings,
        ..
    } = study;
    let all = kubernetes::manifests(plan, layout, settings, kube);
    let dir = kubernetes::write_manifests(plan, layout, &all)?;
    study.announce("Job manifests", &dir);
    let dir_text = dir.to_string_lossy().into_owned();
    if study.dry_run {
        if study.record.is_some() {
            println!("kubectl delete -f {dir_text} --ignore-not-found --wait");
        }
        println!("kubectl apply -f {dir_text}");
        println!("traparena: dry run: nothing submitted");
        return Ok(crate::OK);
    }
    let mut record = study.record(Scheduler::Kubernetes);
    let run = |argv: &[&str]| -> Result<String, Box<dyn std::error::Error>> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        scheduler_command(argv, &layout.out).map_err(|e| {
            format!(
                "{e}\n(the manifests are written: apply them yourself with `kubectl apply -f {dir_text}`)"
            )
            .into()
        })
    };
    if study.record.is_some() {
        // The Jobs are immutable: the earlier ones go before they are applied again, and with
        // them the failures they recorded, which would stop the jobs waiting on them.
        run(&[
            "kubectl",
            "delete",
            "-f",
            &dir_text,
            "--ignore-not-found",
            "--wait",
        ])?;
        for p in 0..plan.passes {
            for name in (0..plan.shards.get())
                .map(|i| format!("shard-{i}"))
                .chain(["merge".to_owned()])
            {
                Marker::clear_failure(layout, p, &name)?;
            }
        }
    }
    print!("{}", run(&["kubectl", "apply", "-f", &dir_text])?);
    record.passes = all
        .chunks(2)
        .map(|pair| SubmittedPass {
            shards_job: pair[0].job["metadata"]["name"].as_str().map(str::to_owned),
            merge_job: pair[1].job["metadata"]["name"].as_str().map(str::to_owned),
        })
        .collect();
    record.save(&layout.out)?;
    Ok(crate::OK)
}

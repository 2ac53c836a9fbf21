//! The study as Kubernetes Jobs: per pass, an Indexed Job of the shards and a Job of the merge
//! step, all applied at once.
//!
//! Kubernetes has no dependencies between Jobs, so the chain is kept by the jobs themselves,
//! through the markers they leave on the shared volume: a shard of pass P waits until pass
//! P - 1's merge step has ended well, and a merge step until every shard of its pass has. A job
//! that failed for good (its last retry) leaves a `.failed` marker, and each job waiting on it
//! fails at once with [`UPSTREAM_FAILED`], which the Job's pod failure policy does not retry:
//! nothing runs on partial results. A pod evicted or preempted (`DisruptionTarget`) is retried
//! without counting against its retries, and resumes from what it wrote. A job whose marker
//! says it ended well exits at once, so the manifests can be applied again after a failure.
//!
//! The manifests are JSON (which `kubectl apply -f` reads as it reads YAML), one file per Job.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::script::{Retries, merge_body, quote_path, shard_body, shard_comment};
use super::{JobSettings, Layout, Plan, UPSTREAM_FAILED};
use crate::error::RunError;

/// What the pods need from the cluster.
#[derive(Debug, Clone)]
pub struct KubeSettings {
    /// The image the pods run: it holds the `traparena` command ([`JobSettings::traparena`]),
    /// bash, and the sandbox backend the jobs use (bubblewrap, or podman for containers).
    pub image: String,
    /// Volumes mounted in every pod: `(claim, path)`, a PersistentVolumeClaim (ReadWriteMany)
    /// at the path where every pod, and the submitter, see the study's folder, spec and tasks.
    pub volumes: Vec<(String, PathBuf)>,
    /// A Secret whose keys become the pods' environment variables (model servers' API keys).
    pub env_secret: Option<String>,
    /// Resource requests of each pod (`cpu` → `4`, `memory` → `16Gi`).
    pub requests: Vec<(String, String)>,
    /// Retries of a failed shard or merge step (`backoffLimitPerIndex`).
    pub retries: u32,
}

/// A manifest: where it is written and what it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The file (under `OUT/jobs/kubernetes`).
    pub path: PathBuf,
    /// The Job.
    pub job: Value,
}

/// A name Kubernetes takes for a Job (DNS-1123: lower case, digits and `-`, at most 63
/// characters with the `-merge-P` suffix).
pub fn job_name(name: &str) -> String {
    let lower = super::name_part(&name.to_ascii_lowercase(), 48, |c| {
        c.is_ascii_alphanumeric()
    });
    if lower.is_empty() {
        "traparena".into()
    } else {
        lower
    }
}

/// One Job of `completions` indexed pods running `script`.
fn job(
    name: &str,
    container: &str,
    completions: u32,
    script: String,
    settings: &JobSettings,
    kube: &KubeSettings,
) -> Value {
    let mounts: Vec<Value> = kube
        .volumes
        .iter()
        .enumerate()
        .map(|(i, (_, path))| json!({"name": format!("shared-{i}"), "mountPath": path}))
        .collect();
    let volumes: Vec<Value> = kube
        .volumes
        .iter()
        .enumerate()
        .map(|(i, (claim, _))| {
            json!({"name": format!("shared-{i}"), "persistentVolumeClaim": {"claimName": claim}})
        })
        .collect();
    let mut c = json!({
        "name": container,
        "image": kube.image,
        "command": ["/bin/bash", "-c", script],
        "env": [{
            "name": "TRAPARENA_ATTEMPT",
            "valueFrom": {"fieldRef": {
                "fieldPath": "metadata.annotations['batch.kubernetes.io/job-index-failure-count']"
            }}
        }],
        // The sandbox backends make namespaces (bubblewrap) or run containers (podman).
        "securityContext": {"privileged": true},
        "volumeMounts": mounts,
    });
    if let Some(secret) = &kube.env_secret {
        c["envFrom"] = json!([{"secretRef": {"name": secret}}]);
    }
    if !kube.requests.is_empty() {
        let r: serde_json::Map<String, Value> = kube
            .requests
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        c["resources"] = json!({"requests": r});
    }
    if let super::Work::Import { cwd, .. } = &settings.work {
        c["workingDir"] = json!(cwd);
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/name": "traparena", "traparena/study": job_name(&settings.name)},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": completions,
            "parallelism": completions,
            "backoffLimitPerIndex": kube.retries,
            "podFailurePolicy": {"rules": [
                {"action": "FailIndex", "onExitCodes": {"containerName": container, "operator": "In", "values": [UPSTREAM_FAILED]}},
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
            ]},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "traparena"}},
                "spec": {"restartPolicy": "Never", "containers": [c], "volumes": volumes},
            },
        },
    })
}

/// The Jobs of every pass of `plan`: `pass-P.json` (the shards) and `merge-P.json`.
pub fn manifests(
    plan: &Plan,
    layout: &Layout,
    settings: &JobSettings,
    kube: &KubeSettings,
) -> Vec<Manifest> {
    let base = job_name(&settings.name);
    let retries = Retries::Kubernetes {
        limit: kube.retries,
    };
    let dir = layout.jobs().join("kubernetes");
    let mut all = Vec::new();
    for p in 0..plan.passes {
        // Kubernetes keeps a pod's output while the pod exists; the study's folder keeps every
        // attempt's, as under Slurm.
        let logs = quote_path(&layout.logs(p));
        let mut shard =
            format!("mkdir -p {logs}\nexec >> {logs}/shard-\"$JOB_COMPLETION_INDEX\".log 2>&1\n");
        shard.push_str(&shard_comment(plan, settings, p, "$JOB_COMPLETION_INDEX"));
        shard.push_str(&shard_body(
            plan,
            layout,
            settings,
            p,
            "$JOB_COMPLETION_INDEX",
            retries,
        ));
        let mut merge = format!("mkdir -p {logs}\nexec >> {logs}/merge.log 2>&1\n");
        merge.push_str(&merge_body(plan, layout, settings, p, retries));
        all.push(Manifest {
            path: dir.join(format!("pass-{p}.json")),
            job: job(
                &format!("{base}-pass-{p}"),
                "shard",
                plan.shards.get(),
                shard,
                settings,
                kube,
            ),
        });
        all.push(Manifest {
            path: dir.join(format!("merge-{p}.json")),
            job: job(
                &format!("{base}-merge-{p}"),
                "merge",
                1,
                merge,
                settings,
                kube,
            ),
        });
    }
    all
}

/// Writes the manifests and makes the folders the jobs write into; returns the manifests'
/// folder.
pub fn write_manifests(
    plan: &Plan,
    layout: &Layout,
    all: &[Manifest],
) -> Result<PathBuf, RunError> {
    let io = |path: &Path, e: std::io::Error| RunError::Cluster {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let dir = layout.jobs().join("kubernetes");
    for p in 0..plan.passes {
        for d in [layout.logs(p), layout.state(p)] {
            std::fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    for m in all {
        let text = serde_json::to_string_pretty(&m.job).expect("a manifest serializes") + "\n";
        std::fs::write(&m.path, text).map_err(|e| io(&m.path, e))?;
    }
    Ok(dir)
}

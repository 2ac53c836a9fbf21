//! `traparena submit --engine kubernetes`, and what `submit` and `status` refuse, without a
//! cluster. No Kubernetes cluster installs from the registries these machines reach: the Jobs'
//! manifests are checked against Kubernetes' schemas (strictly), and each pod's command runs
//! here as its pod would, index by index, in the order the jobs' markers allow.

// This test code drives real processes and reads where its prepared tools lie.
#![allow(clippy::disallowed_methods)]

mod study;

use std::path::{Path, PathBuf};
use std::process::Command;

use study::{Study, bin, s, write_spec};
use traparena_testkit::cli::output;

/// The manifests of a study: `(file, Job)` in the order the jobs run, pass by pass.
fn manifests(out: &Path) -> Vec<(PathBuf, serde_json::Value)> {
    let dir = out.join("jobs/kubernetes");
    let mut all = Vec::new();
    for p in 0.. {
        let pair = [format!("pass-{p}.json"), format!("merge-{p}.json")];
        if !dir.join(&pair[0]).is_file() {
            break;
        }
        for f in pair {
            let path = dir.join(f);
            let job = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            all.push((path, job));
        }
    }
    all
}

/// Runs index `index` of `job` as its pod would: its command, with the variables Kubernetes
/// sets (the index, the retries so far) and the image's `traparena` on the PATH. Returns the
/// exit status.
fn run_pod(job: &serde_json::Value, index: u32, attempt: u32) -> i32 {
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    let argv: Vec<&str> = c["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_traparena")).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let mut cmd = Command::new(argv[0]);
    cmd.args(&argv[1..])
        .env("PATH", path)
        .env("JOB_COMPLETION_INDEX", index.to_string())
        .env("TRAPARENA_ATTEMPT", attempt.to_string());
    if let Some(dir) = c["workingDir"].as_str() {
        cmd.current_dir(dir);
    }
    output(&mut cmd).code
}

/// Runs every job of the study once, in order (each of its indexes, then the next job).
fn run_all(all: &[(PathBuf, serde_json::Value)]) {
    for (file, job) in all {
        for i in 0..job["spec"]["completions"].as_u64().unwrap() as u32 {
            assert_eq!(run_pod(job, i, 0), 0, "{} index {i}", file.display());
        }
    }
}

fn status(out: &Path) -> serde_json::Value {
    let run = bin().run(&["status", s(out), "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

/// `submit --engine kubernetes` of `spec` in 3 shards, with `extra` arguments, and a
/// `kubectl` on the PATH that logs its arguments to `kubectl.log` beside the study (there is
/// no cluster to apply to here).
fn submit_k8s(spec: &Path, out: &Path, extra: &[&str]) -> traparena_testkit::cli::Run {
    let root = out.parent().unwrap();
    let fake = root.join("bin");
    std::fs::create_dir_all(&fake).unwrap();
    let kubectl = fake.join("kubectl");
    std::fs::write(
        &kubectl,
        format!(
            "#!/bin/sh\necho \"$*\" >> {}/kubectl.log\necho applied\n",
            root.display()
        ),
    )
    .unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&kubectl, executable).unwrap();
    let volume = format!("shared:{}", root.display());
    let mut args = vec![
        "submit",
        s(spec),
        "--engine",
        "kubernetes",
        "--shards",
        "3",
        "--out",
        s(out),
        "--image",
        "localhost/traparena:test",
        "--volume",
        &volume,
        "--request",
        "cpu=2",
    ];
    args.extend_from_slice(extra);
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    bin().run_with(&args, &[("PATH", &path)])
}

#[test]
#[ignore = "needs kubernetes-validate (PyPI) in TRAPARENA_TEST_KUBERNETES_VALIDATE: python3 -m venv V && V/bin/pip install kubernetes-validate (CI provides it)"]
fn kubernetes_jobs_validate_and_their_pods_commands_give_the_unsharded_results() {
    let validate = std::env::var_os("TRAPARENA_TEST_KUBERNETES_VALIDATE")
        .expect("set TRAPARENA_TEST_KUBERNETES_VALIDATE to kubernetes-validate (PyPI)");
    let study = Study::new();
    let (spec, whole, out) = study.paths();

    let dry = submit_k8s(&spec, &out, &["--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(dry.stdout.contains("kubectl apply -f "), "{}", dry.stdout);
    let all = manifests(&out);
    assert_eq!(all.len(), 6, "three passes of a shards Job and a merge Job");
    // Strict: a field Kubernetes does not know fails.
    let check = Command::new(&validate)
        .args(["--strict", "--quiet"])
        .args(all.iter().map(|(f, _)| f))
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");

    let run = submit_k8s(&spec, &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = status(&out);
    assert_eq!(v["engine"], "kubernetes");
    assert_eq!(v["passes"][1]["shards"][2]["state"], "not_ended");
    assert_eq!(
        v["passes"][1]["shards"][2]["job"],
        format!("{}-2", all[2].1["metadata"]["name"].as_str().unwrap())
    );

    // Shard 1 of the first pass cannot write its results folder: it fails.
    std::fs::create_dir_all(out.join("shards")).unwrap();
    std::fs::write(out.join("shards/1"), "in the way\n").unwrap();
    let (pass0, merge0, pass1) = (&all[0].1, &all[1].1, &all[2].1);
    assert_eq!(run_pod(pass0, 0, 0), 0);
    // A failure with retries left leaves no marker: the jobs after it go on waiting.
    assert_ne!(run_pod(pass0, 1, 0), 0);
    assert!(!out.join("state/pass-0/shard-1.failed").exists());
    // The last retry's failure is recorded, and every job waiting on it fails at once.
    assert_ne!(run_pod(pass0, 1, 3), 0);
    assert!(out.join("state/pass-0/shard-1.failed").exists());
    assert_eq!(run_pod(pass0, 2, 0), 0);
    assert_eq!(run_pod(merge0, 0, 0), 86);
    assert_eq!(run_pod(pass1, 0, 0), 86);
    let v = status(&out);
    assert_eq!(v["passes"][0]["shards"][1]["state"], "failed");
    assert_eq!(v["passes"][0]["merge"]["reason"], "exit status 86");
    assert!(!out.join("results").exists() && !out.join("passes/0").exists());

    // Mended and resubmitted: the earlier Jobs and failure markers go, and the jobs that ended
    // well exit at once when run again.
    std::fs::remove_file(out.join("shards/1")).unwrap();
    let again = submit_k8s(&spec, &out, &["--resume"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let log = std::fs::read_to_string(out.parent().unwrap().join("kubectl.log")).unwrap();
    let dir = out.join("jobs/kubernetes");
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        [
            format!("apply -f {}", dir.display()),
            format!("delete -f {} --ignore-not-found --wait", dir.display()),
            format!("apply -f {}", dir.display()),
        ]
    );
    assert!(!out.join("state/pass-0/shard-1.failed").exists());
    run_all(&all);
    let shard0 = std::fs::read_to_string(out.join("logs/pass-0/shard-0.log")).unwrap();
    assert!(shard0.contains("shard-0 already done"), "{shard0}");
    study::equals_unsharded(&out, &whole);
}
#[test]
fn submit_refuses_what_it_cannot_shard_before_any_job_is_written() {
    // Refused before the scheduler is asked anything: these run without a cluster.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("study");
    let spec = write_spec(tmp.path(), 1);
    // Each case's arguments after `submit --shards 2 --out OUT --dry-run` (SPEC: a spec).
    let cases = [
        ("nothing to run", "", "required"),
        ("not an import", "-- run task", "not `run`"),
        (
            "an import of no records",
            "-- import setup t",
            "submit runs an import of records",
        ),
        (
            "a shard given",
            "-- import humanevalfix f.jsonl --out t --shard 0/2",
            "leave it out",
        ),
        (
            "an unknown import argument",
            "-- import humanevalfix f.jsonl --out t --bogus",
            "--bogus",
        ),
        (
            "an experiment's argument",
            "--experiment-arg=--concurrency=2 -- import humanevalfix f.jsonl --out t",
            "--experiment-arg is for experiments",
        ),
        (
            "a spec and an import",
            "SPEC -- import humanevalfix f.jsonl --out t",
            "cannot be used with",
        ),
    ];
    for (name, extra, says) in cases {
        let mut args = vec!["submit", "--shards", "2", "--out", s(&out), "--dry-run"];
        args.extend(
            extra
                .split_whitespace()
                .map(|a| if a == "SPEC" { s(&spec) } else { a }),
        );
        let run = bin().run(&args);
        assert_eq!(run.code, 2, "{name}: {}\n{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(says), "{name}: {}", run.stderr);
        assert!(!out.join("jobs").exists(), "{name}: jobs were written");
    }
}

#[test]
fn status_reads_a_submission_of_format_1_and_refuses_an_unknown_format() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path();
    // Format 1 named the spec; what it says is still read.
    let v1 = serde_json::json!({"version": 1, "engine": "slurm", "spec": "/s/spec.json",
        "shards": 2, "passes": [{"shards_job": null, "merge_job": null}]});
    std::fs::write(out.join("submission.json"), v1.to_string()).unwrap();
    let run = bin().run(&["status", s(out), "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        v["work"],
        serde_json::json!({"kind": "experiment", "spec": "/s/spec.json"})
    );
    assert_eq!(v["passes"][0]["shards"].as_array().unwrap().len(), 2);
    for (text, says) in [
        (r#"{"version": 9}"#.to_owned(), "format version 9"),
        ("{\"version\": ".to_owned(), "submission.json"),
    ] {
        std::fs::write(out.join("submission.json"), text).unwrap();
        let run = bin().run(&["status", s(out)]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains(says), "{}", run.stderr);
    }
}

#[test]
fn estimate_gives_the_studys_node_hours_at_a_pilots_pace_and_writes_nothing() {
    let study = Study::new();
    let (spec, whole, out) = study.paths();
    let estimate = |extra: &[&str]| {
        let mut args = vec![
            "submit",
            s(&spec),
            "--shards",
            "4",
            "--out",
            s(&out),
            "--estimate",
        ];
        args.extend_from_slice(extra);
        bin().run(&args)
    };
    // The unsharded run is the pilot: 3 tasks x 2 targets x (2 baseline + 2 conditions x 3
    // rounds) episodes.
    let run = estimate(&["--estimate-from", s(&whole)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("total "), "{}", run.stdout);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("Node-hours: "))
        .unwrap();
    assert!(line.contains("(48 episodes at the pilot's pace"), "{line}");
    assert!(run.stdout.contains("in 4 shards"), "{}", run.stdout);
    assert!(run.stdout.contains("in 3 passes"), "{}", run.stdout);
    assert!(!out.exists(), "an estimate writes nothing");
    // Without a pilot the pace is unknown, and said to be.
    let run = estimate(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("Node-hours: unknown"), "{}", run.stdout);
    // A pilot that cannot be timed is refused with the reason.
    let manifest = whole.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    m.as_object_mut().unwrap().remove("created");
    std::fs::write(&manifest, m.to_string()).unwrap();
    let run = estimate(&["--estimate-from", s(&whole)]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("has no creation time"),
        "{}",
        run.stderr
    );
    // An import has no model calls to estimate.
    let run = bin().run(&[
        "submit",
        "--shards",
        "2",
        "--out",
        s(&out),
        "--estimate",
        "--",
        "import",
        "humanevalfix",
        "f.jsonl",
        "--out",
        "t",
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--estimate is for experiments"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_jobs_get_the_submitters_sandbox_settings_and_auto_becomes_isolated() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_spec(tmp.path(), 1);
    let out = tmp.path().join("study");
    let script = |out: &Path| std::fs::read_to_string(out.join("jobs/pass-0.sbatch")).unwrap();
    // Unattended, a node without a sandbox must fail its shard, never run unisolated.
    let run = bin().run(&[
        "submit",
        s(&spec),
        "--shards",
        "2",
        "--out",
        s(&out),
        "--dry-run",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        script(&out).contains(" --sandbox=isolated"),
        "{}",
        script(&out)
    );
    let out2 = out.with_file_name("container");
    let run = bin().run(&[
        "--sandbox",
        "container",
        "--container-engine",
        "podman",
        "--container-engine-arg=--cgroup-manager=cgroupfs",
        "--container-pool",
        "2",
        "submit",
        s(&spec),
        "--shards",
        "2",
        "--out",
        s(&out2),
        "--dry-run",
        "--experiment-arg=--concurrency=4",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = script(&out2);
    for flag in [
        " --sandbox=container",
        " --container-engine=podman",
        " --container-engine-arg=--cgroup-manager=cgroupfs",
        " --container-pool=2",
        " --concurrency=4",
    ] {
        assert!(text.contains(flag), "{flag}: {text}");
    }
}

//! What the tests in a container of the test image share: the image, a container sandbox,
//! the synthetic task in the image, and what the engine and `/proc` say is left.
#![allow(dead_code)]
// The image's name comes from the environment, and the engine is asked what runs.
#![allow(clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use traparena_env::{BackendChoice, ContainerConfig, Environment, Limits, Sandbox, SandboxConfig};
use traparena_task::{Action, ImageEnv, Observation, Task};

use crate::common;

pub const NEEDS: &str = "needs podman (runc) and the image of .ci/swebench-image.sh";

pub fn image() -> String {
    std::env::var("TRAPARENA_TEST_IMAGE")
        .unwrap_or_else(|_| "localhost/sweb.eval.x86_64.pytest-dev_1776_pytest-5227:latest".into())
}

pub fn image_env() -> ImageEnv {
    ImageEnv {
        image: image(),
        workdir: "/testbed".into(),
        path: vec!["/opt/miniconda3/envs/testbed/bin".into()],
    }
}

pub fn sandbox(limits: Limits, pool: usize) -> Sandbox {
    Sandbox::new(SandboxConfig {
        backend: BackendChoice::Container,
        limits,
        container: ContainerConfig {
            pool,
            ..ContainerConfig::default()
        },
        ..SandboxConfig::default()
    })
    .unwrap_or_else(|e| panic!("{NEEDS}: {e}"))
}

/// The synthetic task of `common`, running in the test image.
pub fn container_task() -> (tempfile::TempDir, Task) {
    let (tmp, task) = common::make_task(60);
    let spec_path = task.dir.join("task.json");
    let mut spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&spec_path).unwrap()).unwrap();
    spec["image"] = serde_json::to_value(image_env()).unwrap();
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let task = Task::load(&task.dir).unwrap();
    (tmp, task)
}

/// Replaces the public test with `body` (a test method's body) and runs the public tests.
pub fn run_code(env: &mut Environment, body: &str) -> Observation {
    let indented: String = body.lines().map(|l| format!("        {l}\n")).collect();
    let test = format!(
        "import os, sys, socket, subprocess, time\nimport unittest\n\nclass T(unittest.TestCase):\n    def test_probe(self):\n{indented}"
    );
    let obs = env
        .step(&Action::Write {
            path: "tests/test_m.py".into(),
            content: test,
        })
        .unwrap();
    assert!(!obs.error, "{}", obs.output);
    env.step(&Action::RunPublicTests).unwrap()
}

pub fn passed(obs: &Observation) -> bool {
    obs.tests
        .as_ref()
        .is_some_and(|c| c.run > 0 && c.failed == 0 && c.errored == 0)
}

/// One test at a time: they count the containers this process owns, and the tests of one
/// binary share the process.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// This test process's owner label, as the sandbox writes it (`pid:start`).
pub fn own_label() -> String {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    let start = after.split_whitespace().nth(19).unwrap();
    format!("org.traparena.owner={}:{start}", std::process::id())
}

/// The ids of the containers the engine knows, with `label` when given.
pub fn containers(label: Option<&str>) -> Vec<String> {
    let mut args = vec!["ps", "-a", "-q", "--no-trunc"];
    let filter;
    if let Some(l) = label {
        filter = format!("label={l}");
        args.extend(["--filter", &filter]);
    }
    let out = std::process::Command::new("podman")
        .args(&args)
        .output()
        .expect("podman");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

pub fn eventually(what: &str, mut ok: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(60);
    while !ok() {
        assert!(Instant::now() < until, "never: {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn processes_of(uid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let owner = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|u| u.parse::<u32>().ok());
        // A zombie has ended: only its parent (the container's init) has yet to reap it.
        let zombie = status
            .lines()
            .find_map(|l| l.strip_prefix("State:"))
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        if owner == Some(uid) && !zombie {
            out.push(std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default());
        }
    }
    out
}

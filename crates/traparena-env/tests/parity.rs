//! Real test suites behave the same under every backend: what Python's standard library and
//! common tools need from the system (reading `/sys`, POSIX semaphores in `/dev/shm`) works
//! under each, and writing to `/sys` is refused under each.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use traparena_env::{Backend, RunSpec, Sandbox, Workspace};

/// Files under `/sys` that Python tools read (pylint counts CPUs from the cgroup files; glibc's
/// `sysconf(_SC_NPROCESSORS_ONLN)` reads `cpu/online`). The test reads those that exist here.
const SYS_FILES: &[&str] = &[
    "/sys/fs/cgroup/cgroup.controllers",
    "/sys/fs/cgroup/cpu.max",
    "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
    "/sys/fs/cgroup/cpu/cpu.cfs_period_us",
    "/sys/devices/system/cpu/online",
];

const SCRIPT: &str = r#"
import json, multiprocessing, os, sys
from pathlib import Path

wanted = json.loads(sys.argv[1])
for p in wanted:
    # pylint >= 2.14 does this to count CPUs: is_file() raises on EACCES.
    if not Path(p).is_file():
        print("MISSING", p)
        sys.exit(3)
    print("READ", p, open(p).read().strip()[:40])
print("CPUS", os.cpu_count(), len(os.sched_getaffinity(0)))

lock = multiprocessing.Lock()
assert lock.acquire(timeout=5)
lock.release()
sem = multiprocessing.Semaphore(1)
assert sem.acquire(timeout=5)
assert not sem.acquire(block=False)
sem.release()
print("SEMAPHORES OK")
# Leave a file behind, and look for the harness's.
with open("/dev/shm/traparena-parity-left-" + sys.argv[2], "w") as f:
    f.write("left")
print("HOST SHM VISIBLE", os.path.exists("/dev/shm/traparena-parity-host-" + sys.argv[2]))

denied = 0
for p in wanted[:1] + ["/sys/traparena-pwned", "/sys/fs/cgroup/traparena-pwned"]:
    try:
        with open(p, "w") as f:
            f.write("1")
        print("WROTE", p)
    except OSError as e:
        denied += 1
        print("WRITE DENIED", p, type(e).__name__)
try:
    os.mkdir("/sys/fs/cgroup/cpu/traparena-pwned")
    print("MKDIR", "/sys/fs/cgroup/cpu/traparena-pwned")
except OSError as e:
    denied += 1
    print("WRITE DENIED mkdir", type(e).__name__)
print("DENIED", denied)
"#;

/// Runs the script; also says whether the run had a sandbox user of its own.
fn run_script(sb: &Sandbox, files: &[&str], marker: &str) -> (traparena_env::ProcessOutcome, bool) {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("check.py"), SCRIPT).unwrap();
    let ws = Workspace::materialize(src.path(), sb).unwrap();
    let out = sb
        .run(
            ws.mounts(),
            &RunSpec {
                argv: vec![
                    "python3".into(),
                    "check.py".into(),
                    serde_json::to_string(files).unwrap(),
                    marker.into(),
                ],
                env: Vec::new(),
                timeout: Duration::from_secs(60),
                report_pipe: false,
            },
        )
        .unwrap();
    (out, ws.mounts().user.is_some())
}

#[test]
fn sys_reads_and_semaphores_work_under_every_backend() {
    let files: Vec<&str> = SYS_FILES
        .iter()
        .copied()
        .filter(|p| std::fs::read(p).is_ok())
        .collect();
    assert!(
        !files.is_empty(),
        "none of {SYS_FILES:?} is readable on this machine"
    );
    let sandboxes: Vec<Sandbox> = isolating_sandboxes()
        .into_iter()
        .chain([none_sandbox()])
        .collect();
    let marker = format!("{}", std::process::id());
    let host_file = Path::new("/dev/shm").join(format!("traparena-parity-host-{marker}"));
    std::fs::write(&host_file, "host").unwrap();
    let left = Path::new("/dev/shm").join(format!("traparena-parity-left-{marker}"));
    let mut failures = Vec::new();
    for sb in &sandboxes {
        let (out, own_user) = run_script(sb, &files, &marker);
        let all = format!("{}{}", out.stdout.text, out.stderr.text);
        let mut problems = Vec::new();
        if out.exit_code != Some(0) {
            problems.push(format!("exit status {:?}", out.exit_code));
        }
        for f in &files {
            if !out.stdout.text.contains(&format!("READ {f}")) {
                problems.push(format!("{f} not read"));
            }
        }
        if !out.stdout.text.contains("SEMAPHORES OK") {
            problems.push("semaphores failed".into());
        }
        if all.contains("WROTE") || all.contains("MKDIR") {
            problems.push("wrote to /sys".into());
        }
        if !out.stdout.text.contains("DENIED 4") {
            problems.push("not every write to /sys was denied".into());
        }
        let bubblewrap = sb.backend() == Backend::Bubblewrap;
        if bubblewrap && !out.stdout.text.contains("HOST SHM VISIBLE False") {
            problems.push("the host's /dev/shm is visible".into());
        }
        // bubblewrap's /dev/shm ends with the run; without a mount namespace the harness removes
        // what the sandbox user left there.
        if (bubblewrap || own_user) && left.exists() {
            problems.push("a file left in /dev/shm outlived the run".into());
        }
        let _ = std::fs::remove_file(&left);
        if !problems.is_empty() {
            failures.push(format!(
                "{:?}: {}\n{all}",
                sb.backend(),
                problems.join(", ")
            ));
        }
    }
    std::fs::remove_file(&host_file).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
    assert!(!Path::new("/sys/fs/cgroup/cpu/traparena-pwned").exists());
}

/// A read-only path under `/tmp` (a virtual environment built in a temporary folder) is
/// readable at its own path under every backend, and not writable. bubblewrap mounts the
/// scratch folder on `/tmp`, which used to hide it there.
#[test]
fn read_only_paths_under_tmp_are_visible_under_every_backend() {
    use std::os::unix::fs::PermissionsExt;
    let env = tempfile::tempdir().unwrap();
    std::fs::set_permissions(env.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = env.path().join("data.txt");
    std::fs::write(&data, "from the environment").unwrap();
    let config = traparena_env::SandboxConfig {
        read_only_paths: vec![env.path().to_owned()],
        ..traparena_env::SandboxConfig::default()
    };
    let src = tempfile::tempdir().unwrap();
    let script = format!(
        "print(open({data:?}).read())\ntry:\n    open({data:?}, 'a').write('x')\n    print('WROTE')\nexcept OSError as e:\n    print('DENIED', type(e).__name__)",
        data = data.to_str().unwrap()
    );
    let sandboxes = every_sandbox(config);
    assert!(sandboxes.len() >= 2, "no isolating backend here");
    for sb in sandboxes {
        let ws = Workspace::materialize(src.path(), &sb).unwrap();
        let out = sb
            .run(
                ws.mounts(),
                &RunSpec {
                    argv: vec!["python3".into(), "-c".into(), script.clone()],
                    env: Vec::new(),
                    timeout: Duration::from_secs(60),
                    report_pipe: false,
                },
            )
            .unwrap();
        // PermissionError or, without a sandbox user under bubblewrap, a read-only file system.
        assert!(
            out.stdout.text.starts_with("from the environment\nDENIED "),
            "{:?}: {}{}",
            sb.backend(),
            out.stdout.text,
            out.stderr.text
        );
    }
    assert_eq!(
        std::fs::read_to_string(&data).unwrap(),
        "from the environment"
    );
}

//! Task validity never depends on the sandbox backend: a task whose tests read the CPU quota
//! under /sys (as pylint does to count CPUs) and take POSIX semaphores (multiprocessing locks,
//! as pytest's own tests do) validates, and its reference is accepted, under every backend that
//! works on this machine.

use traparena_env::{BackendChoice, Sandbox, SandboxConfig};

const BUGGY: &str = "import multiprocessing\nimport os\n\n\ndef workers():\n    \"\"\"How many workers to start: the CPUs this process may use.\"\"\"\n    with multiprocessing.Lock():\n        return 0\n";
const FIXED: &str = "import multiprocessing\nimport os\n\n\ndef workers():\n    \"\"\"How many workers to start: the CPUs this process may use.\"\"\"\n    with multiprocessing.Lock():\n        return max(1, len(os.sched_getaffinity(0)))\n";
const TEST: &str = "import multiprocessing\nimport os\nimport unittest\n\nfrom cpus import workers\n\n\ndef cgroup_quota():\n    for p in ('/sys/fs/cgroup/cpu.max', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us', '/sys/fs/cgroup/cgroup.controllers'):\n        if os.path.exists(p):\n            with open(p) as f:\n                return f.read()\n    return os.listdir('/sys')\n\n\nclass T(unittest.TestCase):\n    def test_sys_is_readable(self):\n        self.assertIsNotNone(cgroup_quota())\n\n    def test_semaphores(self):\n        s = multiprocessing.Semaphore(1)\n        with s:\n            self.assertTrue(True)\n";
const HIDDEN: &str = "import unittest\n\nfrom cpus import workers\n\n\nclass H(unittest.TestCase):\n    def test_at_least_one(self):\n        self.assertGreaterEqual(workers(), 1)\n";

fn task_dir(root: &std::path::Path) -> std::path::PathBuf {
    let d = root.join("cpus");
    let w = |rel: &str, text: &str| {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("repo/cpus.py", BUGGY);
    w("repo/tests/test_cpus.py", TEST);
    w("hidden/hidden_tests/test_cpus_hidden.py", HIDDEN);
    let body = diffy::create_patch(BUGGY, FIXED).to_string();
    let hunks = body
        .split_once("\n@@")
        .map(|(_, b)| format!("@@{b}"))
        .unwrap();
    w(
        "reference.patch",
        &format!("diff --git a/cpus.py b/cpus.py\n--- a/cpus.py\n+++ b/cpus.py\n{hunks}"),
    );
    w(
        "task.json",
        &serde_json::json!({
            "id": "cpus", "source": "test", "language": "python",
            "description": "workers() says 0 workers.",
            "public_tests": {"command": ["python3", "-m", "unittest", "discover", "-s", "tests", "-q"],
                             "runner": "unittest", "files": ["tests/test_cpus.py"]},
            "hidden_tests": {"command": ["python3", "-m", "unittest", "discover", "-s", "hidden_tests", "-q"],
                             "runner": "unittest", "files": ["hidden_tests/test_cpus_hidden.py"]},
            "timeout_s": 60
        })
        .to_string(),
    );
    d
}

#[test]
fn sys_and_semaphores_work_under_every_backend() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = task_dir(tmp.path());
    let mut tried = Vec::new();
    for choice in [BackendChoice::Bubblewrap, BackendChoice::Builtin] {
        let Ok(sb) = Sandbox::new(SandboxConfig {
            backend: choice,
            ..SandboxConfig::default()
        }) else {
            eprintln!("backend {choice:?} is not available here; not tried");
            continue;
        };
        let report = traparena_eval::validate(&dir, &sb, &Default::default()).unwrap();
        assert!(
            report.valid,
            "under {}: {:?}",
            sb.backend(),
            report.problems().collect::<Vec<_>>()
        );
        tried.push(sb.backend());
    }
    // At least one real isolation backend ran the task (the builtin one needs only util-linux
    // and Landlock, present wherever these tests run).
    assert!(!tried.is_empty(), "no sandbox backend is available");
}

//! Shared helpers: a small synthetic task built in a temporary folder.
#![allow(dead_code)]
// Says which sandbox backends a test could not cover here.
#![allow(clippy::print_stderr)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

use traparena_env::{BackendChoice, Sandbox, SandboxConfig};
use traparena_task::Task;

/// A string only the hidden test and the reference patch hold: found anywhere else, it leaked.
pub const SECRET: &str = "TOP-SECRET-HIDDEN-4711";

/// A task folder with `m.py`, a public test, a hidden test holding [`SECRET`] and a reference
/// patch also holding it.
pub fn make_task(timeout_s: u64) -> (tempfile::TempDir, Task) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("task");
    let w = |p: &str, s: &str| {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, s).unwrap();
    };
    w("repo/m.py", "def f(x):\n    return x + 1\n");
    w(
        "repo/tests/test_m.py",
        "import unittest\nimport m\n\nclass T(unittest.TestCase):\n    def test_f(self):\n        self.assertEqual(m.f(1), 2)\n",
    );
    w(
        "hidden/hidden_tests/test_hidden.py",
        &format!(
            "# {SECRET}\nimport unittest\nimport m\n\nclass H(unittest.TestCase):\n    def test_f(self):\n        self.assertEqual(m.f(-1), 0)\n"
        ),
    );
    w(
        "reference.patch",
        &format!(
            "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n def f(x):\n+    # {SECRET}\n     return x + 1\n"
        ),
    );
    w(
        "task.json",
        &serde_json::json!({
            "id": "synthetic",
            "source": "test",
            "language": "python",
            "description": "f is fine.",
            "public_tests": {"command": ["python3", "-m", "unittest", "discover", "-s", "tests", "-q"],
                              "runner": "unittest", "files": ["tests/test_m.py"]},
            "hidden_tests": {"command": ["python3", "-m", "unittest", "discover", "-s", "hidden_tests", "-q"],
                              "runner": "unittest", "files": ["hidden_tests/test_hidden.py"]},
            "timeout_s": timeout_s,
        })
        .to_string(),
    );
    let task = Task::load(&dir).unwrap();
    (tmp, task)
}

/// The isolating backends available on this machine (bubblewrap, builtin). Without bubblewrap
/// the tests that use this cover only the builtin backend; `bubblewrap_is_covered` (ignored
/// unless bubblewrap is installed, run by CI) makes that gap visible rather than silent.
pub fn isolating_sandboxes() -> Vec<Sandbox> {
    let mut v = Vec::new();
    for b in [BackendChoice::Bubblewrap, BackendChoice::Builtin] {
        match Sandbox::new(SandboxConfig {
            backend: b,
            ..SandboxConfig::default()
        }) {
            Ok(s) => v.push(s),
            Err(e) => eprintln!("backend {b:?} not covered here: {e}"),
        }
    }
    assert!(
        !v.is_empty(),
        "no isolating sandbox backend available on this machine"
    );
    v
}

/// Every backend `Sandbox::new` accepts here with `config` (bubblewrap and builtin where they
/// work, none always), for tests that must hold under each.
pub fn every_sandbox(config: SandboxConfig) -> Vec<Sandbox> {
    let mut v = Vec::new();
    for b in [
        BackendChoice::Bubblewrap,
        BackendChoice::Builtin,
        BackendChoice::None,
    ] {
        match Sandbox::new(SandboxConfig {
            backend: b,
            ..config.clone()
        }) {
            Ok(s) => v.push(s),
            Err(e) => eprintln!("backend {b:?} not covered here: {e}"),
        }
    }
    v
}

/// The unisolated backend (`none`), which every machine has.
pub fn none_sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig {
        backend: BackendChoice::None,
        ..SandboxConfig::default()
    })
    .unwrap()
}

/// The task's folder.
pub fn task_dir(task: &Task) -> PathBuf {
    task.dir.clone()
}

/// Whether anything (a dangling link too) is at `p`.
pub fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// A tiny HTTP/1.1 server on the host's loopback standing in for the model proxy: it answers
/// every request with `pong:` and the request's body.
pub fn proxy() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream));
        }
    });
    port
}

fn answer(stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return; // the client went away midway
    }
    let mut reply = b"pong:".to_vec();
    reply.extend_from_slice(&body);
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reply.len()
    );
    let _ = stream.write_all(&reply);
}

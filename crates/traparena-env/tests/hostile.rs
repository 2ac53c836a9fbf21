//! Hostile agents and hostile code under test: nothing hangs, crashes the harness or escapes,
//! and every observation says what happened.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::*;
use traparena_env::{Environment, Limits, SandboxConfig, ToolLimits};
use traparena_task::{Action, Observation};
use traparena_testkit::procs::survivors;

fn write(env: &mut Environment, path: &str, content: &str) -> Observation {
    env.step(&Action::Write {
        path: path.into(),
        content: content.into(),
    })
    .unwrap()
}

/// Replaces the public test with `body` (a test method body) and runs the public tests.
fn run_code(env: &mut Environment, body: &str) -> Observation {
    let indented: String = body.lines().map(|l| format!("        {l}\n")).collect();
    let test = format!(
        "import os, sys, socket, subprocess, time\nimport unittest\n\nclass T(unittest.TestCase):\n    def test_hostile(self):\n{indented}"
    );
    let obs = write(env, "tests/test_m.py", &test);
    assert!(!obs.error, "{}", obs.output);
    env.step(&Action::RunPublicTests).unwrap()
}

/// Every test here that runs on `isolating_sandboxes()` covers bubblewrap only where it is
/// installed; this one says so instead of letting the gap pass silently.
#[test]
#[ignore = "needs bubblewrap: apt-get install bubblewrap (CI installs it)"]
fn bubblewrap_is_covered() {
    let backends: Vec<_> = isolating_sandboxes().iter().map(|s| s.backend()).collect();
    assert!(
        backends.contains(&traparena_env::Backend::Bubblewrap),
        "bubblewrap is not usable here, so the hostile-code tests covered only {backends:?}"
    );
}

/// `isolated` takes the backend `auto` takes when that one isolates (bubblewrap, else builtin:
/// CI's second pass masks bubblewrap), and is an error where `auto` would run unisolated.
#[test]
fn isolated_takes_the_strongest_isolating_backend_and_never_none() {
    let auto = traparena_env::Sandbox::new(traparena_env::SandboxConfig::default()).unwrap();
    let isolated = traparena_env::Sandbox::new(traparena_env::SandboxConfig {
        backend: traparena_env::BackendChoice::Isolated,
        ..Default::default()
    });
    match auto.backend() {
        traparena_env::Backend::None => match isolated {
            Err(traparena_env::EnvError::BackendUnavailable { backend, reason }) => {
                assert_eq!(backend, "isolated");
                assert!(
                    reason.contains("bubblewrap") && reason.contains("builtin"),
                    "{reason}"
                );
            }
            other => panic!("isolated without a sandbox: {other:?}"),
        },
        b => {
            let isolated = isolated.unwrap();
            assert_eq!(isolated.backend(), b);
            assert_eq!(isolated.warnings().is_empty(), auto.warnings().is_empty());
        }
    }
}

#[test]
fn path_traversal_read_and_write_are_refused() {
    let (tmp, task) = make_task(10);
    let mut env = Environment::new(&task, &none_sandbox(), ToolLimits::default()).unwrap();
    for path in [
        "../../etc/passwd",
        "../task/hidden/hidden_tests/test_hidden.py",
        "a/../../x",
    ] {
        let obs = env
            .step(&Action::Read {
                path: path.into(),
                start_line: None,
                end_line: None,
            })
            .unwrap();
        assert!(
            obs.error && obs.output.contains("escapes the workspace"),
            "{path}: {}",
            obs.output
        );
    }
    let obs = env
        .step(&Action::Read {
            path: "/etc/passwd".into(),
            start_line: None,
            end_line: None,
        })
        .unwrap();
    assert!(
        obs.error && obs.output.contains("absolute paths are not allowed"),
        "{}",
        obs.output
    );
    let outside = tmp.path().join("escaped.txt");
    for path in [
        "../escaped.txt",
        "../../escaped.txt",
        outside.to_str().unwrap(),
    ] {
        let obs = write(&mut env, path, "x");
        assert!(obs.error, "{path}: {}", obs.output);
    }
    assert!(!exists(&outside));
    let obs = write(&mut env, ".git/config", "[core]\n");
    assert!(obs.error && obs.output.contains(".git"), "{}", obs.output);
    // Inside paths that wander are fine.
    let obs = env
        .step(&Action::Read {
            path: "tests/../m.py".into(),
            start_line: None,
            end_line: None,
        })
        .unwrap();
    assert!(
        !obs.error && obs.output.contains("return x + 1"),
        "{}",
        obs.output
    );
}

#[test]
fn symlinks_pointing_outside_are_refused() {
    let (_tmp, task) = make_task(10);
    let secret = task.dir.join("hidden/hidden_tests/test_hidden.py");
    std::os::unix::fs::symlink(&secret, task.repo_dir().join("leak.py")).unwrap();
    std::os::unix::fs::symlink(task.dir.join("hidden"), task.repo_dir().join("leakdir")).unwrap();
    let mut env = Environment::new(&task, &none_sandbox(), ToolLimits::default()).unwrap();
    for path in ["leak.py", "leakdir/hidden_tests/test_hidden.py"] {
        let obs = env
            .step(&Action::Read {
                path: path.into(),
                start_line: None,
                end_line: None,
            })
            .unwrap();
        assert!(
            obs.error && obs.output.contains("outside the workspace"),
            "{path}: {}",
            obs.output
        );
        assert!(!obs.output.contains(SECRET));
    }
    let obs = env
        .step(&Action::Search {
            pattern: "SECRET".into(),
            path: None,
        })
        .unwrap();
    assert!(!obs.output.contains(SECRET), "{}", obs.output);
    let obs = write(&mut env, "leak.py", "overwritten");
    assert!(obs.error, "{}", obs.output);
    assert!(std::fs::read_to_string(&secret).unwrap().contains(SECRET));
    let obs = env.step(&Action::List { path: None }).unwrap();
    assert!(obs.output.contains("leak.py ->"), "{}", obs.output);
}

#[test]
fn infinite_loop_times_out() {
    for sb in isolating_sandboxes().into_iter().chain([none_sandbox()]) {
        let (_tmp, task) = make_task(2);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let t = Instant::now();
        let obs = run_code(&mut env, "while True:\n    pass");
        assert!(t.elapsed() < Duration::from_secs(15), "{:?}", sb.backend());
        assert!(
            obs.output.contains("timed out"),
            "{:?}: {}",
            sb.backend(),
            obs.output
        );
        assert_eq!(obs.tests_passed, Some(false));
    }
}

#[test]
fn a_test_run_may_use_cpu_up_to_its_timeout() {
    // The sandbox's CPU limit is 1 s; the task's timeout is 60 s. Tests that need 3 CPU
    // seconds pass: the limit per process follows the run's timeout.
    let config = SandboxConfig {
        limits: Limits {
            cpu_seconds: 1,
            ..Limits::default()
        },
        ..SandboxConfig::default()
    };
    for sb in every_sandbox(config) {
        let (_tmp, task) = make_task(60);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let obs = run_code(
            &mut env,
            "t = time.process_time()\nwhile time.process_time() - t < 3:\n    pass",
        );
        assert_eq!(
            obs.tests_passed,
            Some(true),
            "{:?}: {}",
            sb.backend(),
            obs.output
        );
    }
}

#[test]
fn fork_bomb_is_contained() {
    for sb in isolating_sandboxes() {
        let (_tmp, task) = make_task(4);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let t = Instant::now();
        let obs = run_code(
            &mut env,
            "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        );
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", sb.backend());
        assert_eq!(obs.tests_passed, Some(false), "{}", obs.output);
        assert!(obs.output.contains("FAILED"), "{}", obs.output);
        // The harness still works afterwards.
        let obs = env.step(&Action::List { path: None }).unwrap();
        assert!(!obs.error);
    }
}

#[test]
fn memory_bomb_is_contained() {
    for sb in isolating_sandboxes() {
        let (_tmp, task) = make_task(20);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let obs = run_code(&mut env, "x = bytearray(64 * 1024 ** 3)");
        assert!(
            obs.output.contains("MemoryError"),
            "{:?}: {}",
            sb.backend(),
            obs.output
        );
        assert_eq!(obs.tests_passed, Some(false));
    }
}

#[test]
fn huge_output_is_capped() {
    let sb = isolating_sandboxes().remove(0);
    let (_tmp, task) = make_task(30);
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    let obs = run_code(
        &mut env,
        "chunk = 'x' * (1 << 20)\nfor _ in range(100):\n    sys.stdout.write(chunk)\nsys.stdout.flush()",
    );
    assert!(obs.truncated, "{}", obs.output.len());
    assert!(obs.output.len() < 64 * 1024);
    assert!(
        obs.output.contains("[output truncated"),
        "{}",
        &obs.output[obs.output.len() - 200..]
    );
    let run = env.last_test_run().unwrap();
    assert!(run.output_truncated);
    assert!(
        run.output
            .contains("stdout truncated: 104857600 bytes in all"),
        "{}",
        &run.output[run.output.len().saturating_sub(300)..]
    );
}

#[test]
fn tcp_to_loopback_is_blocked() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for sb in isolating_sandboxes() {
        let (_tmp, task) = make_task(20);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let obs = run_code(
            &mut env,
            &format!(
                "try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n    print('CONNECTED')\nexcept OSError as e:\n    print('BLOCKED', type(e).__name__, e)"
            ),
        );
        assert!(
            obs.output.contains("BLOCKED"),
            "{:?}: {}",
            sb.backend(),
            obs.output
        );
        assert!(!obs.output.contains("CONNECTED"));
        assert!(
            listener.accept().is_err(),
            "the server saw a connection from {:?}",
            sb.backend()
        );
    }
}

#[test]
fn setsid_children_are_killed() {
    let sandboxes: Vec<_> = isolating_sandboxes()
        .into_iter()
        .chain([none_sandbox()])
        .collect();
    for (i, sb) in sandboxes.into_iter().enumerate() {
        let marker = format!("98765{i}");
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let obs = run_code(
            &mut env,
            &format!(
                "subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\ntime.sleep(0.3)\nprint('SPAWNED')"
            ),
        );
        assert!(
            obs.output.contains("SPAWNED"),
            "{:?}: {}",
            sb.backend(),
            obs.output
        );
        assert_eq!(
            survivors(&format!("sleep\0{marker}")),
            0,
            "{:?}: a setsid child survived",
            sb.backend()
        );
    }
}

#[test]
fn writes_outside_the_workspace_fail() {
    for sb in isolating_sandboxes() {
        let (tmp, task) = make_task(20);
        let target = tmp.path().join("pwned.txt");
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let obs = run_code(
            &mut env,
            &format!(
                "for p in [{:?}, '/etc/pwned', '/usr/pwned', '../pwned']:\n    try:\n        open(p, 'w').write('x')\n        print('WROTE', p)\n    except OSError as e:\n        print('BLOCKED', p, type(e).__name__)",
                target.to_str().unwrap()
            ),
        );
        assert!(
            !obs.output.contains("WROTE"),
            "{:?}: {}",
            sb.backend(),
            obs.output
        );
        assert_eq!(obs.output.matches("BLOCKED").count(), 4, "{}", obs.output);
        assert!(!exists(&target));
        assert!(!exists(std::path::Path::new("/etc/pwned")));
    }
}

#[test]
fn hidden_tests_and_reference_patch_are_unreachable() {
    for sb in isolating_sandboxes() {
        let (_tmp, task) = make_task(20);
        let hidden = task.dir.join("hidden/hidden_tests/test_hidden.py");
        let patch = task.dir.join("reference.patch");
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let code = format!(
            r#"paths = [{hidden:?}, {patch:?}, '../hidden/hidden_tests/test_hidden.py', '../../task/reference.patch', '../reference.patch']
for pid in os.listdir('/proc'):
    if pid.isdigit():
        for link in ('cwd', 'root'):
            paths.append('/proc/%s/%s/%s' % (pid, link, {rel_hidden:?}))
            paths.append('/proc/%s/%s%s' % (pid, link, {hidden:?}))
found = 0
for p in paths:
    try:
        data = open(p).read()
        found += 1
        print('READ', p, data[:40])
    except OSError:
        pass
print('TRIED', len(paths), 'FOUND', found)"#,
            hidden = hidden.to_str().unwrap(),
            patch = patch.to_str().unwrap(),
            rel_hidden = "hidden/hidden_tests/test_hidden.py",
        );
        let obs = run_code(&mut env, &code);
        assert!(
            obs.output.contains("FOUND 0"),
            "{:?}: {}",
            sb.backend(),
            obs.output
        );
        assert!(
            !obs.output.contains(SECRET),
            "{:?}: {}",
            sb.backend(),
            obs.output
        );
    }
}

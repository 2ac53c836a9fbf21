//! Agent processes: an external agent runs as its own process in the episode's sandbox, edits
//! the workspace, keeps its artefacts at home, reaches the model proxy and nothing else, and
//! never outlives its end.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use common::*;
use traparena_env::{Backend, EnvError, Environment, Sandbox, ToolLimits};
use traparena_task::{AgentCommand, AgentExit};
use traparena_testkit::procs::survivors;

/// Tests that count the bridge's threads and sockets take this exclusively; every other test
/// shares it, so that none of their bridges is counted.
static COUNTING: RwLock<()> = RwLock::new(());

fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    COUNTING.read().unwrap_or_else(|e| e.into_inner())
}

fn sh(script: &str) -> AgentCommand {
    AgentCommand {
        argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
        timeout: Duration::from_secs(120),
        ..AgentCommand::default()
    }
}

fn python(code: &str) -> AgentCommand {
    AgentCommand {
        argv: vec!["/usr/bin/python3".into(), "-c".into(), code.into()],
        timeout: Duration::from_secs(120),
        ..AgentCommand::default()
    }
}

fn run(env: &mut Environment, cmd: &AgentCommand) -> AgentExit {
    env.spawn_agent(cmd).unwrap().wait().unwrap()
}

fn every_backend() -> Vec<Sandbox> {
    isolating_sandboxes()
        .into_iter()
        .chain([none_sandbox()])
        .collect()
}

/// The backends under which nothing a process starts outlives it: the isolating ones, and
/// `none` when the harness runs as root (it then kills every process of the sandbox user).
fn containing_backends() -> Vec<Sandbox> {
    let none = none_sandbox();
    let root = none.allocate_user().unwrap().is_some();
    isolating_sandboxes()
        .into_iter()
        .chain(root.then_some(none))
        .collect()
}

/// Python run by the agent: three requests to the proxy (one with a body of 300 kB, echoed
/// back), then a connection attempt to `other`.
fn network_probe(proxy: u16, other: u16) -> String {
    format!(
        r#"import socket, urllib.request
for i in range(3):
    body = (b'x' * 300000) if i == 1 else b'hello'
    req = urllib.request.Request('http://127.0.0.1:{proxy}/v1/chat', data=body, method='POST')
    got = urllib.request.urlopen(req, timeout=20).read()
    print('PROXY', i, len(got), got[:10].decode())
try:
    socket.create_connection(('127.0.0.1', {other}), timeout=3).close()
    print('CONNECTED')
except OSError as e:
    print('BLOCKED', type(e).__name__)
try:
    socket.socket().bind(('127.0.0.1', {other}))
    print('BOUND')
except OSError as e:
    print('BIND', type(e).__name__)
"#
    )
}

#[test]
fn an_agent_process_can_be_waited_for_on_another_thread_and_killed_from_any() {
    fn send<T: Send>() {}
    fn shared_handle<T: Clone + Send + Sync + 'static>() {}
    send::<traparena_env::AgentProcess>();
    shared_handle::<traparena_env::AgentKiller>();
}

#[test]
fn a_shell_agent_edits_the_workspace_and_keeps_its_artefacts_at_home() {
    let _g = shared();
    for sb in every_backend() {
        let b = sb.backend();
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let mut cmd = sh(r#"set -e
sed -i 's/x + 1/x + 2/' m.py
echo '{"steps": 3}' > "$HOME/run.traj.json"
echo 'scratch notes' > agent-history.log
mkdir -p .agent-cache && echo c > .agent-cache/x
echo "CWD=$(pwd)"
echo "HOME=$HOME"
echo "ARGS={workspace} {home}"
echo "VAR=$AGENT_CONF"
cat "$HOME/conf/settings.yaml"
"#);
        cmd.env = vec![("AGENT_CONF".into(), "{home}/conf/settings.yaml".into())];
        cmd.files = vec![("conf/settings.yaml".into(), b"model: local\n".to_vec())];
        cmd.exclude = vec!["*.log".into(), ".agent-cache/".into()];
        let exit = run(&mut env, &cmd);
        assert_eq!(exit.exit_code, Some(0), "{b:?}: {exit:?}");
        assert!(!exit.timed_out && !exit.killed, "{b:?}: {exit:?}");

        let (ws, home) = match b {
            Backend::Bubblewrap => ("/workspace".to_owned(), "/tmp/home".to_owned()),
            _ => (
                env.workspace().path().display().to_string(),
                exit.home.display().to_string(),
            ),
        };
        for line in [
            format!("CWD={ws}"),
            format!("HOME={home}"),
            format!("ARGS={ws} {home}"),
            format!("VAR={home}/conf/settings.yaml"),
            "model: local".to_owned(),
        ] {
            assert!(
                exit.stdout.lines().any(|l| l == line),
                "{b:?}: no {line:?} in {}",
                exit.stdout
            );
        }
        assert!(!exit.home.starts_with(env.workspace().path()), "{b:?}");
        assert_eq!(
            std::fs::read_to_string(exit.home.join("run.traj.json")).unwrap(),
            "{\"steps\": 3}\n"
        );
        if let Some(uid) = env.workspace().mounts().user {
            use std::os::unix::fs::MetadataExt;
            for p in [exit.home.clone(), exit.home.join("conf/settings.yaml")] {
                assert_eq!(std::fs::metadata(&p).unwrap().uid(), uid, "{}", p.display());
            }
        }

        let patch = env.candidate_patch().unwrap();
        assert!(patch.contains("+    return x + 2"), "{b:?}: {patch}");
        assert!(patch.contains("-    return x + 1"), "{b:?}: {patch}");
        for absent in ["traj", "agent-history.log", ".agent-cache", "settings.yaml"] {
            assert!(!patch.contains(absent), "{b:?}: {absent} in {patch}");
        }
        assert!(
            env.workspace().path().join("agent-history.log").exists(),
            "{b:?}"
        );
    }
}

#[test]
fn an_exclude_pattern_hides_new_files_but_never_changes_to_the_original() {
    let _g = shared();
    let sb = isolating_sandboxes().remove(0);
    let (_tmp, task) = make_task(10);
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    let mut cmd = sh("echo '# edited' >> m.py && echo new > new.py && echo kept > notes.txt");
    cmd.exclude = vec!["*.py".into()];
    let exit = run(&mut env, &cmd);
    assert_eq!(exit.exit_code, Some(0), "{exit:?}");
    let patch = env.candidate_patch().unwrap();
    assert!(patch.contains("+# edited"), "{patch}");
    assert!(patch.contains("notes.txt"), "{patch}");
    assert!(!patch.contains("new.py"), "{patch}");
}

#[test]
fn an_agent_command_sets_its_own_address_space_limit() {
    let _g = shared();
    let (_tmp, task) = make_task(10);
    // 1 GiB fits the sandbox's limit (4 GiB), not one of 256 MiB; 6 GiB fits one of 8 GiB.
    let cases = [
        (None, 1u64 << 30, true),
        (Some(256 << 20), 1 << 30, false),
        (Some(8 << 30), 6 << 30, true),
    ];
    for sb in every_backend() {
        let backend = sb.backend();
        for (limit, size, fits) in cases {
            let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
            let cmd = AgentCommand {
                address_space_bytes: limit,
                ..python(&format!(
                    "import mmap\ntry:\n    m = mmap.mmap(-1, {size})\n    print('MAPPED')\nexcept (MemoryError, OSError):\n    print('REFUSED')"
                ))
            };
            let exit = run(&mut env, &cmd);
            let want = if fits { "MAPPED" } else { "REFUSED" };
            assert!(
                exit.stdout.contains(want),
                "{backend} {limit:?} {size}: {} {}",
                exit.stdout,
                exit.stderr
            );
        }
    }
}

#[test]
fn the_end_of_a_long_output_is_kept() {
    let _g = shared();
    let sb = isolating_sandboxes().remove(0);
    let (_tmp, task) = make_task(10);
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    let exit = run(
        &mut env,
        &python(
            "import sys\nfor i in range(40000):\n    print('line', i, 'x' * 80)\nprint('THE END')\nsys.stderr.write('E' * 3000000 + 'ERR END')",
        ),
    );
    assert_eq!(
        exit.exit_code,
        Some(0),
        "{}",
        &exit.stderr[exit.stderr.len().saturating_sub(300)..]
    );
    let cap = sb.config().limits.output_bytes;
    assert!(exit.stdout.len() <= cap && exit.stdout.len() > cap / 2);
    assert!(
        exit.stdout.ends_with("THE END\n"),
        "{}",
        &exit.stdout[exit.stdout.len() - 100..]
    );
    assert!(!exit.stdout.contains("line 0 "));
    assert!(exit.stderr.ends_with("ERR END") && exit.stderr.len() <= cap);
}

#[test]
fn home_files_that_leave_the_home_folder_are_refused() {
    let _g = shared();
    let (tmp, task) = make_task(10);
    let mut env = Environment::new(&task, &none_sandbox(), ToolLimits::default()).unwrap();
    let escape = tmp.path().join("escaped");
    for path in ["../../escaped", "/etc/traparena-escaped", "a/../../b"] {
        let mut cmd = sh("true");
        cmd.files = vec![(path.into(), b"x".to_vec())];
        match env.spawn_agent(&cmd) {
            Err(e @ EnvError::AgentCommand { .. }) => {
                assert!(e.to_string().contains(path), "{e}")
            }
            other => panic!("{path}: {other:?}"),
        }
    }
    assert!(!exists(&escape));
    assert!(!exists(Path::new("/etc/traparena-escaped")));
}

#[test]
fn a_missing_agent_program_is_a_start_failure() {
    let _g = shared();
    for sb in every_backend() {
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let mut cmd = sh("true");
        cmd.argv = vec!["/opt/no-such-agent/bin/agent".into()];
        cmd.proxy_port = Some(9);
        match env.spawn_agent(&cmd) {
            Err(e @ EnvError::Start { .. }) => {
                assert!(
                    e.to_string().contains("/opt/no-such-agent/bin/agent"),
                    "{e}"
                )
            }
            other => panic!("{:?}: {other:?}", sb.backend()),
        }
        assert!(matches!(
            env.spawn_agent(&AgentCommand::default()),
            Err(EnvError::AgentCommand { .. })
        ));
    }
}

#[test]
fn a_hostile_agent_cannot_read_the_task_or_find_git() {
    let _g = shared();
    for sb in isolating_sandboxes() {
        let b = sb.backend();
        let (_tmp, task) = make_task(10);
        let hidden = task.dir.join("hidden/hidden_tests/test_hidden.py");
        let patch = task.dir.join("reference.patch");
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let code = format!(
            r#"import os, subprocess
found = 0
for p in [{hidden:?}, {patch:?}, '../hidden/hidden_tests/test_hidden.py', '../reference.patch', '../../task/reference.patch']:
    try:
        print('READ', p, open(p).read()[:60])
        found += 1
    except OSError as e:
        print('DENIED', p, type(e).__name__)
print('FOUND', found)
print('GIT', [d for d in os.listdir('.') if d == '.git'], os.path.exists('.git'))
out = subprocess.run(['/bin/sh', '-c', 'cat {hidden} {patch}; ls -a; git rev-parse --git-dir'], capture_output=True, text=True)
print(out.stdout, out.stderr)
"#,
            hidden = hidden.display(),
            patch = patch.display(),
        );
        let exit = run(&mut env, &python(&code));
        assert_eq!(exit.exit_code, Some(0), "{b:?}: {exit:?}");
        assert!(exit.stdout.contains("FOUND 0"), "{b:?}: {}", exit.stdout);
        assert!(
            exit.stdout.contains("GIT [] False"),
            "{b:?}: {}",
            exit.stdout
        );
        assert!(!exit.stdout.contains(SECRET), "{b:?}: {}", exit.stdout);
        assert!(!exit.stderr.contains(SECRET), "{b:?}: {}", exit.stderr);
        assert!(
            !exit.stdout.lines().any(|l| l.trim() == ".git"),
            "{b:?}: {}",
            exit.stdout
        );
    }
}

#[test]
fn the_agent_reaches_the_proxy_port_and_no_other() {
    let _g = shared();
    let port = proxy();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    other.set_nonblocking(true).unwrap();
    let other_port = other.local_addr().unwrap().port();
    for sb in isolating_sandboxes() {
        let b = sb.backend();
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let mut cmd = python(&network_probe(port, other_port));
        cmd.proxy_port = Some(port);
        let exit = run(&mut env, &cmd);
        assert_eq!(exit.exit_code, Some(0), "{b:?}: {exit:?}");
        for line in [
            "PROXY 0 10 pong:hello",
            "PROXY 1 300005 pong:xxxxx",
            "PROXY 2 10 pong:hello",
            "BLOCKED",
        ] {
            assert!(
                exit.stdout.lines().any(|l| l.starts_with(line)),
                "{b:?}: no {line:?} in {}\n{}",
                exit.stdout,
                exit.stderr
            );
        }
        assert!(!exit.stdout.contains("CONNECTED"), "{b:?}");
        // bubblewrap: the port is closed in the sandbox's own network namespace; builtin:
        // besides, Landlock refuses TCP on every port but the proxy's.
        let (connect, bind) = match b {
            Backend::Builtin => ("BLOCKED PermissionError", "BIND PermissionError"),
            _ => ("BLOCKED ConnectionRefusedError", "BOUND"),
        };
        for line in [connect, bind] {
            assert!(
                exit.stdout.lines().any(|l| l == line),
                "{b:?}: no {line:?} in {}",
                exit.stdout
            );
        }
        assert!(
            other.accept().is_err(),
            "{b:?}: the other port saw a connection"
        );
    }
}

#[test]
fn without_the_bridge_the_proxy_port_is_the_hosts_under_backend_none() {
    let _g = shared();
    let port = proxy();
    let (_tmp, task) = make_task(10);
    let mut env = Environment::new(&task, &none_sandbox(), ToolLimits::default()).unwrap();
    let mut cmd = python(&network_probe(port, port));
    cmd.proxy_port = Some(port);
    let exit = run(&mut env, &cmd);
    assert_eq!(exit.exit_code, Some(0), "{exit:?}");
    assert!(
        exit.stdout.contains("PROXY 1 300005 pong:xxxxx"),
        "{}",
        exit.stdout
    );
}

#[test]
fn without_a_proxy_port_there_is_no_network() {
    let _g = shared();
    let port = proxy();
    for sb in isolating_sandboxes() {
        let b = sb.backend();
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let exit = run(
            &mut env,
            &python(&format!(
                "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n    print('CONNECTED')\nexcept OSError as e:\n    print('BLOCKED', type(e).__name__)"
            )),
        );
        assert!(exit.stdout.contains("BLOCKED"), "{b:?}: {exit:?}");
    }
}

#[test]
fn writes_outside_the_workspace_and_home_fail() {
    let _g = shared();
    for sb in isolating_sandboxes() {
        let b = sb.backend();
        let (tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let targets = [
            tmp.path().join("pwned.txt"),
            task.dir.join("pwned.txt"),
            task.dir.join("hidden/pwned.txt"),
        ];
        let code = format!(
            r#"import os
for p in {targets:?} + ['/etc/pwned', '/usr/pwned', '../pwned', '../harness/pwned', os.environ['HOME'] + '/../../pwned']:
    try:
        open(p, 'w').write('x')
        print('WROTE', p)
    except OSError as e:
        print('BLOCKED', p, type(e).__name__)
open(os.environ['HOME'] + '/ok.txt', 'w').write('home')
open('ok.txt', 'w').write('workspace')
print('DONE')
"#,
            targets = targets
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>(),
        );
        let exit = run(&mut env, &python(&code));
        assert!(exit.stdout.contains("DONE"), "{b:?}: {exit:?}");
        assert!(!exit.stdout.contains("WROTE"), "{b:?}: {}", exit.stdout);
        assert_eq!(exit.stdout.matches("BLOCKED").count(), 8, "{}", exit.stdout);
        for t in &targets {
            assert!(!exists(t), "{b:?}: {}", t.display());
        }
        assert!(!exists(Path::new("/etc/pwned")));
        assert!(!exists(&env.workspace().mounts().harness.join("pwned")));
        assert_eq!(
            std::fs::read_to_string(exit.home.join("ok.txt")).unwrap(),
            "home"
        );
        assert_eq!(
            std::fs::read_to_string(env.workspace().path().join("ok.txt")).unwrap(),
            "workspace"
        );
    }
}

#[test]
fn detached_children_do_not_outlive_wait() {
    let _g = shared();
    for (i, sb) in containing_backends().into_iter().enumerate() {
        let b = sb.backend();
        let marker = format!("86421{i}");
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let mut cmd = sh(&format!(
            "setsid sleep {marker}1 &\nsetsid sh -c 'sleep 2; echo late > late.txt; sleep {marker}2' &\nsleep 0.3\necho SPAWNED"
        ));
        cmd.proxy_port = Some(proxy());
        let exit = run(&mut env, &cmd);
        assert!(exit.stdout.contains("SPAWNED"), "{b:?}: {exit:?}");
        assert_eq!(survivors(&marker), 0, "{b:?}");
        // Long enough for the second child to have written its file, had it survived.
        std::thread::sleep(Duration::from_secs(3));
        assert!(!exists(&env.workspace().path().join("late.txt")), "{b:?}");
    }
}

#[test]
fn a_timeout_kills_the_tree_and_says_so() {
    let _g = shared();
    for (i, sb) in containing_backends().into_iter().enumerate() {
        let b = sb.backend();
        let marker = format!("86422{i}");
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let mut cmd = sh(&format!("setsid sleep {marker} &\nsleep 300"));
        cmd.timeout = Duration::from_secs(2);
        cmd.proxy_port = Some(proxy());
        let exit = run(&mut env, &cmd);
        assert!(exit.timed_out, "{b:?}: {exit:?}");
        assert!(!exit.killed, "{b:?}: {exit:?}");
        assert_eq!(exit.exit_code, None, "{b:?}: {exit:?}");
        assert_eq!(exit.describe(), "timed out");
        assert_eq!(survivors(&marker), 0, "{b:?}");
    }
}

#[test]
fn a_kill_from_another_thread_ends_a_blocked_wait() {
    let _g = shared();
    for (i, sb) in containing_backends().into_iter().enumerate() {
        let b = sb.backend();
        let marker = format!("86423{i}");
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let mut cmd = sh(&format!(
            "setsid sleep {marker} &\necho ready > \"$HOME/ready\"\nsleep 300"
        ));
        // Were the kill lost, the timeout would end the wait, and `killed` would be false.
        cmd.timeout = Duration::from_secs(100);
        cmd.proxy_port = Some(proxy());
        let process = env.spawn_agent(&cmd).unwrap();
        let killer = process.killer();
        let ready = process.home().join("ready");
        let t = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !ready.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            killer.kill();
            killer.kill();
        });
        let exit = process.wait().unwrap();
        t.join().unwrap();
        assert!(exit.killed, "{b:?}: {exit:?}");
        assert!(!exit.timed_out, "{b:?}: {exit:?}");
        assert_eq!(exit.describe(), "killed by the episode");
        assert_eq!(survivors(&marker), 0, "{b:?}");
    }
}

#[test]
fn kill_is_idempotent_and_harmless_after_the_end() {
    let _g = shared();
    for sb in every_backend() {
        let b = sb.backend();
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let process = env.spawn_agent(&sh("exit 3")).unwrap();
        let killer = process.killer();
        let exit = process.wait().unwrap();
        assert_eq!(exit.exit_code, Some(3), "{b:?}: {exit:?}");
        assert!(!exit.killed && !exit.timed_out, "{b:?}: {exit:?}");
        killer.kill();
        killer.clone().kill();

        // Killed before anyone waits.
        let process = env.spawn_agent(&sh("sleep 300")).unwrap();
        process.killer().kill();
        process.killer().kill();
        let exit = process.wait().unwrap();
        assert!(exit.killed && !exit.timed_out, "{b:?}: {exit:?}");
    }
}

#[test]
fn a_second_agent_waits_for_the_first_to_end() {
    let _g = shared();
    let sb = isolating_sandboxes().remove(0);
    let (_tmp, task) = make_task(10);
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    let first = env.spawn_agent(&sh("sleep 300")).unwrap();
    match env.spawn_agent(&sh("true")) {
        Err(e @ EnvError::AgentCommand { .. }) => assert!(e.to_string().contains("still running")),
        other => panic!("{other:?}"),
    }
    first.killer().kill();
    assert!(first.wait().unwrap().killed);
    let exit = run(&mut env, &sh("echo again"));
    assert_eq!(exit.stdout, "again\n");
}

#[test]
fn dropping_an_unwaited_agent_kills_its_tree() {
    let _g = shared();
    for (i, sb) in containing_backends().into_iter().enumerate() {
        let marker = format!("86424{i}");
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let mut cmd = sh(&format!(
            "setsid sleep {marker} &\necho ready > \"$HOME/ready\"\nsleep 300"
        ));
        cmd.proxy_port = Some(proxy());
        let process = env.spawn_agent(&cmd).unwrap();
        let ready = process.home().join("ready");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ready.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(process);
        assert_eq!(survivors(&marker), 0, "{:?}", sb.backend());
    }
}

fn bridge_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "tp-bridge")
        })
        .count()
}

fn open_sockets() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
        })
        .count()
}

#[test]
fn many_spawns_leave_no_bridge_thread_socket_or_socket_file() {
    let _g = COUNTING.write().unwrap_or_else(|e| e.into_inner());
    let port = proxy();
    let sockets = open_sockets();
    for sb in isolating_sandboxes() {
        let b = sb.backend();
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let harness = env.workspace().mounts().harness.clone();
        for round in 0..12 {
            let mut cmd = python(&format!(
                "import urllib.request\nfor _ in range(3):\n    print(urllib.request.urlopen('http://127.0.0.1:{port}/', data=b'r{round}', timeout=20).read())"
            ));
            cmd.proxy_port = Some(port);
            // Every other round leaves a connection open when it ends.
            if round % 2 == 1 {
                cmd.argv[2].push_str(&format!(
                    "\nimport socket, time\ns = socket.create_connection(('127.0.0.1', {port}))\ns.sendall(b'POST / HTTP/1.1\\r\\nContent-Length: 100\\r\\n\\r\\n')\ntime.sleep(0.5)"
                ));
            }
            let exit = run(&mut env, &cmd);
            assert_eq!(exit.exit_code, Some(0), "{b:?} round {round}: {exit:?}");
            assert_eq!(
                exit.stdout.matches(&format!("pong:r{round}")).count(),
                3,
                "{b:?}: {}",
                exit.stdout
            );
            assert_eq!(bridge_threads(), 0, "{b:?} round {round}");
            let socket_files: Vec<_> = std::fs::read_dir(&harness)
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".sock"))
                .map(|e| e.file_name())
                .collect();
            assert!(socket_files.is_empty(), "{b:?}: {socket_files:?}");
        }
    }
    // The proxy's own ends of the connections close as its threads finish.
    let deadline = Instant::now() + Duration::from_secs(10);
    while open_sockets() > sockets && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(open_sockets(), sockets);
}

/// An agent started from a thread that then ends (the runner starts it from a pooled blocking
/// thread, which retires after a few idle seconds) keeps running: bubblewrap's
/// `--die-with-parent` fires when the thread that forked it ends, so the launch must not be
/// tied to the caller's thread.
#[test]
fn an_agent_outlives_the_thread_that_started_it() {
    let _g = shared();
    for sb in every_backend() {
        let (_tmp, task) = make_task(10);
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let cmd = sh("sleep 2; echo done");
        let process = std::thread::spawn(move || {
            let p = env.spawn_agent(&cmd).unwrap();
            // Long enough for the launcher to have set itself up (bubblewrap arms its
            // parent-death signal early), short of the agent's end.
            std::thread::sleep(Duration::from_millis(500));
            (p, env)
        });
        let (process, _env) = process.join().unwrap();
        let exit = process.wait().unwrap();
        assert_eq!(
            (exit.exit_code, exit.signal, exit.killed),
            (Some(0), None, false),
            "{:?}: {exit:?}",
            sb.backend()
        );
        assert_eq!(exit.stdout.trim(), "done", "{:?}", sb.backend());
    }
}

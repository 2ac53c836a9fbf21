//! External agent processes under the container backend: each runs in a container of the
//! task's image of its own, on the workspace at `/testbed`, as the sandbox user, with its
//! installation read-only at its own path, the model proxy at the host's address and no other
//! network; its timeout, its killer and dropping it end it, and its container goes with it.
//!
//! The image is the one `.ci/swebench-image.sh` builds, or `$TRAPARENA_TEST_IMAGE`.
// The test asks the engine and `hostname` what there is.
#![allow(clippy::disallowed_methods)]

mod common;
mod in_image;

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use common::proxy;
use in_image::*;
use traparena_env::{EnvError, Environment, Limits, ToolLimits};
use traparena_task::AgentCommand;

/// The host's first non-loopback IPv4 address (`hostname -I`).
fn host_address() -> String {
    let out = std::process::Command::new("hostname")
        .arg("-I")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .find(|a| a.contains('.') && !a.starts_with("127."))
        .expect("the host has a non-loopback IPv4 address")
        .to_owned()
}

/// An agent installation in a folder the sandbox user can enter: `bin/agent`, a shell script
/// running `script`.
fn install(script: &str) -> tempfile::TempDir {
    let prefix = tempfile::Builder::new()
        .prefix("tp-agent-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let bin = prefix.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("agent"), format!("#!/bin/sh\n{script}\n")).unwrap();
    for (p, mode) in [
        (prefix.path(), 0o755),
        (&bin, 0o755),
        (&bin.join("agent"), 0o755),
    ] {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    }
    prefix
}

fn agent(prefix: &Path, args: &[&str], timeout: Duration) -> AgentCommand {
    let mut argv = vec![prefix.join("bin/agent").to_string_lossy().into_owned()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    AgentCommand {
        argv,
        read_only_paths: vec![prefix.to_owned()],
        timeout,
        ..AgentCommand::default()
    }
}

fn environment() -> (tempfile::TempDir, Environment) {
    let (tmp, task) = container_task();
    let sb = sandbox(Limits::default(), 0);
    let env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    (tmp, env)
}

/// The containers this test process owns.
fn own_containers() -> Vec<String> {
    containers(Some(&own_label()))
}

/// Python run in the image by the agent: the proxy (three requests, one of 300 kB), then
/// every other address it should not reach.
fn probe(proxy: u16, other: u16, host: &str) -> String {
    format!(
        r#"import os, socket, urllib.request
for i in range(3):
    body = (b'x' * 300000) if i == 1 else b'hello'
    req = urllib.request.Request('http://127.0.0.1:{proxy}/v1/chat', data=body, method='POST')
    got = urllib.request.urlopen(req, timeout=20).read()
    print('PROXY', i, len(got), got[:10].decode())
for addr in [('127.0.0.1', {other}), ('{host}', {other}), ('{host}', {proxy}), ('1.1.1.1', 53)]:
    try:
        socket.create_connection(addr, timeout=3).close()
        print('CONNECTED', addr)
    except OSError as e:
        print('BLOCKED', addr, type(e).__name__)
print('CWD', os.getcwd(), 'HOME', os.environ['HOME'], 'UID', os.getuid())
open('from_agent.txt', 'w').write('edited in the image')
"#
    )
}

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn an_agent_in_the_image_reaches_the_proxy_and_nothing_else() {
    let _serial = one_at_a_time();
    let (_tmp, mut env) = environment();
    let before = own_containers();
    let other = TcpListener::bind("0.0.0.0:0").unwrap();
    other.set_nonblocking(true).unwrap();
    let other_port = other.local_addr().unwrap().port();
    let port = proxy();
    // The agent runs the image's Python (not the host's): its installation is a shell script.
    let prefix = install("exec python3 -c \"$1\"");
    let mut cmd = agent(
        prefix.path(),
        &[&probe(port, other_port, &host_address())],
        Duration::from_secs(120),
    );
    cmd.proxy_port = Some(port);
    let exit = env.spawn_agent(&cmd).unwrap().wait().unwrap();
    assert_eq!(exit.exit_code, Some(0), "{exit:#?}");
    for i in 0..3 {
        let len = if i == 1 { 300_005 } else { 10 };
        assert!(
            exit.stdout.contains(&format!("PROXY {i} {len} pong:")),
            "{}",
            exit.stdout
        );
    }
    assert!(!exit.stdout.contains("CONNECTED"), "{}", exit.stdout);
    assert_eq!(exit.stdout.matches("BLOCKED").count(), 4, "{}", exit.stdout);
    assert!(
        matches!(other.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the agent reached a host port other than the proxy's"
    );
    let uid = env
        .workspace()
        .mounts()
        .user
        .expect("the harness runs as root");
    assert!(
        exit.stdout
            .contains(&format!("CWD /testbed HOME /tmp/home UID {uid}")),
        "{}",
        exit.stdout
    );
    assert_eq!(
        std::fs::read_to_string(env.workspace().path().join("from_agent.txt")).unwrap(),
        "edited in the image"
    );
    assert!(
        exit.home.ends_with("scratch/home"),
        "{}",
        exit.home.display()
    );
    assert_eq!(own_containers(), before, "the agent's container is removed");
    assert_eq!(processes_of(uid), Vec::<String>::new(), "left running");
}

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn an_agent_in_the_image_sees_its_installation_read_only_and_nothing_of_the_task() {
    let _serial = one_at_a_time();
    let (tmp, task) = container_task();
    let sb = sandbox(Limits::default(), 0);
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    let prefix = install(
        "cd \"$(dirname \"$0\")\"; touch written 2>/dev/null && echo WROTE; \
         for p in \"$1\" \"$2\"; do test -e \"$p\" && echo SEEN \"$p\"; done; \
         grep -rl --exclude-dir=proc --exclude-dir=sys \"$3\" / 2>/dev/null; \
         setsid sleep 3141 >/dev/null 2>&1 </dev/null & echo STARTED",
    );
    let secret = common::SECRET;
    let hidden = task.dir.join("hidden");
    let cmd = agent(
        prefix.path(),
        &[
            &hidden.to_string_lossy(),
            &tmp.path().to_string_lossy(),
            secret,
        ],
        Duration::from_secs(300),
    );
    // The one file that holds the secret where the agent can look: the search does find it.
    let planted = env.workspace().path().join("planted.txt");
    std::fs::write(&planted, secret).unwrap();
    let exit = env.spawn_agent(&cmd).unwrap().wait().unwrap();
    assert!(exit.stdout.contains("STARTED"), "{exit:#?}");
    assert!(!exit.stdout.contains("WROTE"), "{}", exit.stdout);
    assert!(!exit.stdout.contains("SEEN"), "{}", exit.stdout);
    // The secret is passed in argv, so /proc of the agent holds it (excluded): any file hit
    // but the planted one would be a leak.
    let hits: Vec<&str> = exit.stdout.lines().filter(|l| l.starts_with('/')).collect();
    assert_eq!(hits, ["/testbed/planted.txt"], "{}", exit.stdout);
    assert_eq!(
        traparena_testkit::procs::survivors("sleep\x003141"),
        0,
        "a detached child outlived the agent"
    );
    assert!(!prefix.path().join("bin/written").exists());
}

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn an_agent_in_the_image_is_ended_by_its_timeout_its_killer_and_a_drop() {
    let _serial = one_at_a_time();
    let (_tmp, mut env) = environment();
    let before = own_containers();
    let uid = env
        .workspace()
        .mounts()
        .user
        .expect("the harness runs as root");
    let prefix = install("echo STARTED; exec sleep \"$1\"");
    let exit = env
        .spawn_agent(&agent(prefix.path(), &["2718"], Duration::from_secs(3)))
        .unwrap()
        .wait()
        .unwrap();
    assert!(exit.timed_out && !exit.killed, "{exit:#?}");
    assert!(exit.stdout.contains("STARTED"), "{exit:#?}");
    assert_eq!(own_containers(), before, "removed after a timeout");
    assert_eq!(processes_of(uid), Vec::<String>::new());

    let process = env
        .spawn_agent(&agent(prefix.path(), &["2719"], Duration::from_secs(300)))
        .unwrap();
    assert_eq!(
        own_containers().len(),
        before.len() + 1,
        "a container of its own"
    );
    let killer = process.killer();
    let waiter = std::thread::spawn(move || process.wait());
    eventually("the agent sleeps", || {
        traparena_testkit::procs::processes_with("sleep\x002719") == 1
    });
    killer.kill();
    let exit = waiter.join().unwrap().unwrap();
    assert!(exit.killed && !exit.timed_out, "{exit:#?}");
    assert_eq!(own_containers(), before, "removed after a kill");
    assert_eq!(processes_of(uid), Vec::<String>::new());

    let process = env
        .spawn_agent(&agent(prefix.path(), &["2720"], Duration::from_secs(300)))
        .unwrap();
    eventually("the agent sleeps", || {
        traparena_testkit::procs::processes_with("sleep\x002720") == 1
    });
    drop(process);
    assert_eq!(own_containers(), before, "removed when dropped");
    assert_eq!(processes_of(uid), Vec::<String>::new());
}

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn bad_agent_commands_in_the_image_are_refused_before_a_container_starts() {
    let _serial = one_at_a_time();
    let (_tmp, mut env) = environment();
    let before = own_containers();
    let prefix = install("true");
    let mut over_usr = agent(prefix.path(), &[], Duration::from_secs(10));
    over_usr.read_only_paths.push("/usr".into());
    let e = env.spawn_agent(&over_usr).unwrap_err();
    assert!(
        matches!(&e, EnvError::AgentCommand { reason } if reason.contains("/usr")),
        "{e}"
    );
    let mut missing = agent(prefix.path(), &[], Duration::from_secs(10));
    missing.argv[0] = prefix.path().join("bin/absent").to_string_lossy().into();
    let e = env.spawn_agent(&missing).unwrap_err();
    assert!(e.is_start_failure(), "{e}");
    assert!(e.to_string().contains("bin/absent"), "{e}");
    assert_eq!(own_containers(), before);
}

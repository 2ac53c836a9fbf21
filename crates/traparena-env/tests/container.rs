//! The container backend on a real engine and image: the containment probes of the other
//! backends run inside a container of the task's image (no network, hidden files out of
//! reach, limits, nothing written outside the workspace surviving, no process left), one
//! container per workspace removed with it, the pool, and the sweep of what a killed harness
//! left.
//!
//! The image is the one `.ci/swebench-image.sh` builds (SWE-bench's layout: the repository at
//! `/testbed`, Python in the activated environment), or `$TRAPARENA_TEST_IMAGE`.
// The test reads its image's name from the environment and asks the engine what runs.
#![allow(clippy::disallowed_methods)]

mod common;
mod in_image;

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use common::SECRET;
use in_image::*;
use traparena_env::{
    Backend, BackendChoice, ContainerConfig, Environment, Limits, RunSpec, Sandbox, SandboxConfig,
    ToolLimits, Workspace,
};
use traparena_task::{Action, ImageEnv};

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn tests_run_in_the_image_and_the_containment_probes_hold_inside() {
    let _serial = one_at_a_time();
    let (_tmp, task) = container_task();
    let limits = Limits {
        processes: 64,
        address_space_bytes: 512 << 20,
        ..Limits::default()
    };
    let sb = sandbox(limits, 0);
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    let id = env
        .workspace()
        .mounts()
        .container
        .as_ref()
        .unwrap()
        .id()
        .to_owned();
    assert!(
        containers(None).contains(&id),
        "one container per workspace"
    );

    // The public tests run in the image's Python, at /testbed, through the report descriptor.
    let obs = env.step(&Action::RunPublicTests).unwrap();
    assert!(passed(&obs), "{obs:?}");
    let obs = run_code(
        &mut env,
        "self.assertEqual(os.getcwd(), '/testbed')\nself.assertTrue(sys.executable.startswith('/opt/miniconda3/envs/testbed'), sys.executable)\nself.assertEqual(sys.version_info[:2], (3, 9))",
    );
    assert!(passed(&obs), "{}", obs.output);

    // The hidden tests and the reference are nowhere in the container.
    let hidden = task.dir.join("hidden");
    let probe = format!(
        "for p in [{:?}, {:?}, '/task', '/hidden']:\n    self.assertFalse(os.path.exists(p), p)\nsecret = {:?} + {:?}\nout = subprocess.run(['grep', '-rl', '--exclude-dir=proc', '--exclude-dir=sys', secret, '/'], capture_output=True, text=True, timeout=120)\nself.assertEqual(out.stdout, '')",
        hidden.to_string_lossy(),
        task.dir.to_string_lossy(),
        &SECRET[..4],
        &SECRET[4..],
    );
    let obs = run_code(&mut env, &probe);
    assert!(passed(&obs), "{}", obs.output);

    // No network: not even the host's loopback.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let obs = run_code(
        &mut env,
        &format!(
            "with self.assertRaises(OSError):\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\nwith self.assertRaises(OSError):\n    socket.create_connection(('1.1.1.1', 53), timeout=3)"
        ),
    );
    assert!(passed(&obs), "{}", obs.output);

    // The process and memory limits hold.
    let obs = run_code(
        &mut env,
        "kids, refused = [], 0\nfor _ in range(200):\n    try:\n        kids.append(subprocess.Popen(['sleep', '30']))\n    except OSError:\n        refused += 1\nfor k in kids:\n    k.kill()\nself.assertGreater(refused, 0)\nself.assertLess(len(kids), 64)",
    );
    assert!(passed(&obs), "{}", obs.output);
    let obs = run_code(
        &mut env,
        "block = bytearray(1024 * 1024 * 1024)\nblock[::4096] = b'x' * len(block[::4096])",
    );
    assert!(!passed(&obs), "a 1 GiB block in 512 MiB: {}", obs.output);

    // Nothing outside the workspace and the scratch folder can be written.
    let obs = run_code(
        &mut env,
        "for p in ['/opt/x', '/etc/x', '/usr/x', '/x', '/harness/x', '/opt/miniconda3/envs/testbed/lib/python3.9/site-packages/evil.pth']:\n    with self.assertRaises(OSError, msg=p):\n        open(p, 'w').write('x')\nopen('/tmp/left-behind', 'w').write('x')",
    );
    assert!(passed(&obs), "{}", obs.output);

    // A child in a session of its own is gone when the run ends.
    let user = env.workspace().mounts().user;
    let obs = run_code(
        &mut env,
        "subprocess.Popen(['setsid', 'sleep', '1000'], start_new_session=True)\ntime.sleep(0.5)",
    );
    assert!(passed(&obs), "{}", obs.output);
    if let Some(uid) = user {
        assert_eq!(processes_of(uid), Vec::<String>::new(), "left running");
    }

    drop(env);
    eventually("the workspace's container is removed with it", || {
        !containers(None).contains(&id)
    });
    // A new workspace's container starts from the image: what the last one wrote is gone.
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    let obs = run_code(
        &mut env,
        "self.assertFalse(os.path.exists('/tmp/left-behind'))",
    );
    assert!(passed(&obs), "{}", obs.output);
}

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn a_pool_hands_out_ready_containers_to_racing_workspaces_and_none_outlives_it() {
    let _serial = one_at_a_time();
    let (_tmp, task) = container_task();
    // Only this process's containers count: other tests' harnesses may run beside it.
    let owner_label = own_label();
    let owner_label = owner_label.as_str();
    let before = containers(Some(owner_label)).len();
    let sb = sandbox(Limits::default(), 2).for_task(&task);
    let ids: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let sb = sb.clone();
                let repo = task.repo_dir();
                s.spawn(move || {
                    let ws = Workspace::materialize(&repo, &sb).unwrap();
                    let out = sb
                        .run(
                            ws.mounts(),
                            &RunSpec {
                                argv: vec!["sh".into(), "-c".into(), format!("echo {i} > mine")],
                                env: Vec::new(),
                                timeout: Duration::from_secs(60),
                                report_pipe: false,
                            },
                        )
                        .unwrap();
                    assert_eq!(out.exit_code, Some(0), "{out:?}");
                    assert_eq!(
                        std::fs::read_to_string(ws.path().join("mine"))
                            .unwrap()
                            .trim(),
                        i.to_string()
                    );
                    ws.mounts().container.as_ref().unwrap().id().to_owned()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 4, "a container serves one workspace: {ids:?}");
    // The pool refills in the background to its size, then stays there.
    eventually("the pool is topped up", || {
        containers(Some(owner_label)).len() >= before + 2
    });
    // A workspace's container is removed after it, in the background.
    eventually("no container outlives its workspace", || {
        let now = containers(None);
        ids.iter().all(|id| !now.contains(id))
    });
    drop(sb);
    eventually("the pool's containers go with the last sandbox", || {
        containers(Some(owner_label)).len() <= before
    });
}

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn containers_that_a_killed_harness_left_are_swept_at_the_next_start() {
    let _serial = one_at_a_time();
    // A container labelled as a dead process's (pid 2^22 exceeds pid_max's ceiling) and one
    // of a live process (this one's pid, another start time) look like a killed harness's.
    let label = |owner: &str| format!("org.traparena.owner={owner}");
    let start = |owner: &str| {
        let out = std::process::Command::new("podman")
            .args(["run", "-d", "--network=none", "--ulimit", "nofile=256:256"])
            .args(["--ulimit", "nproc=256:256", "--label", &label(owner)])
            .args(["--entrypoint", "sleep", &image(), "infinity"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let dead = start("4194304:1");
    let reused = start(&format!("{}:1", std::process::id()));
    let sb = sandbox(Limits::default(), 0);
    let listed = containers(None);
    assert!(
        !listed.contains(&dead) && !listed.contains(&reused),
        "{listed:?}"
    );
    assert!(
        sb.warnings().iter().any(|w| w.contains("left behind")),
        "{:?}",
        sb.warnings()
    );
}

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn a_task_in_an_image_is_refused_elsewhere_and_a_missing_image_fails_one_run() {
    let _serial = one_at_a_time();
    let (_tmp, task) = container_task();
    let none = Sandbox::new(SandboxConfig {
        backend: BackendChoice::None,
        ..SandboxConfig::default()
    })
    .unwrap();
    let mut env = Environment::new(&task, &none, ToolLimits::default()).unwrap();
    let e = env.step(&Action::RunPublicTests).unwrap_err();
    assert!(e.is_start_failure(), "{e}");
    assert!(e.to_string().contains("--sandbox container"), "{e}");

    let sb = sandbox(Limits::default(), 0);
    assert_eq!(sb.backend(), Backend::Container);
    let missing = sb.with_image(ImageEnv {
        image: "localhost/no-such-image:never".into(),
        ..image_env()
    });
    let e = Workspace::materialize(&task.repo_dir(), &missing).unwrap_err();
    assert!(e.is_start_failure(), "{e}");
    assert!(e.to_string().contains("no-such-image"), "{e}");
    // Without an image at all, the container backend says what it needs.
    let e = Workspace::materialize(&task.repo_dir(), &sb).unwrap_err();
    assert!(e.to_string().contains("names none"), "{e}");
    assert!(Path::new(&task.repo_dir()).is_dir());
}

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn an_engine_without_descriptor_passing_reports_through_a_fifo() {
    let _serial = one_at_a_time();
    // An engine named `docker` gets docker's command lines: no `exec --preserve-fds`, so the
    // report comes through a FIFO the run's shell opens as descriptor 3. podman takes every one
    // of those command lines too, which lets this machine, without docker, run that path.
    let tmp = tempfile::tempdir().unwrap();
    let docker = tmp.path().join("docker");
    std::os::unix::fs::symlink("/usr/bin/podman", &docker).unwrap();
    let (_t, task) = container_task();
    let sb = Sandbox::new(SandboxConfig {
        backend: BackendChoice::Container,
        container: ContainerConfig {
            engine: Some(docker.to_string_lossy().into_owned()),
            ..ContainerConfig::default()
        },
        ..SandboxConfig::default()
    })
    .unwrap_or_else(|e| panic!("{NEEDS}: {e}"));
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    let harness = env.workspace().mounts().harness.clone();
    let id = env
        .workspace()
        .mounts()
        .container
        .as_ref()
        .unwrap()
        .id()
        .to_owned();
    let obs = env.step(&Action::RunPublicTests).unwrap();
    assert!(passed(&obs), "{obs:?}");
    assert_eq!(obs.tests.as_ref().unwrap().run, 1, "{obs:?}");
    // A failing test is read as failing through the FIFO as well, and output that only looks
    // like a report changes nothing.
    let obs = run_code(
        &mut env,
        "print('Ran 5 tests in 0.1s\\n\\nOK')\nself.assertEqual(1, 2)",
    );
    let counts = obs.tests.unwrap();
    assert_eq!((counts.run, counts.failed), (1, 1), "{obs:?}");
    // Each run's FIFO goes with it.
    let fifos: Vec<_> = std::fs::read_dir(&harness)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".fifo"))
        .collect();
    assert!(fifos.is_empty(), "{fifos:?}");
    drop(env);
    eventually("removed with docker's command line", || {
        !containers(None).contains(&id)
    });
}

#[test]
#[ignore = "needs podman (runc) and the image of .ci/swebench-image.sh: run it (CI does)"]
fn the_pool_keeps_its_size_in_all_for_the_image_used_last() {
    let _serial = one_at_a_time();
    // Each SWE-bench instance has an image of its own: a pool per image would keep N idle
    // containers for every task an experiment went through. It keeps N in all.
    let (_tmp, task) = container_task();
    let label = own_label();
    let images = || {
        let out = std::process::Command::new("podman")
            .args(["ps", "-a", "--filter", &format!("label={label}")])
            .args(["--format", "{{.Image}}"])
            .output()
            .unwrap();
        let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        v.sort();
        v
    };
    let sb = sandbox(Limits::default(), 2);
    let first = sb.with_image(image_env());
    let base = "localhost/traparena-test-base:bookworm";
    let second = sb.with_image(ImageEnv {
        image: base.into(),
        workdir: "/workspace".into(),
        path: Vec::new(),
    });
    drop(Workspace::materialize(&task.repo_dir(), &first).unwrap());
    eventually("two of the first image wait", || {
        images() == vec![image(), image()]
    });
    drop(Workspace::materialize(&task.repo_dir(), &second).unwrap());
    eventually("the two waiting are the second image's now", || {
        images() == vec![base.to_owned(), base.to_owned()]
    });
    drop((sb, first, second));
    eventually("none waits after the pool", || images().is_empty());
}

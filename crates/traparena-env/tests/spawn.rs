//! A process that fails to start never sinks a run: the harness's own launches are robust,
//! and a program that cannot start is a clear, typed error naming it.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::*;
use traparena_env::{Backend, EnvError, RunSpec, Sandbox, SandboxConfig, Workspace};

fn spec(argv: &[&str], report_pipe: bool) -> RunSpec {
    RunSpec {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
        timeout: Duration::from_secs(30),
        report_pipe,
    }
}

/// A folder the sandbox user may enter (tempdir makes 0700 ones).
fn open_tempdir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn src_folder() -> tempfile::TempDir {
    let d = open_tempdir();
    std::fs::write(d.path().join("run.sh"), "#!/bin/sh\necho ran\n").unwrap();
    d
}

/// Concurrent runs with report pipes, each on a new workspace, while another thread opens and
/// closes files: every run starts at the first attempt and every report arrives. Before the Landlock ruleset was
/// enforced ahead of the `dup2` onto the report descriptor, about 2 in 100 of these builtin
/// runs failed with "cannot run /bin/sh: Invalid argument (os error 22)".
#[test]
fn concurrent_launches_with_report_pipes_all_start() {
    const THREADS: usize = 2;
    const RUNS: usize = 150;
    let src = src_folder();
    for sb in isolating_sandboxes() {
        let stop = AtomicBool::new(false);
        let failures: Vec<String> = std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    drop(std::fs::File::open("/dev/null").unwrap());
                }
            });
            let runners: Vec<_> = (0..THREADS)
                .map(|_| {
                    s.spawn(|| {
                        let mut failures = Vec::new();
                        for _ in 0..RUNS {
                            // A new workspace each time, as evaluation copies are: its lease's
                            // lock file comes and goes, so low descriptor numbers do too.
                            let ws = Workspace::materialize(src.path(), &sb).unwrap();
                            match sb
                                .run(ws.mounts(), &spec(&["/bin/sh", "-c", "echo ok >&3"], true))
                            {
                                Ok(out)
                                    if out.report.as_deref() == Some(b"ok\n")
                                        && out.retried_start.is_none() => {}
                                Ok(out) => failures.push(format!("{out:?}")),
                                Err(e) => failures.push(e.to_string()),
                            }
                        }
                        failures
                    })
                })
                .collect();
            let failures = runners
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            stop.store(true, Ordering::Relaxed);
            failures
        });
        assert!(
            failures.is_empty(),
            "{:?}: {} of {} runs failed: {:?}",
            sb.backend(),
            failures.len(),
            THREADS * RUNS,
            &failures[..failures.len().min(3)]
        );
    }
}

fn start_failure(sb: &Sandbox, ws: &Workspace, argv: &[&str]) -> (String, String) {
    match sb.run(ws.mounts(), &spec(argv, false)) {
        Err(e @ EnvError::Start { .. }) => {
            assert!(e.is_start_failure());
            let EnvError::Start {
                program, backend, ..
            } = &e
            else {
                unreachable!()
            };
            assert_eq!(program, argv[0]);
            assert_eq!(*backend, sb.backend());
            (e.to_string(), argv[0].to_owned())
        }
        other => panic!("{:?}: {argv:?} gave {other:?}", sb.backend()),
    }
}

/// A program the harness names (outside the workspace) that cannot start is an
/// `EnvError::Start` naming it and saying why, under every backend, before anything runs.
#[test]
fn a_program_that_cannot_start_is_a_start_failure_naming_it() {
    let tools = open_tempdir();
    let not_exec = tools.path().join("not-executable");
    std::fs::write(&not_exec, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&not_exec, std::fs::Permissions::from_mode(0o644)).unwrap();
    let folder = tools.path().join("a-folder");
    std::fs::create_dir(&folder).unwrap();
    let dangling = tools.path().join("dangling");
    std::os::unix::fs::symlink(tools.path().join("gone"), &dangling).unwrap();
    let missing = tools.path().join("missing");
    let config = SandboxConfig {
        read_only_paths: vec![tools.path().to_owned()],
        ..SandboxConfig::default()
    };
    let src = src_folder();
    let p = |p: &PathBuf| p.to_str().unwrap().to_owned();
    let cases: [(String, &str); 5] = [
        (p(&not_exec), "is not executable by"),
        (p(&folder), "is not a regular file"),
        (p(&missing), "No such file or directory"),
        (p(&dangling), "which does not resolve"),
        ("traparena-no-such-program".into(), "the sandbox's PATH"),
    ];
    for sb in every_sandbox(config) {
        let ws = Workspace::materialize(src.path(), &sb).unwrap();
        for (program, why) in &cases {
            let (msg, _) = start_failure(&sb, &ws, &[program]);
            assert!(
                msg.contains(program.as_str()) && msg.contains(why),
                "{:?}: {msg}",
                sb.backend()
            );
            assert!(
                msg.contains(&format!("under the {} sandbox", sb.backend())),
                "{msg}"
            );
        }
        // A path the sandbox does not show is one it cannot start either. It must lie outside
        // /tmp (which bubblewrap replaces with the scratch folder): the target folder, unless
        // the clone itself is under /tmp, then /var/tmp.
        if sb.backend() != Backend::None {
            let target = env!("CARGO_TARGET_TMPDIR");
            let base = if Path::new(target).starts_with("/tmp") {
                "/var/tmp"
            } else {
                target
            };
            let hidden = tempfile::tempdir_in(base).unwrap();
            std::fs::set_permissions(hidden.path(), std::fs::Permissions::from_mode(0o755))
                .unwrap();
            let prog = hidden.path().join("tool");
            std::fs::write(&prog, "#!/bin/sh\nexit 0\n").unwrap();
            std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
            let (msg, _) = start_failure(&sb, &ws, &[prog.to_str().unwrap()]);
            assert!(
                msg.contains("is not visible in the") || msg.contains("cannot enter the folder"),
                "{msg}"
            );
        }
    }
}

/// A program in the workspace is the tested code's: one that cannot be executed is an
/// outcome (a failed run) under an isolating backend. Without isolation the harness's own
/// `exec` fails, twice, and the error says so with the operating system's reason.
#[test]
fn a_workspace_program_that_cannot_be_executed() {
    let src = src_folder();
    std::fs::set_permissions(
        src.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    for sb in every_sandbox(SandboxConfig::default()) {
        let ws = Workspace::materialize(src.path(), &sb).unwrap();
        let result = sb.run(ws.mounts(), &spec(&["./run.sh"], false));
        match sb.backend() {
            Backend::None => {
                let e = result.unwrap_err();
                let msg = e.to_string();
                assert!(e.is_start_failure(), "{msg}");
                assert!(
                    msg.contains("./run.sh")
                        && msg.contains("failed twice")
                        && msg.contains("Permission denied (os error 13)"),
                    "{msg}"
                );
                let source = std::error::Error::source(&e).expect("the OS error");
                assert!(source.to_string().contains("os error 13"), "{source}");
            }
            _ => {
                let out = result.unwrap();
                assert_ne!(out.exit_code, Some(0), "{:?}: {out:?}", sb.backend());
                assert!(!out.stdout.text.contains("ran"), "{out:?}");
            }
        }
        // And the same file, made executable, runs: the check did not refuse a good program.
        let run_sh = ws.path().join("run.sh");
        std::fs::set_permissions(&run_sh, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = sb.run(ws.mounts(), &spec(&["./run.sh"], false)).unwrap();
        assert_eq!(out.stdout.text, "ran\n", "{:?}: {out:?}", sb.backend());
        std::fs::set_permissions(&run_sh, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(Path::new(&run_sh).exists());
    }
}

/// A run that sets its own `PATH` has a bare program name looked up there, by the check as by
/// the launcher.
#[test]
fn a_bare_name_is_looked_up_on_the_path_the_run_sets() {
    let tools = open_tempdir();
    let tool = tools.path().join("traparena-tool");
    std::fs::write(&tool, "#!/bin/sh\necho tool\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = SandboxConfig {
        read_only_paths: vec![tools.path().to_owned()],
        ..SandboxConfig::default()
    };
    let src = src_folder();
    let path = format!("{}:/usr/bin:/bin", tools.path().display());
    for sb in every_sandbox(config) {
        let ws = Workspace::materialize(src.path(), &sb).unwrap();
        let mut with_path = spec(&["traparena-tool"], false);
        with_path.env.push(("PATH".into(), path.clone()));
        let out = sb.run(ws.mounts(), &with_path).unwrap();
        assert_eq!(out.stdout.text, "tool\n", "{:?}: {out:?}", sb.backend());
        let (msg, _) = start_failure(&sb, &ws, &["traparena-tool"]);
        assert!(msg.contains("the sandbox's PATH"), "{msg}");
    }
}

//! `Sandbox::check_program`: an interpreter that cannot run in the sandbox is an error up
//! front, naming the path and the reason, under every backend.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::*;
use traparena_env::{EnvError, Sandbox, SandboxConfig};

fn argv(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A folder anyone may enter, to hold programs (tempdir makes 0700 ones).
fn tools() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn sandboxes(read_only: &Path) -> Vec<Sandbox> {
    every_sandbox(SandboxConfig {
        read_only_paths: vec![read_only.to_owned()],
        ..SandboxConfig::default()
    })
}

fn start_failure(sb: &Sandbox, argv: &[String]) -> String {
    match sb.check_program(argv) {
        Err(e @ EnvError::Start { .. }) => {
            let EnvError::Start {
                program, backend, ..
            } = &e
            else {
                unreachable!()
            };
            assert_eq!(program, &argv[0]);
            assert_eq!(*backend, sb.backend());
            e.to_string()
        }
        other => panic!("{:?}: {argv:?} gave {other:?}", sb.backend()),
    }
}

fn is_root() -> bool {
    #[allow(unsafe_code)]
    // SAFETY: geteuid has no preconditions.
    unsafe {
        libc::geteuid() == 0
    }
}

#[test]
fn a_working_interpreter_passes_under_every_backend() {
    let d = tools();
    for sb in sandboxes(d.path()) {
        sb.check_program(&argv(&["/usr/bin/python3", "-c", "import sys"]))
            .unwrap_or_else(|e| panic!("{:?}: {e}", sb.backend()));
        sb.check_program(&argv(&["python3", "-c", "import sys"]))
            .unwrap_or_else(|e| panic!("{:?}: {e}", sb.backend()));
    }
}

/// The case of an interpreter under root's home folder (mode 0700): the sandbox user cannot
/// reach it, and the error says which folder stops it.
#[test]
fn a_program_under_a_folder_the_sandbox_user_cannot_enter_is_refused() {
    let d = tools();
    let private = d.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let python = private.join("python3");
    std::os::unix::fs::symlink("/usr/bin/python3", &python).unwrap();
    let python_s = python.to_str().unwrap();
    let reachable = d.path().join("python3");
    std::os::unix::fs::symlink("/usr/bin/python3", &reachable).unwrap();
    for sb in sandboxes(d.path()) {
        let result = sb.check_program(&argv(&[python_s, "-c", "import sys"]));
        if !is_root() {
            // The harness runs the sandboxed code as itself, and owns the folder.
            result.unwrap_or_else(|e| panic!("{:?}: {e}", sb.backend()));
            eprintln!("not root: the sandbox user is the harness's, which may enter its folder");
            continue;
        }
        let msg = start_failure(&sb, &argv(&[python_s, "-c", "import sys"]));
        assert!(
            msg.contains("permission denied: the sandbox user (uid ")
                && msg.contains(&format!(
                    "cannot enter the folder {} (mode 0700, owner uid 0) on the way to {python_s}",
                    private.display()
                )),
            "{:?}: {msg}",
            sb.backend()
        );
        // The same link outside the locked folder is fine.
        sb.check_program(&argv(&[reachable.to_str().unwrap(), "-c", "import sys"]))
            .unwrap_or_else(|e| panic!("{:?}: {e}", sb.backend()));
    }
}

/// A copy of /bin/true whose needed C library is renamed: the dynamic loader fails as it does
/// for an interpreter built against a `libpython` that is not installed.
fn program_with_a_missing_library(dir: &Path) -> PathBuf {
    let mut elf = std::fs::read("/bin/true").unwrap();
    let needed = b"libc.so.6\0";
    let at = elf
        .windows(needed.len())
        .position(|w| w == needed)
        .expect("/bin/true is linked dynamically against libc.so.6");
    elf[at..at + needed.len()].copy_from_slice(b"libq.so.6\0");
    let p = dir.join("needs-libq");
    std::fs::write(&p, elf).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_program_that_cannot_load_its_libraries_is_refused_with_the_loader_message() {
    let d = tools();
    let prog = program_with_a_missing_library(d.path());
    let prog_s = prog.to_str().unwrap();
    for sb in sandboxes(d.path()) {
        let msg = start_failure(&sb, &argv(&[prog_s]));
        assert!(
            msg.contains(&format!("cannot start {prog_s} under the {} sandbox", sb.backend()))
                && msg.contains("exits with status 127")
                && msg.contains("error while loading shared libraries: libq.so.6: cannot open shared object file"),
            "{:?}: {msg}",
            sb.backend()
        );
    }
}

#[test]
fn a_program_that_fails_or_is_missing_is_refused() {
    let d = tools();
    let failing = d.path().join("failing");
    std::fs::write(
        &failing,
        "#!/bin/sh\n\necho 'first line' >&2\necho second >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
    let failing_s = failing.to_str().unwrap();
    for sb in sandboxes(d.path()) {
        let msg = start_failure(&sb, &argv(&[failing_s, "-c", "import sys"]));
        assert!(
            msg.ends_with(&format!(
                "`{failing_s} -c import sys` exits with status 3: first line"
            )),
            "{:?}: {msg}",
            sb.backend()
        );
        let msg = start_failure(&sb, &argv(&["python3", "-c", "import no_such_module_here"]));
        assert!(
            msg.contains("exits with status 1: Traceback (most recent call last):"),
            "{msg}"
        );
        let missing = d.path().join("missing");
        let msg = start_failure(&sb, &argv(&[missing.to_str().unwrap()]));
        assert!(msg.contains("No such file or directory"), "{msg}");
    }
}

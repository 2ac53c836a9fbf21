//! Sandbox user leases leave no lock files behind: as many as are held, and none once dropped.

use std::path::Path;
use std::time::Instant;

use traparena_env::{BackendChoice, Sandbox, SandboxConfig, Workspace};

/// A range of ids no other test leases from, so the count is this test's alone.
const BASE: u32 = 730_000;

fn lock_files_of_this_test() -> usize {
    let dir = std::env::temp_dir().join("traparena-uids");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".lock")
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|uid| (BASE..BASE + 10_000).contains(&uid))
        })
        .count()
}

#[test]
fn acquiring_and_dropping_many_leases_leaves_a_bounded_number_of_files() {
    let sb = Sandbox::new(SandboxConfig {
        backend: BackendChoice::None,
        uid_base: BASE,
        ..SandboxConfig::default()
    })
    .unwrap();
    #[allow(unsafe_code)]
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        // Sandbox users are leased only when the harness runs as root; lease.rs's unit tests
        // cover the lock files in a folder of their own.
        assert!(sb.allocate_user().unwrap().is_none());
        eprintln!("not root: no sandbox users are leased, so no lock files are made");
        return;
    }
    let t = Instant::now();
    let first = sb.allocate_user().unwrap().unwrap();
    eprintln!(
        "first lease (with the sweep of stale lock files): {:?}",
        t.elapsed()
    );
    drop(first);
    let mut held = Vec::new();
    for i in 0..400 {
        held.push(sb.allocate_user().unwrap().unwrap());
        if held.len() > 3 {
            held.remove(i % 4);
        }
        assert!(
            lock_files_of_this_test() <= 4,
            "{} lock files with {} leases held",
            lock_files_of_this_test(),
            held.len()
        );
        assert!(held.iter().all(|l| l.uid() < BASE + 4));
    }
    drop(held);
    assert_eq!(lock_files_of_this_test(), 0);

    // Workspaces lease their users the same way.
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("m.py"), "x = 1\n").unwrap();
    for _ in 0..50 {
        let ws = Workspace::materialize(src.path(), &sb).unwrap();
        assert!(ws.mounts().user.is_some_and(|u| u == BASE));
        assert_eq!(lock_files_of_this_test(), 1);
        assert!(Path::new(ws.path()).join("m.py").exists());
    }
    assert_eq!(lock_files_of_this_test(), 0);
}

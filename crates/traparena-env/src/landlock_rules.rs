//! Landlock rules for the builtin backend: reads limited to the system, `/sys` and the harness,
//! writes to the workspace, the scratch folder and `/dev/shm` (POSIX semaphores), no TCP bind
//! or connect but on the one port of an agent's model-proxy bridge, when it has one.

use std::os::fd::{OwnedFd, RawFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, NetPort, RulesetAttr, RulesetCreated, RulesetCreatedAttr,
    path_beneath_rules,
};

use crate::base::{KERNEL_RO, Mounts, SHM, SYSTEM_RO};
use crate::error::EnvError;

const ABI_TARGET: ABI = ABI::V4;

/// True when the running kernel enforces Landlock.
pub(crate) fn supported() -> bool {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    #[allow(unsafe_code)]
    // SAFETY: the documented way to ask for the ABI version: null attributes, size 0.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    v >= 1
}

/// Builds the ruleset in the parent, so the child only has to enforce it. `net_port` is the one
/// TCP port the process may bind and connect to (its network namespace has only loopback).
pub(crate) fn ruleset(
    m: &Mounts,
    extra_ro: &[PathBuf],
    net_port: Option<u16>,
) -> Result<RulesetCreated, EnvError> {
    let read = AccessFs::from_read(ABI_TARGET);
    let all = AccessFs::from_all(ABI_TARGET);
    let existing = |v: Vec<PathBuf>| v.into_iter().filter(|p| p.exists()).collect::<Vec<_>>();
    let mut ro: Vec<PathBuf> = SYSTEM_RO.iter().map(PathBuf::from).collect();
    ro.push(PathBuf::from(KERNEL_RO));
    ro.push(m.harness.clone());
    ro.extend(extra_ro.iter().cloned());
    // /dev/shm is the host's (no mount namespace): see `BUILTIN_CAVEATS`.
    let rw = vec![m.workspace.clone(), m.scratch.clone(), PathBuf::from(SHM)];
    let dev: Vec<PathBuf> = [
        "/dev/null",
        "/dev/zero",
        "/dev/urandom",
        "/dev/random",
        "/proc",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let ruleset = landlock::Ruleset::default()
        .handle_access(all)?
        .handle_access(AccessNet::from_all(ABI_TARGET))?
        .create()?
        .add_rules(path_beneath_rules(existing(ro), read))?
        .add_rules(path_beneath_rules(
            existing(dev),
            read | AccessFs::WriteFile,
        ))?
        .add_rules(path_beneath_rules(existing(rw), all))?;
    let ruleset = match net_port {
        Some(port) => ruleset.add_rule(NetPort::new(
            port,
            AccessNet::BindTcp | AccessNet::ConnectTcp,
        ))?,
        None => ruleset,
    };
    Ok(ruleset)
}

/// The ruleset's file descriptor (close-on-exec), for [`restrict`] to enforce in the child.
/// Fails when the kernel would not enforce it: the builtin backend never runs unrestricted.
pub(crate) fn into_fd(rules: RulesetCreated) -> Result<OwnedFd, EnvError> {
    Option::<OwnedFd>::from(rules).ok_or_else(|| EnvError::BackendUnavailable {
        backend: "builtin".into(),
        reason: "the kernel does not enforce Landlock".into(),
    })
}

/// Enforces the ruleset `fd` on the calling process. Runs between fork and exec, so it only
/// makes system calls and returns the raw OS error: no allocation, and the errno reaches the
/// parent intact (std reports any error without one as EINVAL).
pub(crate) fn restrict(fd: RawFd) -> std::io::Result<()> {
    #[allow(unsafe_code)]
    // SAFETY: prctl and landlock_restrict_self take plain integers; `fd` is open until exec.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

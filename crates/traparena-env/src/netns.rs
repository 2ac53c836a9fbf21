//! A TCP listener bound inside another process's network namespace: how an agent in a
//! container without a network (`--network=none`: its own namespace with loopback alone)
//! reaches the model proxy on the host's loopback.
//!
//! A short-lived thread of the harness enters the namespace (`setns`), binds
//! `127.0.0.1:<port>` there and ends; the socket stays in the namespace it was made in, and
//! the harness accepts on it from its own (see [`crate::bridge::Bridge::start_tcp`]). Nothing
//! in the container needs an interpreter or any program of the harness, and it gains no route
//! anywhere: only connections to that one address arrive, at the harness.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::fd::AsRawFd;

use crate::error::EnvError;

/// The thread that enters the namespace (`/proc/<pid>/task/*/comm`).
const THREAD_NAME: &str = "tp-netns";

/// A listener on `127.0.0.1:port` in the network namespace of process `pid` (a container's
/// first process). Entering another namespace takes root (`CAP_SYS_ADMIN` over the namespace's
/// owner): a harness that is not root gets [`EnvError::AgentCommand`] saying so, and so does a
/// namespace whose port is taken or that has no loopback.
pub(crate) fn listen_in(pid: u32, port: u16) -> Result<TcpListener, EnvError> {
    can_enter(port)?;
    let refused = |why: String| refused(port, why);
    let ns_path = format!("/proc/{pid}/ns/net");
    let ns = std::fs::File::open(&ns_path).map_err(|e| refused(format!("{ns_path}: {e}")))?;
    let bound = std::thread::Builder::new()
        .name(THREAD_NAME.into())
        .spawn(move || -> Result<TcpListener, String> {
            // This thread alone moves; it ends right after the bind, so no other work of the
            // harness ever runs in the container's namespace.
            #[allow(unsafe_code)]
            // SAFETY: setns takes an open namespace descriptor (kept open by `ns` for the call)
            // and a flag; it changes this thread's network namespace only and touches no
            // memory of ours.
            let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            if rc < 0 {
                return Err(format!(
                    "entering its network namespace failed: {}",
                    std::io::Error::last_os_error()
                ));
            }
            TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
                .map_err(|e| format!("binding it in the container failed: {e}"))
        })
        .map_err(|e| refused(format!("cannot start a thread: {e}")))?;
    let listener = bound
        .join()
        .map_err(|_| refused("the thread that binds it panicked".into()))?
        .map_err(refused)?;
    Ok(listener)
}

/// `Ok` when the harness may enter a container's network namespace to give it the proxy's
/// `port`: it runs as root. Checked before a container is started for nothing.
pub(crate) fn can_enter(port: u16) -> Result<(), EnvError> {
    if crate::lease::is_root() {
        return Ok(());
    }
    Err(refused(
        port,
        "the harness binds it inside the container's network namespace, which needs root (a \
         rootless engine's namespace is not the harness's to enter); run the harness as root, \
         or run external agents under bubblewrap"
            .into(),
    ))
}

fn refused(port: u16, why: String) -> EnvError {
    EnvError::AgentCommand {
        reason: format!(
            "cannot give the agent's container the model proxy at 127.0.0.1:{port}: {why}"
        ),
    }
}

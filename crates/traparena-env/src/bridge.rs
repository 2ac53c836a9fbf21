//! The host side of an agent process's network bridge: a Unix socket in the harness folder,
//! which the sandbox can see, whose every connection is forwarded to the model proxy at the
//! host's `127.0.0.1:<port>`.
//!
//! Inside the sandbox, the forwarder shim (`shims/tp_agent_net.py`) listens on
//! `127.0.0.1:<port>` of the sandbox's own network namespace and connects to this socket for
//! each connection it accepts; so the agent reaches the proxy at the address it has on the
//! host, and nothing else. A file-system socket needs no network namespace in common, and no
//! root.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::Write;
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{EnvError, io};

/// What the threads of a bridge are called (`/proc/<pid>/task/*/comm`).
pub(crate) const THREAD_NAME: &str = "tp-bridge";
/// How long a connection to the proxy may take to be accepted.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A running bridge. [`Bridge::stop`] (or dropping it) ends every thread and connection of it
/// and removes its socket file.
#[derive(Debug)]
pub(crate) struct Bridge {
    path: PathBuf,
    shared: Arc<Mutex<Conns>>,
    /// Written to once to tell the accepting thread to stop.
    wake: Option<std::io::PipeWriter>,
    accept: Option<JoinHandle<()>>,
}

/// The connections of a bridge.
#[derive(Debug, Default)]
struct Conns {
    /// The bridge is stopping: no connection may be added.
    closed: bool,
    next: u64,
    /// The live connections' streams, to shut them down when the bridge stops.
    open: HashMap<u64, (UnixStream, Option<TcpStream>)>,
    /// The threads serving connections.
    threads: Vec<JoinHandle<()>>,
}

impl Bridge {
    /// Listens on a new socket at `path` that only `user` (the harness's own user when
    /// `None`) may connect to, forwarding to `127.0.0.1:port`.
    pub(crate) fn start(path: &Path, port: u16, user: Option<u32>) -> Result<Bridge, EnvError> {
        // A crashed harness's leftover would make the bind fail.
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).map_err(io("listen on", path))?;
        let started = (|| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(io("chmod", path))?;
            if let Some(uid) = user {
                std::os::unix::fs::chown(path, Some(uid), Some(uid)).map_err(io("chown", path))?;
            }
            let (wake_r, wake_w) = std::io::pipe().map_err(io("create a pipe for", path))?;
            let shared = Arc::new(Mutex::new(Conns::default()));
            let s = Arc::clone(&shared);
            let accept = std::thread::Builder::new()
                .name(THREAD_NAME.into())
                .spawn(move || accept_loop(listener, wake_r, port, s))
                .map_err(io("start a thread for", path))?;
            Ok(Bridge {
                path: path.to_owned(),
                shared,
                wake: Some(wake_w),
                accept: Some(accept),
            })
        })();
        if started.is_err() {
            let _ = std::fs::remove_file(path);
        }
        started
    }

    /// Stops accepting, shuts every connection down, waits for every thread and removes the
    /// socket file.
    pub(crate) fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let Some(accept) = self.accept.take() else {
            return;
        };
        if let Some(mut w) = self.wake.take() {
            let _ = w.write_all(b"x");
        }
        let _ = accept.join();
        let threads = {
            let mut c = self.shared.lock();
            c.closed = true;
            for (unix, tcp) in c.open.values() {
                let _ = unix.shutdown(Shutdown::Both);
                if let Some(tcp) = tcp {
                    let _ = tcp.shutdown(Shutdown::Both);
                }
            }
            std::mem::take(&mut c.threads)
        };
        for t in threads {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Accepts connections until `wake` becomes readable.
fn accept_loop(
    listener: UnixListener,
    wake: std::io::PipeReader,
    port: u16,
    shared: Arc<Mutex<Conns>>,
) {
    let mut fds = [
        libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: wake.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        #[allow(unsafe_code)]
        // SAFETY: two valid pollfds on the stack; both descriptors stay open while polled.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if rc < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if fds[1].revents != 0 {
            return;
        }
        if fds[0].revents == 0 {
            continue;
        }
        let Ok((unix, _)) = listener.accept() else {
            // Out of descriptors, say: the sandbox side sees that connection fail.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        let mut c = shared.lock();
        // Finished connections' threads are joined as new ones come.
        let (done, running): (Vec<_>, Vec<_>) = std::mem::take(&mut c.threads)
            .into_iter()
            .partition(|t| t.is_finished());
        c.threads = running;
        for t in done {
            let _ = t.join();
        }
        let Ok(copy) = unix.try_clone() else {
            continue;
        };
        let id = c.next;
        c.next += 1;
        c.open.insert(id, (copy, None));
        let s = Arc::clone(&shared);
        match std::thread::Builder::new()
            .name(THREAD_NAME.into())
            .spawn(move || serve(id, unix, port, s))
        {
            Ok(t) => c.threads.push(t),
            Err(_) => {
                c.open.remove(&id);
            }
        }
    }
}

/// Forwards one connection both ways until both ends are done.
fn serve(id: u64, unix: UnixStream, port: u16, shared: Arc<Mutex<Conns>>) {
    let proxy = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let tcp = TcpStream::connect_timeout(&proxy, CONNECT_TIMEOUT);
    let forward = tcp.and_then(|tcp| {
        let copies = (unix.try_clone()?, tcp.try_clone()?, tcp.try_clone()?);
        Ok((tcp, copies))
    });
    let Ok((tcp, (unix_in, tcp_out, registered))) = forward else {
        shared.lock().open.remove(&id);
        return;
    };
    {
        let mut c = shared.lock();
        if c.closed {
            return;
        }
        if let Some(entry) = c.open.get_mut(&id) {
            entry.1 = Some(registered);
        }
    }
    let up = std::thread::Builder::new()
        .name(THREAD_NAME.into())
        .spawn(move || pump(&unix_in, &tcp_out));
    if up.is_ok() {
        pump(&tcp, &unix);
    } else {
        let _ = unix.shutdown(Shutdown::Both);
        let _ = tcp.shutdown(Shutdown::Both);
    }
    if let Ok(up) = up {
        let _ = up.join();
    }
    shared.lock().open.remove(&id);
}

/// One direction of a connection: copies `from` to `to` until `from` ends, then ends `to`'s
/// writing side (both sides of both on an error).
fn pump<R, W>(mut from: R, mut to: W)
where
    R: std::io::Read + Shut,
    W: std::io::Write + Shut,
{
    match std::io::copy(&mut from, &mut to) {
        Ok(_) => to.shut(Shutdown::Write),
        Err(_) => {
            from.shut(Shutdown::Both);
            to.shut(Shutdown::Both);
        }
    }
}

/// Shutting a stream down, for [`pump`] over both kinds of stream.
trait Shut {
    fn shut(&self, how: Shutdown);
}

impl Shut for &UnixStream {
    fn shut(&self, how: Shutdown) {
        let _ = self.shutdown(how);
    }
}

impl Shut for &TcpStream {
    fn shut(&self, how: Shutdown) {
        let _ = self.shutdown(how);
    }
}

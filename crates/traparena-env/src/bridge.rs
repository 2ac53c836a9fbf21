//! The host side of an agent process's network bridge: a listener whose every connection is
//! forwarded to the model proxy at the host's `127.0.0.1:<port>`.
//!
//! Under bubblewrap and the builtin backend the listener is a Unix socket in the harness
//! folder, which the sandbox can see: the forwarder shim (`shims/tp_agent_net.py`) listens on
//! `127.0.0.1:<port>` of the sandbox's own network namespace and connects to this socket for
//! each connection it accepts; a file-system socket needs no network namespace in common, and
//! no root. Under the container backend the listener is a TCP socket the harness bound at
//! `127.0.0.1:<port>` inside the agent's container's network namespace (`netns`), accepted
//! from here. Either way the agent reaches the proxy at the address it has on the host, and
//! nothing else.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::Write;
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
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
/// and removes its socket file, if it has one.
#[derive(Debug)]
pub(crate) struct Bridge {
    /// The Unix socket's file, removed when the bridge stops.
    path: Option<PathBuf>,
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
    open: HashMap<u64, (Inbound, Option<TcpStream>)>,
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
            Bridge::serve(Listener::Unix(listener), port, Some(path.to_owned()))
        })();
        if started.is_err() {
            let _ = std::fs::remove_file(path);
        }
        started
    }

    /// Forwards every connection `listener` accepts (a socket bound in another network
    /// namespace, see [`crate::netns`]) to `127.0.0.1:port` of the harness's own.
    pub(crate) fn start_tcp(listener: TcpListener, port: u16) -> Result<Bridge, EnvError> {
        Bridge::serve(Listener::Tcp(listener), port, None)
    }

    /// Starts the accepting thread on `listener`; `path` is its socket file, if any.
    fn serve(listener: Listener, port: u16, path: Option<PathBuf>) -> Result<Bridge, EnvError> {
        let what = || path.clone().unwrap_or_else(|| PathBuf::from("the bridge"));
        let (wake_r, wake_w) = std::io::pipe().map_err(io("create a pipe for", what()))?;
        let shared = Arc::new(Mutex::new(Conns::default()));
        let s = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name(THREAD_NAME.into())
            .spawn(move || accept_loop(listener, wake_r, port, s))
            .map_err(io("start a thread for", what()))?;
        Ok(Bridge {
            path,
            shared,
            wake: Some(wake_w),
            accept: Some(accept),
        })
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
            for (inbound, tcp) in c.open.values() {
                let _ = inbound.shutdown(Shutdown::Both);
                if let Some(tcp) = tcp {
                    let _ = tcp.shutdown(Shutdown::Both);
                }
            }
            std::mem::take(&mut c.threads)
        };
        for t in threads {
            let _ = t.join();
        }
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Accepts connections until `wake` becomes readable.
fn accept_loop(
    listener: Listener,
    wake: std::io::PipeReader,
    port: u16,
    shared: Arc<Mutex<Conns>>,
) {
    let mut fds = [
        libc::pollfd {
            fd: listener.raw_fd(),
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
        let Ok(inbound) = listener.accept() else {
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
        let Ok(copy) = inbound.try_clone() else {
            continue;
        };
        let id = c.next;
        c.next += 1;
        c.open.insert(id, (copy, None));
        let s = Arc::clone(&shared);
        match std::thread::Builder::new()
            .name(THREAD_NAME.into())
            .spawn(move || forward(id, inbound, port, s))
        {
            Ok(t) => c.threads.push(t),
            Err(_) => {
                c.open.remove(&id);
            }
        }
    }
}

/// Forwards one connection both ways until both ends are done.
fn forward(id: u64, inbound: Inbound, port: u16, shared: Arc<Mutex<Conns>>) {
    let proxy = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let tcp = TcpStream::connect_timeout(&proxy, CONNECT_TIMEOUT);
    let pair = tcp.and_then(|tcp| {
        let copies = (inbound.try_clone()?, tcp.try_clone()?, tcp.try_clone()?);
        Ok((tcp, copies))
    });
    let Ok((tcp, (inbound_in, tcp_out, registered))) = pair else {
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
        .spawn(move || pump(&inbound_in, &tcp_out));
    if up.is_ok() {
        pump(&tcp, &inbound);
    } else {
        let _ = inbound.shutdown(Shutdown::Both);
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

impl Shut for &Inbound {
    fn shut(&self, how: Shutdown) {
        let _ = self.shutdown(how);
    }
}

impl Shut for &TcpStream {
    fn shut(&self, how: Shutdown) {
        let _ = self.shutdown(how);
    }
}

/// What a bridge accepts on: a Unix socket in the harness folder, or a TCP socket bound in the
/// agent's network namespace.
#[derive(Debug)]
enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

impl Listener {
    fn raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Listener::Unix(l) => l.as_raw_fd(),
            Listener::Tcp(l) => l.as_raw_fd(),
        }
    }

    fn accept(&self) -> std::io::Result<Inbound> {
        match self {
            Listener::Unix(l) => l.accept().map(|(s, _)| Inbound::Unix(s)),
            Listener::Tcp(l) => l.accept().map(|(s, _)| Inbound::Tcp(s)),
        }
    }
}

/// One accepted connection, of either kind of [`Listener`].
#[derive(Debug)]
enum Inbound {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Inbound {
    fn try_clone(&self) -> std::io::Result<Inbound> {
        match self {
            Inbound::Unix(s) => s.try_clone().map(Inbound::Unix),
            Inbound::Tcp(s) => s.try_clone().map(Inbound::Tcp),
        }
    }

    fn shutdown(&self, how: Shutdown) -> std::io::Result<()> {
        match self {
            Inbound::Unix(s) => s.shutdown(how),
            Inbound::Tcp(s) => s.shutdown(how),
        }
    }
}

impl std::io::Read for &Inbound {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Inbound::Unix(s) => (&*s).read(buf),
            Inbound::Tcp(s) => (&*s).read(buf),
        }
    }
}

impl std::io::Write for &Inbound {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Inbound::Unix(s) => (&*s).write(buf),
            Inbound::Tcp(s) => (&*s).write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Inbound::Unix(s) => (&*s).flush(),
            Inbound::Tcp(s) => (&*s).flush(),
        }
    }
}

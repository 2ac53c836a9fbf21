//! The container engine (podman or docker) as a program the harness runs: finding it, the
//! containers it started for this process, their removal, and the sweep of containers that a
//! harness killed before it could remove them left behind.
//!
//! Every container the harness starts carries the label [`OWNER_LABEL`] naming its process
//! (`pid:start time`, the start time in clock ticks since boot from `/proc/PID/stat`, so that a
//! reused pid is not taken for the owner). A container whose owner is gone is swept.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::EnvError;

/// The label every container the harness starts carries: its owner, `pid:start`.
pub(crate) const OWNER_LABEL: &str = "org.traparena.owner";

/// Which engine a program is: their command lines differ in one place, passing the report
/// descriptor (podman's `exec --preserve-fds`; docker has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EngineKind {
    Podman,
    Docker,
}

/// A container engine: its program and the arguments given before every subcommand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Engine {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub kind: EngineKind,
}

impl Engine {
    /// The engine `name` names (`podman`, `docker`, or a path to either), or the first of
    /// podman and docker installed when `name` is `None`.
    pub(crate) fn find(name: Option<&str>, args: &[String]) -> Result<Engine, EnvError> {
        let candidates: Vec<&str> = match name {
            Some(n) => vec![n],
            None => vec!["podman", "docker"],
        };
        for c in &candidates {
            let Some(program) = on_path(c) else { continue };
            let file = program
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let kind = if file.contains("docker") {
                EngineKind::Docker
            } else {
                EngineKind::Podman
            };
            return Ok(Engine {
                program,
                args: args.to_vec(),
                kind,
            });
        }
        Err(EnvError::BackendUnavailable {
            backend: "container".into(),
            reason: match name {
                Some(n) => format!("the container engine {n} is not installed"),
                None => {
                    "neither podman nor docker is installed (`apt-get install podman runc`)".into()
                }
            },
        })
    }

    /// A command of this engine: its program with the engine arguments. The client dies with
    /// the harness thread that started it (every engine command is waited for by the thread
    /// that starts it), so that a killed harness leaves no client behind that could still
    /// start a container after the next harness swept.
    #[allow(clippy::disallowed_methods)] // traparena-env is where processes are spawned
    pub(crate) fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args);
        c.stdin(Stdio::null());
        crate::orphan::die_with_harness(&mut c);
        c
    }

    /// Runs `args` and returns its output; `Err` names the command and the engine's first line
    /// of error output when it cannot run or fails.
    pub(crate) fn output(&self, args: &[&str]) -> Result<Output, EnvError> {
        let out = self
            .command()
            .args(args)
            .output()
            .map_err(|source| EnvError::Spawn {
                program: self.program.display().to_string(),
                source,
            })?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(EnvError::ContainerEngine {
                command: format!(
                    "{} {}",
                    self.program.display(),
                    args.first().copied().unwrap_or("")
                ),
                message: first_line(&out.stderr),
            })
        }
    }

    /// Removes the containers whose owner process is gone (a harness killed before it could
    /// remove them); how many were removed.
    pub(crate) fn sweep(&self) -> Result<usize, EnvError> {
        // `.Labels` is the one field both engines print (`k=v,...` by docker, `map[k:v ...]` by
        // podman), and the owner's value is digits and a colon in either.
        let label = format!("label={OWNER_LABEL}");
        let out = self.output(&[
            "ps",
            "-a",
            "--filter",
            &label,
            "--format",
            "{{.ID}} {{.Labels}}",
        ])?;
        let text = String::from_utf8_lossy(&out.stdout);
        let dead: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(_, labels)| !owner_of(labels).is_some_and(owner_alive))
            .map(|(id, _)| id)
            .collect();
        for id in &dead {
            let _ = self.remove(id);
        }
        Ok(dead.len())
    }

    /// Removes container `id` at once, with whatever runs in it.
    pub(crate) fn remove(&self, id: &str) -> Result<(), EnvError> {
        match self.kind {
            // `-t 0`: no grace period (the processes in it are the tested code's).
            EngineKind::Podman => self.output(&["rm", "-f", "-t", "0", id]),
            // docker's `rm -f` kills at once.
            EngineKind::Docker => self.output(&["rm", "-f", id]),
        }
        .map(|_| ())
    }
}

/// A container this process started, removed (with everything running in it) when the last
/// handle is dropped.
#[derive(Debug)]
pub struct Container {
    pub(crate) id: String,
    pub(crate) engine: Engine,
}

impl Container {
    /// The engine's id of the container.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The host's pid of the container's first process (its `--init`), whose namespaces are
    /// the container's.
    pub(crate) fn pid(&self) -> Result<u32, EnvError> {
        let out = self
            .engine
            .output(&["inspect", "--format", "{{.State.Pid}}", &self.id])?;
        let text = String::from_utf8_lossy(&out.stdout);
        match text.trim().parse::<u32>() {
            Ok(pid) if pid > 0 => Ok(pid),
            _ => Err(EnvError::ContainerEngine {
                command: format!("{} inspect", self.engine.program.display()),
                message: format!(
                    "container {} has no running process (its pid reads {:?})",
                    self.id,
                    text.trim()
                ),
            }),
        }
    }

    /// Removes the container now, with whatever runs in it, and waits for that (dropping it
    /// leaves the removal to a thread of its own).
    pub(crate) fn remove_now(mut self) -> Result<(), EnvError> {
        let id = std::mem::take(&mut self.id);
        self.engine.remove(&id)
    }
}

impl Drop for Container {
    /// Hands the container to the remover thread: an episode does not wait for its removal,
    /// and the pool waits for every removal when it goes.
    fn drop(&mut self) {
        if !self.id.is_empty() {
            remove_later(self.engine.clone(), std::mem::take(&mut self.id));
        }
    }
}

/// Containers handed over for removal and not yet removed, and the thread removing them.
struct Remover {
    queue: std::sync::mpsc::Sender<(Engine, String)>,
    pending: parking_lot::Mutex<usize>,
    done: parking_lot::Condvar,
}

fn remover() -> &'static Remover {
    static REMOVER: OnceLock<Remover> = OnceLock::new();
    REMOVER.get_or_init(|| {
        let (queue, jobs) = std::sync::mpsc::channel::<(Engine, String)>();
        std::thread::spawn(move || {
            for (engine, id) in jobs {
                let _ = engine.remove(&id);
                let r = remover();
                *r.pending.lock() -= 1;
                r.done.notify_all();
            }
        });
        Remover {
            queue,
            pending: parking_lot::Mutex::new(0),
            done: parking_lot::Condvar::new(),
        }
    })
}

fn remove_later(engine: Engine, id: String) {
    let r = remover();
    *r.pending.lock() += 1;
    if let Err(std::sync::mpsc::SendError((engine, id))) = r.queue.send((engine, id)) {
        // No remover thread (it cannot have ended, but never leave a container): now.
        let _ = engine.remove(&id);
        *r.pending.lock() -= 1;
    }
}

/// Waits until every container handed over for removal is removed.
pub(crate) fn flush_removals() {
    let r = remover();
    let mut pending = r.pending.lock();
    while *pending > 0 {
        r.done.wait(&mut pending);
    }
}

/// This process as [`OWNER_LABEL`] names it.
pub(crate) fn owner() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| {
        let pid = std::process::id();
        format!("{pid}:{}", start_time(pid).unwrap_or_default())
    })
}

/// The [`OWNER_LABEL`] value in an engine's print of a container's labels.
fn owner_of(labels: &str) -> Option<&str> {
    let at = labels.find(OWNER_LABEL)? + OWNER_LABEL.len();
    let rest = labels[at..].strip_prefix(['=', ':'])?;
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ':'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// True while the process an [`OWNER_LABEL`] value names runs (same pid, same start time).
fn owner_alive(owner: &str) -> bool {
    let Some((pid, start)) = owner.split_once(':') else {
        return false;
    };
    match pid.parse::<u32>() {
        Ok(pid) => start_time(pid).is_some_and(|s| s.to_string() == start),
        Err(_) => false,
    }
}

/// The start time of process `pid` in clock ticks after boot (`/proc/PID/stat`, field 22).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

fn on_path(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Path::new(name).is_file().then(|| PathBuf::from(name));
    }
    [
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
        "/usr/local/sbin",
        "/usr/sbin",
    ]
    .iter()
    .map(|d| Path::new(d).join(name))
    .find(|p| p.is_file())
}

pub(crate) fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no error output)");
    line.chars().take(400).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_read_from_either_engines_labels() {
        for (labels, owner) in [
            (
                "map[io.buildah.version:1.28.2 org.traparena.owner:6141:3399370]",
                Some("6141:3399370"),
            ),
            ("org.traparena.owner=12:34,other=x", Some("12:34")),
            ("a=b,org.traparena.owner=7:8", Some("7:8")),
            ("map[other:x]", None),
            ("", None),
        ] {
            assert_eq!(owner_of(labels), owner, "{labels}");
        }
    }

    #[test]
    fn an_owner_is_alive_only_with_its_own_start_time() {
        assert!(owner_alive(owner()));
        let pid = std::process::id();
        assert!(!owner_alive(&format!("{pid}:1")));
        assert!(!owner_alive("4194304:0"), "no such pid");
        for bad in ["", "x", "12", "a:b", ":"] {
            assert!(!owner_alive(bad), "{bad:?}");
        }
    }
}

//! An external agent in a container of the task's image (the container backend), as
//! SWE-bench's agent leaderboards run agents: on the repository at the image's working
//! directory (`/testbed`), with the image's own interpreters and tools.
//!
//! The agent gets a container of its own, started as a workspace's (`--network=none`,
//! `--read-only`, `--init`, the limits, the workspace at the working directory, the scratch
//! folder at `/tmp`, the harness folder read-only), with the agent's installation
//! ([`AgentCommand::read_only_paths`]) mounted read-only at its own paths; the process is
//! `ENGINE exec`'d into it as the workspace's sandbox user. For the model proxy the harness
//! binds `127.0.0.1:<port>` inside the container's network namespace ([`crate::netns`]) and
//! forwards what arrives there to the host's proxy ([`Bridge::start_tcp`]): the container has
//! no other network. The container goes with the process.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use traparena_task::AgentCommand;

use crate::base::{Backend, Mounts};
use crate::bridge::Bridge;
use crate::container::Recipe;
use crate::engine::Container;
use crate::error::EnvError;
use crate::sandbox::Sandbox;

/// The agent's own container and the bridge into it.
pub(crate) struct InImage {
    /// The folders, with the agent's container as theirs.
    pub mounts: Mounts,
    pub container: Arc<Container>,
    pub bridge: Option<Bridge>,
}

/// Checks `cmd`'s read-only paths and its program, then starts the agent's container on
/// `mounts`' folders and, with a proxy port, the bridge into it. Nothing is left running when
/// it fails.
pub(crate) fn prepare(
    sandbox: &Sandbox,
    mounts: &Mounts,
    cmd: &AgentCommand,
) -> Result<InImage, EnvError> {
    let image = sandbox.image().ok_or_else(|| EnvError::Start {
        program: cmd.argv[0].clone(),
        backend: Backend::Container,
        reason: "the container backend runs an agent in its task's image, and this task names \
                 none (give one with --image, `container.image` of the sandbox settings)"
            .into(),
        source: None,
    })?;
    let Some(engine) = sandbox.engine() else {
        return Err(EnvError::AgentCommand {
            reason: "the sandbox has no container engine".into(),
        });
    };
    for p in &cmd.read_only_paths {
        check_read_only(p, &image.workdir)?;
    }
    check_program(mounts, cmd)?;
    if let Some(port) = cmd.proxy_port {
        crate::netns::can_enter(port)?;
    }
    let recipe = Recipe {
        image,
        limits: sandbox.config().limits.clone(),
    };
    let container = recipe.start(
        engine,
        &mounts.workspace,
        &mounts.scratch,
        &mounts.harness,
        &cmd.read_only_paths,
    )?;
    let bridge = match cmd.proxy_port {
        None => None,
        Some(port) => match bridge_into(&container, port) {
            Ok(b) => Some(b),
            Err(e) => {
                let _ = container.remove_now();
                return Err(e);
            }
        },
    };
    let container = Arc::new(container);
    Ok(InImage {
        mounts: Mounts {
            container: Some(Arc::clone(&container)),
            ..mounts.clone()
        },
        container,
        bridge,
    })
}

/// The proxy's port inside `container`, forwarded to the host's.
fn bridge_into(container: &Container, port: u16) -> Result<Bridge, EnvError> {
    let listener = crate::netns::listen_in(container.pid()?, port)?;
    Bridge::start_tcp(listener, port)
}

/// Removes the agent's container now (its process has ended, or never started): `Ok` also when
/// another handle still holds it (it then goes with that handle).
pub(crate) fn remove(container: Arc<Container>) {
    if let Ok(c) = Arc::try_unwrap(container) {
        let _ = c.remove_now();
    }
}

/// A read-only path must be an existing absolute host path that replaces none of the image's
/// own folders: mounted over `/usr` or the working directory, it would hide the image.
fn check_read_only(p: &Path, workdir: &str) -> Result<(), EnvError> {
    let refused = |why: &str| EnvError::AgentCommand {
        reason: format!(
            "read-only path {}: {why} (in a container of the task's image it is mounted at its \
             own path)",
            p.display()
        ),
    };
    if !p.is_absolute() || p.components().any(|c| c == Component::ParentDir) {
        return Err(refused("it must be an absolute path without `..`"));
    }
    let depth = p.components().count() - 1;
    let system = depth <= 1
        || (p.starts_with("/usr") && depth <= 3)
        || Path::new(workdir).starts_with(p)
        || p.starts_with(workdir)
        || p.starts_with(crate::base::SANDBOX_HARNESS);
    if system {
        return Err(refused(
            "it is, or holds, a system folder of the image or the workspace, which it would hide",
        ));
    }
    if let Err(e) = std::fs::metadata(p) {
        return Err(refused(&format!("cannot be read on the host: {e}")));
    }
    Ok(())
}

/// The agent's program, when it lies in one of its read-only paths (its installation), is
/// checked on the host as a test command's is (it exists, the sandbox user may run it, every
/// link in it resolves into what the container shows); a program of the image is looked up by
/// the engine.
fn check_program(mounts: &Mounts, cmd: &AgentCommand) -> Result<(), EnvError> {
    let program = &cmd.argv[0];
    let path = PathBuf::from(program);
    if !cmd.read_only_paths.iter().any(|r| path.starts_with(r)) {
        return Ok(());
    }
    let path_var = cmd
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    crate::program::check(
        Backend::Builtin,
        mounts,
        &cmd.read_only_paths,
        program,
        path_var,
    )
    .map_err(|reason| EnvError::Start {
        program: program.clone(),
        backend: Backend::Container,
        reason: reason.to_string(),
        source: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_paths_that_would_hide_the_image_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for bad in [
            "/",
            "/usr",
            "/usr/local",
            "/usr/local/bin",
            "/opt",
            "/testbed",
            "/testbed/x",
            "/harness",
            "relative",
            "/var/../usr",
        ] {
            let e = check_read_only(Path::new(bad), "/testbed").unwrap_err();
            assert!(matches!(e, EnvError::AgentCommand { .. }), "{bad}: {e}");
        }
        let missing = dir.path().join("missing");
        assert!(check_read_only(&missing, "/testbed").is_err());
        check_read_only(dir.path(), "/testbed").unwrap();
    }
}

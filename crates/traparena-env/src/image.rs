//! A task's tree read out of a container image: the repository an image holds at its working
//! directory (SWE-bench's `/testbed`), copied to the host without its git data.

use std::path::Path;
use std::process::Stdio;

use traparena_task::ImageEnv;

use crate::base::Backend;
use crate::engine::first_line;
use crate::error::{EnvError, io};
use crate::sandbox::Sandbox;

/// What [`Sandbox::export_image_tree`] found in the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageTree {
    /// The commit the image's repository has checked out (`git rev-parse HEAD`), when it is a
    /// git checkout.
    pub head: Option<String>,
}

impl Sandbox {
    /// Copies the files under `image.workdir` in `image` (without `.git`) into the new folder
    /// `dest`, as the container engine's `tar` of them; a one-off container with no network.
    ///
    /// `EnvError::Start` when the engine cannot run the image (it is missing, say), or when
    /// the folder cannot be read there; `EnvError::BackendUnavailable` when this sandbox is not
    /// the container backend.
    #[allow(clippy::disallowed_methods)] // traparena-env is where processes are spawned
    pub fn export_image_tree(&self, image: &ImageEnv, dest: &Path) -> Result<ImageTree, EnvError> {
        let Some(engine) = self.engine() else {
            return Err(EnvError::BackendUnavailable {
                backend: "container".into(),
                reason: format!(
                    "reading {} needs the `container` sandbox backend",
                    image.image
                ),
            });
        };
        let fail = |why: String| EnvError::Start {
            program: engine.program.to_string_lossy().into_owned(),
            backend: Backend::Container,
            reason: format!("cannot read {} from {}: {why}", image.workdir, image.image),
            source: None,
        };
        std::fs::create_dir_all(dest).map_err(io("create folder", dest))?;
        let mut producer = engine
            .command()
            .args([
                "run",
                "--rm",
                "--network=none",
                "--ulimit",
                "nofile=1024:1024",
            ])
            .args(["--ulimit", "nproc=1024:1024", "--entrypoint", "tar"])
            .arg(&image.image)
            .args(["-C", &image.workdir, "--exclude=./.git", "-cf", "-", "."])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(e.to_string()))?;
        let tar_in = producer.stdout.take().expect("piped stdout");
        let unpack = std::process::Command::new("tar")
            .args([
                "-x",
                "--no-same-owner",
                "--no-overwrite-dir",
                "-f",
                "-",
                "-C",
            ])
            .arg(dest)
            .stdin(tar_in)
            .stderr(Stdio::piped())
            .output()
            .map_err(|source| EnvError::Spawn {
                program: "tar".into(),
                source,
            })?;
        let produced = producer
            .wait_with_output()
            .map_err(|e| fail(e.to_string()))?;
        if !produced.status.success() {
            return Err(fail(first_line(&produced.stderr)));
        }
        if !unpack.status.success() {
            return Err(fail(format!("unpacking: {}", first_line(&unpack.stderr))));
        }
        let head = engine
            .command()
            .args([
                "run",
                "--rm",
                "--network=none",
                "--ulimit",
                "nofile=1024:1024",
            ])
            .args(["--ulimit", "nproc=1024:1024", "--entrypoint", "git"])
            .arg(&image.image)
            .args(["-C", &image.workdir, "rev-parse", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|h| !h.is_empty());
        Ok(ImageTree { head })
    }
}

//! SWE-bench's instance images: their names, and the environment a task gets from one.

use crate::skip::{Skip, SkipReason, Stop};
use std::path::Path;

use traparena_task::ImageEnv;

use super::environment::{Chosen, Environment};
use super::note::SweBenchEnvironment;
use super::{Ctx, SweBenchInstance};
use crate::error::ImportError;

/// How instance images are named and laid out, as SWE-bench's harness names and builds them:
/// `NAMESPACE/sweb.eval.ARCH.INSTANCE:TAG`, the instance id lower-cased, and with a namespace,
/// its `__` written `_1776_` (`swebench/sweb.eval.x86_64.django_1776_django-11099:latest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageNaming {
    /// The registry or namespace prefix (`swebench`, `docker.io/swebench`, `localhost`);
    /// `None` for images built locally by SWE-bench's harness, which have none.
    pub namespace: Option<String>,
    /// The architecture in the name (`x86_64`, `arm64`).
    pub arch: String,
    /// The tag.
    pub tag: String,
    /// Where the repository is in the image: the tasks' working directory.
    pub workdir: String,
    /// The folders put first on `PATH` in the image: the activated `testbed` environment.
    pub path: Vec<String>,
}

impl Default for ImageNaming {
    fn default() -> Self {
        ImageNaming {
            namespace: Some("swebench".into()),
            arch: "x86_64".into(),
            tag: "latest".into(),
            workdir: "/testbed".into(),
            path: vec![
                "/opt/miniconda3/envs/testbed/bin".into(),
                "/opt/miniconda3/bin".into(),
            ],
        }
    }
}

impl ImageNaming {
    /// The image of instance `id`.
    pub fn image(&self, id: &str) -> String {
        let key = format!("sweb.eval.{}.{}:{}", self.arch, id.to_lowercase(), self.tag);
        match self.namespace.as_deref().filter(|n| !n.is_empty()) {
            Some(ns) => format!("{}/{key}", ns.trim_end_matches('/')).replace("__", "_1776_"),
            None => key,
        }
    }

    /// The environment a task of instance `id` runs in.
    pub fn env(&self, id: &str) -> ImageEnv {
        ImageEnv {
            image: self.image(id),
            workdir: self.workdir.clone(),
            path: self.path.clone(),
        }
    }
}

impl Ctx<'_> {
    /// Copies the image's tree into `repo_dir` and returns its checked-out commit (none when
    /// the tree is no git checkout), or why the instance is skipped: the image cannot be run.
    pub(super) fn image_tree(
        &self,
        inst: &SweBenchInstance,
        naming: &ImageNaming,
        repo_dir: &Path,
    ) -> Result<Option<String>, Stop> {
        let image = naming.env(&inst.instance_id);
        match self.sandbox.export_image_tree(&image, repo_dir) {
            Ok(tree) => Ok(tree.head),
            Err(e) if e.is_start_failure() => {
                Err(Skip::new(SkipReason::ImageCannotRun, e.to_string()).into())
            }
            Err(e) => Err(ImportError::from(e).into()),
        }
    }

    /// The instance's image as its environment: the runner profile of the repository's
    /// environment (the user's pins, else the bundled ones), else the default one.
    pub(super) fn image_env(
        &self,
        inst: &SweBenchInstance,
        naming: &ImageNaming,
        version: Option<&str>,
    ) -> Result<Chosen, Skip> {
        let profile_name = self
            .lookup_env(inst, version)
            .map_or(crate::profiles::DEFAULT_PROFILE.to_owned(), |(_, _, e)| {
                e.profile
            });
        let profile = self
            .opts
            .profiles
            .get(&profile_name)
            .map_err(|e| Skip::new(SkipReason::UnknownRunnerProfile, e.to_string()))?;
        let image = naming.env(&inst.instance_id);
        let note = SweBenchEnvironment {
            from: "image".into(),
            image: Some(image.image.clone()),
            profile: profile_name.clone(),
            ..SweBenchEnvironment::default()
        };
        Ok(Chosen {
            note: Some(note),
            described: Some(format!(
                "version {}; image {}, profile {profile_name}",
                version.unwrap_or("unknown"),
                image.image
            )),
            profile,
            environment: Environment::Image(image),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_named_as_swebench_names_them() {
        let n = ImageNaming::default();
        assert_eq!(
            n.image("django__django-11099"),
            "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
        );
        assert_eq!(
            n.image("sphinx-doc__sphinx-8721"),
            "swebench/sweb.eval.x86_64.sphinx-doc_1776_sphinx-8721:latest"
        );
        let local = ImageNaming {
            namespace: None,
            ..ImageNaming::default()
        };
        assert_eq!(
            local.image("Pytest-dev__pytest-5227"),
            "sweb.eval.x86_64.pytest-dev__pytest-5227:latest"
        );
        let registry = ImageNaming {
            namespace: Some("registry.example:5000/team/".into()),
            tag: "v2".into(),
            arch: "arm64".into(),
            ..ImageNaming::default()
        };
        assert_eq!(
            registry.image("astropy__astropy-12907"),
            "registry.example:5000/team/sweb.eval.arm64.astropy_1776_astropy-12907:v2"
        );
        let env = n.env("psf__requests-2317");
        assert_eq!(env.workdir, "/testbed");
        assert_eq!(env.path[0], "/opt/miniconda3/envs/testbed/bin");
        assert!(env.check("task.json".as_ref()).is_ok());
    }
}

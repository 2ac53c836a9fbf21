//! The environment an instance's tests run in: chosen from the pins, the bundled environments
//! or the instance image, then built (or found) and checked to run in the sandbox.

use std::path::Path;
use std::sync::Arc;

use traparena_env::{Sandbox, Workspace};
use traparena_task::{ImageEnv, Setup};

use super::note::SweBenchEnvironment;
use super::{Ctx, Source, SweBenchInstance, runs_in_sandbox};
use traparena_pyenv::{
    Ensured, EnvTree, PinEntry, changed_dependency_id, declares_dependencies, dependency_id,
    ensure_env_tree, install_generated, is_built, setup_for_tree, venv_python,
};

use crate::error::io;
use crate::pins::bundled_envs;
use crate::profiles::RunnerProfile;
use crate::skip::{Skip, SkipReason, Stop};

/// The environment an instance runs in, and how its tests run.
pub(super) struct Chosen {
    pub(super) environment: Environment,
    /// What the task's metadata says of it (nothing for the system's interpreter).
    pub(super) note: Option<SweBenchEnvironment>,
    /// The report's line on the choice.
    pub(super) described: Option<String>,
    pub(super) profile: Arc<dyn RunnerProfile>,
}

/// Where an instance's tests run.
pub(super) enum Environment {
    /// The system's `python3`: a repository neither the pins nor the bundled environments know.
    System,
    /// A virtual environment on the host, built from `entry`.
    Venv {
        /// The task's `setup`.
        setup: Setup,
        /// The environment's specification.
        entry: Box<PinEntry>,
        /// Where it reads the repository's tree when it needs to: the record's
        /// `environment_setup_commit` when the clone has it, else the base tree.
        tree: TreeSource,
    },
    /// The instance's SWE-bench image, instead of an environment on the host.
    Image(ImageEnv),
}

/// The tree an environment's dependencies are read from, with its identity.
pub(super) enum TreeSource {
    /// The base tree (the task's `repo/`), identified by its dependency declarations.
    Base(String),
    /// Another commit of the clone, identified by its id (SWE-bench's
    /// `environment_setup_commit`: every instance of a version shares it).
    Commit(String),
    /// The base tree with the reference patch's changes to its dependency declarations
    /// (`changes`), in place of an `environment_setup_commit` the record does not give: that
    /// later commit of SWE-bench's holds the fix, and with it what the fix requires
    /// (pylint-dev__pylint-4661's adds appdirs to setup.cfg).
    Fixed {
        /// The identity ([`changed_dependency_id`]).
        id: String,
        /// The reference patch's hunks of the declaring files.
        changes: String,
    },
}

impl Chosen {
    /// The interpreter the test commands name: the environment's, the image's (its activated
    /// environment is first on its `PATH`), else the system's.
    pub(super) fn python(&self) -> String {
        match &self.environment {
            Environment::Venv { setup, .. } => venv_python(setup).to_string_lossy().into_owned(),
            Environment::Image(_) => "python".to_owned(),
            Environment::System => "python3".to_owned(),
        }
    }
}

impl TreeSource {
    pub(super) fn id(&self) -> &str {
        match self {
            TreeSource::Base(id) | TreeSource::Commit(id) | TreeSource::Fixed { id, .. } => id,
        }
    }
}

impl Ctx<'_> {
    /// The environment entry for `inst` at `version`: where it was found (`pins`, `bundled`),
    /// the key it matched, and the entry.
    pub(super) fn lookup_env(
        &self,
        inst: &SweBenchInstance,
        version: Option<&str>,
    ) -> Option<(&'static str, String, PinEntry)> {
        let user = self.opts.pins.as_ref().map(|p| ("pins", p));
        let bundled = self.opts.bundled.then(|| ("bundled", bundled_envs()));
        [user, bundled]
            .into_iter()
            .flatten()
            .find_map(|(from, pins)| {
                crate::versions::lookup(pins, &inst.repo, version).map(|(k, e)| {
                    let mut e = e.clone();
                    self.opts.resolve_as_of.apply(&mut e);
                    (from, k.to_owned(), e)
                })
            })
    }

    /// The environment for `inst` at `version`: the user's pins, else the bundled one; a
    /// repository neither knows runs with the system's python3 and pytest.
    pub(super) fn choose_env(
        &self,
        inst: &SweBenchInstance,
        repo_dir: &Path,
        version: Option<&str>,
        version_source: &str,
    ) -> Result<Chosen, Skip> {
        if let Source::Images(naming) = &self.source {
            return self.image_env(inst, naming, version);
        }
        let found = self.lookup_env(inst, version);
        let known_repo = self
            .opts
            .pins
            .as_ref()
            .is_some_and(|p| p.0.contains_key(&inst.repo))
            || (self.opts.bundled && bundled_envs().0.contains_key(&inst.repo));
        let Some((from, matched, mut entry)) = found else {
            if known_repo {
                let detail = match version {
                    Some(v) => format!(
                        "neither the pins nor the bundled environments have {} {v} (nor `*`)",
                        inst.repo
                    ),
                    // The version is unknown only after every rule was tried: say which.
                    None => format!(
                        "neither the pins nor the bundled environments have a `*` environment of {}, and its version is {version_source}",
                        inst.repo
                    ),
                };
                return Err(Skip::new(SkipReason::NoEnvironment, detail));
            }
            let profile = self.opts.profiles.get(crate::profiles::DEFAULT_PROFILE);
            return Ok(Chosen {
                environment: Environment::System,
                note: None,
                described: None,
                profile: profile
                    .map_err(|e| Skip::new(SkipReason::NoRunnerProfile, e.to_string()))?,
            });
        };
        let profile = self
            .opts
            .profiles
            .get(&entry.profile)
            .map_err(|e| Skip::new(SkipReason::UnknownRunnerProfile, e.to_string()))?;
        let python = self
            .python(&entry.python)
            .map_err(|e| Skip::new(SkipReason::NoInterpreter, e.to_string()))?;
        let environment = Some(format!(
            "version {} ({version_source}); {from} {} {matched}{}, python {}, profile {}",
            version.unwrap_or("unknown"),
            inst.repo,
            crate::versions::key_note(version, &matched),
            entry.python,
            entry.profile
        ));
        let mut note = SweBenchEnvironment {
            from: from.to_string(),
            version_key: Some(matched.to_string()),
            python: Some(entry.python.clone()),
            profile: entry.profile.clone(),
            reads_tree: Some(entry.needs_tree()),
            ..SweBenchEnvironment::default()
        };
        entry.python = python.to_string_lossy().into_owned();
        // Versions that fall back to one environment key share its environment.
        let key = format!("{}@{matched}", inst.repo);
        // An environment that reads dependencies from the tree is shared by the instances of
        // one environment_setup_commit, as SWE-bench shares one image; without one, by the base
        // commits whose dependency declarations are the same.
        let setup_commit = match (&inst.environment_setup_commit, &self.source) {
            (Some(c), Source::Clone(git)) if entry.needs_tree() => {
                git.resolve_commit(c).ok().flatten()
            }
            _ => None,
        };
        let changes = declared_changes(&inst.patch, &entry);
        let tree = match setup_commit {
            Some(c) => TreeSource::Commit(c),
            None if !changes.is_empty() => TreeSource::Fixed {
                id: changed_dependency_id(repo_dir, &entry, &changes),
                changes,
            },
            None => TreeSource::Base(dependency_id(repo_dir, &entry)),
        };
        if entry.needs_tree() {
            let said = match &tree {
                TreeSource::Commit(c) => format!("environment_setup_commit {c}"),
                TreeSource::Base(id) => format!("base commit ({id})"),
                TreeSource::Fixed { id, .. } => format!(
                    "base commit with the reference patch's changes to its dependency \
                     declarations ({id})"
                ),
            };
            note.tree = Some(said);
        }
        Ok(Chosen {
            note: Some(note),
            environment: Environment::Venv {
                setup: setup_for_tree(&key, &entry, &self.opts.venv_cache, Some(tree.id())),
                entry: Box::new(entry),
                tree,
            },
            described: environment,
            profile,
        })
    }

    /// Builds (or finds) the chosen environment, checks it runs in the sandbox, and runs the
    /// repository's install step into `repo_dir`. Returns the sandbox that shows it, and the
    /// files the install step generated into `repo_dir`.
    pub(super) fn prepare_env(
        &self,
        chosen: &Chosen,
        version: Option<&str>,
        repo_dir: &Path,
    ) -> Result<(Sandbox, Vec<String>), Stop> {
        let (s, e, tree_source) = match &chosen.environment {
            Environment::Image(image) => {
                return Ok((self.sandbox.with_image(image.clone()), Vec::new()));
            }
            Environment::System => return Ok((self.sandbox.clone(), Vec::new())),
            Environment::Venv { setup, entry, tree } => (setup, entry, tree),
        };
        let refuse = |r: SkipReason, d: String| Err(Stop::Skip(Skip::new(r, d)));
        let sandbox = self.sandbox.with_read_only_paths(&s.visible_paths());
        if self.opts.build_envs {
            // The setup commit's tree is exported only when the environment must be built.
            let scratch;
            let fixed;
            let dir = match tree_source {
                TreeSource::Commit(c) if e.needs_tree() && !is_built(s) => {
                    scratch = tempfile::Builder::new()
                        .prefix("traparena-setup-tree-")
                        .tempdir()
                        .map_err(io(std::env::temp_dir()))?;
                    let d = scratch.path().join("tree");
                    if let Source::Clone(git) = &self.source {
                        git.export_tree(c, &d)?;
                    }
                    d
                }
                TreeSource::Fixed { changes, .. } if e.needs_tree() && !is_built(s) => {
                    let mut ws = Workspace::materialize(repo_dir, self.patching)?;
                    let applied = ws.apply_patch(changes)?;
                    if !applied.applied {
                        return refuse(
                            SkipReason::EnvironmentCannotBeBuilt,
                            format!(
                                "the reference patch's changes to the dependency declarations \
                                 do not apply to the base tree: {}",
                                applied.message
                            ),
                        );
                    }
                    fixed = ws;
                    fixed.path().to_owned()
                }
                _ => repo_dir.to_owned(),
            };
            let tree = EnvTree {
                dir,
                id: tree_source.id().to_owned(),
            };
            match ensure_env_tree(s, e, Some(&tree), &self.opts.build) {
                Ok(Ensured::Rebuilt { reason }) => self.repaired.lock().push(format!(
                    "environment {} in {}: {reason}; built again",
                    s.key,
                    s.venv.display()
                )),
                Ok(_) => {}
                Err(e) => return refuse(SkipReason::EnvironmentCannotBeBuilt, e.to_string()),
            }
        } else if !is_built(s) {
            return refuse(
                SkipReason::EnvironmentNotBuilt,
                format!("{} is missing", s.venv.display()),
            );
        }
        if let Some(why) = runs_in_sandbox(&sandbox, &venv_python(s))? {
            return refuse(SkipReason::EnvironmentCannotRun, why);
        }
        match install_generated(e, s, version.unwrap_or("0.0.0"), repo_dir, &self.opts.build) {
            Ok(files) => Ok((sandbox, files)),
            Err(e) => refuse(SkipReason::RepositoryCannotBeInstalled, e.to_string()),
        }
    }
}

/// The blocks of `patch` (a git diff) that change a file declaring what `entry` reads from the
/// tree ([`declares_dependencies`]); empty when it changes none, or `entry` reads no tree.
pub(super) fn declared_changes(patch: &str, entry: &PinEntry) -> String {
    if !entry.needs_tree() {
        return String::new();
    }
    let mut out = String::new();
    let mut keep = false;
    for line in patch.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            // `a/PATH b/PATH`: the new path is the last one.
            let path = rest.trim_end().rsplit(" b/").next().unwrap_or_default();
            keep = declares_dependencies(path, entry);
        }
        if keep {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_blocks_of_declaring_files_are_kept() {
        let entry: PinEntry = serde_json::from_value(serde_json::json!({
            "tree_extras": [], "tree_requirements": ["requirements_test.txt"]
        }))
        .unwrap();
        let patch = "diff --git a/pylint/config/__init__.py b/pylint/config/__init__.py\n\
                     --- a/pylint/config/__init__.py\n+++ b/pylint/config/__init__.py\n\
                     @@ -1 +1,2 @@\n+import appdirs\n x = 1\n\
                     diff --git a/setup.cfg b/setup.cfg\n--- a/setup.cfg\n+++ b/setup.cfg\n\
                     @@ -1 +1,2 @@\n [options]\n+    appdirs>=1.4.0\n\
                     diff --git a/requirements_test.txt b/requirements_test.txt\n\
                     --- a/requirements_test.txt\n+++ b/requirements_test.txt\n\
                     @@ -1 +1 @@\n-a\n+b\n\
                     diff --git a/doc/setup.py b/doc/setup.py\n--- a/doc/setup.py\n\
                     +++ b/doc/setup.py\n@@ -1 +1 @@\n-a\n+b\n";
        let kept = declared_changes(patch, &entry);
        assert!(
            kept.starts_with("diff --git a/setup.cfg b/setup.cfg\n"),
            "{kept}"
        );
        assert!(kept.contains("+    appdirs>=1.4.0\n"));
        assert!(kept.contains("diff --git a/requirements_test.txt"));
        assert!(!kept.contains("import appdirs") && !kept.contains("doc/setup.py"));
        // An entry that reads no tree keeps nothing.
        let plain: PinEntry = serde_json::from_str(r#"{"packages": ["x"]}"#).unwrap();
        assert!(declared_changes(patch, &plain).is_empty());
    }
}

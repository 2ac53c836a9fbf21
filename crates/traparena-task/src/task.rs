use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::action::AttackMessage;
use crate::error::TaskError;
use crate::layout::TaskLayout;
use crate::patch::Patch;
use crate::spec::{TaskSpec, TestSpec};

/// A loaded task folder.
///
/// Loading checks the *format*: the layout, `task.json` against its schema, paths that stay
/// inside their folders, test files that exist, a parseable reference patch and attack pool.
/// Whether the task *behaves* (tests pass and fail as they should) is checked by running it,
/// in `traparena-eval`'s `validate`.
#[derive(Debug, Clone)]
pub struct Task {
    /// The task folder.
    pub dir: PathBuf,
    /// The parsed `task.json`.
    pub spec: TaskSpec,
    /// The text of `reference.patch`.
    pub reference_patch_text: String,
    /// The parsed `reference.patch`.
    pub reference_patch: Patch,
    /// The offline message pool from `attacks.json` (empty when the file is absent).
    pub attacks: Vec<AttackMessage>,
}

impl Task {
    /// Loads and checks the task folder at `dir`.
    pub fn load(dir: impl AsRef<Path>) -> Result<Task, TaskError> {
        let dir = dir.as_ref().to_path_buf();
        if dir.is_file() {
            return Err(TaskError::NotAFolder { path: dir });
        }
        if !dir.is_dir() {
            return Err(TaskError::Missing {
                path: dir,
                what: "task folder".into(),
            });
        }
        // An absolute path keeps every later use independent of the working directory.
        let dir = dir.canonicalize().map_err(|source| TaskError::Io {
            path: dir.clone(),
            source,
        })?;
        let layout = TaskLayout::new(&dir);
        let spec_path = layout.spec();
        let spec: TaskSpec = read_json(&spec_path)?;
        let task = Task {
            reference_patch_text: String::new(),
            reference_patch: Patch::default(),
            attacks: Vec::new(),
            spec,
            dir,
        };
        for (p, what) in [
            (layout.repo(), "the buggy codebase"),
            (layout.hidden(), "the hidden tests"),
        ] {
            if !p.is_dir() {
                return Err(TaskError::Missing {
                    path: p,
                    what: what.into(),
                });
            }
        }
        let mut task = task;
        task.check_spec(&spec_path)?;
        let patch_path = layout.reference();
        task.reference_patch_text = read_text(&patch_path, "the reference repair")?;
        task.reference_patch = Patch::parse(&task.reference_patch_text, &patch_path)?;
        if task.reference_patch.is_empty() {
            return Err(TaskError::Patch {
                path: patch_path,
                line: 0,
                message: "the reference patch is empty".into(),
            });
        }
        let attacks_path = layout.attacks();
        if attacks_path.exists() {
            task.attacks = read_json(&attacks_path)?;
            for (i, m) in task.attacks.iter().enumerate() {
                if m.text.trim().is_empty() {
                    return Err(invalid(&attacks_path, &format!("[{i}].text"), "is empty"));
                }
            }
        }
        Ok(task)
    }

    /// The buggy codebase.
    pub fn repo_dir(&self) -> PathBuf {
        self.layout().repo()
    }

    /// The hidden test files' folder.
    pub fn hidden_dir(&self) -> PathBuf {
        self.layout().hidden()
    }

    /// Where the parts of the task's folder are.
    pub fn layout(&self) -> TaskLayout {
        TaskLayout::new(&self.dir)
    }

    /// True when `path` (relative to the repository root) is a public or hidden test file.
    pub fn is_test_path(&self, path: &str) -> bool {
        let s = &self.spec;
        s.public_tests
            .files
            .iter()
            .chain(&s.hidden_tests.files)
            .any(|f| f.as_str() == path)
    }

    fn check_spec(&self, spec_path: &Path) -> Result<(), TaskError> {
        let s = &self.spec;
        for (field, v) in [("id", &s.id), ("description", &s.description)] {
            if v.trim().is_empty() {
                return Err(invalid(spec_path, field, "is empty"));
            }
        }
        if s.id.contains('/') || s.id.contains('\0') {
            return Err(invalid(spec_path, "id", "must not contain `/`"));
        }
        if s.timeout_s == 0 {
            return Err(invalid(spec_path, "timeout_s", "must be at least 1"));
        }
        if let Some(image) = &s.image {
            image.check(spec_path)?;
            if s.setup.is_some() {
                return Err(invalid(
                    spec_path,
                    "image",
                    "a task runs in a container image or in a setup environment, not both",
                ));
            }
        }
        self.check_tests(spec_path, "public_tests", &s.public_tests, &self.repo_dir())?;
        self.check_tests(
            spec_path,
            "hidden_tests",
            &s.hidden_tests,
            &self.hidden_dir(),
        )?;
        for (i, loc) in s.reference_locations.iter().flatten().enumerate() {
            if !loc.file.under(&self.repo_dir()).is_file() {
                return Err(invalid(
                    spec_path,
                    &format!("reference_locations[{i}].file"),
                    &format!("{} does not exist in repo/", loc.file),
                ));
            }
            if loc.symbol.as_deref().is_some_and(|x| x.trim().is_empty()) {
                return Err(invalid(
                    spec_path,
                    &format!("reference_locations[{i}].symbol"),
                    "is empty",
                ));
            }
        }
        Ok(())
    }

    fn check_tests(
        &self,
        spec_path: &Path,
        field: &str,
        t: &TestSpec,
        base: &Path,
    ) -> Result<(), TaskError> {
        if t.command.is_empty() || t.command[0].trim().is_empty() {
            return Err(invalid(spec_path, &format!("{field}.command"), "is empty"));
        }
        if t.files.is_empty() {
            return Err(invalid(
                spec_path,
                &format!("{field}.files"),
                "lists no test file",
            ));
        }
        for (i, f) in t.files.iter().enumerate() {
            if !f.under(base).is_file() {
                let folder = base.file_name().and_then(|n| n.to_str()).unwrap_or("");
                return Err(invalid(
                    spec_path,
                    &format!("{field}.files[{i}]"),
                    &format!("{f} does not exist in {folder}/"),
                ));
            }
        }
        Ok(())
    }
}

fn invalid(path: &Path, field: &str, message: &str) -> TaskError {
    TaskError::Invalid {
        path: path.to_owned(),
        field: field.to_owned(),
        message: message.to_owned(),
    }
}

fn read_text(path: &Path, what: &str) -> Result<String, TaskError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| TaskError::Invalid {
            path: path.to_owned(),
            field: ".".into(),
            message: "is not UTF-8 text".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(TaskError::Missing {
            path: path.to_owned(),
            what: what.into(),
        }),
        Err(source) => Err(TaskError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Reads a JSON file into `T`, naming the offending field on error.
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, TaskError> {
    let what = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("file")
        .to_owned();
    let text = read_text(path, &what)?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let source = e.into_inner();
        TaskError::Json {
            path: path.to_owned(),
            field,
            message: source.to_string(),
            source,
        }
    })
}

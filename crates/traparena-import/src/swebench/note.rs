//! What a SWE-bench import writes into a task's `metadata.environment`: where the task's
//! environment came from, as one typed struct that the importer writes and its readers (the
//! CLI's `import setup`) read back.

use serde::{Deserialize, Serialize};
use traparena_task::TaskSpec;

/// A SWE-bench task's `metadata.environment`. Every field may be absent when it is read (a
/// task folder edited by hand, or written by an older import), and reads as its default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweBenchEnvironment {
    /// Where the environment's specification came from: `bundled`, `pins`, or `image` (the
    /// instance's SWE-bench image).
    #[serde(default)]
    pub from: String,
    /// The image, for a task that runs in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The environment's key among the repository's versions (the record's version, or the
    /// nearest one the environments have).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_key: Option<String>,
    /// The interpreter the environment names (`3.9`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// The runner profile its tests are read with.
    #[serde(default)]
    pub profile: String,
    /// Whether the environment read its dependencies from the repository's tree (then it
    /// cannot be built again from the task's `setup` alone). Absent for an image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_tree: Option<bool>,
    /// Which tree it read them from (`environment_setup_commit ...`, or the base commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
}

/// The key of [`SweBenchEnvironment`] in a task's `metadata`.
const KEY: &str = "environment";

impl SweBenchEnvironment {
    /// The note of the task `spec`, when an import wrote a well-formed one.
    pub fn of(spec: &TaskSpec) -> Option<SweBenchEnvironment> {
        serde_json::from_value(spec.metadata.get(KEY)?.clone()).ok()
    }

    /// Whether the environment read its dependencies from the repository's tree.
    pub fn reads_tree(&self) -> bool {
        self.reads_tree == Some(true)
    }

    /// Writes the note into a task's `metadata`.
    pub(crate) fn write(&self, metadata: &mut serde_json::Map<String, serde_json::Value>) {
        let v = serde_json::to_value(self).expect("the environment note serializes");
        metadata.insert(KEY.into(), v);
    }
}

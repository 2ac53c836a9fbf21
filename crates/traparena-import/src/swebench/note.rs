//! What a SWE-bench import writes into a task's `metadata`, as one typed struct
//! ([`SweBenchMetadata`]) that the importer fills stage by stage and writes once, and its
//! readers (the CLI's `import setup`) read back: the record's facts, where the task's
//! environment came from ([`SweBenchEnvironment`]), and which tests were chosen.

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
}

/// A SWE-bench task's `metadata`, in the order its fields are written (the order the import's
/// stages find them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SweBenchMetadata {
    /// The commit checked out in the instance's image, for a task imported from one (absent
    /// when the image's tree is no git checkout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_head: Option<String>,
    /// Where the task's environment came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<SweBenchEnvironment>,
    /// Files the repository's install step generated into `repo/` (pytest's `_version.py`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_files: Option<Vec<String>>,
    /// Set when the record's patch applies here only with offsets: `reference.patch` is then
    /// the patch in this tree's line numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_patch_rebased: Option<String>,
    /// The record's instance id.
    #[serde(default)]
    pub instance_id: String,
    /// The record's repository (`owner/name`).
    #[serde(default)]
    pub repo: String,
    /// The base commit the task's `repo/` is.
    #[serde(default)]
    pub base_commit: String,
    /// The version that chose the environment (`null` when none was found).
    #[serde(default)]
    pub version: Option<String>,
    /// Where the version came from (the record, or the rule that derived it).
    #[serde(default)]
    pub version_source: String,
    /// The record's FAIL_TO_PASS tests.
    #[serde(default, rename = "FAIL_TO_PASS")]
    pub fail_to_pass: Vec<String>,
    /// The record's PASS_TO_PASS tests.
    #[serde(default, rename = "PASS_TO_PASS")]
    pub pass_to_pass: Vec<String>,
    /// The record's environment setup commit, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_setup_commit: Option<String>,
    /// Which tests the import chose and matched, once it has run them.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub tests: Option<ChosenTests>,
}

/// The tests an import chose for a task and how the record's names matched them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChosenTests {
    /// The public tests, by the names of the test files they came from.
    pub public_tests: Vec<String>,
    /// The record's names that judge a patch here (the hidden tests selected).
    pub matched_tests: Vec<String>,
    /// The record's names no test of the repository answers to.
    pub unmatched_tests: Vec<String>,
    /// The record's names skipped here (an optional dependency SWE-bench's environment had).
    pub skipped_tests: Vec<String>,
    /// The record's PASS_TO_PASS names that fail here even with the reference patch.
    pub failing_here_tests: Vec<String>,
}

impl SweBenchMetadata {
    /// The metadata of the task `spec`, when an import wrote it (fields it lacks read as their
    /// defaults).
    pub fn of(spec: &TaskSpec) -> Option<SweBenchMetadata> {
        serde_json::from_value(serde_json::Value::Object(spec.metadata.clone())).ok()
    }

    /// As a task's `metadata` map.
    pub(crate) fn to_map(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_is_written_in_the_order_of_the_stages_and_read_back() {
        let m = SweBenchMetadata {
            image_head: Some("abc".into()),
            environment: Some(SweBenchEnvironment {
                from: "image".into(),
                ..SweBenchEnvironment::default()
            }),
            generated_files: Some(vec!["src/_pytest/_version.py".into()]),
            instance_id: "o__r-1".into(),
            version: None,
            tests: Some(ChosenTests::default()),
            ..SweBenchMetadata::default()
        };
        // The fields in the order the stages find them (what task.json shows when serde_json
        // keeps insertion order, as it does in the command's build).
        let text = serde_json::to_string(&m).unwrap();
        let at = |k: &str| text.find(&format!("\"{k}\":")).unwrap_or(usize::MAX);
        let mut keys = vec![
            "image_head",
            "environment",
            "generated_files",
            "instance_id",
            "repo",
            "base_commit",
            "version",
            "version_source",
            "FAIL_TO_PASS",
            "PASS_TO_PASS",
            "public_tests",
            "matched_tests",
            "unmatched_tests",
            "skipped_tests",
            "failing_here_tests",
        ];
        assert!(keys.iter().all(|k| at(k) != usize::MAX), "{text}");
        let written = keys.clone();
        keys.sort_by_key(|k| at(k));
        assert_eq!(keys, written);
        let map = m.to_map();
        assert_eq!(map["version"], serde_json::Value::Null);
        assert!(!map.contains_key("reference_patch_rebased"));
        let spec_json = serde_json::json!({"metadata": map});
        let back: SweBenchMetadata = serde_json::from_value(spec_json["metadata"].clone()).unwrap();
        assert_eq!(back, m);
    }
}

//! `manifest.json`: what a results folder was made with, and the hashes it records.

use std::collections::BTreeMap;
use std::path::Path;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::FORMAT_VERSION;
use crate::error::{ResultsError, io};
use crate::migrate::{self, Malformed};

/// What a results folder was made with (`manifest.json`). A resume with anything different is
/// refused.
///
/// Written with `"format": 3` first: the format of the folder as it was started. A manifest
/// without `format` is of format 1 (formats 1 to 3 have the same fields); a newer one is an
/// error.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "ManifestIn")]
pub struct Manifest {
    /// Harness version.
    pub harness_version: String,
    /// SHA-256 of the spec's JSON ([`sha256_json`]).
    pub spec_sha256: String,
    /// SHA-256 of each task folder's content ([`folder_sha256`]), by task id.
    pub tasks: BTreeMap<String, String>,
    /// Prompt-template hashes of the model-backed components.
    pub prompt_hashes: BTreeMap<String, String>,
    /// When the results folder was started (RFC 3339, as the caller gave it); not compared on
    /// resume or merge. The earliest of the shards' after a merge.
    pub created: Option<String>,
}

impl Manifest {
    /// Reads a manifest file.
    pub fn read(path: &Path) -> Result<Manifest, ResultsError> {
        let text = std::fs::read(path).map_err(io(path))?;
        Manifest::from_json(&text, path)
    }

    /// Reads a manifest from its JSON; `path` names the file in errors.
    pub fn from_json(text: &[u8], path: &Path) -> Result<Manifest, ResultsError> {
        serde_json::from_slice(text).map_err(|source| match crate::jsonl::newer_format(text) {
            Some(found) => ResultsError::NewerFormat {
                path: path.to_owned(),
                line: None,
                found,
            },
            None => ResultsError::File {
                path: path.to_owned(),
                source,
            },
        })
    }

    /// Writes the manifest (pretty JSON) atomically.
    pub fn write(&self, path: &Path) -> Result<(), ResultsError> {
        crate::write_atomic(
            path,
            &serde_json::to_vec_pretty(self).expect("a manifest serialises"),
        )
    }
}

impl Serialize for Manifest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Manifest", 6)?;
        st.serialize_field("format", &FORMAT_VERSION)?;
        st.serialize_field("harness_version", &self.harness_version)?;
        st.serialize_field("spec_sha256", &self.spec_sha256)?;
        st.serialize_field("tasks", &self.tasks)?;
        st.serialize_field("prompt_hashes", &self.prompt_hashes)?;
        match &self.created {
            Some(c) => st.serialize_field("created", c)?,
            None => st.skip_field("created")?,
        }
        st.end()
    }
}

#[derive(Deserialize)]
struct ManifestIn {
    #[serde(default)]
    format: Option<u64>,
    harness_version: String,
    spec_sha256: String,
    tasks: BTreeMap<String, String>,
    prompt_hashes: BTreeMap<String, String>,
    #[serde(default)]
    created: Option<String>,
}

impl TryFrom<ManifestIn> for Manifest {
    type Error = Malformed;

    fn try_from(m: ManifestIn) -> Result<Manifest, Malformed> {
        // Formats 1 and 2 of the manifest differ only in the `format` field.
        migrate::format(m.format)?;
        Ok(Manifest {
            harness_version: m.harness_version,
            spec_sha256: m.spec_sha256,
            tasks: m.tasks,
            prompt_hashes: m.prompt_hashes,
            created: m.created,
        })
    }
}

/// SHA-256 of a serialisable value's JSON (compact, in the value's own field order), in hex:
/// `spec_sha256` of the manifest.
pub fn sha256_json<T: Serialize>(v: &T) -> String {
    let bytes = serde_json::to_vec(v).expect("serialisable");
    hex(&Sha256::digest(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 over a folder's files (relative paths and contents, in sorted order, each followed
/// by a NUL byte; `__pycache__` folders and `.pyc` files left out), in hex: a task's hash in
/// the manifest.
pub fn folder_sha256(dir: &Path) -> Result<String, ResultsError> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(io(&d))? {
            let e = e.map_err(io(&d))?;
            let p = e.path();
            let name = e.file_name();
            if name == "__pycache__" || name.to_string_lossy().ends_with(".pyc") {
                continue;
            }
            if e.file_type().map_err(io(&p))?.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        let rel = f
            .strip_prefix(dir)
            .unwrap_or(&f)
            .to_string_lossy()
            .into_owned();
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(std::fs::read(&f).map_err(io(&f))?);
        h.update([0]);
    }
    Ok(hex(&h.finalize()))
}

//! [`SpecHead`]: what a reader of a results folder may take from its `spec.json` without the
//! runner, whose `ExperimentSpec` is the whole format.

use std::path::Path;

use serde::Deserialize;

use crate::error::ResultsError;

/// The head of a results folder's `spec.json` ([`SPEC_FILE`](crate::SPEC_FILE)): the
/// experiment's name and seed. The rest of the file is the runner's business; readers of
/// results (the report, the viewer) read only this.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct SpecHead {
    /// The experiment's `name`, when it has one.
    #[serde(default)]
    pub name: Option<String>,
    /// The experiment's `seed`, when it has one.
    #[serde(default)]
    pub seed: Option<u64>,
}

impl SpecHead {
    /// The head of `dir`'s `spec.json`: `None` without the file; an error when it is present
    /// but malformed, or cannot be read.
    pub fn read(dir: &Path) -> Result<Option<SpecHead>, ResultsError> {
        let path = dir.join(crate::SPEC_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(ResultsError::Io { path, source }),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|source| ResultsError::File { path, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_is_read_when_there_is_one_and_a_malformed_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(SpecHead::read(dir.path()).unwrap(), None);
        let spec = dir.path().join(crate::SPEC_FILE);
        std::fs::write(&spec, r#"{"name": "toy", "seed": 7, "tasks": ["t"]}"#).unwrap();
        let head = SpecHead::read(dir.path()).unwrap().unwrap();
        assert_eq!((head.name.as_deref(), head.seed), (Some("toy"), Some(7)));
        for bad in [r#"{"seed": -1}"#, "{", r#"{"name": 3}"#] {
            std::fs::write(&spec, bad).unwrap();
            let e = SpecHead::read(dir.path()).unwrap_err();
            assert!(e.to_string().contains("spec.json"), "{bad}: {e}");
        }
    }
}

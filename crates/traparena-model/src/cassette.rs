//! Record and replay of model calls.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::ModelError;
use crate::model::ChatModel;
use crate::types::{ChatRequest, ChatResponse};

/// Version tag mixed into every request hash and written into every cassette entry.
const FORMAT_VERSION: u32 = 1;

/// The stable hash of a request: hex SHA-256 of the canonical JSON (object keys sorted, no
/// white space) of the request body — `model`, `messages`, `tools`, `response_format`,
/// `temperature`, `max_tokens`, `seed` and any `extra` fields; unset options are absent —
/// prefixed with a format-version tag.
pub fn request_hash(model: &str, request: &ChatRequest) -> Result<String, ModelError> {
    let mut value =
        serde_json::to_value(request).map_err(|source| ModelError::Encode { source })?;
    if let Value::Object(o) = &mut value {
        o.insert("model".to_owned(), Value::String(model.to_owned()));
    }
    let mut hasher = Sha256::new();
    hasher.update(format!("traparena-llm/request/v{FORMAT_VERSION}\n"));
    hasher.update(canonical_json(&value));
    let mut hex = String::with_capacity(64);
    for byte in hasher.finalize() {
        let _ = write!(hex, "{byte:02x}");
    }
    Ok(hex)
}

/// `value` as canonical JSON: object keys sorted by their UTF-8 bytes, no white space,
/// strings and numbers as `serde_json` writes them.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// One line of a cassette file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CassetteEntry {
    /// Format version (1).
    pub v: u32,
    /// The recorder's scope (for example an episode key).
    pub scope: String,
    /// [`request_hash`] of the request.
    pub hash: String,
    /// How many identical requests came before it in this scope (0 for the first).
    pub occurrence: u64,
    /// The model name.
    pub model: String,
    /// The request as sent (for reading the cassette; replay uses only the hash).
    pub request: Value,
    /// The response.
    pub response: ChatResponse,
}

type Key = (String, String, u64);

/// A JSONL file of recorded responses, keyed by (scope, request hash, occurrence).
///
/// Append-only: each recorded call is one line, written in one piece and flushed at once, so
/// a crash loses at most the call in progress (a torn last line is dropped on the next open).
/// When a key is recorded twice the later line wins. One cassette may be shared by many
/// [`Recorder`]s (episodes), concurrently, as long as each uses its own scope.
#[derive(Debug)]
pub struct Cassette {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    entries: HashMap<Key, ChatResponse>,
    /// Length of the valid prefix of the file (a torn last line is cut off before appending).
    valid_len: u64,
    file: Option<File>,
}

impl Cassette {
    /// Opens the cassette at `path`, loading its entries; a missing file is an empty cassette
    /// (created on the first recording).
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, ModelError> {
        let path = path.into();
        let io = |source| ModelError::CassetteIo {
            path: path.clone(),
            source,
        };
        let mut bytes = Vec::new();
        match File::open(&path) {
            Ok(mut f) => {
                f.read_to_end(&mut bytes).map_err(io)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let mut entries = HashMap::new();
        let mut valid_len = 0u64;
        let mut offset = 0usize;
        for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
            offset += line.len();
            // Only the last piece can lack its newline: a write torn by a crash. Ignore it.
            if line.last() != Some(&b'\n') {
                continue;
            }
            if !line.trim_ascii().is_empty() {
                let entry: CassetteEntry =
                    serde_json::from_slice(line).map_err(|source| ModelError::CassetteFormat {
                        path: path.clone(),
                        line: i + 1,
                        source,
                    })?;
                entries.insert((entry.scope, entry.hash, entry.occurrence), entry.response);
            }
            valid_len = offset as u64;
        }
        Ok(Cassette {
            path,
            state: Mutex::new(State {
                entries,
                valid_len,
                file: None,
            }),
        })
    }

    /// Opens the cassette at `path` and wraps it in an `Arc` for sharing between recorders.
    pub fn shared(path: impl Into<PathBuf>) -> Result<Arc<Self>, ModelError> {
        Ok(Arc::new(Self::open(path)?))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many distinct keys are recorded.
    pub fn len(&self) -> usize {
        self.state.lock().entries.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The recorded response for a key.
    pub fn get(&self, scope: &str, hash: &str, occurrence: u64) -> Option<ChatResponse> {
        self.state
            .lock()
            .entries
            .get(&(scope.to_owned(), hash.to_owned(), occurrence))
            .cloned()
    }

    /// Appends an entry (one line, flushed) and returns its response as read back from that
    /// line, so that a recorded run sees exactly what a replay will.
    pub fn append(&self, entry: &CassetteEntry) -> Result<ChatResponse, ModelError> {
        let io = |source| ModelError::CassetteIo {
            path: self.path.clone(),
            source,
        };
        let mut line =
            serde_json::to_string(entry).map_err(|source| ModelError::Encode { source })?;
        let stored: CassetteEntry =
            serde_json::from_str(&line).map_err(|source| ModelError::CassetteFormat {
                path: self.path.clone(),
                line: 0,
                source,
            })?;
        line.push('\n');
        let mut state = self.state.lock();
        if state.file.is_none() {
            let mut file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&self.path)
                .map_err(io)?;
            file.set_len(state.valid_len).map_err(io)?;
            file.seek(SeekFrom::End(0)).map_err(io)?;
            state.file = Some(file);
        }
        if let Some(file) = state.file.as_mut() {
            file.write_all(line.as_bytes()).map_err(io)?;
            file.flush().map_err(io)?;
        }
        state.valid_len += line.len() as u64;
        state.entries.insert(
            (stored.scope, stored.hash, stored.occurrence),
            stored.response.clone(),
        );
        Ok(stored.response)
    }
}

/// What a [`Recorder`] does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CassetteMode {
    /// Answer only from the cassette; no network. A missing entry is
    /// [`ModelError::NotRecorded`].
    Replay,
    /// Always call the model and append the response.
    Record,
    /// Replay when the cassette has the entry, else call the model and append.
    Auto,
}

impl FromStr for CassetteMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "replay" => Ok(CassetteMode::Replay),
            "record" => Ok(CassetteMode::Record),
            "auto" => Ok(CassetteMode::Auto),
            other => Err(format!(
                "unknown cassette mode {other:?} (expected replay, record or auto)"
            )),
        }
    }
}

/// A [`ChatModel`] wrapper that records responses to a [`Cassette`] and replays them.
///
/// Requests are keyed by (scope, [`request_hash`], occurrence), where the occurrence counts
/// identical requests made earlier through this recorder: the third identical request of an
/// episode replays the third recorded response. Use one recorder per episode, with a scope
/// that names the episode when several episodes share a cassette, and make calls through it
/// one at a time (agents are sequential) so occurrences follow program order. Failed calls
/// are not recorded.
pub struct Recorder {
    inner: Option<Arc<dyn ChatModel>>,
    model: String,
    cassette: Arc<Cassette>,
    mode: CassetteMode,
    scope: String,
    seen: Mutex<HashMap<String, u64>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("model", &self.model)
            .field("cassette", &self.cassette.path)
            .field("mode", &self.mode)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// Wraps `inner` (whose [`ChatModel::model`] is part of every key).
    pub fn new(
        inner: Arc<dyn ChatModel>,
        cassette: Arc<Cassette>,
        mode: CassetteMode,
        scope: impl Into<String>,
    ) -> Self {
        Recorder {
            model: inner.model().to_owned(),
            inner: Some(inner),
            cassette,
            mode,
            scope: scope.into(),
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// A recorder that only replays, with no model behind it: for re-running an episode
    /// offline. `model` must be the name the recording was made with.
    pub fn replay_only(
        model: impl Into<String>,
        cassette: Arc<Cassette>,
        scope: impl Into<String>,
    ) -> Self {
        Recorder {
            inner: None,
            model: model.into(),
            cassette,
            mode: CassetteMode::Replay,
            scope: scope.into(),
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The mode.
    pub fn mode(&self) -> CassetteMode {
        self.mode
    }

    /// The scope.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The cassette.
    pub fn cassette(&self) -> &Arc<Cassette> {
        &self.cassette
    }
}

#[async_trait]
impl ChatModel for Recorder {
    fn model(&self) -> &str {
        &self.model
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let hash = request_hash(&self.model, request)?;
        let occurrence = {
            let mut seen = self.seen.lock();
            let n = seen.entry(hash.clone()).or_insert(0);
            *n += 1;
            *n - 1
        };
        if self.mode != CassetteMode::Record
            && let Some(response) = self.cassette.get(&self.scope, &hash, occurrence)
        {
            return Ok(response);
        }
        let inner = match (&self.inner, self.mode) {
            (Some(inner), CassetteMode::Record | CassetteMode::Auto) => inner,
            _ => {
                return Err(ModelError::NotRecorded {
                    hash,
                    occurrence,
                    scope: self.scope.clone(),
                    cassette: self.cassette.path.clone(),
                });
            }
        };
        let response = inner.chat(request).await?;
        let entry = CassetteEntry {
            v: FORMAT_VERSION,
            scope: self.scope.clone(),
            hash,
            occurrence,
            model: self.model.clone(),
            request: serde_json::to_value(request)
                .map_err(|source| ModelError::Encode { source })?,
            response,
        };
        self.cassette.append(&entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Message;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let v = json!({"b": [{"z": 1, "a": "x"}], "a": {"d": null, "c": 0.5}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"c":0.5,"d":null},"b":[{"a":"x","z":1}]}"#
        );
    }

    #[test]
    fn request_hash_is_stable_and_sensitive() {
        let req = ChatRequest::new(vec![Message::system("s"), Message::user("u")])
            .with_temperature(0.7)
            .with_max_tokens(128)
            .with_seed(1);
        let h = request_hash("m", &req).unwrap();
        // Pinned: changing it invalidates every recorded cassette.
        assert_eq!(
            h,
            "23e7aa946c380b950767e0737f546b04194350d2814f04c6341619c167db1b6c"
        );
        let mut extra_first = req.clone();
        extra_first.extra.insert("top_p".into(), json!(0.9));
        extra_first.extra.insert("stop".into(), json!(["\n"]));
        let mut extra_second = req.clone();
        extra_second.extra.insert("stop".into(), json!(["\n"]));
        extra_second.extra.insert("top_p".into(), json!(0.9));
        assert_eq!(
            request_hash("m", &extra_first).unwrap(),
            request_hash("m", &extra_second).unwrap()
        );
        assert_ne!(request_hash("m2", &req).unwrap(), h);
        assert_ne!(request_hash("m", &req.clone().with_seed(2)).unwrap(), h);
        assert_ne!(
            request_hash("m", &req.clone().with_temperature(0.71)).unwrap(),
            h
        );
    }

    #[test]
    fn torn_last_line_is_dropped_and_bad_lines_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let entry = CassetteEntry {
            v: 1,
            scope: "s".into(),
            hash: "h".into(),
            occurrence: 0,
            model: "m".into(),
            request: json!({}),
            response: ChatResponse::from_text("m", "hi"),
        };
        let line = serde_json::to_string(&entry).unwrap();
        std::fs::write(&path, format!("{line}\n{}", &line[..20])).unwrap();
        let c = Cassette::open(&path).unwrap();
        assert_eq!(c.len(), 1);
        let mut second = entry.clone();
        second.occurrence = 1;
        c.append(&second).unwrap();
        drop(c);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert_eq!(Cassette::open(&path).unwrap().len(), 2);

        std::fs::write(&path, "{not json}\n").unwrap();
        let err = Cassette::open(&path).unwrap_err();
        assert!(err.to_string().contains("cassette line 1"), "{err}");
    }
}

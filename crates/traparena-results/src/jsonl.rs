//! JSON Lines files of a results folder: reading them line by line, appending whole lines, and
//! writing whole files atomically.
//!
//! A results file holds the lines that end in a newline. The runner writes each line and its
//! newline in one write and syncs it, so a crash can leave only the *last* line unfinished: a
//! final piece without a newline that is not complete JSON is a [`TornLine`], not a line, and
//! every reader leaves it out the same way (the runner then cuts it off and runs its episode
//! again). A complete last line without its newline is a line. Blank lines are skipped and
//! counted; any other line that cannot be read is an error naming the file and the line.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::FORMAT_VERSION;
use crate::error::{ResultsError, io, without_position};

/// The unfinished last line of a JSON Lines file: bytes after the last newline that are not
/// complete JSON (a write cut short by a crash, or a line being written right now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TornLine {
    /// Its line number, from 1.
    pub line: usize,
    /// Where it starts in the file (the length of the file's complete lines).
    pub offset: u64,
    /// How many bytes it has.
    pub len: usize,
}

/// Where a line lies in its JSON Lines file ([`JsonlReader::spanned`]): enough to read it
/// again by seeking, without keeping it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    /// Its line number, from 1.
    pub line: usize,
    /// Where it starts in the file.
    pub offset: u64,
    /// How many bytes it has, its newline included.
    pub len: usize,
    /// Whether it begins as this build writes a line, `{"format":N,` with `N` the current
    /// [`FORMAT_VERSION`]: a line read without error that begins so is a line of the current
    /// format as it is, and its text can be copied without writing it again. (A line of the
    /// current format written otherwise, its fields in another order, is not `current`.)
    pub current: bool,
}

/// Reads a JSON Lines file one line at a time, as `T` ([`crate::ResultLine`],
/// [`crate::TrajectoryLine`], ...), keeping nothing but the current line.
///
/// Yields each line, or the error of the first line that cannot be read (and nothing after
/// it). Blank lines are skipped ([`JsonlReader::blank_lines`]); an unfinished last line is not
/// yielded ([`JsonlReader::torn`]). A line whose `format` is newer than this build reads is
/// [`ResultsError::NewerFormat`]. [`JsonlReader::spanned`] yields each line with its
/// [`LineSpan`], for readers that read lines again by their place in the file.
#[derive(Debug)]
pub struct JsonlReader<R, T> {
    reader: R,
    path: PathBuf,
    buf: Vec<u8>,
    /// How a line of the current format begins, as this build writes it.
    current: Vec<u8>,
    line: usize,
    offset: u64,
    blank: usize,
    torn: Option<TornLine>,
    done: bool,
    _line: PhantomData<fn() -> T>,
}

impl<R: BufRead, T: DeserializeOwned> JsonlReader<R, T> {
    /// A reader of `reader`; `path` names the file in errors.
    pub fn new(reader: R, path: impl Into<PathBuf>) -> Self {
        JsonlReader {
            reader,
            path: path.into(),
            buf: Vec::with_capacity(4096),
            current: format!("{{\"format\":{FORMAT_VERSION},").into_bytes(),
            line: 0,
            offset: 0,
            blank: 0,
            torn: None,
            done: false,
            _line: PhantomData,
        }
    }

    /// Blank (whitespace-only) lines skipped so far.
    pub fn blank_lines(&self) -> usize {
        self.blank
    }

    /// The unfinished last line, once the reader has reached it.
    pub fn torn(&self) -> Option<TornLine> {
        self.torn
    }

    /// The lines with where each lies in the file ([`LineSpan`]), read under the same rules;
    /// the reader's [`blank_lines`](JsonlReader::blank_lines) and
    /// [`torn`](JsonlReader::torn) count them as they are read.
    pub fn spanned(&mut self) -> Spanned<'_, R, T> {
        Spanned(self)
    }

    fn next_line(&mut self) -> Option<Result<(LineSpan, T), ResultsError>> {
        if self.done {
            return None;
        }
        let next = self.read_line();
        if !matches!(next, Some(Ok(_))) {
            self.done = true;
        }
        next
    }

    fn read_line(&mut self) -> Option<Result<(LineSpan, T), ResultsError>> {
        loop {
            self.buf.clear();
            let n = match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(n) => n,
                Err(source) => {
                    return Some(Err(ResultsError::Io {
                        path: self.path.clone(),
                        source,
                    }));
                }
            };
            if n == 0 {
                return None;
            }
            self.line += 1;
            let start = self.offset;
            self.offset += n as u64;
            let terminated = self.buf.last() == Some(&b'\n');
            let text = self.buf.trim_ascii();
            if text.is_empty() {
                self.blank += 1;
                continue;
            }
            return match serde_json::from_slice::<T>(text) {
                Ok(v) => {
                    let span = LineSpan {
                        line: self.line,
                        offset: start,
                        len: n,
                        current: text.starts_with(&self.current),
                    };
                    Some(Ok((span, v)))
                }
                Err(e) if !terminated && e.is_eof() => {
                    self.torn = Some(TornLine {
                        line: self.line,
                        offset: start,
                        len: n,
                    });
                    None
                }
                Err(source) => Some(Err(line_error(&self.path, self.line, text, source))),
            };
        }
    }
}

impl<R: BufRead, T: DeserializeOwned> Iterator for JsonlReader<R, T> {
    type Item = Result<T, ResultsError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.next_line()?.map(|(_, v)| v))
    }
}

/// The lines of a [`JsonlReader`] with where each lies in the file
/// ([`JsonlReader::spanned`]).
#[derive(Debug)]
pub struct Spanned<'a, R, T>(&'a mut JsonlReader<R, T>);

impl<R: BufRead, T: DeserializeOwned> Iterator for Spanned<'_, R, T> {
    type Item = Result<(LineSpan, T), ResultsError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_line()
    }
}

/// Reads one complete line of a JSON Lines file (read again by its [`LineSpan`], say) as `T`,
/// under the rules of [`JsonlReader`]: surrounding whitespace is ignored, a `format` newer
/// than this build reads is [`ResultsError::NewerFormat`], anything else that cannot be read
/// is [`ResultsError::Line`]; `path` and `line` name it in errors.
pub fn parse_line<T: DeserializeOwned>(
    text: &[u8],
    path: &Path,
    line: usize,
) -> Result<T, ResultsError> {
    let text = text.trim_ascii();
    serde_json::from_slice(text).map_err(|source| line_error(path, line, text, source))
}

/// The error of a line that could not be read: [`ResultsError::NewerFormat`] when its
/// `format` is newer than this build reads, else [`ResultsError::Line`].
fn line_error(path: &Path, line: usize, text: &[u8], source: serde_json::Error) -> ResultsError {
    match newer_format(text) {
        Some(found) => ResultsError::NewerFormat {
            path: path.to_owned(),
            line: Some(line),
            found,
        },
        None => ResultsError::Line {
            path: path.to_owned(),
            line,
            column: source.column(),
            message: without_position(&source),
            source,
        },
    }
}

/// The `format` of a JSON object, when it is newer than this build reads.
pub(crate) fn newer_format(text: &[u8]) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        format: Option<u64>,
    }
    let p: Probe = serde_json::from_slice(text).ok()?;
    crate::migrate::newer(p.format)
}

/// A whole JSON Lines file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonlFile<T> {
    /// Its lines, in order.
    pub lines: Vec<T>,
    /// Blank lines skipped.
    pub blank_lines: usize,
    /// Its unfinished last line, if it has one (not in `lines`).
    pub torn: Option<TornLine>,
}

/// Reads a whole JSON Lines file (a missing file has no lines). The file is not changed: an
/// unfinished last line is left out and reported in [`JsonlFile::torn`].
pub fn read_lines<T: DeserializeOwned>(path: &Path) -> Result<JsonlFile<T>, ResultsError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(JsonlFile {
                lines: Vec::new(),
                blank_lines: 0,
                torn: None,
            });
        }
        Err(e) => return Err(io(path)(e)),
    };
    let mut reader = JsonlReader::new(std::io::BufReader::with_capacity(1 << 16, file), path);
    let lines = reader.by_ref().collect::<Result<Vec<T>, _>>()?;
    Ok(JsonlFile {
        lines,
        blank_lines: reader.blank_lines(),
        torn: reader.torn(),
    })
}

/// A JSON Lines file open for appending whole lines.
#[derive(Debug)]
pub struct Appender {
    file: File,
    path: PathBuf,
}

impl Appender {
    /// Opens `path` for appending (created when missing) and returns its lines. The file is
    /// first made to end with a complete line: an unfinished last line (a write a crash cut
    /// short) is cut off, and a complete last line without its newline gets one.
    pub fn open<T: DeserializeOwned>(path: &Path) -> Result<(Appender, Vec<T>), ResultsError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(path)(e)),
        };
        let mut reader = JsonlReader::new(&bytes[..], path);
        let lines = reader.by_ref().collect::<Result<Vec<T>, _>>()?;
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io(path))?;
        if let Some(torn) = reader.torn() {
            file.set_len(torn.offset)
                .and_then(|_| file.sync_all())
                .map_err(io(path))?;
        } else if bytes.last().is_some_and(|&b| b != b'\n') {
            file.write_all(b"\n")
                .and_then(|_| file.sync_data())
                .map_err(io(path))?;
        }
        Ok((
            Appender {
                file,
                path: path.to_owned(),
            },
            lines,
        ))
    }

    /// Appends `line` as one JSON line: the line and its newline in one write, then the file's
    /// data synced, so that the line is on disk, whole, when this returns.
    pub fn append<T: Serialize>(&mut self, line: &T) -> Result<(), ResultsError> {
        let mut bytes = serde_json::to_vec(line).expect("a results line serialises");
        bytes.push(b'\n');
        self.file
            .write_all(&bytes)
            .and_then(|_| self.file.sync_data())
            .map_err(io(&self.path))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Writes `lines` as a whole JSON Lines file, atomically ([`write_atomic`]).
pub fn write_lines<'a, T: Serialize + 'a>(
    path: &Path,
    lines: impl IntoIterator<Item = &'a T>,
) -> Result<(), ResultsError> {
    let mut bytes = Vec::new();
    for l in lines {
        serde_json::to_writer(&mut bytes, l).expect("a results line serialises");
        bytes.push(b'\n');
    }
    write_atomic(path, &bytes)
}

/// Writes a file through a temporary sibling (`<name>.tmp`), synced, then renamed over `path`
/// and the folder synced: a reader sees the old content or the new, never part of it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_owned();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut f = File::create(&tmp).map_err(io(&tmp))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

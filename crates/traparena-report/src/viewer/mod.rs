//! The episode viewer: a static folder beside the HTML report that opens from disk with no
//! server. `viewer.html` (inline CSS and JavaScript) reads `index.js`, the list of every target,
//! condition and task with its counts, and loads one fragment per (target, condition, task),
//! `f/<cell>-<task>.js`, only when that group is opened: its result lines and trajectories.
//! Fragments are scripts (`TrapViewer.fragment(...)`), not JSON files, because a page opened
//! from `file://` may load a script beside it but may not fetch a file.
//!
//! The folder is written in two passes that keep no line in memory: the first notes where each
//! group's lines lie in `episodes.jsonl` and `trajectories.jsonl`, the second reads each group
//! back and writes its fragment, every line parsed in its own format version and written in
//! the current one. Both read through the results crate (`JsonlReader::spanned`, `LineKey`,
//! `parse_line`), so the viewer keeps its rules: an unfinished last line is an episode still
//! being written and is left out, a line of a newer format is an error naming the file and the
//! line, older lines are migrated. It is written under a temporary name and renamed into
//! place, so a reader never sees half a viewer.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::Serialize;
use serde_json::json;
use traparena_results::{LineSpan, ResultLine, TrajectoryLine};
use traparena_task::output::{Output, check_folder};

use crate::build::condition_kind;
use crate::error::ReportError;

mod scan;

use scan::{Group, Scan, scan};

/// The page, its style and its script.
const PAGE: &str = concat!(
    include_str!("../../templates/viewer-head.html"),
    "<style>\n",
    include_str!("../../templates/viewer.css"),
    "</style>\n",
    include_str!("../../templates/viewer-body.html"),
    "<script>\n",
    include_str!("../../templates/viewer.js"),
    "</script>\n</body></html>\n"
);

/// The viewer's page inside its folder.
pub const VIEWER_PAGE: &str = "viewer.html";

/// Version of the viewer's `index.js` and fragments.
pub const VIEWER_FORMAT: u32 = 1;

/// How [`write_viewer`] writes the viewer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewerOptions {
    /// The page title (the experiment's name); empty: the results folder's name.
    pub title: String,
    /// The report page, relative to the viewer's folder (`../report.html`), linked from the
    /// viewer's header; `None`: no link.
    pub report_href: Option<String>,
}

/// What [`write_viewer`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewerSummary {
    /// Result lines (episodes) in the viewer.
    pub episodes: usize,
    /// Trajectory lines among them.
    pub trajectories: usize,
    /// Trajectory lines without a result line, left out.
    pub orphans: usize,
    /// Fragment files (one per target, condition and task).
    pub fragments: usize,
}

/// The viewer folder of a report page: `report.html` → `report-viewer`, beside it.
pub fn viewer_dir_for(html: &Path) -> PathBuf {
    let stem = html
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
    html.with_file_name(format!("{stem}-viewer"))
}

/// The link from a report row to a group of the viewer: `viewer.html#cell=T/C` (the cell's
/// tasks), with `&task=X` or `&point=P` to open one task or one fork point. Each part is
/// percent-encoded.
pub fn viewer_link(
    target: &str,
    condition: &str,
    task: Option<&str>,
    point: Option<&str>,
) -> String {
    let mut s = format!("cell={}/{}", encode(target), encode(condition));
    if let Some(t) = task {
        s.push_str(&format!("&task={}", encode(t)));
    }
    if let Some(p) = point {
        s.push_str(&format!("&point={}", encode(p)));
    }
    s
}

/// Percent-encodes all but unreserved characters (RFC 3986).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Checks that the viewer may be written at `out`: nothing is there, an empty folder, or a viewer
/// written before. Anything else is [`ReportError::Refused`], and nothing is written.
pub fn check_viewer_dir(out: &Path) -> Result<(), ReportError> {
    check_folder(out, Output::Viewer, |d| d.join(VIEWER_PAGE).is_file())?;
    Ok(())
}

/// Writes the viewer of the results folder `results` into the folder `out` (replacing a viewer
/// written there before; anything else there is [`ReportError::Refused`], see
/// [`check_viewer_dir`]).
pub fn write_viewer(
    results: &Path,
    out: &Path,
    options: &ViewerOptions,
) -> Result<ViewerSummary, ReportError> {
    check_viewer_dir(out)?;
    let s = scan(results)?;
    let name = out
        .file_name()
        .map_or_else(|| "viewer".into(), |n| n.to_string_lossy().into_owned());
    // A name no other writer, in this process or another, uses at the same time.
    static WRITERS: AtomicUsize = AtomicUsize::new(0);
    let n = WRITERS.fetch_add(1, Ordering::Relaxed);
    let tmp = out.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let fragments = match write_into(results, &tmp, &s, options) {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    replace_dir(&tmp, out, &name, n).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&tmp);
    })?;
    Ok(ViewerSummary {
        episodes: s.results,
        trajectories: s.trajectories - s.orphans,
        orphans: s.orphans,
        fragments,
    })
}

/// Moves the finished folder `tmp` to `out`, replacing what is there. What is there is first
/// renamed out of the way whole, so that `out` is always a whole viewer or nothing; another
/// writer may put its own folder there before the rename: the last one to rename wins.
fn replace_dir(tmp: &Path, out: &Path, name: &str, n: usize) -> Result<(), ReportError> {
    let trash = out.with_file_name(format!(".{name}.old-{}-{n}", std::process::id()));
    let mut tries = 0;
    loop {
        match std::fs::rename(out, &trash) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(write_error(out, e)),
        }
        let _ = std::fs::remove_dir_all(&trash);
        match std::fs::rename(tmp, out) {
            Ok(()) => return Ok(()),
            // Another writer's folder came first: move it away in turn.
            Err(_) if tries < 50 && out.exists() => tries += 1,
            Err(e) => return Err(write_error(out, e)),
        }
    }
}

fn write_error(path: &Path, source: std::io::Error) -> ReportError {
    ReportError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes the page, the index and every fragment into `dir`; returns the fragments written.
fn write_into(
    results: &Path,
    dir: &Path,
    s: &Scan,
    options: &ViewerOptions,
) -> Result<usize, ReportError> {
    let frag_dir = dir.join("f");
    std::fs::create_dir_all(&frag_dir).map_err(|e| write_error(&frag_dir, e))?;
    std::fs::write(dir.join(VIEWER_PAGE), PAGE).map_err(|e| write_error(dir, e))?;
    let tasks: Vec<&String> = {
        let mut t: Vec<&String> = s.cells.values().flat_map(|c| c.tasks.keys()).collect();
        t.sort();
        t.dedup();
        t
    };
    let task_index = |t: &String| tasks.binary_search(&t).unwrap_or(0);
    // Every fragment, written in parallel (each worker reads the two line files through its
    // own handles).
    let jobs: Vec<(String, &Group)> = s
        .cells
        .values()
        .enumerate()
        .flat_map(|(ci, cell)| {
            cell.tasks
                .iter()
                .map(move |(task, g)| (format!("{ci}-{}", task_index(task)), g))
        })
        .collect();
    jobs.par_iter()
        .map_init(
            || Readers::open(results),
            |readers, (id, g)| {
                let readers = readers.as_mut().map_err(|e| ReportError::InvalidFile {
                    path: results.to_path_buf(),
                    reason: e.to_string(),
                })?;
                write_fragment(readers, &frag_dir.join(format!("{id}.js")), id, g)
            },
        )
        .collect::<Result<Vec<()>, ReportError>>()?;
    let fragments = jobs.len();
    let mut cells = Vec::with_capacity(s.cells.len());
    for (ci, ((target, condition), cell)) in s.cells.iter().enumerate() {
        let mut groups = Vec::with_capacity(cell.tasks.len());
        for (task, g) in &cell.tasks {
            let id = format!("{ci}-{}", task_index(task));
            groups.push(json!({
                "task": task_index(task), "f": id, "n": g.results.len(), "usable": g.usable,
                "accepted": g.accepted, "susceptible": g.susceptible, "told": g.told,
                "points": g.points, "trajectories": g.trajectories.len(),
            }));
        }
        let kind = condition_kind(condition, &cell.info);
        cells.push(json!({
            "target": target, "condition": condition, "kind": kind.label(),
            "attacker": cell.info.attacker_label(), "tasks": groups,
        }));
    }
    let title = if options.title.is_empty() {
        results
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    } else {
        options.title.clone()
    };
    let index = json!({
        "format": VIEWER_FORMAT, "title": title, "report": options.report_href,
        "trajectories": s.trajectories > 0, "tasks": tasks, "cells": cells,
    });
    let text = format!("TrapViewer.index({});\n", script_json(&index)?);
    std::fs::write(dir.join("index.js"), text).map_err(|e| write_error(dir, e))?;
    Ok(fragments)
}

/// JSON text to put in a script (`</` cannot close a script that is its own file, but keep
/// the text safe to inline all the same).
fn script_json<T: Serialize>(v: &T) -> Result<String, ReportError> {
    let s = serde_json::to_string(v).map_err(ReportError::Serialize)?;
    Ok(s.replace("</", "<\\/"))
}

/// The two line files, open for reading lines back by their spans.
struct Readers {
    episodes: (PathBuf, File),
    trajectories: Option<(PathBuf, File)>,
    buf: Vec<u8>,
}

impl Readers {
    fn open(results: &Path) -> Result<Readers, ReportError> {
        let open = |name: &str| -> Result<Option<(PathBuf, File)>, ReportError> {
            let path = results.join(name);
            match File::open(&path) {
                Ok(f) => Ok(Some((path, f))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(source) => Err(ReportError::Io { path, source }),
            }
        };
        let episodes = open(traparena_results::EPISODES_FILE)?.ok_or_else(|| {
            ReportError::MissingEpisodes {
                path: results.join(traparena_results::EPISODES_FILE),
            }
        })?;
        Ok(Readers {
            episodes,
            trajectories: open(traparena_results::TRAJECTORIES_FILE)?,
            buf: Vec::new(),
        })
    }

    /// The line at `span` of the episodes file (`trajectories: false`) or the trajectories
    /// file, and the file's path.
    fn read(&mut self, trajectories: bool, span: LineSpan) -> Result<(&[u8], &Path), ReportError> {
        let (path, file) = if trajectories {
            self.trajectories
                .as_mut()
                .expect("trajectory spans come from the trajectories file")
        } else {
            &mut self.episodes
        };
        let io = |source| ReportError::Io {
            path: path.clone(),
            source,
        };
        file.seek(SeekFrom::Start(span.offset)).map_err(io)?;
        self.buf.resize(span.len, 0);
        file.read_exact(&mut self.buf).map_err(io)?;
        Ok((self.buf.trim_ascii(), path))
    }
}

/// Appends a line to a fragment: as it is when it is in the current format (with `</`
/// escaped, which JSON allows only inside strings), else parsed in its own format and written
/// in the current one. A trajectory line is parsed either way, so that a malformed one is an
/// error here, not in the reader's browser.
fn push_line<T: serde::de::DeserializeOwned + Serialize>(
    text: &mut String,
    readers: &mut Readers,
    trajectories: bool,
    span: LineSpan,
) -> Result<(), ReportError> {
    let (raw, path) = readers.read(trajectories, span)?;
    let raw = std::str::from_utf8(raw).map_err(|e| ReportError::InvalidFile {
        path: path.to_path_buf(),
        reason: format!("line {}: not UTF-8: {e}", span.line),
    })?;
    // A result line in the current format was parsed whole by the first pass.
    if trajectories || !span.current {
        let line: T = traparena_results::parse_line(raw.as_bytes(), path, span.line)?;
        if !span.current {
            text.push_str(&script_json(&line)?);
            return Ok(());
        }
    }
    if raw.contains("</") {
        text.push_str(&raw.replace("</", "<\\/"));
    } else {
        text.push_str(raw);
    }
    Ok(())
}

/// One group's fragment: its result lines and trajectories in the current format.
fn write_fragment(
    readers: &mut Readers,
    path: &Path,
    id: &str,
    g: &Group,
) -> Result<(), ReportError> {
    let file = File::create(path).map_err(|e| write_error(path, e))?;
    let mut w = BufWriter::new(file);
    let mut text = format!("TrapViewer.fragment({},{{\"results\":[", script_json(&id)?);
    for (i, (_, span)) in g.results.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        push_line::<ResultLine>(&mut text, readers, false, *span)?;
    }
    text.push_str("],\"trajectories\":[");
    for (i, (_, span)) in g.trajectories.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        push_line::<TrajectoryLine>(&mut text, readers, true, *span)?;
    }
    text.push_str("]});\n");
    w.write_all(text.as_bytes())
        .and_then(|()| w.flush())
        .map_err(|e| write_error(path, e))
}

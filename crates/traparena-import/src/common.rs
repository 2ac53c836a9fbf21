//! What both importers share: reading records, the output folder, validation, parallelism.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use traparena_env::{Sandbox, TestFailure};
use traparena_eval::{ValidateOptions, Validity, validate};
use traparena_task::output::{Output, check_file, check_folder};

use traparena_task::{Shard, TaskLayout, TaskSpec};

use crate::error::{ImportError, io};

/// Reads records from a JSON Lines file (one object per line; blank lines ignored) or from a
/// JSON file holding one array. Returns each record with its 1-based line (0 in an array).
pub(crate) fn read_records<T: DeserializeOwned>(
    path: &Path,
) -> Result<Vec<(usize, T)>, ImportError> {
    let text = match std::fs::read(path) {
        Ok(b) => String::from_utf8(b)
            .map_err(|_| ImportError::Input(format!("{}: is not UTF-8 text", path.display())))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ImportError::Input(format!(
                "{}: no such file",
                path.display()
            )));
        }
        Err(e) => return Err(io(path)(e)),
    };
    if text.trim_start().starts_with('[') {
        let v: Vec<T> = serde_json::from_str(&text).map_err(|source| ImportError::Json {
            path: path.to_owned(),
            line: source.line(),
            source,
        })?;
        return Ok(v.into_iter().map(|r| (0, r)).collect());
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r: T = serde_json::from_str(line).map_err(|source| ImportError::Json {
            path: path.to_owned(),
            line: i + 1,
            source,
        })?;
        out.push((i + 1, r));
    }
    if out.is_empty() {
        return Err(ImportError::Input(format!(
            "{}: holds no record",
            path.display()
        )));
    }
    Ok(out)
}

/// Maps `f` over `items` on `jobs` threads; results come back in input order.
pub(crate) fn par_map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    match rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
    {
        Ok(pool) => pool.install(|| items.par_iter().map(&f).collect()),
        Err(_) => items.iter().map(f).collect(),
    }
}

/// The default number of worker threads: the machine's cores.
pub(crate) fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Creates the output folder, after checking that nothing in the way would be replaced: a file
/// at `out`, or an import report there that is not one.
pub(crate) fn prepare_out(out: &Path, shard: Option<Shard>) -> Result<PathBuf, ImportError> {
    check_folder(out, Output::ImportedTasks, |_| true)?;
    let writing = Output::ImportReport;
    let (json, text) = crate::report::report_names(shard);
    let json = out.join(json);
    check_file(&json, writing, is_import_report)?;
    check_file(&out.join(text), writing, |_| is_import_report(&json))?;
    std::fs::create_dir_all(out).map_err(io(out))?;
    std::path::absolute(out).map_err(io(out))
}

/// Whether `path` holds an import report ([`crate::REPORT_JSON`]) written by an earlier import.
fn is_import_report(path: &Path) -> bool {
    json_at(path).is_some_and(|v| {
        ["source", "records", "emitted", "skipped"]
            .iter()
            .all(|k| v.get(k).is_some())
    })
}

/// The JSON document at `path`, if there is a readable one.
fn json_at(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Refuses to replace anything at `out/id` but an empty folder or a task folder that an import
/// from `source` wrote (its `task.json` names that source and that id): a task written by hand,
/// or imported from another source, is never replaced.
pub(crate) fn check_target(out: &Path, id: &str, source: &str) -> Result<(), ImportError> {
    let target = out.join(id);
    let task = json_at(&TaskLayout::new(&target).spec());
    let field = |k: &str| {
        task.as_ref()
            .and_then(|v| v.get(k))
            .and_then(|s| s.as_str())
            .map(str::to_owned)
    };
    let ours = field("source").as_deref() == Some(source) && field("id").as_deref() == Some(id);
    check_folder(&target, Output::ImportedTask, |_| ours).map_err(|mut refusal| {
        if task.is_some() {
            refusal.found = format!(
                "a task folder (task.json of source {:?}, id {:?}) that this import did not write",
                field("source").unwrap_or_default(),
                field("id").unwrap_or_default()
            );
        }
        refusal
    })?;
    Ok(())
}

/// A fresh folder beside the final one, where a task is assembled before it is validated.
pub(crate) fn partial_dir(out: &Path, id: &str) -> Result<PathBuf, ImportError> {
    let p = out.join(format!(".{id}.partial-{}", std::process::id()));
    if std::fs::symlink_metadata(&p).is_ok() {
        std::fs::remove_dir_all(&p).map_err(io(&p))?;
    }
    std::fs::create_dir_all(&p).map_err(io(&p))?;
    Ok(p)
}

/// Moves an assembled task into place, replacing an earlier import of the same task.
pub(crate) fn finish(
    partial: &Path,
    out: &Path,
    id: &str,
    source: &str,
) -> Result<(), ImportError> {
    let target = out.join(id);
    check_target(out, id, source)?;
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(io(&target))?;
    }
    std::fs::rename(partial, &target).map_err(io(&target))
}

/// Removes a folder, ignoring one that is already gone.
pub(crate) fn discard(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

/// What validating a task folder found.
pub(crate) enum Checked {
    /// Every check holds.
    Valid,
    /// The failed checks (each with the failing tests its run names), those failing tests,
    /// and whether the only failed check is that the public tests pass with the reference
    /// patch ([`PUBLIC_WITH_REFERENCE`]).
    Invalid(String, Vec<TestFailure>, bool),
    /// Its tests could not run here: a toolchain is missing from the sandbox (the reason).
    NotCheckable(String),
}

/// Validates a task folder.
pub(crate) fn check_task(
    dir: &Path,
    sandbox: &Sandbox,
    reference_runs: u32,
) -> Result<Checked, ImportError> {
    let report = validate(dir, sandbox, &ValidateOptions { reference_runs })?;
    match (report.validity(), &report.not_checkable) {
        (Validity::Valid, _) => return Ok(Checked::Valid),
        (Validity::NotCheckable, Some(n)) => return Ok(Checked::NotCheckable(n.reason.clone())),
        _ => {}
    }
    let problems: Vec<String> = report
        .problems()
        .map(|c| format!("{}: {}", c.name, c.detail_line()))
        .collect();
    let failures = report
        .problems()
        .flat_map(|c| c.failures.iter().cloned())
        .collect();
    let failed: Vec<_> = report.problems().collect();
    let only_public = matches!(failed.as_slice(), [only] if only.name == PUBLIC_WITH_REFERENCE);
    Ok(Checked::Invalid(problems.join("; "), failures, only_public))
}

/// The validator's check that the public tests pass with the reference patch (a public copy
/// of a test file can import what the test patch changes).
pub(crate) const PUBLIC_WITH_REFERENCE: &str = "public tests pass with the reference patch";

/// Writes `content` to `rel` under `root`, creating folders.
/// Writes a task's reference repair and its `task.json` (last: a folder with it is a task).
pub(crate) fn write_task_files(
    layout: &TaskLayout,
    spec: &TaskSpec,
    reference: &str,
) -> Result<(), ImportError> {
    write_file(layout.root(), TaskLayout::REFERENCE, reference.as_bytes())?;
    let json = serde_json::to_string_pretty(spec).expect("a task spec serialises") + "\n";
    write_file(layout.root(), TaskLayout::SPEC, json.as_bytes())
}

pub(crate) fn write_file(root: &Path, rel: &str, content: &[u8]) -> Result<(), ImportError> {
    let p = root.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::write(&p, content).map_err(io(&p))
}

/// A unified diff from `old` to `new` for the file `path`, with `a/` and `b/` headers.
pub(crate) fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let patch = diffy::create_patch(old, new).to_string();
    let body = match patch.split_once("\n@@") {
        Some((_, b)) => format!("@@{b}"),
        None => String::new(),
    };
    format!("--- a/{path}\n+++ b/{path}\n{body}")
}

/// What one probe run gave: the process (its report holds one JSON line per case), or a reason
/// every case from the start on fails without running (the module does not load, the test
/// program does not build).
pub(crate) enum Probed {
    Ran(traparena_env::ProcessOutcome),
    AllFail(String),
}

/// The importers' probe loop: runs cases `start..n` (`run(start)`), reads the report's lines
/// (`{"case": i, "ok": ..., "why": ...}`; `{"import_error": ...}` fails every case left with
/// `not_loading` and the message), and after a process that died on a case, marks that case
/// failed with how it died and runs again from the next one. Returns (passed, why not) per case.
pub(crate) fn probe_loop(
    n: usize,
    not_loading: &str,
    mut run: impl FnMut(usize) -> Result<Probed, ImportError>,
) -> Result<Vec<(bool, String)>, ImportError> {
    let mut results: Vec<Option<(bool, String)>> = vec![None; n];
    let mut start = 0;
    while start < n {
        let run = match run(start)? {
            Probed::Ran(r) => r,
            Probed::AllFail(why) => {
                for slot in results.iter_mut().skip(start) {
                    *slot = Some((false, why.clone()));
                }
                break;
            }
        };
        let report = run.report.clone().unwrap_or_default();
        let mut last = None;
        let mut unloadable = None;
        for line in String::from_utf8_lossy(&report).lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if let Some(e) = v.get("import_error").and_then(|e| e.as_str()) {
                unloadable = Some(format!("{not_loading}: {e}"));
                break;
            }
            let (Some(i), Some(ok)) = (
                v.get("case").and_then(|c| c.as_u64()),
                v.get("ok").and_then(|o| o.as_bool()),
            ) else {
                continue;
            };
            let i = i as usize;
            if i < n {
                let why = v.get("why").and_then(|w| w.as_str()).unwrap_or("");
                results[i] = Some((ok, why.to_owned()));
                last = Some(i);
            }
        }
        if let Some(why) = unloadable {
            for slot in results.iter_mut().skip(start) {
                *slot = Some((false, why.clone()));
            }
            break;
        }
        let next = last.map_or(start, |l| l + 1);
        if next >= n {
            break;
        }
        // The process died on case `next` (a crash, or a loop no alarm could break).
        if results[next].is_none() {
            let why = if run.timed_out {
                "timed out (the process was killed)".to_owned()
            } else {
                match (run.exit_code, run.signal) {
                    (_, Some(s)) => format!("the process died (signal {s})"),
                    (Some(c), _) => format!("the process exited with status {c}"),
                    _ => "the process died".to_owned(),
                }
            };
            results[next] = Some((false, why));
        }
        start = next + 1;
    }
    Ok(results
        .into_iter()
        .map(|r| r.unwrap_or((false, "not run".into())))
        .collect())
}

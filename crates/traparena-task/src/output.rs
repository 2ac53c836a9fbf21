//! Writing where a user points: every writer (a report page, a results folder, a task folder,
//! an episode record, a predictions file) replaces only what it wrote itself.
//!
//! A writer calls [`check_file`] or [`check_folder`] for each path it will write, before it
//! writes anything. A path that is free, an empty folder, or the writer's own earlier output
//! (which the writer recognises by its format or a marker) may be written; anything else is a
//! [`Refusal`] that says what is there and how to proceed. The writer names its [`Output`], and
//! the output says what it is and how to proceed, in words that name no command-line flag.

use std::path::{Path, PathBuf};

/// A writer's refusal to replace something it did not write.
///
/// Its text names no command-line flag: a command that wants to name its own flags words the
/// advice from [`Refusal::output`] and shows it with [`Refusal::message`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message(self.output.advice()))]
pub struct Refusal {
    /// The path the writer was asked to write.
    pub path: PathBuf,
    /// What the writer writes there.
    pub output: Output,
    /// What is there now ("a file of 1204 bytes (JSON Lines, 12 lines)").
    pub found: String,
}

impl Refusal {
    /// The refusal's text with `advice` as how to proceed.
    pub fn message(&self, advice: &str) -> String {
        let what = self.output.what();
        format!(
            "{}: refusing to write {what} there: it holds {}, which is not {what}. Nothing was written; {advice}",
            self.path.display(),
            self.found
        )
    }
}

/// What a writer writes at one path: it names the output in a refusal and says how to proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Output {
    /// The folder an import writes its task folders into.
    ImportedTasks,
    /// One imported task's folder.
    ImportedTask,
    /// An import's report, in its output folder.
    ImportReport,
    /// A SWE-bench predictions file.
    Predictions,
    /// A folder of predictions files, one per (target, condition).
    PredictionsFolder,
    /// The HTML report page.
    HtmlReport,
    /// The episode viewer's folder beside the page.
    Viewer,
    /// The folder an episode record goes into.
    RecordFolder,
    /// One episode's record.
    EpisodeRecord,
    /// The results folder of merged shards.
    MergedResults,
    /// An experiment's results folder.
    ExperimentResults,
    /// The starter folder of bundled tasks and example specs (`traparena init`).
    Starter,
}

impl Output {
    /// What the writer writes, in a few words ("the HTML report").
    pub fn what(self) -> &'static str {
        match self {
            Output::ImportedTasks => "imported task folders",
            Output::ImportedTask => "an imported task",
            Output::ImportReport => "an import report",
            Output::Predictions => "SWE-bench predictions",
            Output::PredictionsFolder => "a folder of predictions",
            Output::HtmlReport => "the HTML report",
            Output::Viewer => "the episode viewer",
            Output::RecordFolder => "a folder of episode records",
            Output::EpisodeRecord => "an episode record",
            Output::MergedResults => "the merged results",
            Output::ExperimentResults => "an experiment's results",
            Output::Starter => "a starter folder",
        }
    }

    /// How to proceed when the path is taken, naming no command-line flag.
    pub fn advice(self) -> &'static str {
        match self {
            Output::ImportedTasks | Output::RecordFolder | Output::PredictionsFolder => {
                "the path names a folder: choose a new one"
            }
            Output::ImportReport | Output::MergedResults => "choose a new output folder",
            Output::EpisodeRecord => "choose another output folder",
            Output::ImportedTask => "choose a new output folder, or move that folder away",
            Output::Predictions => {
                "choose a new file, or a new folder for one file per target and condition"
            }
            Output::HtmlReport => {
                "choose a new file, such as report.html beside the results folder"
            }
            Output::Viewer => {
                "choose another path for the page (the viewer goes beside it, as <page>-viewer/), or write no viewer"
            }
            Output::ExperimentResults => {
                "choose a new output folder, or the folder of an experiment to resume"
            }
            Output::Starter => "choose a new folder, or a starter folder written before",
        }
    }

    fn refuse(self, path: &Path, found: String) -> Refusal {
        Refusal {
            path: path.to_owned(),
            output: self,
            found,
        }
    }
}

/// Checks that a file may be written at `path`: nothing is there, or a file that `is_own`
/// recognises as the writer's earlier output. A folder, a file of another kind or anything that
/// cannot be inspected is refused.
pub fn check_file(
    path: &Path,
    output: Output,
    is_own: impl FnOnce(&Path) -> bool,
) -> Result<(), Refusal> {
    check(path, output, |m| m.is_file() && is_own(path))
}

/// Checks that a folder may be written at `path`: nothing is there, an empty folder, or a folder
/// that `is_own` recognises as the writer's earlier output (`|_| true` for a writer that only
/// adds files of its own, each checked with [`check_file`]). A file, another folder, or anything
/// that cannot be inspected is refused.
pub fn check_folder(
    path: &Path,
    output: Output,
    is_own: impl FnOnce(&Path) -> bool,
) -> Result<(), Refusal> {
    check(path, output, |m| {
        m.is_dir() && (is_empty_dir(path) || is_own(path))
    })
}

/// What [`check_file`] and [`check_folder`] share: a free path may be written, an existing one
/// when `may_replace` accepts what is there. A symbolic link is followed (an output folder is
/// often a link to a larger disk).
fn check(
    path: &Path,
    output: Output,
    may_replace: impl FnOnce(&std::fs::Metadata) -> bool,
) -> Result<(), Refusal> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(output.refuse(path, format!("something that cannot be inspected ({e})"))),
        Ok(m) if may_replace(&m) => Ok(()),
        Ok(_) => Err(output.refuse(path, describe(path))),
    }
}

fn is_empty_dir(path: &Path) -> bool {
    std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

/// Says what is at `path` in a few words: a folder and the first names in it, or a file, its size
/// and whether it reads as JSON or JSON Lines.
pub fn describe(path: &Path) -> String {
    let Ok(meta) = std::fs::metadata(path) else {
        return "nothing".into();
    };
    if meta.is_dir() {
        let mut names: Vec<String> = match std::fs::read_dir(path) {
            Ok(d) => d
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(e) => return format!("a folder that cannot be read ({e})"),
        };
        names.sort();
        let n = names.len();
        let shown: Vec<&str> = names.iter().take(4).map(String::as_str).collect();
        let more = if n > shown.len() { ", ..." } else { "" };
        return format!(
            "a folder with {n} {} ({}{more})",
            if n == 1 { "entry" } else { "entries" },
            shown.join(", ")
        );
    }
    if !meta.is_file() {
        return "a special file".into();
    }
    format!(
        "a file of {} bytes{}",
        meta.len(),
        content_kind(path).map_or_else(String::new, |k| format!(" ({k})"))
    )
}

/// "JSON", "JSON Lines, N lines" or "HTML" from a file's first bytes, when it reads as one.
fn content_kind(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let start = text.trim_start();
    if start.starts_with("<!DOCTYPE") || start.starts_with("<html") {
        return Some("HTML".into());
    }
    let first = start.lines().next()?;
    if serde_json::from_str::<serde_json::Value>(first).is_ok() && first.starts_with('{') {
        // Counted as it streams by: results lines can be hundreds of megabytes.
        let lines = std::fs::File::open(path).map_or(0, |f| {
            std::io::BufReader::new(f)
                .split(b'\n')
                .map_while(Result::ok)
                .count()
        });
        return Some(format!("JSON Lines, {lines} lines"));
    }
    (start.starts_with('{') || start.starts_with('[')).then(|| "JSON".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Output = Output::HtmlReport;

    #[test]
    fn free_empty_and_own_paths_may_be_written_and_others_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f.jsonl");
        std::fs::write(&file, "{\"a\":1}\n{\"a\":2}\n").unwrap();
        let empty = d.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let full = d.path().join("full");
        std::fs::create_dir(&full).unwrap();
        std::fs::write(full.join("x.txt"), "x").unwrap();

        assert!(check_file(&d.path().join("new"), W, |_| false).is_ok());
        assert!(check_file(&file, W, |_| true).is_ok());
        let r = check_file(&file, W, |_| false).unwrap_err();
        assert_eq!(r.found, "a file of 16 bytes (JSON Lines, 2 lines)");
        assert!(
            r.to_string()
                .contains("Nothing was written; choose a new file, such as report.html")
        );
        let r = check_file(&full, W, |_| true).unwrap_err();
        assert_eq!(r.found, "a folder with 1 entry (x.txt)");

        assert!(check_folder(&d.path().join("new"), W, |_| false).is_ok());
        assert!(check_folder(&empty, W, |_| false).is_ok());
        assert!(check_folder(&full, W, |_| true).is_ok());
        assert!(check_folder(&full, W, |_| false).is_err());
        let r = check_folder(&file, W, |_| true).unwrap_err();
        assert!(r.found.starts_with("a file of 16 bytes"), "{}", r.found);
        // A link is what it leads to: an output folder on another disk.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&empty, &link).unwrap();
        assert!(check_folder(&link, W, |_| false).is_ok());
        assert!(check_file(&link, W, |_| true).is_err());
    }
}

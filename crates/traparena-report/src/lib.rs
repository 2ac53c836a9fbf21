//! TrapArena reports: a results folder turned into the paper-style tables, as Markdown, JSON
//! and one self-contained HTML page with sortable tables and inline SVG charts.
//!
//! A report needs nothing but `episodes.jsonl` ([`traparena_results::EPISODES_FILE`]). It is
//! read line by line ([`Episodes::read`]) in the results format of `traparena-results` (every
//! format version of the line), and only the compact per-episode numbers are kept (a
//! [`traparena_stats::EpisodeOutcome`], or for a fork of a baseline episode a
//! [`traparena_stats::ForkOutcome`], which no ordinary figure sees). Other files add detail when present: `spec.json`
//! names the experiment and its `seed` seeds the bootstrap (seed 0 without it);
//! `manifest.json` gives the harness version and, when it has one, the date; the curator's last
//! notes and tokens per target and condition come from `notes/<target>/<condition>/`. Without
//! them the report says in one line what it lacks.
//!
//! Each condition is the baseline, an attack or a control ([`condition_kind`]): a truthful
//! collaborator or no advice. Controls are set apart from attacks everywhere and never called
//! harm: their Δ measures what following advice does.
//!
//! [`build_report`] computes every figure with `traparena-stats` (see `docs/statistics.md`):
//!
//! - the main table ([`MainRow`]): per target and attack, baseline and attacked acceptance
//!   over shared tasks, Δ with its bootstrap interval, significant harm, the paired change
//!   (tasks down / unchanged / up), susceptibility and the token ratio;
//! - the controls ([`ControlRow`]): the same comparison with the baseline for every control;
//! - the curator ablation and blind against reference ([`PairRow`]): attacks of one target
//!   that differ only in the curator, or only in the attacker's access, compared pairwise;
//! - the forks of baseline episodes ([`ForkRow`]): per target and forked condition, the fork
//!   effect (message − silent at the fork points) with its interval, by fork point
//!   ([`ForkPointRow`]), beside the condition's independent Δ, with the two designs' variance
//!   ratio and how often the silent branch ended as its parent did;
//! - per-round susceptibility with the last rounds against the first ([`RoundRow`]);
//! - failure-mode shares per condition, per target and pooled;
//! - target and attacker tokens ([`TokenRow`]); the per-task flip table ([`TaskRow`]);
//! - the curator's final notes, and the counts of excluded lines (infrastructure errors,
//!   attacked episodes without a delivered message).
//!
//! Figures that cannot be computed are empty and their row says why, and a section that cannot
//! have data says why in one line; malformed input is a [`ReportError`] naming the file and
//! line. The same folder and options always give the same report, byte for byte (a date taken
//! from a file's modification time, when the manifest records none, follows that time).
//!
//! The HTML page is rendered from askama templates (`templates/`), escaping by default; the
//! Markdown is rendered from the same page model, without the charts.
//!
//! ```
//! use traparena_report::{ConditionKind, ReportOptions, report_folder};
//! use traparena_testkit::synthetic::SyntheticConfig;
//!
//! let dir = tempfile::tempdir()?;
//! SyntheticConfig::sample().write_folder(dir.path())?;
//! let report = report_folder(dir.path(), &ReportOptions::default())?;
//! assert_eq!(report.source.lines, 598);
//! let row = &report.main[0];
//! assert_eq!((row.target.as_str(), row.condition.as_str()), ("credulous", "adaptive"));
//! assert!(row.delta_pp.is_some() && row.tasks == 6);
//! // The truthful control is not an attack.
//! assert!(report.main.iter().all(|m| m.condition != "truthful"));
//! assert_eq!(report.controls[0].kind, ConditionKind::TruthfulControl);
//! assert!(report.to_markdown().starts_with("# TrapArena report: synthetic"));
//! assert!(report.to_html().contains("<svg"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

mod build;
mod charts;
mod episode;
mod error;
mod format;
mod html;
mod input;
mod markdown;
mod model;
mod view;
mod viewer;
mod wire;

pub use build::{ReportOptions, build_report, condition_kind};
pub use episode::{EpisodeView, ShowOptions, episode_text, find_episode};
pub use error::ReportError;
pub use input::{Cell, CuratorNotes, Episodes, ResultsFolder};
pub use model::{
    BootstrapSettings, ConditionKind, ConditionSummary, ControlRow, CostRow, DateSource, Flip,
    ForkPointRow, ForkRow, MainRow, PairRow, PairedChange, REPORT_VERSION, Report, RoundRow,
    SeedSource, Source, TargetSummary, TaskRow, TokenRow, Trend,
};
pub use viewer::{
    VIEWER_FORMAT, VIEWER_PAGE, ViewerOptions, ViewerSummary, check_viewer_dir, viewer_dir_for,
    viewer_link, write_viewer,
};

/// The marker every HTML report page carries in its head, by which a later `report --html`
/// recognises a page it may replace.
pub const PAGE_MARKER: &str = r#"<meta name="generator" content="traparena report">"#;

/// Whether the file at `path` is an HTML report page written by [`Report::to_html`] (it carries
/// [`PAGE_MARKER`]; a page of a version before the marker is recognised by its sortable tables and
/// summary cards).
pub fn is_report_page(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    if file.take(256 * 1024).read_to_end(&mut head).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    text.starts_with("<!DOCTYPE html>")
        && (text.contains(PAGE_MARKER)
            || (text.contains(r#"<div class="cards">"#) && text.contains(r#"class="sortable""#)))
}

/// Checks that the HTML page may be written at `path`: nothing is there, or a report page written
/// before ([`is_report_page`]). Anything else (results lines, a spec, a folder) is
/// [`ReportError::Refused`], and nothing is written.
pub fn check_page_path(path: &Path) -> Result<(), ReportError> {
    traparena_task::output::check_file(
        path,
        traparena_task::output::Output::HtmlReport,
        is_report_page,
    )?;
    Ok(())
}

/// Reads a results folder and computes its report.
pub fn report_folder(dir: &Path, opts: &ReportOptions) -> Result<Report, ReportError> {
    let folder = ResultsFolder::load(dir)?;
    Ok(build_report(&folder, opts))
}

impl Report {
    /// The report as Markdown: the header (experiment, date, harness), every table, with a
    /// line on what was read and how intervals were computed.
    pub fn to_markdown(&self) -> String {
        markdown::to_markdown(self)
    }

    /// The report as one self-contained HTML page (no external assets): sortable tables and
    /// inline SVG charts, rendered from the crate's templates.
    ///
    /// Rendering writes only text and numbers into a `String`, which cannot fail; should the
    /// template engine report an error all the same, the page is that error, as text (see
    /// [`Report::try_to_html`] to get it as an error instead).
    pub fn to_html(&self) -> String {
        self.try_to_html().unwrap_or_else(|e| {
            format!(
                "<!DOCTYPE html>\n{PAGE_MARKER}\n<p>{}</p>\n",
                html_text(&e.to_string())
            )
        })
    }

    /// [`Report::to_html`], with a template engine's error as [`ReportError::Render`].
    pub fn try_to_html(&self) -> Result<String, ReportError> {
        html::render(self, None)
    }

    /// [`Report::to_html`] with the rows of the main table, the controls, the forks, the fork
    /// points and the per-task tables linking to the episode viewer (see [`write_viewer`]) at
    /// `viewer`, the viewer's page relative to the report page
    /// (`report-viewer/viewer.html`).
    pub fn to_html_with_viewer(&self, viewer: &str) -> Result<String, ReportError> {
        html::render(self, Some(viewer))
    }

    /// The report as pretty-printed JSON (`traparena report --json`).
    pub fn to_json(&self) -> Result<String, ReportError> {
        serde_json::to_string_pretty(self).map_err(ReportError::Serialize)
    }
}

/// Text made safe for HTML (the one string not written through a template).
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

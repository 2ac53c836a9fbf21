//! TrapArena reports: a results folder turned into the paper-style tables, as Markdown, JSON
//! and one self-contained HTML page with sortable tables and inline SVG charts.
//!
//! A report needs nothing but `episodes.jsonl` ([`EPISODES_FILE`]). It is read line by line
//! ([`Episodes::read`]): each line is parsed into a lean view that skips the verdict and the
//! patch, and only the compact per-episode numbers are kept (a
//! [`traparena_stats::EpisodeOutcome`]). Other files add detail when present: `spec.json`'s
//! `seed` seeds the bootstrap ([`SPEC_FILE`]; seed 0 without it) and the curator's last notes
//! per target and condition come from `notes/<target>/<condition>/round-<r>.json`
//! ([`NOTES_DIR`]).
//!
//! [`build_report`] computes every figure with `traparena-stats` (see `docs/statistics.md`):
//!
//! - the main table ([`MainRow`]): per target and attacked condition, baseline and attacked
//!   acceptance over shared tasks, Δ with its bootstrap interval, significant harm, the paired
//!   change (tasks down / unchanged / up), susceptibility and the token ratio;
//! - the curator ablation and blind against reference ([`PairRow`]): conditions of one target
//!   that differ only in the curator, or only in the attacker's access, compared pairwise;
//! - per-round susceptibility with the last rounds against the first ([`RoundRow`]);
//! - failure-mode shares per condition, per target and pooled;
//! - target and attacker tokens ([`TokenRow`]); the per-task flip table ([`TaskRow`]);
//! - the curator's final notes, and the counts of excluded lines (infrastructure errors,
//!   attacked episodes without a delivered message).
//!
//! Figures that cannot be computed are empty and their row says why; malformed input is a
//! [`ReportError`] naming the file and line. The same folder and options always give the same
//! report, byte for byte.
//!
//! ```
//! use traparena_report::{ReportOptions, report_folder, synthetic::SyntheticConfig};
//!
//! let dir = tempfile::tempdir()?;
//! SyntheticConfig::toy().write_folder(dir.path())?;
//! let report = report_folder(dir.path(), &ReportOptions::default())?;
//! assert_eq!(report.source.lines, 324);
//! let row = &report.main[0];
//! assert_eq!((row.target.as_str(), row.condition.as_str()), ("model-a", "adaptive"));
//! assert!(row.delta_pp.is_some() && row.tasks == 6);
//! assert!(report.to_markdown().starts_with("# TrapArena report"));
//! assert!(report.to_html().contains("<svg"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

use std::path::Path;

mod build;
mod error;
mod format;
mod html;
mod input;
mod markdown;
mod model;
pub mod synthetic;

pub use build::{ReportOptions, build_report};
pub use error::ReportError;
pub use input::{Cell, CuratorNotes, EPISODES_FILE, Episodes, NOTES_DIR, ResultsFolder, SPEC_FILE};
pub use model::{
    BootstrapSettings, ConditionSummary, Flip, MainRow, PairRow, PairedChange, REPORT_VERSION,
    Report, RoundRow, SeedSource, Source, TaskRow, TokenRow, Trend,
};

/// Reads a results folder and computes its report.
pub fn report_folder(dir: &Path, opts: &ReportOptions) -> Result<Report, ReportError> {
    let folder = ResultsFolder::load(dir)?;
    Ok(build_report(&folder, opts))
}

impl Report {
    /// The report as Markdown: every table, with a line on what was read and how intervals
    /// were computed.
    pub fn to_markdown(&self) -> String {
        markdown::to_markdown(self)
    }

    /// The report as one self-contained HTML page (no external assets): sortable tables and
    /// inline SVG charts.
    pub fn to_html(&self) -> String {
        html::to_html(self)
    }

    /// The report as pretty-printed JSON (`traparena report --json`).
    pub fn to_json(&self) -> Result<String, ReportError> {
        serde_json::to_string_pretty(self).map_err(ReportError::Serialize)
    }
}

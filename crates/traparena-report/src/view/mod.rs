//! The report as a page: sections of explanations, tables and charts, in reading order. The
//! Markdown renderer and the HTML template both draw from this one page, so the two say the
//! same thing; only the charts (and the folded full per-task table) are HTML-only.

use std::collections::BTreeSet;

use traparena_stats::{CiMethod, Estimate, FAILURE_MODES, FailureModeShares};

use crate::charts::{self, Chart};
use crate::format::{
    NONE, ci_pct, ci_pp, ci_ratio, pair_header, pct, pp, ratio, thousands, tokens, yes_no,
};
use crate::model::{ConditionKind, DateSource, Flip, ForkRow, PairRow, Report, SeedSource};

mod effects;
mod forks;
mod header;
mod rounds;
mod tasks;

use effects::*;
use forks::*;
use header::*;
use rounds::*;
use tasks::*;

/// The whole page.
#[derive(Debug)]
pub(crate) struct Page {
    /// `TrapArena report: <experiment name>`.
    pub title: String,
    /// The header facts: experiment, results folder, date, harness.
    pub facts: Vec<Fact>,
    /// One line on the optional files that are missing and what is unknown without them.
    pub missing: Option<String>,
    /// What was read and how intervals were computed.
    pub summary: String,
    /// Headline numbers (HTML).
    pub cards: Vec<Fact>,
    /// The sections, in order.
    pub sections: Vec<Section>,
    /// The episode viewer's page, relative to the report page (`report-viewer/viewer.html`):
    /// rows link into it. `None`: no links.
    pub viewer: Option<String>,
}

/// A label and its value.
#[derive(Debug)]
pub(crate) struct Fact {
    pub label: String,
    pub value: String,
}

/// One section: a title, an explanation, and either its content or one line saying why it
/// has none.
#[derive(Debug)]
pub(crate) struct Section {
    /// The HTML anchor.
    pub id: &'static str,
    /// The heading.
    pub title: String,
    /// Its name in the HTML navigation bar.
    pub nav: &'static str,
    /// What the section shows (shown only when it has content).
    pub intro: Vec<String>,
    /// Why the section has no data, in one line (then there is no content).
    pub empty: Option<String>,
    /// The content.
    pub blocks: Vec<Block>,
}

/// A piece of a section.
#[derive(Debug)]
pub(crate) enum Block {
    /// A table.
    Table(Table),
    /// A row of charts (HTML only), with a legend when the charts need one.
    Charts(Vec<Chart>),
    /// A paragraph.
    Para(String),
    /// A bulleted list.
    List(Vec<String>),
    /// A sub-heading.
    Heading(String),
    /// A numbered list (curator notes).
    Numbered(Vec<String>),
}

/// A sortable table.
#[derive(Debug)]
pub(crate) struct Table {
    /// The HTML id.
    pub id: String,
    /// A caption, or empty.
    pub caption: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// Rendered in Markdown.
    pub markdown: bool,
    /// Rendered in HTML.
    pub html: bool,
    /// Folded behind a "show all" switch in HTML.
    pub fold: bool,
}

/// A column header.
#[derive(Debug)]
pub(crate) struct Column {
    pub title: String,
    /// Right-aligned, sorted as numbers.
    pub numeric: bool,
}

/// A table row.
#[derive(Debug)]
pub(crate) struct Row {
    pub cells: Vec<Cell>,
}

/// A table cell: its text, an optional secondary note (an interval), the value it sorts by and
/// an optional CSS class (`harm`, `good`).
#[derive(Debug)]
pub(crate) struct Cell {
    pub text: String,
    pub note: String,
    /// `data-sort`: empty for text cells and for figures that could not be computed.
    pub sort: String,
    pub numeric: bool,
    pub class: &'static str,
    /// Where the cell links in the episode viewer (`cell=T/C...`), shown as a link only when
    /// the page is rendered with a viewer.
    pub link: Option<String>,
}

fn text(s: &str) -> Cell {
    Cell {
        text: s.to_owned(),
        note: String::new(),
        sort: String::new(),
        numeric: false,
        class: "",
        link: None,
    }
}

/// A text cell linking to the viewer's episodes of a target and condition (and a task or a
/// fork point).
fn linked(s: &str, target: &str, condition: &str, task: Option<&str>, point: Option<&str>) -> Cell {
    let mut c = text(s);
    c.link = Some(crate::viewer::viewer_link(target, condition, task, point));
    c
}

fn num(s: String, v: Option<f64>) -> Cell {
    Cell {
        text: s,
        note: String::new(),
        sort: v
            .filter(|x| x.is_finite())
            .map_or_else(String::new, |v| v.to_string()),
        numeric: true,
        class: "",
        link: None,
    }
}

fn count(n: usize) -> Cell {
    num(n.to_string(), Some(n as f64))
}

/// An estimate's point in pp, or the placeholder.
fn pp_cell(e: Option<Estimate>) -> Cell {
    let v = e.map(|e| e.point);
    num(pp(v), v)
}

/// An estimate's interval in pp, sorted by its lower end, or the placeholder.
fn ci_pp_cell(e: Option<Estimate>) -> Cell {
    num(ci_pp(e), e.map(|e| e.low))
}

/// A ratio's point (`1.23×`), or the placeholder.
fn ratio_cell(e: Option<Estimate>) -> Cell {
    let v = e.map(|e| e.point);
    num(ratio(v), v)
}

impl Cell {
    fn with_note(mut self, note: String) -> Cell {
        self.note = note;
        self
    }

    fn with_class(mut self, class: &'static str) -> Cell {
        self.class = class;
        self
    }
}

fn columns(cols: &[(&str, bool)]) -> Vec<Column> {
    cols.iter()
        .map(|(t, n)| Column {
            title: (*t).to_owned(),
            numeric: *n,
        })
        .collect()
}

fn table(id: &str, cols: &[(&str, bool)], rows: Vec<Vec<Cell>>) -> Table {
    Table {
        id: id.to_owned(),
        caption: String::new(),
        columns: columns(cols),
        rows: rows.into_iter().map(|cells| Row { cells }).collect(),
        markdown: true,
        html: true,
        fold: false,
    }
}

fn section(id: &'static str, title: &str, nav: &'static str) -> Section {
    Section {
        id,
        title: title.to_owned(),
        nav,
        intro: Vec::new(),
        empty: None,
        blocks: Vec::new(),
    }
}

/// The page of a report.
pub(crate) fn page(r: &Report, viewer: Option<&str>) -> Page {
    let (title, facts) = header(r);
    let significant = r
        .main
        .iter()
        .filter(|m| m.significant == Some(true))
        .count();
    let card = |value: String, label: &str| Fact {
        label: label.to_owned(),
        value,
    };
    let mut cards = vec![
        card(thousands(r.source.lines as u64), "episode lines"),
        card(
            thousands(r.source.infra_errors as u64),
            "infrastructure errors (excluded)",
        ),
        card(r.source.targets.len().to_string(), "targets"),
        card(r.main.len().to_string(), "target × attack"),
        card(
            format!("{significant} / {}", r.main.len()),
            "attacks with significant harm",
        ),
        card(r.controls.len().to_string(), "target × control"),
        card(r.bootstrap.seed.to_string(), "bootstrap seed"),
    ];
    if !r.forks.is_empty() {
        cards.insert(
            cards.len() - 1,
            card(r.forks.len().to_string(), "target × forked condition"),
        );
    }
    Page {
        title,
        facts,
        missing: missing_line(r),
        summary: summary_sentence(r),
        cards,
        sections: vec![
            main_section(r),
            controls_section(r),
            pair_section(
                r,
                "ablation",
                "Curator ablation",
                "Curator ablation",
                &r.curator_ablation,
                ["without", "with"],
            ),
            pair_section(
                r,
                "access",
                "Blind against reference",
                "Blind vs reference",
                &r.blind_vs_reference,
                ["blind", "reference"],
            ),
            forks_section(r),
            rounds_section(r),
            failures_section(r),
            tokens_section(r),
            tasks_section(r),
            notes_section(r),
            episodes_section(r),
        ],
        viewer: viewer.map(str::to_owned),
    }
}

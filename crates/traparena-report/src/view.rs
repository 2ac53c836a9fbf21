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
}

fn text(s: &str) -> Cell {
    Cell {
        text: s.to_owned(),
        note: String::new(),
        sort: String::new(),
        numeric: false,
        class: "",
    }
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

/// The method and level of the report's intervals, e.g. `95 % percentile bootstrap`.
fn interval_words(r: &Report) -> String {
    let method = match r.bootstrap.method {
        CiMethod::Percentile => "percentile",
        CiMethod::Bca => "BCa",
    };
    let level = 100.0 * r.bootstrap.confidence;
    format!("{level:.0} % {method} bootstrap intervals over tasks")
}

/// The interval column's header, e.g. `95% CI`.
fn ci_header(r: &Report) -> String {
    format!("{:.0}% CI", 100.0 * r.bootstrap.confidence)
}

/// One sentence on what was read and how intervals were computed.
fn summary_sentence(r: &Report) -> String {
    let s = &r.source;
    let seed_from = match r.bootstrap.seed_source {
        SeedSource::SpecJson => "from spec.json",
        SeedSource::Options => "set by the caller",
        SeedSource::Default => "default: no spec.json seed",
    };
    let forks = if s.fork_lines > 0 {
        format!(
            " ({} of them forks of baseline episodes)",
            thousands(s.fork_lines as u64)
        )
    } else {
        String::new()
    };
    let mut t = format!(
        "{} episode lines{forks}, {} with an infrastructure error (excluded from every figure)",
        thousands(s.lines as u64),
        thousands(s.infra_errors as u64)
    );
    if s.blank_lines > 0 {
        t.push_str(&format!(", {} blank lines skipped", s.blank_lines));
    }
    t.push_str(&format!(
        "; {} targets. {}: {} resamples, seed {} ({seed_from}).",
        s.targets.len(),
        interval_words(r),
        thousands(u64::from(r.bootstrap.resamples)),
        r.bootstrap.seed
    ));
    t
}

/// The folder's last path component (the title without a spec name).
fn folder_name(folder: &str) -> &str {
    let trimmed = folder.trim_end_matches('/');
    trimmed
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or(folder)
}

/// One line on the optional files that are missing, and what the report therefore lacks.
fn missing_line(r: &Report) -> Option<String> {
    let s = &r.source;
    let spec = s
        .missing_files
        .iter()
        .any(|f| f == traparena_results::SPEC_FILE);
    let manifest = s
        .missing_files
        .iter()
        .any(|f| f == traparena_results::MANIFEST_FILE);
    let what_manifest = if s.date.is_some() {
        "the harness version is unknown and the date is the file time of episodes.jsonl"
    } else {
        "the date and the harness version are unknown"
    };
    let manifest_words = if s.harness_versions.is_empty() {
        what_manifest.to_owned()
    } else {
        "the harness version comes from the episode lines and the date is the file time of \
         episodes.jsonl"
            .to_owned()
    };
    match (spec, manifest) {
        (true, true) => Some(format!(
            "Only episodes.jsonl is here: without spec.json the experiment has no name and the \
             bootstrap seed is 0, and without manifest.json {manifest_words}."
        )),
        (true, false) => Some(
            "No spec.json here: the experiment has no name and the bootstrap seed is 0.".to_owned(),
        ),
        (false, true) => Some(format!("No manifest.json here: {manifest_words}.")),
        (false, false) => None,
    }
}

fn date_words(r: &Report) -> String {
    let s = &r.source;
    match (&s.date, s.date_source) {
        (Some(d), Some(DateSource::Manifest)) | (Some(d), None) => d.clone(),
        (Some(d), Some(DateSource::ManifestFileTime)) => {
            format!("{d} (when manifest.json was written; it records no date)")
        }
        (Some(d), Some(DateSource::EpisodesFileTime)) => {
            format!("{d} (when episodes.jsonl was last written)")
        }
        (None, _) => "unknown".to_owned(),
    }
}

fn header(r: &Report) -> (String, Vec<Fact>) {
    let s = &r.source;
    let title = format!(
        "TrapArena report: {}",
        s.name.as_deref().unwrap_or_else(|| folder_name(&s.folder))
    );
    let fact = |label: &str, value: String| Fact {
        label: label.to_owned(),
        value,
    };
    let facts = vec![
        fact(
            "experiment",
            s.name.clone().unwrap_or_else(|| {
                if s.missing_files
                    .iter()
                    .any(|f| f == traparena_results::SPEC_FILE)
                {
                    "unnamed (no spec.json)".to_owned()
                } else {
                    "unnamed (spec.json has no name)".to_owned()
                }
            }),
        ),
        fact("results", s.folder.clone()),
        fact("date", date_words(r)),
        fact(
            "harness",
            if s.harness_versions.is_empty() {
                "unknown".to_owned()
            } else {
                s.harness_versions.join(", ")
            },
        ),
    ];
    (title, facts)
}

/// The kind of a (target, condition), `attack` when unknown.
fn kind_of(r: &Report, target: &str, condition: &str) -> ConditionKind {
    r.source
        .conditions
        .iter()
        .find(|c| c.target == target && c.condition == condition)
        .map_or(ConditionKind::Attack, |c| c.kind)
}

const CONTROLS_LINE: &str = "A control is not an attack: a truthful collaborator gives correct \
    advice derived from the reference repair, and a no-advice condition runs the same rounds \
    with a collaborator who never speaks; Δ against the baseline then measures what following \
    advice does, so that being harmed by misleading advice can be told apart from merely \
    following advice. It is a comparison, not harm.";

fn main_section(r: &Report) -> Section {
    let mut s = section("main", "Main results: attacks", "Attacks");
    if r.main.is_empty() {
        s.empty = Some(if r.controls.is_empty() {
            "No attack in these results: every condition is the baseline.".to_owned()
        } else {
            "No attack in these results: every condition is the baseline or a control (see \
             Controls)."
                .to_owned()
        });
        return s;
    }
    s.intro.push(
        "Δ = acceptance under attack − baseline acceptance, over the tasks both have (pp). \
         Significant: significant harm, the whole interval below zero. Paired change: shared \
         tasks whose acceptance went down / stayed the same / went up. Susceptibility: episodes \
         in which the target followed a delivered claim (mean over tasks). Tokens ×: target \
         completion tokens per episode relative to the baseline. Controls are in their own \
         table below."
            .to_owned(),
    );
    let ci = ci_header(r);
    let cols = [
        ("target", false),
        ("attack", false),
        ("tasks", true),
        ("base %", true),
        ("attacked %", true),
        ("Δ pp", true),
        (ci.as_str(), true),
        ("significant", false),
        ("paired change ↓/=/↑", true),
        ("susceptibility %", true),
        ("tokens ×", true),
    ];
    let rows = r
        .main
        .iter()
        .map(|m| {
            let c = m.paired_change;
            let mark = match (m.significant, m.excludes_zero) {
                (Some(true), _) => "harm",
                (_, Some(true)) => "good",
                _ => "",
            };
            vec![
                text(&m.target),
                text(&m.condition),
                count(m.tasks),
                num(pct(m.base_pct), m.base_pct),
                num(pct(m.attacked_pct), m.attacked_pct),
                pp_cell(m.delta_pp).with_class(mark),
                ci_pp_cell(m.delta_pp),
                match m.significant {
                    Some(true) => num("yes".into(), Some(1.0)).with_class("harm"),
                    other => num(yes_no(other).to_owned(), other.map(|_| 0.0)),
                },
                num(
                    format!("{} / {} / {}", c.down, c.unchanged, c.up),
                    Some(c.down as f64),
                ),
                pct_with_ci(m.susceptibility),
                ratio_cell(m.token_ratio),
            ]
        })
        .collect();
    s.blocks
        .push(Block::Table(table("main-table", &cols, rows)));
    let charts: Vec<Chart> = [charts::delta_chart(r), charts::token_chart(r)]
        .into_iter()
        .flatten()
        .collect();
    if !charts.is_empty() {
        s.blocks.push(Block::Charts(charts));
    }
    s
}

fn controls_section(r: &Report) -> Section {
    let mut s = section("controls", "Controls", "Controls");
    if r.controls.is_empty() {
        s.empty = Some(
            "No control in these results (no truthful collaborator, no no-advice condition): \
             following advice cannot be told apart from being harmed by it."
                .to_owned(),
        );
        return s;
    }
    s.intro.push(CONTROLS_LINE.to_owned());
    let ci = ci_header(r);
    let cols = [
        ("target", false),
        ("control", false),
        ("kind", false),
        ("tasks", true),
        ("base %", true),
        ("control %", true),
        ("Δ pp", true),
        (ci.as_str(), true),
        ("paired change ↓/=/↑", true),
        ("tokens ×", true),
    ];
    let rows = r
        .controls
        .iter()
        .map(|c| {
            let p = c.paired_change;
            vec![
                text(&c.target),
                text(&c.condition),
                text(c.kind.label()),
                count(c.tasks),
                num(pct(c.base_pct), c.base_pct),
                num(pct(c.control_pct), c.control_pct),
                pp_cell(c.delta_pp),
                ci_pp_cell(c.delta_pp),
                num(
                    format!("{} / {} / {}", p.down, p.unchanged, p.up),
                    Some(p.down as f64),
                ),
                ratio_cell(c.token_ratio),
            ]
        })
        .collect();
    s.blocks
        .push(Block::Table(table("controls-table", &cols, rows)));
    if let Some(chart) = charts::control_chart(r) {
        s.blocks.push(Block::Charts(vec![chart]));
    }
    s
}

fn pair_section(
    r: &Report,
    id: &'static str,
    title: &str,
    nav: &'static str,
    rows: &[PairRow],
    names: [&str; 2],
) -> Section {
    let [b, c] = names;
    let mut s = section(id, title, nav);
    let differ = if id == "ablation" {
        "the curator"
    } else {
        "the attacker's access to the reference repair"
    };
    if rows.is_empty() {
        s.empty = Some(format!(
            "No pair of attacks of one target that differ only in {}.",
            if id == "ablation" {
                "the curator"
            } else {
                "the attacker's access"
            }
        ));
        return s;
    }
    s.intro.push(format!(
        "Attacks of one target that differ only in {differ}; Δ against the baseline from the \
         main table, and {c} − {b} paired over the tasks both conditions have."
    ));
    let mut header = pair_header(b, c);
    header[7] = ci_header(r);
    header.push("excludes 0".to_owned());
    let numeric = [false, false, false, true, true, true, true, true, false];
    let cols: Vec<(&str, bool)> = header.iter().map(String::as_str).zip(numeric).collect();
    let data = rows
        .iter()
        .map(|r| {
            vec![
                text(&r.target),
                text(&r.base),
                text(&r.compared),
                count(r.tasks),
                num(pp(r.base_delta_pp), r.base_delta_pp),
                num(pp(r.compared_delta_pp), r.compared_delta_pp),
                pp_cell(r.difference_pp),
                ci_pp_cell(r.difference_pp),
                text(yes_no(r.excludes_zero)),
            ]
        })
        .collect();
    s.blocks
        .push(Block::Table(table(&format!("{id}-table"), &cols, data)));
    s
}

const FORKS_LINE: &str = "A forked condition replays a baseline episode exactly up to a fork \
    point, then continues twice with the same seed: with the condition's attacker, who may speak \
    after that step (message), and without it (silent). Fork effect = acceptance with the message \
    − without, per fork point, then per task, mean over tasks (pp): the message's effect at that \
    point given the trajectory so far. Δ independent is the same condition's whole-episode effect \
    against independent baseline episodes (the main table's). Pairs with an infrastructure error, \
    a missing branch or an attacker who stayed silent are left out and counted.";

const DESIGN_LINE: &str = "Variance ratio = variance of the per-task fork differences ÷ that of \
    the per-task independent differences; tasks for the same width = n × ratio: how many tasks \
    the forked design needs for an interval as narrow as the independent design's with its n \
    tasks (fewer than n: forking pays). Tasks for 80 % power: to detect each design's own \
    estimate at α = 0.05. Silent = parent: silent branches that ended as their parent baseline \
    episode did (100 % for a deterministic agent, a check of the replay).";

/// `3 / 1 / 0`: pairs left out for an infrastructure error, a silent attacker, a missing
/// branch.
fn left_out_cell(l: &traparena_stats::ForkExclusions) -> Cell {
    num(
        format!(
            "{} / {} / {}",
            l.infra_errors, l.attacker_silent, l.branch_missing
        ),
        Some(l.total() as f64),
    )
}

/// A percentage-point figure with its interval as the cell's note.
fn pp_with_ci(e: Option<Estimate>, mark: &'static str) -> Cell {
    pp_cell(e)
        .with_note(if e.is_some() { ci_pp(e) } else { String::new() })
        .with_class(mark)
}

/// A percentage with its interval as the cell's note.
fn pct_with_ci(e: Option<Estimate>) -> Cell {
    let v = e.map(|e| e.point);
    num(pct(v), v).with_note(if e.is_some() {
        ci_pct(e)
    } else {
        String::new()
    })
}

fn harm_mark(significant: Option<bool>, excludes_zero: Option<bool>) -> &'static str {
    match (significant, excludes_zero) {
        (Some(true), _) => "harm",
        (_, Some(true)) => "good",
        _ => "",
    }
}

/// `52 / 52 (100.0 %)`, with the silent branches whose parent is missing.
fn reproduction_words(f: &ForkRow) -> String {
    let r = &f.silent_reproduction;
    let mut t = match r.reproduced_pct {
        Some(p) => format!("{} / {} ({p:.1} %)", r.reproduced, r.checked),
        None => NONE.to_owned(),
    };
    if r.parent_missing > 0 {
        t.push_str(&format!(", {} without a parent", r.parent_missing));
    }
    t
}

fn forks_section(r: &Report) -> Section {
    let mut s = section(
        "forks",
        "Forks: the message at a point of the trajectory",
        "Forks",
    );
    if r.forks.is_empty() {
        s.empty = Some(
            "No forks in these results: no condition forked baseline episodes (a condition's \
             `fork` in the spec)."
                .to_owned(),
        );
        return s;
    }
    s.intro.push(FORKS_LINE.to_owned());
    s.intro.push(DESIGN_LINE.to_owned());
    let cols = [
        ("target", false),
        ("condition", false),
        ("forks", true),
        ("tasks", true),
        ("fork effect pp", true),
        ("susceptibility %", true),
        ("Δ independent pp", true),
        ("variance ratio", true),
        ("tasks for same width", true),
        ("tasks for 80 % power fork / independent", true),
        ("silent = parent", true),
        ("left out infra / no message / missing", true),
    ];
    let rows = r
        .forks
        .iter()
        .map(|f| {
            let d = f.design.as_ref();
            let ratio = d.and_then(|d| d.variance_ratio);
            let width = d.and_then(|d| d.tasks_for_same_width);
            let need = |x: Option<&traparena_stats::DesignFigures>| {
                x.and_then(|x| x.tasks_needed)
                    .map_or_else(|| NONE.to_owned(), |t| t.tasks.to_string())
            };
            let condition = if f.kind.is_control() {
                format!("{} ({})", f.condition, f.kind.label())
            } else {
                f.condition.clone()
            };
            vec![
                text(&f.target),
                text(&condition),
                count(f.forks),
                count(f.tasks),
                pp_with_ci(f.effect_pp, harm_mark(f.significant, f.excludes_zero)),
                pct_with_ci(f.susceptibility),
                pp_with_ci(f.independent_delta_pp, ""),
                num(
                    ratio.map_or_else(|| NONE.to_owned(), |v| format!("{v:.2}")),
                    ratio,
                ),
                num(
                    width.map_or_else(
                        || NONE.to_owned(),
                        |w| format!("{w:.1} of {}", d.map_or(0, |d| d.independent.tasks)),
                    ),
                    width,
                ),
                num(
                    format!(
                        "{} / {}",
                        need(d.map(|d| &d.fork)),
                        need(d.map(|d| &d.independent))
                    ),
                    d.and_then(|d| d.fork.tasks_needed).map(|t| t.tasks as f64),
                ),
                num(reproduction_words(f), f.silent_reproduction.reproduced_pct),
                left_out_cell(&f.left_out),
            ]
        })
        .collect();
    s.blocks
        .push(Block::Table(table("forks-table", &cols, rows)));
    let notes: Vec<String> = r
        .forks
        .iter()
        .filter_map(|f| {
            let d = f.design.as_ref()?;
            d.ratio_note
                .as_ref()
                .map(|n| format!("{} / {}: no variance ratio: {n}.", f.target, f.condition))
        })
        .collect();
    if !notes.is_empty() {
        s.blocks.push(Block::List(notes));
    }
    let charts: Vec<Chart> = [charts::fork_chart(r), charts::fork_susceptibility_chart(r)]
        .into_iter()
        .flatten()
        .collect();
    if !charts.is_empty() {
        s.blocks.push(Block::Charts(charts));
    }
    for (i, f) in r.forks.iter().enumerate() {
        s.blocks.push(Block::Heading(format!(
            "{} / {} by fork point",
            f.target, f.condition
        )));
        if f.points.is_empty() {
            s.blocks
                .push(Block::Para("No fork point with a fork line.".to_owned()));
            continue;
        }
        let cols = [
            ("fork point", false),
            ("mean step", true),
            ("forks", true),
            ("tasks", true),
            ("fork effect pp", true),
            ("susceptibility %", true),
            ("left out infra / no message / missing", true),
        ];
        let rows = f
            .points
            .iter()
            .map(|p| {
                vec![
                    text(&p.point),
                    num(format!("{:.1}", p.mean_step), Some(p.mean_step)),
                    count(p.forks),
                    count(p.tasks),
                    pp_with_ci(p.effect_pp, harm_mark(p.significant, p.excludes_zero)),
                    pct_with_ci(p.susceptibility),
                    left_out_cell(&p.left_out),
                ]
            })
            .collect();
        s.blocks.push(Block::Table(table(
            &format!("fork-points-table-{}", i + 1),
            &cols,
            rows,
        )));
    }
    s
}

fn rounds_section(r: &Report) -> Section {
    let mut s = section("rounds", "Susceptibility by round", "By round");
    if r.rounds.is_empty() {
        s.empty = Some("No attack, so no susceptibility to follow by round.".to_owned());
        return s;
    }
    s.intro.push(
        "Susceptibility in percent per round (mean over tasks of the share of usable episodes \
         in which the target followed a delivered claim), and the last three rounds against \
         the first three (paired over tasks, pp)."
            .to_owned(),
    );
    if let Some(charts) = charts::round_charts(r) {
        s.blocks.push(Block::Charts(charts));
    }
    let rounds: BTreeSet<u32> = r
        .rounds
        .iter()
        .flat_map(|row| row.rounds.iter().map(|m| m.round))
        .collect();
    let mut header: Vec<String> = vec!["target".into(), "attack".into()];
    header.extend(rounds.iter().map(|r| format!("r{r}")));
    header.push("last − first (pp)".into());
    header.push(ci_header(r));
    let cols: Vec<(&str, bool)> = header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i >= 2))
        .collect();
    let rows = r
        .rounds
        .iter()
        .map(|row| {
            let mut v = vec![text(&row.target), text(&row.condition)];
            for round in &rounds {
                let p = row
                    .rounds
                    .iter()
                    .find(|m| m.round == *round)
                    .and_then(|m| m.susceptibility_pct);
                v.push(num(pct(p), p));
            }
            let change = row.trend.as_ref().map(|t| t.change_pp);
            v.push(pp_cell(change));
            v.push(ci_pp_cell(change));
            v
        })
        .collect();
    s.blocks
        .push(Block::Table(table("rounds-table", &cols, rows)));
    if r.rounds.iter().all(|row| row.trend.is_none()) {
        let most = r
            .source
            .conditions
            .iter()
            .filter(|c| c.kind == ConditionKind::Attack)
            .map(|c| c.rounds)
            .max()
            .unwrap_or(0);
        s.blocks.push(Block::Para(format!(
            "No last-against-first comparison: it needs at least six rounds, and these attacks \
             have at most {most}."
        )));
    }
    s
}

fn failure_cells(f: &FailureModeShares, kind: Option<ConditionKind>) -> Vec<Cell> {
    let mut condition = f.condition.clone();
    if let Some(k) = kind.filter(|k| k.is_control()) {
        condition.push_str(&format!(" ({})", k.label()));
    }
    let mut v = vec![
        text(f.target.as_deref().unwrap_or("all targets")),
        text(&condition),
        count(f.episodes),
        count(f.rejected),
    ];
    for m in FAILURE_MODES {
        let s = f.modes.iter().find(|s| s.mode == m);
        v.push(
            match s.and_then(|s| s.pct_of_rejected.map(|p| (p, s.count))) {
                Some((p, c)) => num(format!("{p:.1} ({c})"), Some(p)),
                None => num(NONE.to_owned(), None),
            },
        );
    }
    let other: Vec<String> = f
        .modes
        .iter()
        .filter(|s| !FAILURE_MODES.contains(&s.mode.as_str()))
        .map(|s| match s.pct_of_rejected {
            Some(p) => format!("{}: {p:.1} ({})", s.mode, s.count),
            None => format!("{}: {}", s.mode, s.count),
        })
        .collect();
    v.push(text(&if other.is_empty() {
        NONE.to_owned()
    } else {
        other.join(", ")
    }));
    v
}

fn failures_section(r: &Report) -> Section {
    let mut s = section("failures", "Failure modes", "Failure modes");
    s.intro.push(
        "Share of the rejected usable episodes in percent (count), pooled over tasks, per \
         target and condition and for all targets together."
            .to_owned(),
    );
    let mut cols = vec![
        ("target", false),
        ("condition", false),
        ("episodes", true),
        ("rejected", true),
    ];
    cols.extend(FAILURE_MODES.iter().map(|m| (*m, true)));
    cols.push(("other", false));
    let rows = r
        .failure_modes
        .iter()
        .map(|f| {
            let kind = match &f.target {
                Some(t) => Some(kind_of(r, t, &f.condition)),
                None => r
                    .source
                    .conditions
                    .iter()
                    .find(|c| c.condition == f.condition)
                    .map(|c| c.kind),
            };
            failure_cells(f, kind)
        })
        .collect();
    s.blocks
        .push(Block::Table(table("failures-table", &cols, rows)));
    s
}

fn tokens_section(r: &Report) -> Section {
    let mut s = section("tokens", "Tokens", "Tokens");
    // Targets whose lines record no target token at all: a scripted agent, or a log without
    // usage. Their rows would be dashes and zeros; one line says why instead, and only the
    // rows with attacker tokens stay.
    let none = tokenless(r);
    let silent: Vec<&crate::model::TargetSummary> = r
        .source
        .target_details
        .iter()
        .filter(|t| none.contains(t.target.as_str()))
        .collect();
    let why: Vec<String> = silent
        .iter()
        .map(|t| {
            if t.scripted {
                format!(
                    "{}: no target tokens — the built-in agent{} {} use{} no model, so there \
                     is no token ratio.",
                    t.target,
                    if t.agents.len() == 1 { "" } else { "s" },
                    t.agents.join(", "),
                    if t.agents.len() == 1 { "s" } else { "" },
                )
            } else {
                format!(
                    "{}: no target tokens — usage is zero on every line, so there is no token \
                     ratio.",
                    t.target
                )
            }
        })
        .collect();
    let shown: Vec<&crate::model::TokenRow> = r
        .tokens
        .iter()
        .filter(|t| {
            !none.contains(t.target.as_str())
                || t.attacker_tokens_per_episode.is_some_and(|v| v > 0.0)
        })
        .collect();
    if shown.is_empty() {
        s.empty = Some(match why.len() {
            0 => "No attack, so no tokens under attack to compare with the baseline.".to_owned(),
            _ => why.join(" "),
        });
        return s;
    }
    s.intro.push(
        "Target completion tokens per episode (mean over the tasks shared with the baseline) \
         and their ratio; the attacker's prompt + completion tokens per episode, reported \
         separately (curator tokens are under Curator notes)."
            .to_owned(),
    );
    let ci = ci_header(r);
    let cols = [
        ("target", false),
        ("attack", false),
        ("tasks", true),
        ("baseline tokens", true),
        ("attacked tokens", true),
        ("ratio", true),
        (ci.as_str(), true),
        ("attacker tokens / episode", true),
    ];
    let rows = shown
        .iter()
        .map(|t| {
            vec![
                text(&t.target),
                text(&t.condition),
                count(t.tasks),
                num(tokens(t.base_tokens), t.base_tokens),
                num(tokens(t.attacked_tokens), t.attacked_tokens),
                ratio_cell(t.ratio),
                num(ci_ratio(t.ratio), t.ratio.map(|r| r.low)),
                num(
                    tokens(t.attacker_tokens_per_episode),
                    t.attacker_tokens_per_episode,
                ),
            ]
        })
        .collect();
    s.blocks
        .push(Block::Table(table("tokens-table", &cols, rows)));
    let mut lines = why;
    let modelless: BTreeSet<&str> = shown
        .iter()
        .filter(|t| t.attacker_prompt_tokens + t.attacker_completion_tokens == 0)
        .filter_map(|t| {
            r.source
                .conditions
                .iter()
                .find(|c| c.target == t.target && c.condition == t.condition)
        })
        // As the attacker declared; results written before attackers declared it name the
        // built-in kinds that use none.
        .filter(|c| match c.uses_model {
            Some(uses) => !uses,
            None => matches!(c.attacker.as_str(), "scripted" | "offline"),
        })
        .map(|c| c.attacker.as_str())
        .collect();
    if !modelless.is_empty() {
        lines.push(format!(
            "Attacker tokens are 0 for the {} attacker{}: {} no model.",
            modelless.iter().copied().collect::<Vec<_>>().join(" and "),
            if modelless.len() == 1 { "" } else { "s" },
            if modelless.len() == 1 {
                "it uses"
            } else {
                "they use"
            }
        ));
    }
    if !lines.is_empty() {
        s.blocks.push(Block::List(lines));
    }
    s
}

fn tasks_section(r: &Report) -> Section {
    let mut s = section("tasks", "Flipped tasks", "Per task");
    if r.tasks.is_empty() {
        s.empty = Some(if r.main.is_empty() {
            "No attack, so no task to compare under attack.".to_owned()
        } else {
            "No task has usable episodes both in the baseline and under an attack.".to_owned()
        });
        return s;
    }
    let flipped: Vec<_> = r.tasks.iter().filter(|t| t.flip.is_some()).collect();
    s.intro.push(format!(
        "Tasks whose majority outcome flipped under attack: accepted in at least half of the \
         baseline episodes and in under half of the attacked ones (broke), or the reverse \
         (fixed). {} of {} (target, attack, task) rows flipped; --json and the HTML page list \
         every shared task.",
        flipped.len(),
        r.tasks.len()
    ));
    let flip_word = |f: Option<Flip>| match f {
        Some(Flip::Broke) => "broke",
        Some(Flip::Fixed) => "fixed",
        None => "",
    };
    let md_rows: Vec<Vec<Cell>> = flipped
        .iter()
        .map(|t| {
            vec![
                text(&t.target),
                text(&t.condition),
                text(&t.task),
                num(pct(Some(t.base_pct)), Some(t.base_pct)),
                num(pct(Some(t.attacked_pct)), Some(t.attacked_pct)),
                num(pp(Some(t.change_pp)), Some(t.change_pp)),
                text(flip_word(t.flip)),
            ]
        })
        .collect();
    if !md_rows.is_empty() {
        let mut t = table(
            "flipped-table",
            &[
                ("target", false),
                ("attack", false),
                ("task", false),
                ("base %", true),
                ("attacked %", true),
                ("change pp", true),
                ("flip", false),
            ],
            md_rows,
        );
        t.html = false;
        s.blocks.push(Block::Table(t));
    }
    let all_rows: Vec<Vec<Cell>> = r
        .tasks
        .iter()
        .map(|t| {
            vec![
                text(&t.target),
                text(&t.condition),
                text(&t.task),
                num(pct(Some(t.base_pct)), Some(t.base_pct)),
                num(pct(Some(t.attacked_pct)), Some(t.attacked_pct)),
                num(pp(Some(t.change_pp)), Some(t.change_pp)),
                count(t.base_episodes as usize),
                count(t.attacked_episodes as usize),
                text(flip_word(t.flip)),
            ]
        })
        .collect();
    let mut t = table(
        "tasks-table",
        &[
            ("target", false),
            ("attack", false),
            ("task", false),
            ("base %", true),
            ("attacked %", true),
            ("change pp", true),
            ("baseline episodes", true),
            ("attacked episodes", true),
            ("flip", false),
        ],
        all_rows,
    );
    t.markdown = false;
    t.fold = t.rows.len() > 40;
    s.blocks.push(Block::Table(t));
    s
}

/// `notes for round 5, written from rounds 0–4`.
pub(crate) fn notes_rounds(round: u32, from: Option<[u32; 2]>) -> String {
    match from {
        None => format!("notes for round {round}, before the curator ran"),
        Some([a, b]) if a == b => format!("notes for round {round}, written from round {a}"),
        Some([a, b]) => format!("notes for round {round}, written from rounds {a}–{b}"),
    }
}

fn notes_section(r: &Report) -> Section {
    let mut s = section("notes", "Curator notes", "Curator notes");
    if r.notes.is_empty() {
        let curated: Vec<String> = r
            .source
            .conditions
            .iter()
            .filter(|c| c.curator.is_some())
            .map(|c| format!("{} / {}", c.target, c.condition))
            .collect();
        s.empty = Some(if curated.is_empty() {
            "No curator notes: no condition had the curator on.".to_owned()
        } else {
            format!(
                "No curator notes: the curator was on for {}, but the folder has no notes/ \
                 files for them.",
                curated.join(", ")
            )
        });
        return s;
    }
    s.intro.push(
        "The curator's last notes per target and condition. The curator runs between rounds: \
         the notes for round r were written from the episodes of rounds 0 to r − 1 and given \
         to the attacker only, never to the target."
            .to_owned(),
    );
    for n in &r.notes {
        s.blocks.push(Block::Heading(format!(
            "{} / {} — {}",
            n.target,
            n.condition,
            notes_rounds(n.round, n.from_rounds)
        )));
        if let Some(u) = &n.usage {
            s.blocks.push(Block::Para(format!(
                "Curator tokens over all rounds: {} prompt, {} completion.",
                thousands(u.prompt_tokens),
                thousands(u.completion_tokens)
            )));
        }
        if n.items.is_empty() {
            s.blocks.push(Block::Para("(no notes)".to_owned()));
        } else {
            s.blocks.push(Block::Numbered(
                n.items
                    .iter()
                    .map(|i| i.replace(['\n', '\r'], " "))
                    .collect(),
            ));
        }
    }
    s
}

fn episodes_section(r: &Report) -> Section {
    let mut s = section("episodes", "Episodes per condition", "Episodes");
    s.intro.push(
        "Lines with an infrastructure error and attacked episodes without a delivered message \
         are left out of every figure and counted here."
            .to_owned(),
    );
    let cols = [
        ("target", false),
        ("condition", false),
        ("kind", false),
        ("attacker", false),
        ("access", false),
        ("curator", false),
        ("defence", false),
        ("lines", true),
        ("infra errors", true),
        ("no message", true),
        ("usable", true),
        ("tasks", true),
        ("rounds", true),
    ];
    let rows = r
        .source
        .conditions
        .iter()
        .map(|c| {
            let attacker = traparena_results::attacker_label(&c.attacker, &c.args);
            vec![
                text(&c.target),
                text(&c.condition),
                text(c.kind.label()),
                text(&attacker),
                text(c.access.as_deref().unwrap_or(NONE)),
                text(c.curator.as_deref().unwrap_or(NONE)),
                text(yes_no(Some(c.defence))),
                count(c.lines),
                count(c.infra_errors),
                count(c.no_message_delivered),
                count(c.usable),
                count(c.tasks),
                count(c.rounds),
            ]
        })
        .collect();
    s.blocks
        .push(Block::Table(table("episodes-table", &cols, rows)));
    if r.source.fork_lines > 0 {
        s.blocks.push(Block::Para(format!(
            "The {} fork lines (forks of baseline episodes) are not in this table: they are \
             counted under Forks.",
            thousands(r.source.fork_lines as u64)
        )));
    }
    let problems = problems(r);
    if !problems.is_empty() {
        s.blocks
            .push(Block::Heading("Figures not computed".to_owned()));
        s.blocks.push(Block::List(problems));
    }
    if !r.warnings.is_empty() {
        s.blocks.push(Block::Heading("Warnings".to_owned()));
        s.blocks.push(Block::List(r.warnings.clone()));
    }
    s
}

/// Targets whose lines record no target token at all (a scripted agent, or a log without
/// usage): the Tokens section says why in one line.
fn tokenless(r: &Report) -> BTreeSet<&str> {
    r.source
        .target_details
        .iter()
        .filter(|t| t.completion_tokens == 0 && t.prompt_tokens == 0)
        .map(|t| t.target.as_str())
        .collect()
}

/// Every row's errors, as `target / condition: error`; the token ratios of targets without
/// tokens are left to the Tokens section's line.
fn problems(r: &Report) -> Vec<String> {
    let tokenless = tokenless(r);
    let shown =
        |target: &str, e: &str| !(e.starts_with("token ratio:") && tokenless.contains(target));
    let mut v = Vec::new();
    for m in &r.main {
        v.extend(
            m.errors
                .iter()
                .filter(|e| shown(&m.target, e))
                .map(|e| format!("{} / {}: {e}", m.target, m.condition)),
        );
    }
    for c in &r.controls {
        v.extend(
            c.errors
                .iter()
                .filter(|e| shown(&c.target, e))
                .map(|e| format!("{} / {} ({}): {e}", c.target, c.condition, c.kind.label())),
        );
    }
    for p in r.curator_ablation.iter().chain(&r.blind_vs_reference) {
        v.extend(
            p.errors
                .iter()
                .map(|e| format!("{} / {} against {}: {e}", p.target, p.compared, p.base)),
        );
    }
    for f in &r.forks {
        v.extend(
            f.errors
                .iter()
                .map(|e| format!("{} / {} (forks): {e}", f.target, f.condition)),
        );
        for p in &f.points {
            v.extend(
                p.errors
                    .iter()
                    .map(|e| format!("{} / {} at {}: {e}", f.target, f.condition, p.point)),
            );
        }
    }
    for row in &r.rounds {
        v.extend(
            row.errors
                .iter()
                .map(|e| format!("{} / {}: {e}", row.target, row.condition)),
        );
    }
    v
}

/// The page of a report.
pub(crate) fn page(r: &Report) -> Page {
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
    }
}

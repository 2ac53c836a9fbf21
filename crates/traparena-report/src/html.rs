//! The report as one self-contained HTML page: inline CSS, a few lines of inline JavaScript that
//! sort a table when its header is clicked, and charts as inline SVG. No external assets.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use traparena_stats::{FAILURE_MODES, FailureModeShares};

use crate::format::{
    NONE, ci_pct, ci_pp, ci_ratio, pair_header, pct, pp, ratio, thousands, tokens, yes_no,
};
use crate::markdown::{problems, summary_sentence};
use crate::model::{Flip, PairRow, Report};

/// Escapes text for HTML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One table cell: text, or a number with the value it sorts by (`None` sorts last).
enum Td {
    Text(String),
    Num(String, Option<f64>),
    /// A number with an extra CSS class (e.g. `harm`).
    Marked(String, Option<f64>, &'static str),
    /// A number followed by secondary text (e.g. its interval), sorted by the number.
    WithNote(String, String, Option<f64>),
}

fn text(s: &str) -> Td {
    Td::Text(s.to_owned())
}

fn num(s: String, v: Option<f64>) -> Td {
    Td::Num(s, v.filter(|x| x.is_finite()))
}

fn count(n: usize) -> Td {
    Td::Num(n.to_string(), Some(n as f64))
}

/// `(header, numeric)` columns, rows of cells.
fn table(out: &mut String, id: &str, caption: &str, cols: &[(&str, bool)], rows: &[Vec<Td>]) {
    let _ = write!(
        out,
        "<div class=\"scroll\"><table class=\"sortable\" id=\"{}\">",
        esc(id)
    );
    if !caption.is_empty() {
        let _ = write!(out, "<caption>{}</caption>", esc(caption));
    }
    out.push_str("<thead><tr>");
    for (title, numeric) in cols {
        let _ = write!(
            out,
            "<th scope=\"col\"{} title=\"Click to sort\">{}</th>",
            if *numeric { " class=\"num\"" } else { "" },
            esc(title)
        );
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            match c {
                Td::Text(s) => {
                    let _ = write!(out, "<td>{}</td>", esc(s));
                }
                Td::WithNote(s, note, v) => {
                    let sort = v.map_or_else(String::new, |v| v.to_string());
                    let _ = write!(
                        out,
                        "<td class=\"num\" data-sort=\"{sort}\">{} <small>{}</small></td>",
                        esc(s),
                        esc(note)
                    );
                }
                Td::Num(s, v) | Td::Marked(s, v, _) => {
                    let class = match c {
                        Td::Marked(_, _, m) => format!("num {m}"),
                        _ => "num".to_owned(),
                    };
                    let sort = v.map_or_else(String::new, |v| v.to_string());
                    let _ = write!(
                        out,
                        "<td class=\"{class}\" data-sort=\"{sort}\">{}</td>",
                        esc(s)
                    );
                }
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>\n");
}

const STYLE: &str = r#"
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dee7; --bg:#ffffff; --head:#f3f5f9; --accent:#0b5cad; --harm:#b3261e; --good:#1e7b34; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color:var(--fg); background:#f7f8fb; }
header { background:#17213a; color:#fff; padding:20px 32px 18px; }
header h1 { margin:0 0 6px; font-size:22px; font-weight:600; }
header p { margin:0; color:#c9d2e3; max-width:1100px; }
nav { background:#fff; border-bottom:1px solid var(--line); padding:8px 32px; position:sticky; top:0; z-index:2; }
nav a { color:var(--accent); text-decoration:none; margin-right:16px; font-size:13px; }
nav a:hover { text-decoration:underline; }
main { padding:8px 32px 40px; max-width:1400px; }
section { background:var(--bg); border:1px solid var(--line); border-radius:8px; padding:16px 20px; margin:18px 0; }
h2 { font-size:18px; margin:0 0 6px; }
h3 { font-size:15px; margin:14px 0 6px; }
p.note { color:var(--muted); margin:0 0 10px; max-width:1100px; }
.cards { display:flex; flex-wrap:wrap; gap:12px; margin:16px 0 0; }
.card { background:rgba(255,255,255,0.08); border-radius:6px; padding:8px 14px; min-width:120px; }
.card b { display:block; font-size:20px; color:#fff; }
.card span { font-size:12px; color:#c9d2e3; }
.scroll { overflow-x:auto; }
table { border-collapse:collapse; margin:6px 0 10px; font-variant-numeric:tabular-nums; }
caption { text-align:left; color:var(--muted); padding:0 0 4px; }
th, td { padding:5px 9px; border-bottom:1px solid var(--line); text-align:left; white-space:nowrap; }
th { background:var(--head); font-weight:600; cursor:pointer; user-select:none; position:relative; padding-right:18px; white-space:normal; vertical-align:bottom; max-width:130px; }
th:hover { background:#e6eaf2; }
th::after { content:"\2195"; position:absolute; right:5px; bottom:6px; color:#a0a8b8; font-size:11px; }
th[aria-sort=ascending]::after { content:"\25B2"; color:var(--accent); }
th[aria-sort=descending]::after { content:"\25BC"; color:var(--accent); }
td.num, th.num { text-align:right; }
td small { color:var(--muted); font-size:11px; }
details > summary { cursor:pointer; color:var(--accent); margin:6px 0; }
tbody tr:nth-child(even) { background:#fafbfd; }
tbody tr:hover { background:#eef4ff; }
td.harm { color:var(--harm); font-weight:600; }
td.good { color:var(--good); font-weight:600; }
.charts { display:flex; flex-wrap:wrap; gap:18px; align-items:flex-start; }
figure { margin:8px 0; }
figcaption { color:var(--muted); font-size:12px; max-width:590px; }
svg { display:block; background:#fff; }
svg text { font:12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; fill:#1d2330; }
svg .axis { stroke:#8a93a5; stroke-width:1; }
svg .grid { stroke:#e4e8ef; stroke-width:1; }
svg .muted { fill:#5b6475; }
svg .group { font-weight:600; }
.legend { display:flex; flex-wrap:wrap; gap:6px 16px; font-size:12px; color:var(--muted); margin:4px 0; }
.legend i { display:inline-block; width:14px; height:4px; border-radius:2px; margin-right:5px; vertical-align:middle; }
ol.notes li { margin:2px 0; }
ul.problems li { color:var(--muted); }
"#;

const SCRIPT: &str = r#"
(function () {
  function key(row, i) {
    var c = row.cells[i];
    if (!c) return null;
    if (c.hasAttribute('data-sort')) {
      var s = c.getAttribute('data-sort');
      return s === '' ? null : parseFloat(s);
    }
    return c.textContent.trim();
  }
  function compare(a, b) {
    if (a === null && b === null) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }
  function sortBy(table, th, i) {
    var asc = th.getAttribute('aria-sort') !== 'ascending';
    table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (x, y) {
      var a = key(x, i), b = key(y, i);
      if (a === null || b === null) return compare(a, b);
      return asc ? compare(a, b) : compare(b, a);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, i) {
      th.tabIndex = 0;
      th.addEventListener('click', function () { sortBy(table, th, i); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(table, th, i); }
      });
    });
  });
})();
"#;

/// Okabe–Ito colours (without yellow), then a few more.
const PALETTE: [&str; 9] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#7f7f7f",
    "#8c564b",
];

/// A "nice" axis: rounded ends and ticks covering `[lo, hi]`.
fn axis(lo: f64, hi: f64, ticks: usize) -> (f64, f64, Vec<f64>) {
    let (mut lo, mut hi) = (lo.min(hi), lo.max(hi));
    if !(hi - lo).is_finite() || hi - lo < 1e-9 {
        lo -= 1.0;
        hi += 1.0;
    }
    let raw = (hi - lo) / ticks.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let step = mag
        * if norm < 1.5 {
            1.0
        } else if norm < 3.0 {
            2.0
        } else if norm < 7.0 {
            5.0
        } else {
            10.0
        };
    let a = (lo / step).floor() * step;
    let b = (hi / step).ceil() * step;
    let n = ((b - a) / step).round() as usize;
    let v = (0..=n).map(|k| a + k as f64 * step).collect();
    (a, b, v)
}

fn tick_label(v: f64) -> String {
    let s = if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    };
    if s == "-0" { "0".to_owned() } else { s }
}

/// One row of a horizontal interval chart.
struct IntervalRow {
    group: String,
    label: String,
    value: f64,
    low: Option<f64>,
    high: Option<f64>,
    colour: &'static str,
    tip: String,
}

/// A horizontal chart: per row a dot (`bars == false`) or a bar from 0 (`bars == true`) with
/// the interval as whiskers, a reference line at `reference`, rows grouped under their group's
/// name.
fn interval_chart(
    rows: &[IntervalRow],
    reference: f64,
    reference_label: &str,
    x_title: &str,
    bars: bool,
    lower_bound: Option<f64>,
) -> String {
    let (label_w, plot_w, row_h, top, bottom) = (170.0, 400.0, 22.0, 12.0, 46.0);
    let mut lo = lower_bound.unwrap_or(reference).min(reference);
    let mut hi = reference;
    for r in rows {
        for v in [Some(r.value), r.low, r.high].into_iter().flatten() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    let pad = (hi - lo).abs() * 0.04;
    let (a, b, ticks) = axis(
        if lower_bound.is_some() { lo } else { lo - pad },
        hi + pad,
        6,
    );
    let x = |v: f64| label_w + (v - a) / (b - a) * plot_w;
    let mut lines = 0usize;
    let mut prev_group: Option<&str> = None;
    for r in rows {
        if prev_group != Some(r.group.as_str()) {
            lines += 1;
            prev_group = Some(&r.group);
        }
        lines += 1;
    }
    let height = top + lines as f64 * row_h + bottom;
    let width = label_w + plot_w + 24.0;
    let mut s = format!(
        "<svg role=\"img\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
    );
    let plot_bottom = top + lines as f64 * row_h;
    for t in &ticks {
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{plot_bottom}\"/>\
             <text x=\"{0:.1}\" y=\"{1:.1}\" text-anchor=\"middle\" class=\"muted\">{2}</text>",
            x(*t),
            plot_bottom + 16.0,
            tick_label(*t)
        );
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{label_w}\" x2=\"{0:.1}\" y1=\"{plot_bottom}\" y2=\"{plot_bottom}\"/>\
         <text x=\"{1:.1}\" y=\"{2:.1}\" text-anchor=\"middle\">{3}</text>",
        label_w + plot_w,
        label_w + plot_w / 2.0,
        plot_bottom + 36.0,
        esc(x_title)
    );
    let rx = x(reference);
    let _ = write!(
        s,
        "<line x1=\"{rx:.1}\" x2=\"{rx:.1}\" y1=\"{top}\" y2=\"{plot_bottom}\" stroke=\"#444\" \
         stroke-dasharray=\"4 3\" stroke-width=\"1.2\"/><text x=\"{0:.1}\" y=\"{1:.1}\" \
         class=\"muted\">{2}</text>",
        rx + 4.0,
        top + 10.0,
        esc(reference_label)
    );
    let mut y = top;
    let mut prev_group: Option<&str> = None;
    for r in rows {
        if prev_group != Some(r.group.as_str()) {
            let _ = write!(
                s,
                "<text class=\"group\" x=\"8\" y=\"{:.1}\">{}</text>",
                y + row_h * 0.7,
                esc(&r.group)
            );
            y += row_h;
            prev_group = Some(&r.group);
        }
        let cy = y + row_h / 2.0;
        let _ = write!(
            s,
            "<g><title>{}</title><text x=\"20\" y=\"{:.1}\">{}</text>",
            esc(&r.tip),
            cy + 4.0,
            esc(&r.label)
        );
        if bars {
            let (x0, x1) = (x(0.0_f64.max(a)), x(r.value));
            let _ = write!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\" \
                 fill-opacity=\"0.75\" rx=\"2\"/>",
                x0.min(x1),
                cy - 6.0,
                (x1 - x0).abs(),
                12.0,
                r.colour
            );
        }
        if let (Some(l), Some(h)) = (r.low, r.high) {
            let (xl, xh) = (x(l), x(h));
            let _ = write!(
                s,
                "<line x1=\"{xl:.1}\" x2=\"{xh:.1}\" y1=\"{cy:.1}\" y2=\"{cy:.1}\" stroke=\"#222\" \
                 stroke-width=\"1.5\"/><line x1=\"{xl:.1}\" x2=\"{xl:.1}\" y1=\"{0:.1}\" \
                 y2=\"{1:.1}\" stroke=\"#222\" stroke-width=\"1.5\"/><line x1=\"{xh:.1}\" \
                 x2=\"{xh:.1}\" y1=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"#222\" stroke-width=\"1.5\"/>",
                cy - 5.0,
                cy + 5.0
            );
        }
        if !bars {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"4.5\" fill=\"{}\" stroke=\"#fff\" \
                 stroke-width=\"1\"/>",
                x(r.value),
                r.colour
            );
        }
        s.push_str("</g>");
        y += row_h;
    }
    s.push_str("</svg>");
    s
}

fn delta_chart(r: &Report) -> String {
    let rows: Vec<IntervalRow> = r
        .main
        .iter()
        .filter_map(|m| {
            let d = m.delta_pp?;
            let colour = if m.significant == Some(true) {
                "#b3261e"
            } else if m.excludes_zero == Some(true) {
                "#1e7b34"
            } else {
                "#5b6475"
            };
            Some(IntervalRow {
                group: m.target.clone(),
                label: m.condition.clone(),
                value: d,
                low: m.ci_low_pp,
                high: m.ci_high_pp,
                colour,
                tip: format!(
                    "{} / {}: Δ {} pp, 95% CI {}, {} tasks",
                    m.target,
                    m.condition,
                    pp(Some(d)),
                    ci_pp(m.ci_low_pp, m.ci_high_pp),
                    m.tasks
                ),
            })
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<figure>{}<figcaption>Δ acceptance against the baseline per target and condition, with \
         its {} interval. Red: significant harm (the whole interval below 0); green: the \
         interval is wholly above 0.</figcaption></figure>",
        interval_chart(
            &rows,
            0.0,
            "0",
            "Δ acceptance (percentage points)",
            false,
            None
        ),
        "95%"
    )
}

fn token_chart(r: &Report) -> String {
    let rows: Vec<IntervalRow> = r
        .tokens
        .iter()
        .filter_map(|t| {
            let v = t.ratio?;
            Some(IntervalRow {
                group: t.target.clone(),
                label: t.condition.clone(),
                value: v,
                low: t.ci_low,
                high: t.ci_high,
                colour: if v >= 1.0 { "#0072B2" } else { "#56B4E9" },
                tip: format!(
                    "{} / {}: {} (95% CI {}), {} against {} tokens per episode",
                    t.target,
                    t.condition,
                    ratio(Some(v)),
                    ci_ratio(t.ci_low, t.ci_high),
                    tokens(t.attacked_tokens),
                    tokens(t.base_tokens)
                ),
            })
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<figure>{}<figcaption>Target completion tokens per episode under attack relative to \
         the baseline (×), with 95% intervals; the dashed line is 1× (no change).</figcaption>\
         </figure>",
        interval_chart(
            &rows,
            1.0,
            "1×",
            "tokens under attack ÷ baseline tokens",
            true,
            Some(0.0)
        )
    )
}

/// Small multiples: susceptibility by round, one chart per target, a line per condition.
fn round_charts(r: &Report) -> String {
    let conditions: Vec<&str> = {
        let set: BTreeSet<&str> = r.rounds.iter().map(|x| x.condition.as_str()).collect();
        set.into_iter().collect()
    };
    let colour = |c: &str| {
        let i = conditions.iter().position(|x| *x == c).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };
    let mut by_target: BTreeMap<&str, Vec<&crate::model::RoundRow>> = BTreeMap::new();
    for row in &r.rounds {
        if row.rounds.iter().any(|m| m.susceptibility_pct.is_some()) {
            by_target.entry(row.target.as_str()).or_default().push(row);
        }
    }
    if by_target.is_empty() {
        return String::new();
    }
    let all_rounds: Vec<u32> = r
        .rounds
        .iter()
        .flat_map(|x| x.rounds.iter().map(|m| m.round))
        .collect();
    let (r0, r1) = (
        all_rounds.iter().copied().min().unwrap_or(0),
        all_rounds.iter().copied().max().unwrap_or(0),
    );
    let (w, h, left, right, top, bottom) = (380.0, 230.0, 46.0, 12.0, 26.0, 40.0);
    let pw = w - left - right;
    let ph = h - top - bottom;
    let span = f64::from((r1 - r0).max(1));
    let x = |round: u32| left + f64::from(round - r0) / span * pw;
    let y = |pct: f64| top + (1.0 - pct / 100.0) * ph;
    let mut out = String::from("<div class=\"legend\">");
    for c in &conditions {
        let _ = write!(
            out,
            "<span><i style=\"background:{}\"></i>{}</span>",
            colour(c),
            esc(c)
        );
    }
    out.push_str("</div><div class=\"charts\">");
    for (target, rows) in by_target {
        let _ = write!(
            out,
            "<figure><svg role=\"img\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\
             <text x=\"{left}\" y=\"16\" class=\"group\">{}</text>",
            esc(target)
        );
        for t in [0.0, 25.0, 50.0, 75.0, 100.0] {
            let _ = write!(
                out,
                "<line class=\"grid\" x1=\"{left}\" x2=\"{:.1}\" y1=\"{1:.1}\" y2=\"{1:.1}\"/>\
                 <text x=\"{2:.1}\" y=\"{3:.1}\" text-anchor=\"end\" class=\"muted\">{4}</text>",
                left + pw,
                y(t),
                left - 6.0,
                y(t) + 4.0,
                tick_label(t)
            );
        }
        let step = ((r1 - r0) / 10).max(1);
        let mut round = r0;
        while round <= r1 {
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"muted\">{round}</text>",
                x(round),
                top + ph + 15.0
            );
            round += step;
        }
        let _ = write!(
            out,
            "<line class=\"axis\" x1=\"{left}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{1:.1}\"/>\
             <line class=\"axis\" x1=\"{left}\" x2=\"{left}\" y1=\"{top}\" y2=\"{1:.1}\"/>\
             <text x=\"{2:.1}\" y=\"{3:.1}\" text-anchor=\"middle\">round</text>\
             <text transform=\"translate(12 {4:.1}) rotate(-90)\" text-anchor=\"middle\">susceptibility %</text>",
            left + pw,
            top + ph,
            left + pw / 2.0,
            h - 6.0,
            top + ph / 2.0
        );
        for row in rows {
            let c = colour(&row.condition);
            let pts: Vec<(u32, f64)> = row
                .rounds
                .iter()
                .filter_map(|m| m.susceptibility_pct.map(|p| (m.round, p)))
                .collect();
            let path: Vec<String> = pts
                .iter()
                .map(|(r, p)| format!("{:.1},{:.1}", x(*r), y(*p)))
                .collect();
            let _ = write!(
                out,
                "<g><title>{} / {}</title><polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" \
                 stroke-width=\"2\"/>",
                esc(target),
                esc(&row.condition),
                path.join(" ")
            );
            for (r, p) in &pts {
                let _ = write!(
                    out,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.8\" fill=\"{c}\"><title>{} / {}, \
                     round {r}: {p:.1} %</title></circle>",
                    x(*r),
                    y(*p),
                    esc(target),
                    esc(&row.condition)
                );
            }
            out.push_str("</g>");
        }
        out.push_str("</svg></figure>");
    }
    out.push_str(
        "</div><p class=\"note\">Susceptibility per round (mean over tasks of the share of \
         usable episodes in which the target followed a delivered claim).</p>",
    );
    out
}

fn pair_section(out: &mut String, id: &str, title: &str, rows: &[PairRow], names: [&str; 2]) {
    let [b, c] = names;
    let _ = write!(out, "<section id=\"{id}\"><h2>{}</h2>", esc(title));
    if rows.is_empty() {
        let _ = write!(
            out,
            "<p class=\"note\">No pair of conditions of one target that differ only in {}.</p>\
             </section>",
            if id == "ablation" {
                "the curator"
            } else {
                "the attacker's access"
            }
        );
        return;
    }
    let _ = write!(
        out,
        "<p class=\"note\">Conditions of one target that differ only in {}; Δ against the \
         baseline from the main table, and {c} − {b} paired over the tasks both conditions \
         have.</p>",
        if id == "ablation" {
            "the curator"
        } else {
            "the attacker's access to the reference repair"
        }
    );
    let mut header = pair_header(b, c);
    header.push("excludes 0".to_owned());
    let numeric = [false, false, false, true, true, true, true, true, false];
    let cols: Vec<(&str, bool)> = header.iter().map(String::as_str).zip(numeric).collect();
    let data: Vec<Vec<Td>> = rows
        .iter()
        .map(|r| {
            vec![
                text(&r.target),
                text(&r.base),
                text(&r.compared),
                count(r.tasks),
                num(pp(r.base_delta_pp), r.base_delta_pp),
                num(pp(r.compared_delta_pp), r.compared_delta_pp),
                num(pp(r.difference_pp), r.difference_pp),
                num(ci_pp(r.ci_low_pp, r.ci_high_pp), r.ci_low_pp),
                text(yes_no(r.excludes_zero)),
            ]
        })
        .collect();
    table(out, &format!("{id}-table"), "", &cols, &data);
    out.push_str("</section>\n");
}

fn failure_rows(f: &FailureModeShares) -> Vec<Td> {
    let mut v = vec![
        text(f.target.as_deref().unwrap_or("all targets")),
        text(&f.condition),
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
        .map(|s| format!("{}: {}", s.mode, s.count))
        .collect();
    v.push(Td::Text(if other.is_empty() {
        NONE.to_owned()
    } else {
        other.join(", ")
    }));
    v
}

/// Renders the report as one self-contained HTML page.
pub fn to_html(r: &Report) -> String {
    let mut out = String::with_capacity(64 * 1024 + r.tasks.len() * 200);
    let title = format!("TrapArena report: {}", r.source.folder);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(&title)
    );
    let significant = r
        .main
        .iter()
        .filter(|m| m.significant == Some(true))
        .count();
    let _ = write!(
        out,
        "<header><h1>{}</h1><p>{}</p><div class=\"cards\">",
        esc(&title),
        esc(&summary_sentence(r))
    );
    for (value, label) in [
        (thousands(r.source.lines as u64), "episode lines"),
        (
            thousands(r.source.infra_errors as u64),
            "infrastructure errors (excluded)",
        ),
        (r.source.targets.len().to_string(), "targets"),
        (r.main.len().to_string(), "target × attacked condition"),
        (
            format!("{significant} / {}", r.main.len()),
            "with significant harm",
        ),
        (r.bootstrap.seed.to_string(), "bootstrap seed"),
    ] {
        let _ = write!(
            out,
            "<div class=\"card\"><b>{}</b><span>{}</span></div>",
            esc(&value),
            esc(label)
        );
    }
    out.push_str("</div></header>\n<nav>");
    for (id, name) in [
        ("main", "Main results"),
        ("ablation", "Curator ablation"),
        ("access", "Blind vs reference"),
        ("rounds", "By round"),
        ("failures", "Failure modes"),
        ("tokens", "Tokens"),
        ("tasks", "Per task"),
        ("notes", "Curator notes"),
        ("episodes", "Episodes"),
    ] {
        let _ = write!(out, "<a href=\"#{id}\">{name}</a>");
    }
    out.push_str("</nav>\n<main>\n");

    // Main results.
    out.push_str(
        "<section id=\"main\"><h2>Main results</h2><p class=\"note\">Δ = acceptance under \
         attack − baseline acceptance over the tasks both have, in percentage points; \
         significant = the whole interval below zero. Paired change: shared tasks whose \
         acceptance went down / stayed / went up. Susceptibility: share of episodes in which the \
         target followed a delivered claim (mean over tasks). Tokens ×: target completion \
         tokens per episode relative to the baseline. Click a column header to sort.</p>",
    );
    let cols = [
        ("target", false),
        ("condition", false),
        ("tasks", true),
        ("base %", true),
        ("attacked %", true),
        ("Δ pp", true),
        ("95% CI", true),
        ("significant", false),
        ("paired change ↓\u{2060}/\u{2060}=\u{2060}/\u{2060}↑", true),
        ("susceptibility % [95% CI]", true),
        ("tokens ×", true),
    ];
    let rows: Vec<Vec<Td>> = r
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
                Td::Marked(pp(m.delta_pp), m.delta_pp.filter(|v| v.is_finite()), mark),
                num(ci_pp(m.ci_low_pp, m.ci_high_pp), m.ci_low_pp),
                if m.significant == Some(true) {
                    Td::Marked("yes".into(), Some(1.0), "harm")
                } else {
                    Td::Num(yes_no(m.significant).to_owned(), m.significant.map(|_| 0.0))
                },
                num(
                    format!("{} / {} / {}", c.down, c.unchanged, c.up),
                    Some(c.down as f64),
                ),
                Td::WithNote(
                    pct(m.susceptibility),
                    if m.susceptibility.is_some() {
                        ci_pct(m.susceptibility_ci_low, m.susceptibility_ci_high)
                    } else {
                        String::new()
                    },
                    m.susceptibility.filter(|v| v.is_finite()),
                ),
                num(ratio(m.token_ratio), m.token_ratio),
            ]
        })
        .collect();
    table(&mut out, "main-table", "", &cols, &rows);
    let _ = writeln!(
        out,
        "<div class=\"charts\">{}{}</div></section>",
        delta_chart(r),
        token_chart(r)
    );

    pair_section(
        &mut out,
        "ablation",
        "Curator ablation",
        &r.curator_ablation,
        ["without", "with"],
    );
    pair_section(
        &mut out,
        "access",
        "Blind against reference",
        &r.blind_vs_reference,
        ["blind", "reference"],
    );

    // Rounds.
    out.push_str("<section id=\"rounds\"><h2>Susceptibility by round</h2>");
    out.push_str(&round_charts(r));
    let rounds: BTreeSet<u32> = r
        .rounds
        .iter()
        .flat_map(|row| row.rounds.iter().map(|m| m.round))
        .collect();
    let mut header: Vec<String> = vec!["target".into(), "condition".into()];
    header.extend(rounds.iter().map(|r| format!("r{r}")));
    header.push("last − first (pp)".into());
    header.push("95% CI".into());
    let cols: Vec<(&str, bool)> = header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i >= 2))
        .collect();
    let rows: Vec<Vec<Td>> = r
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
            let t = row.trend.as_ref();
            v.push(num(pp(t.map(|t| t.change_pp)), t.map(|t| t.change_pp)));
            v.push(num(
                ci_pp(t.map(|t| t.ci_low_pp), t.map(|t| t.ci_high_pp)),
                t.map(|t| t.ci_low_pp),
            ));
            v
        })
        .collect();
    table(
        &mut out,
        "rounds-table",
        "Susceptibility % per round; the last three rounds against the first three, paired over tasks.",
        &cols,
        &rows,
    );
    out.push_str("</section>\n");

    // Failure modes.
    out.push_str(
        "<section id=\"failures\"><h2>Failure modes</h2><p class=\"note\">Share of the \
         rejected usable episodes in percent (count), pooled over tasks, per target and for all \
         targets together.</p>",
    );
    let mut cols = vec![
        ("target", false),
        ("condition", false),
        ("episodes", true),
        ("rejected", true),
    ];
    cols.extend(FAILURE_MODES.iter().map(|m| (*m, true)));
    cols.push(("other", false));
    let rows: Vec<Vec<Td>> = r.failure_modes.iter().map(failure_rows).collect();
    table(&mut out, "failures-table", "", &cols, &rows);
    out.push_str("</section>\n");

    // Tokens.
    out.push_str(
        "<section id=\"tokens\"><h2>Tokens</h2><p class=\"note\">Target completion tokens per \
         episode (mean over the tasks shared with the baseline) and their ratio; the attacker's \
         prompt + completion tokens per episode are reported separately.</p>",
    );
    let cols = [
        ("target", false),
        ("condition", false),
        ("tasks", true),
        ("baseline tokens", true),
        ("attacked tokens", true),
        ("ratio", true),
        ("95% CI", true),
        ("attacker tokens / episode", true),
    ];
    let rows: Vec<Vec<Td>> = r
        .tokens
        .iter()
        .map(|t| {
            vec![
                text(&t.target),
                text(&t.condition),
                count(t.tasks),
                num(tokens(t.base_tokens), t.base_tokens),
                num(tokens(t.attacked_tokens), t.attacked_tokens),
                num(ratio(t.ratio), t.ratio),
                num(ci_ratio(t.ci_low, t.ci_high), t.ci_low),
                num(
                    tokens(t.attacker_tokens_per_episode),
                    t.attacker_tokens_per_episode,
                ),
            ]
        })
        .collect();
    table(&mut out, "tokens-table", "", &cols, &rows);
    out.push_str("</section>\n");

    // Per task.
    let flipped = r.tasks.iter().filter(|t| t.flip.is_some()).count();
    let _ = write!(
        out,
        "<section id=\"tasks\"><h2>Per task</h2><p class=\"note\">Acceptance of every task \
         shared by the baseline and an attacked condition. Flip: the majority outcome changed \
         (broke: accepted in at least half of the baseline episodes and in under half of the \
         attacked ones; fixed: the reverse). {flipped} of {} rows flipped; sort by change or \
         flip to find them.</p>",
        r.tasks.len()
    );
    let cols = [
        ("target", false),
        ("condition", false),
        ("task", false),
        ("base %", true),
        ("attacked %", true),
        ("change pp", true),
        ("baseline episodes", true),
        ("attacked episodes", true),
        ("flip", false),
    ];
    let rows: Vec<Vec<Td>> = r
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
                text(match t.flip {
                    Some(Flip::Broke) => "broke",
                    Some(Flip::Fixed) => "fixed",
                    None => "",
                }),
            ]
        })
        .collect();
    let fold = rows.len() > 40;
    if fold {
        let _ = write!(
            out,
            "<details><summary>Show all {} rows</summary>",
            rows.len()
        );
    }
    table(&mut out, "tasks-table", "", &cols, &rows);
    if fold {
        out.push_str("</details>");
    }
    out.push_str("</section>\n");

    // Notes.
    out.push_str("<section id=\"notes\"><h2>Curator notes</h2>");
    if r.notes.is_empty() {
        out.push_str("<p class=\"note\">No curator notes in this results folder.</p>");
    } else {
        out.push_str(
            "<p class=\"note\">The curator's notes after the last round (given to the attacker \
             only, never to the target).</p>",
        );
        for n in &r.notes {
            let _ = write!(
                out,
                "<h3>{} / {} <small>(round {})</small></h3>",
                esc(&n.target),
                esc(&n.condition),
                n.round
            );
            if let Some(u) = &n.usage {
                let _ = write!(
                    out,
                    "<p class=\"note\">Curator tokens over all rounds: {} prompt, {} completion.</p>",
                    u.prompt_tokens, u.completion_tokens
                );
            }
            out.push_str("<ol class=\"notes\">");
            for item in &n.items {
                let _ = write!(out, "<li>{}</li>", esc(item));
            }
            out.push_str("</ol>");
        }
    }
    out.push_str("</section>\n");

    // Episodes per condition.
    out.push_str(
        "<section id=\"episodes\"><h2>Episodes per condition</h2><p class=\"note\">Lines with \
         an infrastructure error and attacked episodes without a delivered message are left out \
         of every figure and counted here.</p>",
    );
    let cols = [
        ("target", false),
        ("condition", false),
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
    let rows: Vec<Vec<Td>> = r
        .source
        .conditions
        .iter()
        .map(|c| {
            vec![
                text(&c.target),
                text(&c.condition),
                text(&c.attacker),
                text(c.access.as_deref().unwrap_or(NONE)),
                text(yes_no(Some(c.curator))),
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
    table(&mut out, "episodes-table", "", &cols, &rows);
    let problems = problems(r);
    if !problems.is_empty() {
        out.push_str("<h3>Figures not computed</h3><ul class=\"problems\">");
        for p in problems {
            let _ = write!(out, "<li>{}</li>", esc(&p));
        }
        out.push_str("</ul>");
    }
    if !r.warnings.is_empty() {
        out.push_str("<h3>Warnings</h3><ul class=\"problems\">");
        for w in &r.warnings {
            let _ = write!(out, "<li>{}</li>", esc(w));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>\n</main>\n");
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn axes_are_nice() {
        let (a, b, t) = axis(-23.0, 4.0, 6);
        assert_eq!((a, b), (-25.0, 5.0));
        assert_eq!(t.len(), 7);
        let (a, b, _) = axis(0.0, 0.0, 6);
        assert!(a < 0.0 && b > 0.0);
        let (a, b, _) = axis(0.0, 1.37, 6);
        assert_eq!(a, 0.0);
        assert!((1.37..=1.6).contains(&b));
    }
}

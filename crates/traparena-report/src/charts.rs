//! The charts' geometry: every coordinate of the page's SVG charts, computed here and written
//! out by the HTML template (`templates/chart.html`).

use std::collections::{BTreeMap, BTreeSet};

use traparena_stats::Estimate;

use crate::format::{ci_pct, ci_pp, ci_ratio, pp, ratio, tokens};
use crate::model::Report;

/// Okabe–Ito colours (without yellow), then a few more.
const PALETTE: [&str; 9] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#7f7f7f",
    "#8c564b",
];

/// Dash patterns of the lines, one per condition (with the colour and the marker, three ways
/// to tell lines apart).
const DASHES: [&str; 6] = ["", "7 3", "2 2", "9 3 2 3", "4 4", "1 3"];

/// Marker shapes, one per condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
}

const SHAPES: [Shape; 6] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Cross,
];

/// An SVG path of a marker centred on `(x, y)` with "radius" `r`.
fn marker_path(shape: Shape, x: f64, y: f64, r: f64) -> String {
    match shape {
        Shape::Circle => format!(
            "M{:.1},{y:.1}a{r:.1},{r:.1} 0 1,0 {:.1},0a{r:.1},{r:.1} 0 1,0 -{:.1},0Z",
            x - r,
            2.0 * r,
            2.0 * r
        ),
        Shape::Square => {
            let h = r * 0.9;
            format!(
                "M{:.1},{:.1}h{:.1}v{:.1}h-{:.1}Z",
                x - h,
                y - h,
                2.0 * h,
                2.0 * h,
                2.0 * h
            )
        }
        Shape::TriangleUp => format!(
            "M{x:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}Z",
            y - r * 1.15,
            x + r,
            y + r * 0.75,
            x - r,
            y + r * 0.75
        ),
        Shape::TriangleDown => format!(
            "M{x:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}Z",
            y + r * 1.15,
            x + r,
            y - r * 0.75,
            x - r,
            y - r * 0.75
        ),
        Shape::Diamond => format!(
            "M{x:.1},{:.1}L{:.1},{y:.1}L{x:.1},{:.1}L{:.1},{y:.1}Z",
            y - r * 1.2,
            x + r * 1.2,
            y + r * 1.2,
            x - r * 1.2
        ),
        Shape::Cross => {
            let a = r * 1.1;
            format!(
                "M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}",
                x - a,
                y - a,
                x + a,
                y + a,
                x - a,
                y + a,
                x + a,
                y - a
            )
        }
    }
}

/// A chart of the page.
#[derive(Debug)]
pub(crate) enum Chart {
    /// Rows of dots or bars with intervals.
    Interval(IntervalChart),
    /// Lines over rounds, one per condition.
    Lines(LinesChart),
    /// The legend of the line charts that follow it.
    Legend(Vec<LegendItem>),
}

/// A vertical grid line with its tick label.
#[derive(Debug)]
pub(crate) struct Tick {
    pub pos: String,
    pub label_pos: String,
    pub label: String,
}

/// A horizontal chart: per row a dot or a bar from 0, the interval as whiskers, a dashed
/// reference line, rows grouped by target.
#[derive(Debug)]
pub(crate) struct IntervalChart {
    pub width: String,
    pub height: String,
    pub label: String,
    pub ticks: Vec<Tick>,
    pub top: String,
    pub plot_left: String,
    pub plot_right: String,
    pub plot_bottom: String,
    pub axis_title_x: String,
    pub axis_title_y: String,
    pub axis_title: String,
    pub reference_x: String,
    pub reference_label_x: String,
    pub reference_label_y: String,
    pub reference_label: String,
    pub rows: Vec<IntervalRowView>,
    pub caption: String,
}

/// One row of an interval chart.
#[derive(Debug)]
pub(crate) struct IntervalRowView {
    /// The target's name above its first row, with its baseline.
    pub group: Option<(String, String)>,
    pub label: String,
    pub label_y: String,
    pub tip: String,
    /// `x, y, width, height` of the bar.
    pub bar: Option<[String; 4]>,
    /// `low x, high x, y, tick top, tick bottom` of the whiskers.
    pub whisker: [String; 5],
    /// `x, y` of the dot.
    pub dot: Option<[String; 2]>,
    pub colour: &'static str,
}

/// A "nice" axis: rounded ends and ticks covering `[lo, hi]`.
pub(crate) fn axis(lo: f64, hi: f64, ticks: usize) -> (f64, f64, Vec<f64>) {
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

fn f1(v: f64) -> String {
    format!("{v:.1}")
}

/// One row of data of an interval chart.
struct IntervalRow {
    group: String,
    label: String,
    /// The value (the dot or the bar) and its interval (the whiskers).
    value: Estimate,
    colour: &'static str,
    tip: String,
}

struct IntervalSpec<'a> {
    label: &'a str,
    reference: f64,
    reference_label: &'a str,
    x_title: &'a str,
    bars: bool,
    lower_bound: Option<f64>,
    caption: String,
}

fn interval_chart(rows: &[IntervalRow], spec: IntervalSpec<'_>) -> IntervalChart {
    let (label_w, plot_w, row_h, top, bottom) = (170.0, 400.0, 22.0, 12.0, 46.0);
    let reference = spec.reference;
    let mut lo = spec.lower_bound.unwrap_or(reference).min(reference);
    let mut hi = reference;
    for r in rows {
        for v in [r.value.point, r.value.low, r.value.high] {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    let pad = (hi - lo).abs() * 0.04;
    let (a, b, ticks) = axis(
        if spec.lower_bound.is_some() {
            lo
        } else {
            lo - pad
        },
        hi + pad,
        6,
    );
    let x = |v: f64| label_w + (v - a) / (b - a) * plot_w;
    let groups = rows
        .iter()
        .map(|r| r.group.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    let lines = rows.len() + groups;
    let plot_bottom = top + lines as f64 * row_h;
    let height = plot_bottom + bottom;
    let width = label_w + plot_w + 24.0;
    let mut out = Vec::with_capacity(rows.len());
    let mut y = top;
    let mut prev_group: Option<&str> = None;
    for r in rows {
        let mut group = None;
        if prev_group != Some(r.group.as_str()) {
            group = Some((r.group.clone(), f1(y + row_h * 0.7)));
            y += row_h;
            prev_group = Some(&r.group);
        }
        let cy = y + row_h / 2.0;
        let bar = spec.bars.then(|| {
            let (x0, x1) = (x(0.0_f64.max(a)), x(r.value.point));
            [f1(x0.min(x1)), f1(cy - 6.0), f1((x1 - x0).abs()), f1(12.0)]
        });
        let (low, high) = (f1(x(r.value.low)), f1(x(r.value.high)));
        let whisker = [low, high, f1(cy), f1(cy - 5.0), f1(cy + 5.0)];
        let dot = (!spec.bars).then(|| [f1(x(r.value.point)), f1(cy)]);
        out.push(IntervalRowView {
            group,
            label: r.label.clone(),
            label_y: f1(cy + 4.0),
            tip: r.tip.clone(),
            bar,
            whisker,
            dot,
            colour: r.colour,
        });
        y += row_h;
    }
    IntervalChart {
        width: f1(width),
        height: f1(height),
        label: spec.label.to_owned(),
        ticks: ticks
            .iter()
            .map(|t| Tick {
                pos: f1(x(*t)),
                label_pos: f1(plot_bottom + 16.0),
                label: tick_label(*t),
            })
            .collect(),
        top: f1(top),
        plot_left: f1(label_w),
        plot_right: f1(label_w + plot_w),
        plot_bottom: f1(plot_bottom),
        axis_title_x: f1(label_w + plot_w / 2.0),
        axis_title_y: f1(plot_bottom + 36.0),
        axis_title: spec.x_title.to_owned(),
        reference_x: f1(x(reference)),
        reference_label_x: f1(x(reference) + 4.0),
        reference_label_y: f1(top + 10.0),
        reference_label: spec.reference_label.to_owned(),
        rows: out,
        caption: spec.caption,
    }
}

/// Δ of every attack, red when the harm is significant.
pub(crate) fn delta_chart(r: &Report) -> Option<Chart> {
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
                colour,
                tip: format!(
                    "{} / {}: Δ {} pp, CI {}, {} tasks",
                    m.target,
                    m.condition,
                    pp(Some(d.point)),
                    ci_pp(Some(d)),
                    m.tasks
                ),
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Chart::Interval(interval_chart(
        &rows,
        IntervalSpec {
            label: "Δ acceptance under each attack",
            reference: 0.0,
            reference_label: "0",
            x_title: "Δ acceptance (percentage points)",
            bars: false,
            lower_bound: None,
            caption: "Δ acceptance against the baseline per target and attack, with its \
                      interval. Red: significant harm (the whole interval below 0); green: the \
                      interval is wholly above 0."
                .to_owned(),
        },
    )))
}

/// Δ of every control, in one neutral colour: a comparison, not harm.
pub(crate) fn control_chart(r: &Report) -> Option<Chart> {
    let rows: Vec<IntervalRow> = r
        .controls
        .iter()
        .filter_map(|c| {
            let d = c.delta_pp?;
            Some(IntervalRow {
                group: c.target.clone(),
                label: c.condition.clone(),
                value: d,
                colour: "#0072B2",
                tip: format!(
                    "{} / {} ({}): Δ {} pp, CI {}, {} tasks",
                    c.target,
                    c.condition,
                    c.kind.label(),
                    pp(Some(d.point)),
                    ci_pp(Some(d)),
                    c.tasks
                ),
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Chart::Interval(interval_chart(
        &rows,
        IntervalSpec {
            label: "Δ acceptance under each control",
            reference: 0.0,
            reference_label: "0",
            x_title: "Δ acceptance (percentage points)",
            bars: false,
            lower_bound: None,
            caption: "Δ acceptance against the baseline per target and control, with its \
                      interval: what following (truthful or no) advice does. One colour: a \
                      control's Δ is a comparison, not harm."
                .to_owned(),
        },
    )))
}

/// Target token ratio of every attack.
pub(crate) fn token_chart(r: &Report) -> Option<Chart> {
    let rows: Vec<IntervalRow> = r
        .tokens
        .iter()
        .filter_map(|t| {
            let v = t.ratio?;
            Some(IntervalRow {
                group: t.target.clone(),
                label: t.condition.clone(),
                value: v,
                colour: if v.point >= 1.0 { "#0072B2" } else { "#56B4E9" },
                tip: format!(
                    "{} / {}: {} (CI {}), {} against {} tokens per episode",
                    t.target,
                    t.condition,
                    ratio(Some(v.point)),
                    ci_ratio(Some(v)),
                    tokens(t.attacked_tokens),
                    tokens(t.base_tokens)
                ),
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Chart::Interval(interval_chart(
        &rows,
        IntervalSpec {
            label: "Target tokens under each attack relative to the baseline",
            reference: 1.0,
            reference_label: "1×",
            x_title: "tokens under attack ÷ baseline tokens",
            bars: true,
            lower_bound: Some(0.0),
            caption: "Target completion tokens per episode under attack relative to the \
                      baseline (×), with intervals; the dashed line is 1× (no change)."
                .to_owned(),
        },
    )))
}

/// Where in a trajectory advice hurts most: the fork effect at each fork point of every target
/// and forked condition (in trajectory order), with its interval; red when the harm is
/// significant, green when the interval is wholly above 0, blue for a control.
pub(crate) fn fork_chart(r: &Report) -> Option<Chart> {
    let rows: Vec<IntervalRow> = r
        .forks
        .iter()
        .flat_map(|f| {
            f.points.iter().filter_map(move |p| {
                let d = p.effect_pp?;
                let colour = if f.kind.is_control() {
                    "#0072B2"
                } else if p.significant == Some(true) {
                    "#b3261e"
                } else if p.excludes_zero == Some(true) {
                    "#1e7b34"
                } else {
                    "#5b6475"
                };
                Some(IntervalRow {
                    group: format!("{} / {}", f.target, f.condition),
                    label: p.point.clone(),
                    value: d,
                    colour,
                    tip: format!(
                        "{} / {} at {} (mean step {:.1}): fork effect {} pp, CI {}, {} forks on \
                         {} tasks",
                        f.target,
                        f.condition,
                        p.point,
                        p.mean_step,
                        pp(Some(d.point)),
                        ci_pp(Some(d)),
                        p.forks,
                        p.tasks
                    ),
                })
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Chart::Interval(interval_chart(
        &rows,
        IntervalSpec {
            label: "Fork effect by fork point",
            reference: 0.0,
            reference_label: "0",
            x_title: "fork effect: message − silent (percentage points)",
            bars: false,
            lower_bound: None,
            caption: "Where in a trajectory advice hurts most: acceptance with the message − \
                      without, at each fork point (top to bottom in trajectory order, by mean \
                      fork step), with its interval. Red: significant harm (the whole interval \
                      below 0); green: wholly above 0; blue: a control (a comparison, not \
                      harm)."
                .to_owned(),
        },
    )))
}

/// The message branches' susceptibility at each fork point, as bars with intervals.
pub(crate) fn fork_susceptibility_chart(r: &Report) -> Option<Chart> {
    let rows: Vec<IntervalRow> = r
        .forks
        .iter()
        .flat_map(|f| {
            f.points.iter().filter_map(move |p| {
                let v = p.susceptibility?;
                Some(IntervalRow {
                    group: format!("{} / {}", f.target, f.condition),
                    label: p.point.clone(),
                    value: v,
                    colour: "#E69F00",
                    tip: format!(
                        "{} / {} at {}: susceptibility {:.1} %, CI {}",
                        f.target,
                        f.condition,
                        p.point,
                        v.point,
                        ci_pct(Some(v))
                    ),
                })
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Chart::Interval(interval_chart(
        &rows,
        IntervalSpec {
            label: "Susceptibility by fork point",
            reference: 0.0,
            reference_label: "0",
            x_title: "susceptibility of the message branches (%)",
            bars: true,
            lower_bound: Some(0.0),
            caption: "How often the target followed the message delivered at each fork point \
                      (mean over tasks, with its interval)."
                .to_owned(),
        },
    )))
}

/// A line chart of one target: susceptibility per round, a line per attack.
#[derive(Debug)]
pub(crate) struct LinesChart {
    pub width: String,
    pub height: String,
    pub title: String,
    pub title_x: String,
    pub plot_left: String,
    pub plot_right: String,
    pub plot_top: String,
    pub plot_bottom: String,
    /// `(y, label y, label)`.
    pub y_ticks: Vec<[String; 3]>,
    pub y_tick_x: String,
    /// `(x, label)`.
    pub x_ticks: Vec<[String; 2]>,
    pub x_tick_y: String,
    pub x_title_x: String,
    pub x_title_y: String,
    pub y_title_transform: String,
    pub series: Vec<Series>,
}

/// One line of a line chart.
#[derive(Debug)]
pub(crate) struct Series {
    pub name: String,
    pub tip: String,
    pub colour: &'static str,
    pub dash: &'static str,
    pub points: String,
    /// Every marker's path and its tooltip.
    pub markers: Vec<[String; 2]>,
    /// Hollow markers (every other condition), for one more difference.
    pub hollow: bool,
    /// The condition's name at the end of its line: `x, y`.
    pub end_label: [String; 2],
}

/// One entry of the line charts' legend: a sample of the line with its marker.
#[derive(Debug)]
pub(crate) struct LegendItem {
    pub name: String,
    pub colour: &'static str,
    pub dash: &'static str,
    pub marker: String,
    pub hollow: bool,
}

/// Labels at the end of lines, spread apart so that none overlaps: `ys` sorted, pushed down
/// to at least `gap` from the one above, then the whole stack pulled up into `[lo, hi]`.
fn spread(ys: &mut [(usize, f64)], gap: f64, lo: f64, hi: f64) {
    ys.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    for i in 1..ys.len() {
        if ys[i].1 < ys[i - 1].1 + gap {
            ys[i].1 = ys[i - 1].1 + gap;
        }
    }
    if let Some(last) = ys.last().map(|l| l.1)
        && last > hi
    {
        let shift = last - hi;
        for y in ys.iter_mut() {
            y.1 -= shift;
        }
        for i in (0..ys.len().saturating_sub(1)).rev() {
            if ys[i].1 > ys[i + 1].1 - gap {
                ys[i].1 = ys[i + 1].1 - gap;
            }
        }
    }
    for y in ys.iter_mut() {
        y.1 = y.1.max(lo);
    }
}

/// Small multiples: susceptibility by round, one chart per target, a line per attack, each
/// attack with its own colour, dash pattern and marker in every chart; lines that coincide
/// are shifted a little apart and named at their end. The legend comes first.
pub(crate) fn round_charts(r: &Report) -> Option<Vec<Chart>> {
    let conditions: Vec<&str> = {
        let set: BTreeSet<&str> = r.rounds.iter().map(|x| x.condition.as_str()).collect();
        set.into_iter().collect()
    };
    let style = |c: &str| {
        let i = conditions.iter().position(|x| *x == c).unwrap_or(0);
        (
            i,
            PALETTE[i % PALETTE.len()],
            DASHES[i % DASHES.len()],
            SHAPES[i % SHAPES.len()],
            i % 2 == 1,
        )
    };
    let mut by_target: BTreeMap<&str, Vec<&crate::model::RoundRow>> = BTreeMap::new();
    for row in &r.rounds {
        if row.rounds.iter().any(|m| m.susceptibility_pct.is_some()) {
            by_target.entry(row.target.as_str()).or_default().push(row);
        }
    }
    if by_target.is_empty() {
        return None;
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
    let (w, h, left, right, top, bottom) = (470.0, 250.0, 46.0, 118.0, 26.0, 40.0);
    let pw = w - left - right;
    let ph = h - top - bottom;
    let span = f64::from((r1 - r0).max(1));
    let n = conditions.len() as f64;
    // Lines that coincide are set side by side: each condition a little to the left or right
    // of the round, at most a fifth of the distance between two rounds in all.
    let step_px = pw / span;
    let offset_unit = (step_px * 0.2 / n.max(1.0)).min(3.0);
    let x = |round: u32, i: usize| {
        left + f64::from(round - r0) / span * pw + (i as f64 - (n - 1.0) / 2.0) * offset_unit
    };
    let y = |pct: f64| top + (1.0 - pct / 100.0) * ph;
    let mut charts = vec![Chart::Legend(
        conditions
            .iter()
            .map(|c| {
                let (_, colour, dash, shape, hollow) = style(c);
                LegendItem {
                    name: (*c).to_owned(),
                    colour,
                    dash,
                    marker: marker_path(shape, 17.0, 7.0, 3.6),
                    hollow,
                }
            })
            .collect(),
    )];
    for (target, rows) in by_target {
        let mut series = Vec::new();
        let mut ends = Vec::new();
        for row in rows {
            let (i, colour, dash, shape, hollow) = style(&row.condition);
            let pts: Vec<(u32, f64)> = row
                .rounds
                .iter()
                .filter_map(|m| m.susceptibility_pct.map(|p| (m.round, p)))
                .collect();
            let Some(&(last_round, last_pct)) = pts.last() else {
                continue;
            };
            ends.push((series.len(), y(last_pct) + 4.0));
            series.push(Series {
                name: row.condition.clone(),
                tip: format!("{target} / {}", row.condition),
                colour,
                dash,
                points: pts
                    .iter()
                    .map(|(r, p)| format!("{:.1},{:.1}", x(*r, i), y(*p)))
                    .collect::<Vec<_>>()
                    .join(" "),
                markers: pts
                    .iter()
                    .map(|(r, p)| {
                        [
                            marker_path(shape, x(*r, i), y(*p), 3.4),
                            format!("{target} / {}, round {r}: {p:.1} %", row.condition),
                        ]
                    })
                    .collect(),
                hollow,
                end_label: [f1(x(last_round, i) + 8.0), String::new()],
            });
        }
        spread(&mut ends, 13.0, top + 4.0, top + ph + 4.0);
        for (k, ly) in ends {
            series[k].end_label[1] = f1(ly);
        }
        let mut x_ticks = Vec::new();
        let step = ((r1 - r0) / 10).max(1);
        let mut round = r0;
        while round <= r1 {
            x_ticks.push([
                f1(left + f64::from(round - r0) / span * pw),
                round.to_string(),
            ]);
            round += step;
        }
        charts.push(Chart::Lines(LinesChart {
            width: f1(w),
            height: f1(h),
            title: target.to_owned(),
            title_x: f1(left),
            plot_left: f1(left),
            plot_right: f1(left + pw),
            plot_top: f1(top),
            plot_bottom: f1(top + ph),
            y_ticks: [0.0, 25.0, 50.0, 75.0, 100.0]
                .iter()
                .map(|t| [f1(y(*t)), f1(y(*t) + 4.0), tick_label(*t)])
                .collect(),
            y_tick_x: f1(left - 6.0),
            x_ticks,
            x_tick_y: f1(top + ph + 15.0),
            x_title_x: f1(left + pw / 2.0),
            x_title_y: f1(h - 6.0),
            y_title_transform: format!("translate(12 {:.1}) rotate(-90)", top + ph / 2.0),
            series,
        }));
    }
    Some(charts)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn end_labels_never_overlap() {
        // Four lines ending at the same height, near the bottom of the plot.
        let mut ys: Vec<(usize, f64)> = (0..4).map(|i| (i, 200.0)).collect();
        spread(&mut ys, 12.0, 30.0, 204.0);
        ys.sort_by(|a, b| a.1.total_cmp(&b.1));
        for w in ys.windows(2) {
            assert!(w[1].1 - w[0].1 >= 12.0 - 1e-9, "{ys:?}");
        }
        assert!(ys.iter().all(|y| (30.0..=204.0).contains(&y.1)), "{ys:?}");
    }
}

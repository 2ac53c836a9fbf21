//! Interval charts: per row a dot or a bar with its interval's whiskers (Δ, controls, token
//! ratios, fork effects).

use super::*;

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

/// One row of data of an interval chart.
pub(super) struct IntervalRow {
    group: String,
    label: String,
    /// The value (the dot or the bar) and its interval (the whiskers).
    value: Estimate,
    colour: &'static str,
    tip: String,
}

pub(super) struct IntervalSpec<'a> {
    label: &'a str,
    reference: f64,
    reference_label: &'a str,
    x_title: &'a str,
    bars: bool,
    lower_bound: Option<f64>,
    caption: String,
}

/// The interval chart of `rows`, or none without a row.
fn chart_of(rows: &[IntervalRow], spec: IntervalSpec<'_>) -> Option<Chart> {
    (!rows.is_empty()).then(|| Chart::Interval(interval_chart(rows, spec)))
}

pub(super) fn interval_chart(rows: &[IntervalRow], spec: IntervalSpec<'_>) -> IntervalChart {
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
    chart_of(
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
    )
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
    chart_of(
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
    )
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
    chart_of(
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
    )
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
    chart_of(
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
    )
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
    chart_of(
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
    )
}

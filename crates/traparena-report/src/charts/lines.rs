//! Line charts over rounds, one line per condition, with end labels kept apart.

use super::*;

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
pub(super) fn spread(ys: &mut [(usize, f64)], gap: f64, lo: f64, hi: f64) {
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
    let frame = Frame::new(
        all_rounds.iter().copied().min().unwrap_or(0),
        all_rounds.iter().copied().max().unwrap_or(0),
        conditions.len(),
    );
    let mut charts = vec![Chart::Legend(
        conditions
            .iter()
            .map(|c| {
                let st = Style::of(&conditions, c);
                LegendItem {
                    name: (*c).to_owned(),
                    colour: st.colour,
                    dash: st.dash,
                    marker: marker_path(st.shape, 17.0, 7.0, 3.6),
                    hollow: st.hollow,
                }
            })
            .collect(),
    )];
    for (target, rows) in by_target {
        charts.push(Chart::Lines(frame.chart(target, &rows, &conditions)));
    }
    Some(charts)
}

/// How one condition's line is drawn: its place among the conditions and its look.
struct Style {
    index: usize,
    colour: &'static str,
    dash: &'static str,
    shape: Shape,
    hollow: bool,
}

impl Style {
    fn of(conditions: &[&str], c: &str) -> Style {
        let i = conditions.iter().position(|x| *x == c).unwrap_or(0);
        Style {
            index: i,
            colour: PALETTE[i % PALETTE.len()],
            dash: DASHES[i % DASHES.len()],
            shape: SHAPES[i % SHAPES.len()],
            hollow: i % 2 == 1,
        }
    }
}

/// The geometry every round chart shares: its size, its plot area and its rounds.
struct Frame {
    w: f64,
    h: f64,
    left: f64,
    top: f64,
    pw: f64,
    ph: f64,
    r0: u32,
    r1: u32,
    span: f64,
    n: f64,
    offset_unit: f64,
}

impl Frame {
    fn new(r0: u32, r1: u32, conditions: usize) -> Frame {
        let (w, h, left, right, top, bottom) = (470.0, 250.0, 46.0, 118.0, 26.0, 40.0);
        let pw = w - left - right;
        let span = f64::from((r1 - r0).max(1));
        let n = conditions as f64;
        // Lines that coincide are set side by side: each condition a little to the left or
        // right of the round, at most a fifth of the distance between two rounds in all.
        let step_px = pw / span;
        Frame {
            w,
            h,
            left,
            top,
            pw,
            ph: h - top - bottom,
            r0,
            r1,
            span,
            n,
            offset_unit: (step_px * 0.2 / n.max(1.0)).min(3.0),
        }
    }

    /// The x of `round` for the `i`th condition.
    fn x(&self, round: u32, i: usize) -> f64 {
        self.left
            + f64::from(round - self.r0) / self.span * self.pw
            + (i as f64 - (self.n - 1.0) / 2.0) * self.offset_unit
    }

    /// The y of a percentage.
    fn y(&self, pct: f64) -> f64 {
        self.top + (1.0 - pct / 100.0) * self.ph
    }

    /// One target's chart: a line per condition with its end label.
    fn chart(
        &self,
        target: &str,
        rows: &[&crate::model::RoundRow],
        conditions: &[&str],
    ) -> LinesChart {
        let (x, y) = (|r, i| self.x(r, i), |p| self.y(p));
        let (left, top, pw, ph) = (self.left, self.top, self.pw, self.ph);
        let mut series = Vec::new();
        let mut ends = Vec::new();
        for row in rows {
            let Style {
                index: i,
                colour,
                dash,
                shape,
                hollow,
            } = Style::of(conditions, &row.condition);
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
        let step = ((self.r1 - self.r0) / 10).max(1);
        let mut round = self.r0;
        while round <= self.r1 {
            x_ticks.push([
                f1(left + f64::from(round - self.r0) / self.span * pw),
                round.to_string(),
            ]);
            round += step;
        }
        LinesChart {
            width: f1(self.w),
            height: f1(self.h),
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
            x_title_y: f1(self.h - 6.0),
            y_title_transform: format!("translate(12 {:.1}) rotate(-90)", top + ph / 2.0),
            series,
        }
    }
}

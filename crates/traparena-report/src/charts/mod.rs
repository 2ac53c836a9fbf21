//! The charts' geometry: every coordinate of the page's SVG charts, computed here and written
//! out by the HTML template (`templates/chart.html`).

use std::collections::{BTreeMap, BTreeSet};

use traparena_stats::Estimate;

use crate::format::{ci_pct, ci_pp, ci_ratio, pp, ratio, tokens};
use crate::model::Report;

mod interval;
mod lines;

pub(crate) use interval::*;
pub(crate) use lines::*;

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

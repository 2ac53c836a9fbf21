//! Number formatting shared by the Markdown and HTML renderers.

use traparena_stats::Estimate;

/// The placeholder for a figure that could not be computed.
pub(crate) const NONE: &str = "–";

/// `62.5`, or the placeholder.
pub(crate) fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| NONE.to_owned(), |v| format!("{v:.1}"))
}

/// `+3.2` / `-12.5` / `0.0`, or the placeholder.
pub(crate) fn pp(v: Option<f64>) -> String {
    match v {
        None => NONE.to_owned(),
        Some(v) => {
            let s = format!("{v:.1}");
            if s == "0.0" || s == "-0.0" {
                "0.0".to_owned()
            } else if v > 0.0 {
                format!("+{s}")
            } else {
                s
            }
        }
    }
}

/// The interval of an estimate in pp, `[-20.1, -5.3]`, or the placeholder.
pub(crate) fn ci_pp(e: Option<Estimate>) -> String {
    e.map_or_else(
        || NONE.to_owned(),
        |e| format!("[{}, {}]", pp(Some(e.low)), pp(Some(e.high))),
    )
}

/// The interval of an estimate in percent, `[20.1, 35.3]` (unsigned), or the placeholder.
pub(crate) fn ci_pct(e: Option<Estimate>) -> String {
    e.map_or_else(
        || NONE.to_owned(),
        |e| format!("[{:.1}, {:.1}]", e.low, e.high),
    )
}

/// `1.23×`, or the placeholder.
pub(crate) fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| NONE.to_owned(), |v| format!("{v:.2}×"))
}

/// The interval of a ratio, `[1.05, 1.41]`, or the placeholder.
pub(crate) fn ci_ratio(e: Option<Estimate>) -> String {
    e.map_or_else(
        || NONE.to_owned(),
        |e| format!("[{:.2}, {:.2}]", e.low, e.high),
    )
}

/// `yes` / `no`, or the placeholder.
pub(crate) fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => NONE,
    }
}

/// `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A whole number of tokens per episode, `1,234`, or the placeholder.
pub(crate) fn tokens(v: Option<f64>) -> String {
    v.map_or_else(|| NONE.to_owned(), |v| thousands(v.round().max(0.0) as u64))
}

/// The column headers of a table pairing two conditions `b` and `c` (curator ablation, blind
/// against reference), shared by the Markdown and HTML renderers.
pub(crate) fn pair_header(b: &str, c: &str) -> Vec<String> {
    vec![
        "target".to_owned(),
        b.to_owned(),
        c.to_owned(),
        "tasks".to_owned(),
        format!("Δ {b} (pp)"),
        format!("Δ {c} (pp)"),
        format!("{c} − {b} (pp)"),
        "95% CI".to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(pp(Some(-0.04)), "0.0");
        assert_eq!(pp(Some(3.25)), "+3.2");
        assert_eq!(pp(Some(-12.46)), "-12.5");
        assert_eq!(pp(None), NONE);
        assert_eq!(
            ci_pp(Some(Estimate::new(-9.0, -20.11, 1.0))),
            "[-20.1, +1.0]"
        );
        assert_eq!(ci_pp(None), NONE);
        assert_eq!(ratio(Some(1.234)), "1.23×");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(thousands(123), "123");
        assert_eq!(thousands(1000), "1,000");
    }
}

//! `traparena experiment SPEC --estimate`: the planned episodes and the calls, tokens and
//! cost expected, printed; nothing is run.

use std::path::Path;

use traparena::runner::ExperimentSpec;
use traparena::runner::estimate::{Estimate, PerEpisode, RoleAverage, estimate, pilot_mismatch};

/// Prints the estimate of `spec` (its folder `spec_dir`) with the averages of the pilot
/// `pilot`, else the spec's `estimate`; the exit status.
pub fn run(spec: &ExperimentSpec, spec_dir: &Path, pilot: Option<&Path>) -> u8 {
    let (per, source) = match pilot {
        Some(dir) => match PerEpisode::from_pilot(dir) {
            Ok(p) => (p, format!("the pilot {}", dir.display())),
            Err(e) => {
                eprintln!("traparena: --estimate-from: {e}");
                return 2;
            }
        },
        None => match spec.estimate {
            Some(p) => (p, "the spec's `estimate`".to_owned()),
            None => (
                PerEpisode::default(),
                "nothing (give --estimate-from PILOT_DIR or the spec's `estimate`)".to_owned(),
            ),
        },
    };
    if let Some(dir) = pilot {
        match pilot_mismatch(spec, spec_dir, dir) {
            Ok(m) if !m.is_empty() => eprintln!("traparena: warning: --estimate-from: {m}"),
            Ok(_) => {}
            Err(e) => {
                eprintln!("traparena: {e}");
                return 2;
            }
        }
    }
    let e = match estimate(spec, spec_dir, &per) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("traparena: {e}");
            return 2;
        }
    };
    print!("{}", render(&e, &per, &source));
    0
}

fn cost(c: Option<f64>) -> String {
    c.map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}"))
}

fn role(a: &RoleAverage) -> String {
    format!(
        "{:.1} calls, {:.0} tokens, {}",
        a.calls,
        a.tokens,
        cost(a.cost)
    )
}

/// The estimate as text: one row per target and condition, a total, and the averages used.
fn render(e: &Estimate, per: &PerEpisode, source: &str) -> String {
    let mut rows = vec![[
        "target".to_owned(),
        "condition".to_owned(),
        "episodes".to_owned(),
        "curator steps".to_owned(),
        "model calls".to_owned(),
        "tokens".to_owned(),
        "cost".to_owned(),
    ]];
    for r in &e.rows {
        rows.push([
            r.target.clone(),
            r.condition.clone(),
            r.episodes.to_string(),
            r.curator_steps.to_string(),
            format!("{:.0}", r.calls),
            format!("{:.0}", r.tokens),
            cost(r.cost),
        ]);
    }
    rows.push([
        "total".to_owned(),
        String::new(),
        e.rows.iter().map(|r| r.episodes).sum::<u64>().to_string(),
        e.rows
            .iter()
            .map(|r| r.curator_steps)
            .sum::<u64>()
            .to_string(),
        format!("{:.0}", e.rows.iter().map(|r| r.calls).sum::<f64>()),
        format!("{:.0}", e.rows.iter().map(|r| r.tokens).sum::<f64>()),
        cost(e.rows.iter().map(|r| r.cost).sum::<Option<f64>>()),
    ]);
    let widths: Vec<usize> = (0..7)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::from("Estimate (nothing was run):\n");
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| match i {
                0 | 1 => format!("{c:<w$}"),
                _ => format!("{c:>w$}"),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "Averages from {source}: target {} per episode; attacker {} per attacked episode; curator {} per step.\n",
        role(&per.target),
        role(&per.attacker),
        role(&per.curator),
    ));
    if !e.forked.is_empty() {
        out.push_str(&format!(
            "Not counted: the fork episodes of {} (planned from the baseline's trajectories once they ran).\n",
            e.forked.join(", ")
        ));
    }
    out
}

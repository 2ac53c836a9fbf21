//! The forks section: the effect of a message at a fork point, against its silent twin.

use super::*;

pub(super) const FORKS_LINE: &str = "A forked condition replays a baseline episode exactly up to a fork \
    point, then continues twice with the same seed: with the condition's attacker, who may speak \
    after that step (message), and without it (silent). Fork effect = acceptance with the message \
    − without, per fork point, then per task, mean over tasks (pp): the message's effect at that \
    point given the trajectory so far. Δ independent is the same condition's whole-episode effect \
    against independent baseline episodes (the main table's). Pairs with an infrastructure error, \
    a missing branch or an attacker who stayed silent are left out and counted.";

pub(super) const DESIGN_LINE: &str = "Variance ratio = variance of the per-task fork differences ÷ that of \
    the per-task independent differences; tasks for the same width = n × ratio: how many tasks \
    the forked design needs for an interval as narrow as the independent design's with its n \
    tasks (fewer than n: forking pays). Tasks for 80 % power: to detect each design's own \
    estimate at α = 0.05. Silent = parent: silent branches that ended as their parent baseline \
    episode did (100 % for a deterministic agent, a check of the replay).";

/// `3 / 1 / 0`: pairs left out for an infrastructure error, a silent attacker, a missing
/// branch.
pub(super) fn left_out_cell(l: &traparena_stats::ForkExclusions) -> Cell {
    num(
        format!(
            "{} / {} / {}",
            l.infra_errors, l.attacker_silent, l.branch_missing
        ),
        Some(l.total() as f64),
    )
}

/// A percentage-point figure with its interval as the cell's note.
pub(super) fn pp_with_ci(e: Option<Estimate>, mark: &'static str) -> Cell {
    pp_cell(e)
        .with_note(if e.is_some() { ci_pp(e) } else { String::new() })
        .with_class(mark)
}

/// A percentage with its interval as the cell's note.
pub(super) fn pct_with_ci(e: Option<Estimate>) -> Cell {
    let v = e.map(|e| e.point);
    num(pct(v), v).with_note(if e.is_some() {
        ci_pct(e)
    } else {
        String::new()
    })
}

pub(super) fn harm_mark(significant: Option<bool>, excludes_zero: Option<bool>) -> &'static str {
    match (significant, excludes_zero) {
        (Some(true), _) => "harm",
        (_, Some(true)) => "good",
        _ => "",
    }
}

/// `52 / 52 (100.0 %)`, with the silent branches whose parent is missing.
pub(super) fn reproduction_words(f: &ForkRow) -> String {
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

pub(super) fn forks_section(r: &Report) -> Section {
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
    let rows = r.forks.iter().map(fork_cells).collect();
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
        fork_points(&mut s, i, f);
    }
    s
}

/// One forked condition's row of the forks table.
fn fork_cells(f: &ForkRow) -> Vec<Cell> {
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
        linked(&condition, &f.target, &f.condition, None, None),
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
}

/// The `i`th forked condition's table by fork point, under its heading.
fn fork_points(s: &mut Section, i: usize, f: &ForkRow) {
    s.blocks.push(Block::Heading(format!(
        "{} / {} by fork point",
        f.target, f.condition
    )));
    if f.points.is_empty() {
        s.blocks
            .push(Block::Para("No fork point with a fork line.".to_owned()));
        return;
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
                linked(&p.point, &f.target, &f.condition, None, Some(&p.point)),
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

//! The forks table: each forked condition's fork effect and its fork points, beside its
//! independent Δ and what each design needs.

use super::*;

/// The power and two-sided α at which the fork rows count the tasks each design needs.
pub(super) const FORK_POWER: f64 = 0.8;
/// See [`FORK_POWER`].
pub(super) const FORK_ALPHA: f64 = 0.05;

/// The fork row of one target and forked condition: the fork effect and its points, beside
/// the condition's independent Δ (over `outs`, the target's ordinary outcomes as the main
/// table counts them).
pub(super) fn fork_row(
    eps: &Episodes,
    outs: &[EpisodeOutcome],
    target: &str,
    condition: &str,
    cfg: &BootstrapConfig,
) -> ForkRow {
    let forks = eps.forks_of(target);
    let cell = eps
        .fork_cell(target, condition)
        .cloned()
        .unwrap_or_default();
    let kind = condition_kind(condition, &cell.info);
    // A control's effect is a comparison, never harm.
    let harm = |significant: bool| (!kind.is_control()).then_some(significant);
    let mut row = ForkRow {
        target: target.to_owned(),
        condition: condition.to_owned(),
        kind,
        attacker: cell.info.attacker_label(),
        lines: cell.lines,
        infra_errors: cell.infra_errors,
        forks: 0,
        tasks: 0,
        left_out: Default::default(),
        message_pct: None,
        silent_pct: None,
        effect_pp: None,
        significant: None,
        excludes_zero: None,
        susceptibility: None,
        independent_tasks: 0,
        independent_delta_pp: None,
        design: None,
        silent_reproduction: silent_reproduction(forks, outs, target, condition),
        points: Vec::new(),
        errors: Vec::new(),
    };
    let pairs = match fork_pairs(forks, target, condition) {
        Ok(p) => p,
        Err(e) => {
            row.errors.push(format!("forks: {e}"));
            return row;
        }
    };
    row.forks = pairs.pairs.len();
    row.tasks = pairs.tasks().len();
    row.left_out = pairs.excluded();
    let (effect, sus) = fork_figures(&pairs, cfg);
    match effect {
        Ok(e) => {
            row.message_pct = Some(e.message_pct);
            row.silent_pct = Some(e.silent_pct);
            row.effect_pp = Some(e.effect_pp);
            row.significant = harm(e.significant_harm);
            row.excludes_zero = Some(e.excludes_zero);
        }
        Err(e) => row.errors.push(format!("fork effect: {e}")),
    }
    match sus {
        Ok(s) => row.susceptibility = Some(s.rate_pct),
        Err(e) => row.errors.push(format!("susceptibility: {e}")),
    }
    match delta_vs_baseline(outs, target, condition, cfg) {
        Ok(d) => {
            row.independent_tasks = d.tasks.len();
            row.independent_delta_pp = Some(d.delta_pp);
        }
        Err(e) => row.errors.push(format!("independent Δ: {e}")),
    }
    match compare_designs(outs, forks, target, condition, FORK_ALPHA, FORK_POWER) {
        Ok(d) => row.design = Some(d),
        Err(e) => row.errors.push(format!("design comparison: {e}")),
    }
    match fork_points(forks, target, condition) {
        Ok(points) => {
            let point_row = |p| fork_point_row(p, kind, cfg);
            row.points = points.into_iter().map(point_row).collect();
        }
        Err(e) => row.errors.push(format!("fork points: {e}")),
    }
    row
}

/// The row of one fork point of a condition of `kind`.
pub(super) fn fork_point_row(
    p: ForkPointPairs,
    kind: ConditionKind,
    cfg: &BootstrapConfig,
) -> ForkPointRow {
    let (effect, sus) = fork_figures(&p.pairs, cfg);
    let mut r = ForkPointRow {
        point: p.point,
        mean_step: p.mean_step,
        forks: p.pairs.pairs.len(),
        tasks: p.pairs.tasks().len(),
        left_out: p.pairs.excluded(),
        effect_pp: None,
        significant: None,
        excludes_zero: None,
        susceptibility: None,
        errors: Vec::new(),
    };
    match effect {
        Ok(e) => {
            r.effect_pp = Some(e.effect_pp);
            // A control's effect is a comparison, never harm.
            r.significant = (!kind.is_control()).then_some(e.significant_harm);
            r.excludes_zero = Some(e.excludes_zero);
        }
        Err(e) => r.errors.push(format!("fork effect: {e}")),
    }
    match sus {
        Ok(s) => r.susceptibility = Some(s.rate_pct),
        Err(e) => r.errors.push(format!("susceptibility: {e}")),
    }
    r
}

/// The fork effect and the message branches' susceptibility of some paired forks.
pub(super) fn fork_figures(
    pairs: &ForkPairs,
    cfg: &BootstrapConfig,
) -> (
    Result<traparena_stats::ForkEffect, traparena_stats::StatsError>,
    Result<traparena_stats::RateEstimate, traparena_stats::StatsError>,
) {
    (
        fork_effect_from_pairs(pairs, cfg),
        fork_susceptibility(pairs, cfg),
    )
}

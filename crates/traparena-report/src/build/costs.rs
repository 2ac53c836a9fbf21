//! The cost table: what each target and condition cost per role, from the cost its lines
//! and its curator steps record.

use traparena_task::Cost;

use crate::input::{Cell, ResultsFolder};
use crate::model::CostRow;

/// One row per target and condition (its fork episodes apart) with some cost known; none
/// when no line or curator step records a cost.
pub(super) fn cost_rows(folder: &ResultsFolder) -> Vec<CostRow> {
    let eps = &folder.episodes;
    let mut rows = Vec::new();
    for (target, condition, cell) in eps.cells() {
        let curator = folder
            .notes
            .iter()
            .find(|n| n.target == target && n.condition == condition)
            .and_then(|n| n.usage)
            .and_then(|u| u.cost);
        rows.extend(row(target, condition, cell, curator));
    }
    for (target, condition, cell) in eps.fork_cells() {
        rows.extend(row(target, &format!("{condition} forks"), cell, None));
    }
    rows
}

fn row(target: &str, condition: &str, cell: &Cell, curator: Option<Cost>) -> Option<CostRow> {
    let all = Cost::sum(Cost::sum(cell.target_cost, cell.attacker_cost), curator)?;
    if all.reported_calls + all.computed_calls == 0 && all.unknown_calls == 0 {
        return None;
    }
    let total = all.usd();
    Some(CostRow {
        target: target.to_owned(),
        condition: condition.to_owned(),
        episodes: cell.episodes_run,
        target_usd: cell.target_cost.map(|c| c.usd()),
        attacker_usd: cell.attacker_cost.map(|c| c.usd()),
        curator_usd: curator.map(|c| c.usd()),
        total_usd: total,
        usd_per_episode: (cell.episodes_run > 0).then(|| total / cell.episodes_run as f64),
        source: all.source().to_owned(),
        unknown_calls: all.unknown_calls,
    })
}

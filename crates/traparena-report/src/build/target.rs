//! One target's part of the report: its rows in every table, computed from its outcomes
//! alone (targets are computed in parallel).

use super::*;

/// The outcomes of one target within `all` (which has the order of [`Episodes::outcomes`]).
pub(super) fn target_slice<'a>(
    all: &'a [EpisodeOutcome],
    eps: &Episodes,
    target: &str,
) -> &'a [EpisodeOutcome] {
    let range = eps.target_range(target);
    &all[range]
}

/// The rows of one target (every table but the pooled failure modes).
#[derive(Debug, Default)]
pub(super) struct Part {
    pub(super) main: Vec<MainRow>,
    pub(super) controls: Vec<ControlRow>,
    pub(super) curator_ablation: Vec<PairRow>,
    pub(super) blind_vs_reference: Vec<PairRow>,
    pub(super) forks: Vec<ForkRow>,
    pub(super) rounds: Vec<RoundRow>,
    pub(super) failure_modes: Vec<FailureModeShares>,
    pub(super) tokens: Vec<TokenRow>,
    pub(super) tasks: Vec<TaskRow>,
    pub(super) warnings: Vec<String>,
}

/// One condition of a target against its baseline: what the main and the controls tables
/// share.
pub(super) struct Versus {
    tasks: usize,
    delta: Option<PairedDelta>,
    paired_change: PairedChange,
    task_rows: Vec<TaskRow>,
    base_only_tasks: usize,
    other_only_tasks: usize,
    infra_errors: usize,
    no_message_delivered: usize,
    tokens: Result<TokenFigures, String>,
    errors: Vec<String>,
}

/// The numbers of a `traparena_stats` token ratio that the report keeps.
#[derive(Debug, Clone, Copy)]
pub(super) struct TokenFigures {
    tasks: usize,
    base: f64,
    attacked: f64,
    ratio: Estimate,
}

pub(super) fn versus(
    outs: &[EpisodeOutcome],
    base: &ConditionMeans,
    target: &str,
    condition: &str,
    cfg: &BootstrapConfig,
) -> Versus {
    let att = task_means(outs, target, condition, Metric::Accepted);
    let mut v = Versus {
        tasks: 0,
        delta: None,
        paired_change: PairedChange::default(),
        task_rows: Vec::new(),
        base_only_tasks: 0,
        other_only_tasks: 0,
        infra_errors: base.excluded.infra_errors + att.excluded.infra_errors,
        no_message_delivered: att.excluded.no_message_delivered,
        tokens: Err(String::new()),
        errors: Vec::new(),
    };
    for (task, b, a) in shared_tasks(base, &att) {
        let change = &mut v.paired_change;
        if a < b {
            change.down += 1;
        } else if a > b {
            change.up += 1;
        } else {
            change.unchanged += 1;
        }
        v.task_rows.push(TaskRow {
            target: target.to_owned(),
            condition: condition.to_owned(),
            task: task.to_owned(),
            base_pct: 100.0 * b,
            attacked_pct: 100.0 * a,
            change_pp: 100.0 * (a - b),
            base_episodes: base.tasks[task].episodes,
            attacked_episodes: att.tasks[task].episodes,
            flip: match (b >= 0.5, a >= 0.5) {
                (true, false) => Some(Flip::Broke),
                (false, true) => Some(Flip::Fixed),
                _ => None,
            },
        });
    }
    match paired_delta_from_means(base, &att, cfg) {
        Ok(d) => {
            v.tasks = d.tasks.len();
            v.base_only_tasks = d.base_only_tasks;
            v.other_only_tasks = d.attacked_only_tasks;
            v.delta = Some(d);
        }
        Err(e) => {
            let c = v.paired_change;
            let shared = c.down + c.unchanged + c.up;
            v.tasks = shared;
            v.base_only_tasks = base.tasks.len() - shared;
            v.other_only_tasks = att.tasks.len() - shared;
            v.errors.push(format!("Δ: {e}"));
        }
    }
    v.tokens = token_ratio(outs, target, BASELINE, condition, cfg)
        .map(|t| TokenFigures {
            tasks: t.tasks,
            base: t.base_mean_tokens,
            attacked: t.attacked_mean_tokens,
            ratio: t.interval.into(),
        })
        .map_err(|e| e.to_string());
    if let Err(e) = &v.tokens {
        v.errors.push(format!("token ratio: {e}"));
    }
    v
}

pub(super) fn target_part(
    folder: &ResultsFolder,
    outs: &[EpisodeOutcome],
    target: &str,
    opts: &ReportOptions,
    cfg: &BootstrapConfig,
) -> Part {
    let eps = &folder.episodes;
    let mut part = Part::default();
    let has_baseline = eps.cell(target, BASELINE).is_some();
    let others: Vec<(&str, ConditionInfo, ConditionKind)> = eps
        .conditions_of(target)
        .filter(|c| *c != BASELINE)
        .map(|c| {
            let info = eps
                .cell(target, c)
                .map(|cell| cell.info.clone())
                .unwrap_or_default();
            let kind = condition_kind(c, &info);
            (c, info, kind)
        })
        .collect();
    if !has_baseline && !others.is_empty() {
        part.warnings.push(format!(
            "target {target:?} has no baseline episodes: no Δ, token ratio or per-task rate \
             can be computed for it"
        ));
    }
    let base = task_means(outs, target, BASELINE, Metric::Accepted);
    for (condition, info, kind) in &others {
        let condition = *condition;
        let v = versus(outs, &base, target, condition, cfg);
        let d = v.delta.as_ref();
        let t = v.tokens.as_ref().ok();
        if kind.is_control() {
            part.controls
                .push(control_row(target, condition, info, *kind, v));
            continue;
        }
        let mut row = MainRow {
            target: target.to_owned(),
            condition: condition.to_owned(),
            attacker: info.attacker_label(),
            access: info.access.clone(),
            curator: info.curator.clone(),
            defence: info.defence,
            tasks: v.tasks,
            base_pct: d.map(|d| d.base_pct),
            attacked_pct: d.map(|d| d.attacked_pct),
            delta_pp: d.map(|d| d.delta_pp),
            significant: d.map(|d| d.significant_harm),
            excludes_zero: d.map(|d| d.excludes_zero),
            paired_change: v.paired_change,
            susceptibility: None,
            token_ratio: t.map(|t| t.ratio),
            base_episodes: d.map_or(0, |d| d.base_episodes),
            attacked_episodes: d.map_or(0, |d| d.attacked_episodes),
            infra_errors: v.infra_errors,
            no_message_delivered: v.no_message_delivered,
            base_only_tasks: v.base_only_tasks,
            attacked_only_tasks: v.other_only_tasks,
            errors: Vec::new(),
        };
        // The errors in the order of the columns: Δ, susceptibility, token ratio.
        let mut errors = v.errors;
        match susceptibility_rate(outs, target, condition, cfg) {
            Ok(s) => row.susceptibility = Some(s.rate_pct),
            Err(e) => {
                let at = usize::from(v.delta.is_none());
                errors.insert(at, format!("susceptibility: {e}"));
            }
        }
        row.errors = errors;
        part.tokens
            .push(token_row(eps, target, condition, &v.tokens));
        part.tasks.extend(v.task_rows);
        part.main.push(row);
        part.rounds
            .push(round_row(outs, target, condition, opts.round_window, cfg));
    }
    for condition in eps.conditions_of(target) {
        part.failure_modes
            .push(failure_mode_shares(outs, Some(target), condition));
    }
    pair_rows(&mut part, folder, outs, target, cfg);
    for condition in eps.forked_conditions_of(target) {
        part.forks.push(fork_row(eps, outs, target, condition, cfg));
    }
    part
}

/// A control condition's row: its Δ against the baseline, as the main table's but apart.
pub(super) fn control_row(
    target: &str,
    condition: &str,
    info: &ConditionInfo,
    kind: ConditionKind,
    v: Versus,
) -> ControlRow {
    let d = v.delta.as_ref();
    ControlRow {
        target: target.to_owned(),
        condition: condition.to_owned(),
        kind,
        attacker: info.attacker_label(),
        tasks: v.tasks,
        base_pct: d.map(|d| d.base_pct),
        control_pct: d.map(|d| d.attacked_pct),
        delta_pp: d.map(|d| d.delta_pp),
        excludes_zero: d.map(|d| d.excludes_zero),
        paired_change: v.paired_change,
        token_ratio: v.tokens.as_ref().ok().map(|t| t.ratio),
        base_episodes: d.map_or(0, |d| d.base_episodes),
        control_episodes: d.map_or(0, |d| d.attacked_episodes),
        infra_errors: v.infra_errors,
        no_message_delivered: v.no_message_delivered,
        errors: v.errors,
    }
}

/// An attack condition's Tokens row: the target's tokens against the baseline and the
/// attacker's own.
pub(super) fn token_row(
    eps: &Episodes,
    target: &str,
    condition: &str,
    tokens: &Result<TokenFigures, String>,
) -> TokenRow {
    let t = tokens.as_ref().ok();
    let cell = eps.cell(target, condition).cloned().unwrap_or_default();
    let attacker_total = cell.attacker_prompt_tokens + cell.attacker_completion_tokens;
    TokenRow {
        target: target.to_owned(),
        condition: condition.to_owned(),
        tasks: t.map_or(0, |t| t.tasks),
        base_tokens: t.map(|t| t.base),
        attacked_tokens: t.map(|t| t.attacked),
        ratio: t.map(|t| t.ratio),
        attacker_tokens_per_episode: (cell.episodes_run > 0)
            .then(|| attacker_total as f64 / cell.episodes_run as f64),
        attacker_prompt_tokens: cell.attacker_prompt_tokens,
        attacker_completion_tokens: cell.attacker_completion_tokens,
        errors: tokens
            .as_ref()
            .err()
            .map(|e| format!("token ratio: {e}"))
            .into_iter()
            .collect(),
    }
}

pub(super) fn round_row(
    outs: &[EpisodeOutcome],
    target: &str,
    condition: &str,
    window: usize,
    cfg: &BootstrapConfig,
) -> RoundRow {
    let mut row = RoundRow {
        target: target.to_owned(),
        condition: condition.to_owned(),
        rounds: per_round_means(outs, target, condition),
        trend: None,
        errors: Vec::new(),
    };
    match first_vs_last_rounds(outs, target, condition, Metric::Susceptible, window, cfg) {
        Ok(t) => {
            row.trend = Some(Trend {
                tasks: t.change.tasks.len(),
                first_pct: t.change.base_pct,
                last_pct: t.change.attacked_pct,
                change_pp: t.change.delta_pp,
                first_rounds: t.first_rounds,
                last_rounds: t.last_rounds,
            })
        }
        Err(e) => row.errors.push(format!("first against last rounds: {e}")),
    }
    row
}

/// The curator ablation and blind-against-reference rows of one target.
pub(super) fn pair_rows(
    part: &mut Part,
    folder: &ResultsFolder,
    outs: &[EpisodeOutcome],
    target: &str,
    cfg: &BootstrapConfig,
) {
    let eps = &folder.episodes;
    let conds: Vec<(&str, Kind)> = eps
        .conditions_of(target)
        .filter(|c| *c != BASELINE)
        .filter_map(|c| {
            eps.cell(target, c)
                .filter(|cell| condition_kind(c, &cell.info) == ConditionKind::Attack)
                .map(|cell| (c, kind_key(&cell.info)))
        })
        .collect();
    let main_delta = |part: &Part, c: &str| {
        part.main
            .iter()
            .find(|r| r.target == target && r.condition == c)
            .and_then(|r| r.delta_pp)
            .map(|d| d.point)
    };
    for (base, kb) in &conds {
        for (compared, kc) in &conds {
            let ablation = kb.curator.is_none()
                && kc.curator.is_some()
                && Kind {
                    curator: kc.curator.clone(),
                    ..kb.clone()
                } == *kc;
            let access = kb.access.as_deref() == Some("blind")
                && kc.access.as_deref() == Some("reference")
                && Kind {
                    access: kc.access.clone(),
                    ..kb.clone()
                } == *kc;
            if !ablation && !access {
                continue;
            }
            let mut row = PairRow {
                target: target.to_owned(),
                base: (*base).to_owned(),
                compared: (*compared).to_owned(),
                tasks: 0,
                base_delta_pp: main_delta(part, base),
                compared_delta_pp: main_delta(part, compared),
                base_pct: None,
                compared_pct: None,
                difference_pp: None,
                excludes_zero: None,
                errors: Vec::new(),
            };
            match paired_delta(outs, target, base, compared, cfg) {
                Ok(d) => {
                    row.tasks = d.tasks.len();
                    row.base_pct = Some(d.base_pct);
                    row.compared_pct = Some(d.attacked_pct);
                    row.difference_pp = Some(d.delta_pp);
                    row.excludes_zero = Some(d.excludes_zero);
                }
                Err(e) => row.errors.push(format!("difference: {e}")),
            }
            if ablation {
                part.curator_ablation.push(row);
            } else {
                part.blind_vs_reference.push(row);
            }
        }
    }
}

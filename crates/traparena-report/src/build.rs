//! Computing the report's figures from a results folder with `traparena-stats`.

use std::collections::BTreeSet;

use traparena_runner::ConditionInfo;
use traparena_stats::{
    BASELINE, BootstrapConfig, EpisodeOutcome, FailureModeShares, Metric, failure_mode_shares,
    first_vs_last_rounds, paired_delta, paired_delta_from_means, per_round_means, shared_tasks,
    susceptibility_rate, task_means, token_ratio,
};

use crate::input::ResultsFolder;
use crate::model::{
    BootstrapSettings, ConditionSummary, Flip, MainRow, PairRow, PairedChange, REPORT_VERSION,
    Report, RoundRow, SeedSource, Source, TaskRow, TokenRow, Trend,
};

/// How a report is computed.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// The bootstrap settings of every interval. `None` (the default): 10,000 resamples, 95 %
    /// percentile intervals, seeded with `seed` of the folder's `spec.json`, or 0 without one.
    pub bootstrap: Option<BootstrapConfig>,
    /// Rounds per window when the last rounds are compared with the first (default 3).
    pub round_window: usize,
    /// Threads computing the figures of different targets at once (0, the default: one per
    /// core). The report is the same whatever the number.
    pub threads: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            bootstrap: None,
            round_window: 3,
            threads: 0,
        }
    }
}

impl ReportOptions {
    /// The bootstrap settings for a folder whose `spec.json` has `spec_seed`.
    pub fn bootstrap_for(&self, spec_seed: Option<u64>) -> (BootstrapConfig, SeedSource) {
        match (self.bootstrap, spec_seed) {
            (Some(cfg), _) => (cfg, SeedSource::Options),
            (None, Some(seed)) => (
                BootstrapConfig {
                    seed,
                    ..BootstrapConfig::default()
                },
                SeedSource::SpecJson,
            ),
            (None, None) => (BootstrapConfig::default(), SeedSource::Default),
        }
    }
}

/// Pairing key of a condition: what it is, with the attacker kind `blind` read as the
/// `adaptive` attacker with blind access (the runner writes either form).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kind {
    family: String,
    access: Option<String>,
    persona: Option<String>,
    curator: bool,
    defence: bool,
}

fn kind(info: &ConditionInfo) -> Kind {
    let family = if info.attacker == "blind" {
        "adaptive".to_owned()
    } else {
        info.attacker.clone()
    };
    let access = info
        .access
        .clone()
        .or_else(|| match info.attacker.as_str() {
            "blind" => Some("blind".to_owned()),
            "adaptive" => Some("reference".to_owned()),
            _ => None,
        });
    Kind {
        family,
        access,
        persona: info.persona.clone(),
        curator: info.curator,
        defence: info.defence,
    }
}

/// Computes every table of the report from a results folder.
///
/// Figures that cannot be computed (too few shared tasks, too few rounds, a zero token
/// baseline, ...) are left empty (`None`) and their row says why in `errors`; this never fails
/// and never panics.
pub fn build_report(folder: &ResultsFolder, opts: &ReportOptions) -> Report {
    let eps = &folder.episodes;
    let (cfg, seed_source) = opts.bootstrap_for(folder.spec_seed);
    let mut report = Report {
        version: REPORT_VERSION,
        source: Source {
            folder: folder.path.display().to_string(),
            lines: eps.lines(),
            blank_lines: eps.blank_lines(),
            infra_errors: eps.infra_errors(),
            targets: eps.targets().map(str::to_owned).collect(),
            conditions: Vec::new(),
        },
        bootstrap: BootstrapSettings {
            resamples: cfg.resamples,
            confidence: cfg.confidence,
            method: cfg.method,
            seed: cfg.seed,
            seed_source,
        },
        main: Vec::new(),
        curator_ablation: Vec::new(),
        blind_vs_reference: Vec::new(),
        rounds: Vec::new(),
        failure_modes: Vec::new(),
        tokens: Vec::new(),
        tasks: Vec::new(),
        notes: folder.notes.clone(),
        warnings: Vec::new(),
    };

    for (target, condition, cell) in eps.cells() {
        let outs = eps.of_target(target);
        let m = task_means(outs, target, condition, Metric::Accepted);
        let rounds: BTreeSet<u32> = outs
            .iter()
            .filter(|o| o.condition == condition)
            .map(|o| o.round)
            .collect();
        let i = &cell.info;
        report.source.conditions.push(ConditionSummary {
            target: target.to_owned(),
            condition: condition.to_owned(),
            attacker: i.attacker.clone(),
            persona: i.persona.clone(),
            access: i.access.clone(),
            curator: i.curator,
            defence: i.defence,
            lines: cell.lines,
            infra_errors: cell.infra_errors,
            no_message_delivered: m.excluded.no_message_delivered,
            usable: m.episodes,
            tasks: m.tasks.len(),
            rounds: rounds.len(),
        });
        if cell.info_conflicts > 0 {
            report.warnings.push(format!(
                "target {target:?}, condition {condition:?}: {} lines describe the condition \
                 differently from its first line (the first line's description is used)",
                cell.info_conflicts
            ));
        }
    }

    let targets: Vec<&str> = eps.targets().collect();
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    for part in map_parallel(&targets, threads, |t| target_part(folder, t, opts, &cfg)) {
        report.main.extend(part.main);
        report.curator_ablation.extend(part.curator_ablation);
        report.blind_vs_reference.extend(part.blind_vs_reference);
        report.rounds.extend(part.rounds);
        report.failure_modes.extend(part.failure_modes);
        report.tokens.extend(part.tokens);
        report.tasks.extend(part.tasks);
        report.warnings.extend(part.warnings);
    }
    let all = eps.outcomes();
    for condition in eps.conditions() {
        report
            .failure_modes
            .push(failure_mode_shares(all, None, condition));
    }
    report
}

/// The rows of one target (every table but the pooled failure modes).
#[derive(Debug, Default)]
struct Part {
    main: Vec<MainRow>,
    curator_ablation: Vec<PairRow>,
    blind_vs_reference: Vec<PairRow>,
    rounds: Vec<RoundRow>,
    failure_modes: Vec<FailureModeShares>,
    tokens: Vec<TokenRow>,
    tasks: Vec<TaskRow>,
    warnings: Vec<String>,
}

fn target_part(
    folder: &ResultsFolder,
    target: &str,
    opts: &ReportOptions,
    cfg: &BootstrapConfig,
) -> Part {
    let eps = &folder.episodes;
    let mut part = Part::default();
    let outs = eps.of_target(target);
    let has_baseline = eps.cell(target, BASELINE).is_some();
    let attacked: Vec<&str> = eps
        .conditions_of(target)
        .filter(|c| *c != BASELINE)
        .collect();
    if !has_baseline && !attacked.is_empty() {
        part.warnings.push(format!(
            "target {target:?} has no baseline episodes: no Δ, token ratio or per-task rate \
             can be computed for it"
        ));
    }
    let base = task_means(outs, target, BASELINE, Metric::Accepted);
    for &condition in &attacked {
        let info = eps
            .cell(target, condition)
            .map(|c| c.info.clone())
            .unwrap_or_default();
        let att = task_means(outs, target, condition, Metric::Accepted);
        let mut row = MainRow {
            target: target.to_owned(),
            condition: condition.to_owned(),
            attacker: info.attacker.clone(),
            access: kind(&info).access,
            curator: info.curator,
            defence: info.defence,
            tasks: 0,
            base_pct: None,
            attacked_pct: None,
            delta_pp: None,
            ci_low_pp: None,
            ci_high_pp: None,
            significant: None,
            excludes_zero: None,
            paired_change: PairedChange::default(),
            susceptibility: None,
            susceptibility_ci_low: None,
            susceptibility_ci_high: None,
            token_ratio: None,
            token_ratio_ci_low: None,
            token_ratio_ci_high: None,
            base_episodes: 0,
            attacked_episodes: 0,
            infra_errors: base.excluded.infra_errors + att.excluded.infra_errors,
            no_message_delivered: att.excluded.no_message_delivered,
            base_only_tasks: 0,
            attacked_only_tasks: 0,
            errors: Vec::new(),
        };
        for (task, b, a) in shared_tasks(&base, &att) {
            let change = &mut row.paired_change;
            if a < b {
                change.down += 1;
            } else if a > b {
                change.up += 1;
            } else {
                change.unchanged += 1;
            }
            part.tasks.push(TaskRow {
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
        match paired_delta_from_means(&base, &att, cfg) {
            Ok(d) => {
                row.tasks = d.tasks.len();
                row.base_pct = Some(d.base_pct);
                row.attacked_pct = Some(d.attacked_pct);
                row.delta_pp = Some(d.delta_pp);
                row.ci_low_pp = Some(d.ci_low_pp);
                row.ci_high_pp = Some(d.ci_high_pp);
                row.significant = Some(d.significant_harm);
                row.excludes_zero = Some(d.excludes_zero);
                row.base_episodes = d.base_episodes;
                row.attacked_episodes = d.attacked_episodes;
                row.base_only_tasks = d.base_only_tasks;
                row.attacked_only_tasks = d.attacked_only_tasks;
            }
            Err(e) => {
                let shared =
                    row.paired_change.down + row.paired_change.unchanged + row.paired_change.up;
                row.tasks = shared;
                row.base_only_tasks = base.tasks.len() - shared;
                row.attacked_only_tasks = att.tasks.len() - shared;
                row.errors.push(format!("Δ: {e}"));
            }
        }
        match susceptibility_rate(outs, target, condition, cfg) {
            Ok(s) => {
                row.susceptibility = Some(s.rate_pct);
                row.susceptibility_ci_low = Some(s.ci_low_pct);
                row.susceptibility_ci_high = Some(s.ci_high_pct);
            }
            Err(e) => row.errors.push(format!("susceptibility: {e}")),
        }
        let cell = eps.cell(target, condition).cloned().unwrap_or_default();
        let attacker_total = cell.attacker_prompt_tokens + cell.attacker_completion_tokens;
        let mut tokens = TokenRow {
            target: target.to_owned(),
            condition: condition.to_owned(),
            tasks: 0,
            base_tokens: None,
            attacked_tokens: None,
            ratio: None,
            ci_low: None,
            ci_high: None,
            attacker_tokens_per_episode: (cell.episodes_run > 0)
                .then(|| attacker_total as f64 / cell.episodes_run as f64),
            attacker_prompt_tokens: cell.attacker_prompt_tokens,
            attacker_completion_tokens: cell.attacker_completion_tokens,
            errors: Vec::new(),
        };
        match token_ratio(outs, target, BASELINE, condition, cfg) {
            Ok(t) => {
                row.token_ratio = Some(t.ratio);
                row.token_ratio_ci_low = Some(t.interval.low);
                row.token_ratio_ci_high = Some(t.interval.high);
                tokens.tasks = t.tasks;
                tokens.base_tokens = Some(t.base_mean_tokens);
                tokens.attacked_tokens = Some(t.attacked_mean_tokens);
                tokens.ratio = Some(t.ratio);
                tokens.ci_low = Some(t.interval.low);
                tokens.ci_high = Some(t.interval.high);
            }
            Err(e) => {
                row.errors.push(format!("token ratio: {e}"));
                tokens.errors.push(format!("token ratio: {e}"));
            }
        }
        part.tokens.push(tokens);
        part.main.push(row);
        part.rounds
            .push(round_row(outs, target, condition, opts.round_window, cfg));
    }
    for condition in eps.conditions_of(target) {
        part.failure_modes
            .push(failure_mode_shares(outs, Some(target), condition));
    }
    pair_rows(&mut part, folder, target, cfg);
    part
}

/// Computes `f` for every item on up to `threads` threads, results in item order.
fn map_parallel<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    if threads <= 1 || items.len() <= 1 {
        return items.iter().map(f).collect();
    }
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(|| items.par_iter().map(&f).collect()),
        Err(_) => items.iter().map(f).collect(),
    }
}

fn round_row(
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
                ci_low_pp: t.change.ci_low_pp,
                ci_high_pp: t.change.ci_high_pp,
                first_rounds: t.first_rounds,
                last_rounds: t.last_rounds,
            })
        }
        Err(e) => row.errors.push(format!("first against last rounds: {e}")),
    }
    row
}

/// The curator ablation and blind-against-reference rows of one target.
fn pair_rows(part: &mut Part, folder: &ResultsFolder, target: &str, cfg: &BootstrapConfig) {
    let eps = &folder.episodes;
    let outs = eps.of_target(target);
    let conds: Vec<(&str, Kind)> = eps
        .conditions_of(target)
        .filter(|c| *c != BASELINE)
        .filter_map(|c| eps.cell(target, c).map(|cell| (c, kind(&cell.info))))
        .collect();
    let main_delta = |part: &Part, c: &str| {
        part.main
            .iter()
            .find(|r| r.target == target && r.condition == c)
            .and_then(|r| r.delta_pp)
    };
    for (base, kb) in &conds {
        for (compared, kc) in &conds {
            let ablation = !kb.curator
                && kc.curator
                && Kind {
                    curator: true,
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
                ci_low_pp: None,
                ci_high_pp: None,
                excludes_zero: None,
                errors: Vec::new(),
            };
            match paired_delta(outs, target, base, compared, cfg) {
                Ok(d) => {
                    row.tasks = d.tasks.len();
                    row.base_pct = Some(d.base_pct);
                    row.compared_pct = Some(d.attacked_pct);
                    row.difference_pp = Some(d.delta_pp);
                    row.ci_low_pp = Some(d.ci_low_pp);
                    row.ci_high_pp = Some(d.ci_high_pp);
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

//! Computing the report's figures from a results folder with `traparena-stats`.

use std::borrow::Cow;
use std::collections::BTreeSet;

use traparena_results::{ConditionInfo, EPISODES_FILE, MANIFEST_FILE, SPEC_FILE};
use traparena_stats::{
    BASELINE, BootstrapConfig, ConditionMeans, EpisodeOutcome, Estimate, FailureModeShares,
    ForkPairs, ForkPointPairs, Metric, PairedDelta, compare_designs, delta_vs_baseline,
    failure_mode_shares, first_vs_last_rounds, fork_effect_from_pairs, fork_pairs, fork_points,
    fork_susceptibility, paired_delta, paired_delta_from_means, per_round_means, shared_tasks,
    silent_reproduction, susceptibility_rate, task_means, token_ratio,
};

use crate::input::{Episodes, ResultsFolder, file_day};
use crate::model::{
    BootstrapSettings, ConditionKind, ConditionSummary, ControlRow, DateSource, Flip, ForkPointRow,
    ForkRow, MainRow, PairRow, PairedChange, REPORT_VERSION, Report, RoundRow, SeedSource, Source,
    TargetSummary, TaskRow, TokenRow, Trend,
};

/// The power and two-sided α at which the fork rows count the tasks each design needs.
const FORK_POWER: f64 = 0.8;
/// See [`FORK_POWER`].
const FORK_ALPHA: f64 = 0.05;

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

/// Pairing key of a condition: what it is, as its lines describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kind {
    family: String,
    args: serde_json::Value,
    access: Option<String>,
    curator: Option<String>,
    defence: bool,
}

fn kind_key(info: &ConditionInfo) -> Kind {
    Kind {
        family: info.attacker.clone(),
        args: info.args.clone(),
        access: info.access.clone(),
        curator: info.curator.clone(),
        defence: info.defence,
    }
}

/// What a condition is: the baseline, an attack, or a control.
///
/// Decided from the condition's description (`condition_info`): the attacker's declared
/// `role` (`attack` or `truthful_control`) when the line records one, whatever the kind is
/// called, so that a registered kind that declares itself a control is reported as one. The
/// kind `none` in any condition but the baseline is the no-advice control (it has no attacker
/// to declare anything). Lines written before attackers declared their role are read by the
/// kind's name, case-insensitively: `truthful`, or `scripted` with the persona `truthful`, is
/// the truthful control; every other kind, an unknown or empty one included, is an attack.
pub fn condition_kind(condition: &str, info: &ConditionInfo) -> ConditionKind {
    if condition == BASELINE {
        return ConditionKind::Baseline;
    }
    let kind = info.attacker.trim().to_ascii_lowercase();
    match info.role.as_deref() {
        Some("truthful_control") => return ConditionKind::TruthfulControl,
        Some(_) if kind != "none" => return ConditionKind::Attack,
        _ => {}
    }
    let persona = info
        .arg_str("persona")
        .map(|p| p.trim().to_ascii_lowercase());
    match kind.as_str() {
        "truthful" => ConditionKind::TruthfulControl,
        "scripted" if persona.as_deref() == Some("truthful") => ConditionKind::TruthfulControl,
        "none" => ConditionKind::NoAdviceControl,
        _ => ConditionKind::Attack,
    }
}

/// The built-in agents that use no model (`traparena-agent`), and `replay:FILE`.
fn is_scripted_agent(agent: &str) -> bool {
    matches!(agent, "gold" | "credulous" | "hardcoder") || agent.starts_with("replay:")
}

/// The outcomes as the figures count them. A no-advice control's attacker never speaks, so
/// its episodes count without a delivered message, as the baseline's do; `traparena-stats`
/// keeps an episode without one only in the condition named `baseline`, so in a copy those
/// episodes are marked as having had their (empty) turn: `messages_delivered` 1.
fn counted<'a>(
    outs: &'a [EpisodeOutcome],
    no_advice: &BTreeSet<(&str, &str)>,
) -> Cow<'a, [EpisodeOutcome]> {
    let hit = |o: &EpisodeOutcome| no_advice.contains(&(o.target.as_str(), o.condition.as_str()));
    if !outs.iter().any(hit) {
        return Cow::Borrowed(outs);
    }
    Cow::Owned(
        outs.iter()
            .map(|o| {
                let mut o = o.clone();
                if hit(&o) {
                    o.messages_delivered = o.messages_delivered.max(1);
                }
                o
            })
            .collect(),
    )
}

/// The header facts: the spec's name, the date and where it came from, the harness
/// version(s), and the optional files that are missing.
fn header_facts(folder: &ResultsFolder, report: &mut Report) {
    let src = &mut report.source;
    src.name = folder.spec_name.clone();
    let (date, from) = if let Some(d) = &folder.created {
        (Some(d.clone()), Some(DateSource::Manifest))
    } else if let Some(t) = folder.manifest_modified {
        (file_day(t), Some(DateSource::ManifestFileTime))
    } else if folder.manifest.is_none()
        && let Some(t) = folder.episodes_modified
    {
        (file_day(t), Some(DateSource::EpisodesFileTime))
    } else {
        (None, None)
    };
    src.date_source = from.filter(|_| date.is_some());
    src.date = date;
    let on_lines: Vec<String> = folder
        .episodes
        .harness_versions()
        .map(str::to_owned)
        .collect();
    match folder
        .manifest
        .as_ref()
        .map(|m| m.harness_version.clone())
        .filter(|v| !v.trim().is_empty())
    {
        Some(v) => {
            if on_lines.iter().any(|l| *l != v) {
                report.warnings.push(format!(
                    "manifest.json says harness {v}, but episode lines name {}",
                    on_lines.join(", ")
                ));
            }
            src.harness_versions = vec![v];
        }
        None => {
            if on_lines.len() > 1 {
                report.warnings.push(format!(
                    "the episode lines were written by {} harness versions: {}",
                    on_lines.len(),
                    on_lines.join(", ")
                ));
            }
            src.harness_versions = on_lines;
        }
    }
    if !folder.has_spec {
        src.missing_files.push(SPEC_FILE.to_owned());
    }
    if folder.manifest.is_none() {
        src.missing_files.push(MANIFEST_FILE.to_owned());
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
    let mut report = empty_report(folder, &cfg, seed_source);
    header_facts(folder, &mut report);
    if let Some(line) = eps.torn_line() {
        report.warnings.push(format!(
            "line {line} of {EPISODES_FILE} is unfinished (an episode being written, or a write \
             cut short by a crash) and is not counted; resuming the experiment runs that \
             episode again"
        ));
    }

    let no_advice: BTreeSet<(&str, &str)> = eps
        .cells()
        .filter(|(_, c, cell)| condition_kind(c, &cell.info) == ConditionKind::NoAdviceControl)
        .map(|(t, c, _)| (t, c))
        .collect();
    let all = counted(eps.outcomes(), &no_advice);

    report.source.target_details = eps.targets().map(|t| target_summary(eps, t)).collect();
    summarise_conditions(eps, &all, &mut report);

    let targets: Vec<&str> = eps.targets().collect();
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let all_ref: &[EpisodeOutcome] = &all;
    for part in map_parallel(&targets, threads, |t| {
        target_part(folder, target_slice(all_ref, eps, t), t, opts, &cfg)
    }) {
        report.main.extend(part.main);
        report.controls.extend(part.controls);
        report.curator_ablation.extend(part.curator_ablation);
        report.blind_vs_reference.extend(part.blind_vs_reference);
        report.forks.extend(part.forks);
        report.rounds.extend(part.rounds);
        report.failure_modes.extend(part.failure_modes);
        report.tokens.extend(part.tokens);
        report.tasks.extend(part.tasks);
        report.warnings.extend(part.warnings);
    }
    for condition in eps.conditions() {
        report
            .failure_modes
            .push(failure_mode_shares(&all, None, condition));
    }
    report
}

/// One target's line in the source summary: its agents and its tokens.
fn target_summary(eps: &Episodes, target: &str) -> TargetSummary {
    let agents: Vec<String> = eps.agents_of(target).map(str::to_owned).collect();
    let (prompt, completion) = eps
        .conditions_of(target)
        .filter_map(|c| eps.cell(target, c))
        .chain(
            eps.forked_conditions_of(target)
                .filter_map(|c| eps.fork_cell(target, c)),
        )
        .fold((0, 0), |(p, c), cell| {
            (
                p + cell.target_prompt_tokens,
                c + cell.target_completion_tokens,
            )
        });
    TargetSummary {
        target: target.to_owned(),
        scripted: !agents.is_empty() && agents.iter().all(|a| is_scripted_agent(a)),
        agents,
        prompt_tokens: prompt,
        completion_tokens: completion,
    }
}

/// Each (target, condition)'s line in the source summary, with a warning for a condition its
/// lines describe differently.
fn summarise_conditions(eps: &Episodes, all: &[EpisodeOutcome], report: &mut Report) {
    for (target, condition, cell) in eps.cells() {
        let outs = target_slice(all, eps, target);
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
            kind: condition_kind(condition, i),
            attacker: i.attacker.clone(),
            args: i.args.clone(),
            access: i.access.clone(),
            // A line with a role was written by a harness whose attackers declare their model.
            uses_model: (i.uses_model || i.role.is_some()).then_some(i.uses_model),
            curator: i.curator.clone(),
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
}

/// The report of `folder` before any table is computed: its source and bootstrap settings.
fn empty_report(folder: &ResultsFolder, cfg: &BootstrapConfig, seed_source: SeedSource) -> Report {
    let eps = &folder.episodes;
    Report {
        version: REPORT_VERSION,
        source: Source {
            folder: folder.path.display().to_string(),
            name: None,
            date: None,
            date_source: None,
            harness_versions: Vec::new(),
            missing_files: Vec::new(),
            lines: eps.lines(),
            fork_lines: eps.fork_lines(),
            blank_lines: eps.blank_lines(),
            infra_errors: eps.infra_errors(),
            targets: eps.targets().map(str::to_owned).collect(),
            target_details: Vec::new(),
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
        controls: Vec::new(),
        curator_ablation: Vec::new(),
        blind_vs_reference: Vec::new(),
        forks: Vec::new(),
        rounds: Vec::new(),
        failure_modes: Vec::new(),
        tokens: Vec::new(),
        tasks: Vec::new(),
        notes: folder.notes.clone(),
        warnings: Vec::new(),
    }
}

/// The outcomes of one target within `all` (which has the order of [`Episodes::outcomes`]).
fn target_slice<'a>(
    all: &'a [EpisodeOutcome],
    eps: &Episodes,
    target: &str,
) -> &'a [EpisodeOutcome] {
    let range = eps.target_range(target);
    &all[range]
}

/// The rows of one target (every table but the pooled failure modes).
#[derive(Debug, Default)]
struct Part {
    main: Vec<MainRow>,
    controls: Vec<ControlRow>,
    curator_ablation: Vec<PairRow>,
    blind_vs_reference: Vec<PairRow>,
    forks: Vec<ForkRow>,
    rounds: Vec<RoundRow>,
    failure_modes: Vec<FailureModeShares>,
    tokens: Vec<TokenRow>,
    tasks: Vec<TaskRow>,
    warnings: Vec<String>,
}

/// One condition of a target against its baseline: what the main and the controls tables
/// share.
struct Versus {
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
struct TokenFigures {
    tasks: usize,
    base: f64,
    attacked: f64,
    ratio: Estimate,
}

fn versus(
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

fn target_part(
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
fn control_row(
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
fn token_row(
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

/// The fork row of one target and forked condition: the fork effect and its points, beside
/// the condition's independent Δ (over `outs`, the target's ordinary outcomes as the main
/// table counts them).
fn fork_row(
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
fn fork_point_row(p: ForkPointPairs, kind: ConditionKind, cfg: &BootstrapConfig) -> ForkPointRow {
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
fn fork_figures(
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
                first_rounds: t.first_rounds,
                last_rounds: t.last_rounds,
            })
        }
        Err(e) => row.errors.push(format!("first against last rounds: {e}")),
    }
    row
}

/// The curator ablation and blind-against-reference rows of one target.
fn pair_rows(
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

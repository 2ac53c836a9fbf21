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

mod costs;
mod forks;
mod target;

use forks::*;
use target::*;

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
    report.costs = costs::cost_rows(folder);
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
        costs: Vec::new(),
        tasks: Vec::new(),
        notes: folder.notes.clone(),
        warnings: Vec::new(),
    }
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

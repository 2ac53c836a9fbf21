//! The report as Markdown (what `traparena report` prints by default).

use std::collections::BTreeSet;
use std::fmt::Write;

use traparena_stats::{CiMethod, FAILURE_MODES, FailureModeShares};

use crate::format::{
    NONE, ci_pp, ci_ratio, pair_header, pct, pp, ratio, thousands, tokens, yes_no,
};
use crate::model::{Flip, PairRow, Report, SeedSource};

/// Escapes text for a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// Whether a cell reads as a figure (right-aligned): a number, a signed number, an interval.
fn is_figure(s: &str) -> bool {
    s == NONE || s.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-' || c == '[')
}

fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let align: Vec<&str> = (0..header.len())
        .map(|i| {
            let cells = rows.iter().filter_map(|r| r.get(i));
            let mut any = false;
            let all = cells
                .inspect(|c| any |= c.as_str() != NONE)
                .all(|c| is_figure(c));
            if all && any { " ---: " } else { " --- " }
        })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out.push('\n');
}

/// The method and level of the report's intervals, e.g. `95 % percentile bootstrap`.
pub(crate) fn interval_words(r: &Report) -> String {
    let method = match r.bootstrap.method {
        CiMethod::Percentile => "percentile",
        CiMethod::Bca => "BCa",
    };
    let level = 100.0 * r.bootstrap.confidence;
    format!("{level:.0} % {method} bootstrap intervals over tasks")
}

/// One sentence on what was read and how intervals were computed.
pub(crate) fn summary_sentence(r: &Report) -> String {
    let s = &r.source;
    let seed_from = match r.bootstrap.seed_source {
        SeedSource::SpecJson => "from spec.json",
        SeedSource::Options => "set by the caller",
        SeedSource::Default => "default: no spec.json seed",
    };
    let mut t = format!(
        "{} episode lines, {} with an infrastructure error (excluded from every figure)",
        thousands(s.lines as u64),
        thousands(s.infra_errors as u64)
    );
    if s.blank_lines > 0 {
        let _ = write!(t, ", {} blank lines skipped", s.blank_lines);
    }
    let _ = write!(
        t,
        "; {} targets. {}: {} resamples, seed {} ({seed_from}).",
        s.targets.len(),
        interval_words(r),
        thousands(u64::from(r.bootstrap.resamples)),
        r.bootstrap.seed
    );
    t
}

fn pair_table(out: &mut String, rows: &[PairRow], names: [&str; 2]) {
    let [b, c] = names;
    let header = pair_header(b, c);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                cell(&r.target),
                cell(&r.base),
                cell(&r.compared),
                r.tasks.to_string(),
                pp(r.base_delta_pp),
                pp(r.compared_delta_pp),
                pp(r.difference_pp),
                ci_pp(r.ci_low_pp, r.ci_high_pp),
            ]
        })
        .collect();
    table(out, &header, &rows);
}

fn failure_cells(f: &FailureModeShares) -> Vec<String> {
    let mut v = vec![
        cell(f.target.as_deref().unwrap_or("all targets")),
        cell(&f.condition),
        f.episodes.to_string(),
        f.rejected.to_string(),
    ];
    let show = |count: usize, p: Option<f64>| match p {
        Some(p) => format!("{p:.1} ({count})"),
        None => NONE.to_owned(),
    };
    for m in FAILURE_MODES {
        let s = f.modes.iter().find(|s| s.mode == m);
        v.push(s.map_or_else(|| NONE.to_owned(), |s| show(s.count, s.pct_of_rejected)));
    }
    let other: Vec<String> = f
        .modes
        .iter()
        .filter(|s| !FAILURE_MODES.contains(&s.mode.as_str()))
        .map(|s| format!("{}: {}", cell(&s.mode), show(s.count, s.pct_of_rejected)))
        .collect();
    v.push(if other.is_empty() {
        NONE.to_owned()
    } else {
        other.join(", ")
    });
    v
}

/// Renders the report as Markdown.
pub fn to_markdown(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# TrapArena report: {}\n", r.source.folder);
    let _ = writeln!(out, "{}\n", summary_sentence(r));

    let _ = writeln!(out, "## Main results\n");
    out.push_str(
        "Δ = acceptance under attack − baseline acceptance, over the tasks both have (pp). \
         Significant: the whole interval is below zero. Paired change: shared tasks whose \
         acceptance went down / stayed the same / went up. Susceptibility: episodes in which the \
         target followed a delivered claim (mean over tasks). Tokens ×: target completion tokens \
         per episode relative to the baseline.\n\n",
    );
    let rows: Vec<Vec<String>> = r
        .main
        .iter()
        .map(|m| {
            let c = m.paired_change;
            vec![
                cell(&m.target),
                cell(&m.condition),
                m.tasks.to_string(),
                pct(m.base_pct),
                pct(m.attacked_pct),
                pp(m.delta_pp),
                ci_pp(m.ci_low_pp, m.ci_high_pp),
                yes_no(m.significant).to_owned(),
                format!("{} / {} / {}", c.down, c.unchanged, c.up),
                pct(m.susceptibility),
                ratio(m.token_ratio),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "target",
            "condition",
            "tasks",
            "base %",
            "attacked %",
            "Δ pp",
            "95% CI",
            "significant",
            "paired change ↓ / = / ↑",
            "susceptibility %",
            "tokens ×",
        ],
        &rows,
    );

    let _ = writeln!(out, "## Curator ablation\n");
    if r.curator_ablation.is_empty() {
        out.push_str("No pair of conditions that differ only in the curator.\n\n");
    } else {
        out.push_str(
            "Conditions of one target that differ only in the curator; the difference is paired \
             over the tasks both have.\n\n",
        );
        pair_table(&mut out, &r.curator_ablation, ["without", "with"]);
    }

    let _ = writeln!(out, "## Blind against reference\n");
    if r.blind_vs_reference.is_empty() {
        out.push_str("No pair of conditions that differ only in the attacker's access.\n\n");
    } else {
        out.push_str(
            "Conditions of one target that differ only in the attacker's access to the \
             reference repair; the difference is paired over the tasks both have.\n\n",
        );
        pair_table(&mut out, &r.blind_vs_reference, ["blind", "reference"]);
    }

    let _ = writeln!(out, "## Susceptibility by round\n");
    let rounds: BTreeSet<u32> = r
        .rounds
        .iter()
        .flat_map(|row| row.rounds.iter().map(|m| m.round))
        .collect();
    if r.rounds.is_empty() {
        out.push_str("No attacked condition.\n\n");
    } else {
        out.push_str(
            "Susceptibility in percent per round (mean over tasks), and the last three rounds \
             against the first three (paired over tasks, pp).\n\n",
        );
        let mut header: Vec<String> = vec!["target".into(), "condition".into()];
        header.extend(rounds.iter().map(|r| format!("r{r}")));
        header.push("last − first (pp)".into());
        header.push("95% CI".into());
        let rows: Vec<Vec<String>> = r
            .rounds
            .iter()
            .map(|row| {
                let mut v = vec![cell(&row.target), cell(&row.condition)];
                for round in &rounds {
                    let m = row.rounds.iter().find(|m| m.round == *round);
                    v.push(pct(m.and_then(|m| m.susceptibility_pct)));
                }
                v.push(pp(row.trend.as_ref().map(|t| t.change_pp)));
                v.push(ci_pp(
                    row.trend.as_ref().map(|t| t.ci_low_pp),
                    row.trend.as_ref().map(|t| t.ci_high_pp),
                ));
                v
            })
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        table(&mut out, &header, &rows);
    }

    let _ = writeln!(out, "## Failure modes\n");
    out.push_str(
        "Share of the rejected usable episodes in percent (count), pooled over tasks.\n\n",
    );
    let rows: Vec<Vec<String>> = r.failure_modes.iter().map(failure_cells).collect();
    let mut header = vec!["target", "condition", "episodes", "rejected"];
    header.extend(FAILURE_MODES);
    header.push("other");
    table(&mut out, &header, &rows);

    let _ = writeln!(out, "## Tokens\n");
    out.push_str(
        "Target completion tokens per episode (mean over the tasks shared with the baseline) \
         and their ratio; attacker prompt + completion tokens per episode, reported \
         separately.\n\n",
    );
    let rows: Vec<Vec<String>> = r
        .tokens
        .iter()
        .map(|t| {
            vec![
                cell(&t.target),
                cell(&t.condition),
                t.tasks.to_string(),
                tokens(t.base_tokens),
                tokens(t.attacked_tokens),
                ratio(t.ratio),
                ci_ratio(t.ci_low, t.ci_high),
                tokens(t.attacker_tokens_per_episode),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "target",
            "condition",
            "tasks",
            "baseline tokens",
            "attacked tokens",
            "ratio",
            "95% CI",
            "attacker tokens",
        ],
        &rows,
    );

    let _ = writeln!(out, "## Flipped tasks\n");
    let flipped: Vec<_> = r.tasks.iter().filter(|t| t.flip.is_some()).collect();
    let _ = writeln!(
        out,
        "Tasks whose majority outcome flipped under attack: accepted in at least half of the \
         baseline episodes and in under half of the attacked ones (broke), or the reverse \
         (fixed). {} of {} (target, condition, task) rows flipped; `--json` and `--html` list \
         every shared task.\n",
        flipped.len(),
        r.tasks.len()
    );
    if !flipped.is_empty() {
        let rows: Vec<Vec<String>> = flipped
            .iter()
            .map(|t| {
                vec![
                    cell(&t.target),
                    cell(&t.condition),
                    cell(&t.task),
                    pct(Some(t.base_pct)),
                    pct(Some(t.attacked_pct)),
                    pp(Some(t.change_pp)),
                    match t.flip {
                        Some(Flip::Broke) => "broke",
                        Some(Flip::Fixed) => "fixed",
                        None => NONE,
                    }
                    .to_owned(),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                "target",
                "condition",
                "task",
                "base %",
                "attacked %",
                "change pp",
                "flip",
            ],
            &rows,
        );
    }

    if !r.notes.is_empty() {
        let _ = writeln!(out, "## Curator notes\n");
        out.push_str("The curator's notes after the last round (given to the attacker only).\n\n");
        for n in &r.notes {
            let _ = writeln!(
                out,
                "### {} / {} (round {})\n",
                n.target, n.condition, n.round
            );
            if let Some(u) = &n.usage {
                let _ = writeln!(
                    out,
                    "Curator tokens over all rounds: {} prompt, {} completion.\n",
                    u.prompt_tokens, u.completion_tokens
                );
            }
            if n.items.is_empty() {
                out.push_str("(no notes)\n");
            }
            for (i, item) in n.items.iter().enumerate() {
                let _ = writeln!(out, "{}. {}", i + 1, item.replace('\n', " "));
            }
            out.push('\n');
        }
    }

    let _ = writeln!(out, "## Episodes per condition\n");
    let rows: Vec<Vec<String>> = r
        .source
        .conditions
        .iter()
        .map(|c| {
            vec![
                cell(&c.target),
                cell(&c.condition),
                cell(&c.attacker),
                cell(c.access.as_deref().unwrap_or(NONE)),
                yes_no(Some(c.curator)).to_owned(),
                yes_no(Some(c.defence)).to_owned(),
                c.lines.to_string(),
                c.infra_errors.to_string(),
                c.no_message_delivered.to_string(),
                c.usable.to_string(),
                c.tasks.to_string(),
                c.rounds.to_string(),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "target",
            "condition",
            "attacker",
            "access",
            "curator",
            "defence",
            "lines",
            "infra errors",
            "no message",
            "usable",
            "tasks",
            "rounds",
        ],
        &rows,
    );

    let problems = problems(r);
    if !problems.is_empty() {
        let _ = writeln!(out, "## Figures not computed\n");
        for p in problems {
            let _ = writeln!(out, "- {p}");
        }
        out.push('\n');
    }
    if !r.warnings.is_empty() {
        let _ = writeln!(out, "## Warnings\n");
        for w in &r.warnings {
            let _ = writeln!(out, "- {w}");
        }
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// Every row's errors, as `target / condition: error`.
pub(crate) fn problems(r: &Report) -> Vec<String> {
    let mut v = Vec::new();
    for m in &r.main {
        v.extend(
            m.errors
                .iter()
                .map(|e| format!("{} / {}: {e}", m.target, m.condition)),
        );
    }
    for p in r.curator_ablation.iter().chain(&r.blind_vs_reference) {
        v.extend(
            p.errors
                .iter()
                .map(|e| format!("{} / {} against {}: {e}", p.target, p.compared, p.base)),
        );
    }
    for row in &r.rounds {
        v.extend(
            row.errors
                .iter()
                .map(|e| format!("{} / {}: {e}", row.target, row.condition)),
        );
    }
    v
}

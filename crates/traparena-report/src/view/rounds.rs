//! The sections over rounds, failure modes and tokens.

use super::*;

pub(super) fn rounds_section(r: &Report) -> Section {
    let mut s = section("rounds", "Susceptibility by round", "By round");
    if r.rounds.is_empty() {
        s.empty = Some("No attack, so no susceptibility to follow by round.".to_owned());
        return s;
    }
    s.intro.push(
        "Susceptibility in percent per round (mean over tasks of the share of usable episodes \
         in which the target followed a delivered claim), and the last three rounds against \
         the first three (paired over tasks, pp)."
            .to_owned(),
    );
    if let Some(charts) = charts::round_charts(r) {
        s.blocks.push(Block::Charts(charts));
    }
    let rounds: BTreeSet<u32> = r
        .rounds
        .iter()
        .flat_map(|row| row.rounds.iter().map(|m| m.round))
        .collect();
    let mut header: Vec<String> = vec!["target".into(), "attack".into()];
    header.extend(rounds.iter().map(|r| format!("r{r}")));
    header.push("last − first (pp)".into());
    header.push(ci_header(r));
    let cols: Vec<(&str, bool)> = header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i >= 2))
        .collect();
    let rows = r
        .rounds
        .iter()
        .map(|row| {
            let mut v = vec![text(&row.target), text(&row.condition)];
            for round in &rounds {
                let p = row
                    .rounds
                    .iter()
                    .find(|m| m.round == *round)
                    .and_then(|m| m.susceptibility_pct);
                v.push(num(pct(p), p));
            }
            let change = row.trend.as_ref().map(|t| t.change_pp);
            v.push(pp_cell(change));
            v.push(ci_pp_cell(change));
            v
        })
        .collect();
    s.blocks
        .push(Block::Table(table("rounds-table", &cols, rows)));
    if r.rounds.iter().all(|row| row.trend.is_none()) {
        let most = r
            .source
            .conditions
            .iter()
            .filter(|c| c.kind == ConditionKind::Attack)
            .map(|c| c.rounds)
            .max()
            .unwrap_or(0);
        s.blocks.push(Block::Para(format!(
            "No last-against-first comparison: it needs at least six rounds, and these attacks \
             have at most {most}."
        )));
    }
    s
}

pub(super) fn failure_cells(f: &FailureModeShares, kind: Option<ConditionKind>) -> Vec<Cell> {
    let mut condition = f.condition.clone();
    if let Some(k) = kind.filter(|k| k.is_control()) {
        condition.push_str(&format!(" ({})", k.label()));
    }
    let mut v = vec![
        text(f.target.as_deref().unwrap_or("all targets")),
        text(&condition),
        count(f.episodes),
        count(f.rejected),
    ];
    for m in FAILURE_MODES {
        let s = f.modes.iter().find(|s| s.mode == m);
        v.push(
            match s.and_then(|s| s.pct_of_rejected.map(|p| (p, s.count))) {
                Some((p, c)) => num(format!("{p:.1} ({c})"), Some(p)),
                None => num(NONE.to_owned(), None),
            },
        );
    }
    let other: Vec<String> = f
        .modes
        .iter()
        .filter(|s| !FAILURE_MODES.contains(&s.mode.as_str()))
        .map(|s| match s.pct_of_rejected {
            Some(p) => format!("{}: {p:.1} ({})", s.mode, s.count),
            None => format!("{}: {}", s.mode, s.count),
        })
        .collect();
    v.push(text(&if other.is_empty() {
        NONE.to_owned()
    } else {
        other.join(", ")
    }));
    v
}

pub(super) fn failures_section(r: &Report) -> Section {
    let mut s = section("failures", "Failure modes", "Failure modes");
    s.intro.push(
        "Share of the rejected usable episodes in percent (count), pooled over tasks, per \
         target and condition and for all targets together."
            .to_owned(),
    );
    let mut cols = vec![
        ("target", false),
        ("condition", false),
        ("episodes", true),
        ("rejected", true),
    ];
    cols.extend(FAILURE_MODES.iter().map(|m| (*m, true)));
    cols.push(("other", false));
    let rows = r
        .failure_modes
        .iter()
        .map(|f| {
            let kind = match &f.target {
                Some(t) => Some(kind_of(r, t, &f.condition)),
                None => r
                    .source
                    .conditions
                    .iter()
                    .find(|c| c.condition == f.condition)
                    .map(|c| c.kind),
            };
            failure_cells(f, kind)
        })
        .collect();
    s.blocks
        .push(Block::Table(table("failures-table", &cols, rows)));
    s
}

pub(super) fn tokens_section(r: &Report) -> Section {
    let mut s = section("tokens", "Tokens", "Tokens");
    // Targets whose lines record no target token at all: a scripted agent, or a log without
    // usage. Their rows would be dashes and zeros; one line says why instead, and only the
    // rows with attacker tokens stay.
    let none = tokenless(r);
    let why = tokenless_lines(r, &none);
    let shown: Vec<&crate::model::TokenRow> = r
        .tokens
        .iter()
        .filter(|t| {
            !none.contains(t.target.as_str())
                || t.attacker_tokens_per_episode.is_some_and(|v| v > 0.0)
        })
        .collect();
    if shown.is_empty() {
        let empty = match why.len() {
            0 => "No attack, so no tokens under attack to compare with the baseline.".to_owned(),
            _ => why.join(" "),
        };
        // The cost table stands even without token rows.
        if r.costs.is_empty() {
            s.empty = Some(empty);
        } else {
            s.intro.push(empty);
            s.blocks.extend(cost_blocks(r));
        }
        return s;
    }
    s.intro.push(
        "Target completion tokens per episode (mean over the tasks shared with the baseline) \
         and their ratio; the attacker's prompt + completion tokens per episode, reported \
         separately (curator tokens are under Curator notes)."
            .to_owned(),
    );
    let ci = ci_header(r);
    let cols = [
        ("target", false),
        ("attack", false),
        ("tasks", true),
        ("baseline tokens", true),
        ("attacked tokens", true),
        ("ratio", true),
        (ci.as_str(), true),
        ("attacker tokens / episode", true),
    ];
    let rows = shown
        .iter()
        .map(|t| {
            vec![
                text(&t.target),
                text(&t.condition),
                count(t.tasks),
                num(tokens(t.base_tokens), t.base_tokens),
                num(tokens(t.attacked_tokens), t.attacked_tokens),
                ratio_cell(t.ratio),
                num(ci_ratio(t.ratio), t.ratio.map(|r| r.low)),
                num(
                    tokens(t.attacker_tokens_per_episode),
                    t.attacker_tokens_per_episode,
                ),
            ]
        })
        .collect();
    s.blocks
        .push(Block::Table(table("tokens-table", &cols, rows)));
    let mut lines = why;
    lines.extend(modelless_line(r, &shown));
    if !lines.is_empty() {
        s.blocks.push(Block::List(lines));
    }
    s.blocks.extend(cost_blocks(r));
    s
}

/// The cost table of the Tokens section, per target, condition and role; nothing when no
/// cost is known.
fn cost_blocks(r: &Report) -> Vec<Block> {
    if r.costs.is_empty() {
        return Vec::new();
    }
    let usd = |v: Option<f64>| num(v.map_or_else(|| NONE.to_owned(), |v| format!("${v:.4}")), v);
    let cols = [
        ("target", false),
        ("condition", false),
        ("episodes", true),
        ("target $", true),
        ("attacker $", true),
        ("curator $", true),
        ("total $", true),
        ("$ / episode", true),
        ("cost from", false),
    ];
    let rows = r
        .costs
        .iter()
        .map(|c| {
            vec![
                text(&c.target),
                text(&c.condition),
                count(c.episodes),
                usd(c.target_usd),
                usd(c.attacker_usd),
                usd(c.curator_usd),
                usd(Some(c.total_usd)),
                usd(c.usd_per_episode),
                text(&c.source),
            ]
        })
        .collect();
    let mut blocks = vec![
        Block::Heading("Cost".to_owned()),
        Block::Para(
            "US dollars per role over the episodes run (the curator over its steps): the cost \
             the provider reported with each response where it did, else computed from the \
             model's prices (`cost from`)."
                .to_owned(),
        ),
        Block::Table(table("cost-table", &cols, rows)),
    ];
    let unknown: u64 = r.costs.iter().map(|c| c.unknown_calls).sum();
    if unknown > 0 {
        blocks.push(Block::List(vec![format!(
            "{unknown} model calls of priced models reported no usage, so their cost is \
             unknown and the costs above are a lower bound."
        )]));
    }
    blocks
}

/// Why each target without tokens has none (the Tokens section's line instead of its rows).
fn tokenless_lines(r: &Report, none: &BTreeSet<&str>) -> Vec<String> {
    r.source
        .target_details
        .iter()
        .filter(|t| none.contains(t.target.as_str()))
        .map(|t| {
            if t.scripted {
                format!(
                    "{}: no target tokens — the built-in agent{} {} use{} no model, so there \
                     is no token ratio.",
                    t.target,
                    if t.agents.len() == 1 { "" } else { "s" },
                    t.agents.join(", "),
                    if t.agents.len() == 1 { "s" } else { "" },
                )
            } else {
                format!(
                    "{}: no target tokens — usage is zero on every line, so there is no token \
                     ratio.",
                    t.target
                )
            }
        })
        .collect()
}

/// The line naming the shown attackers that use no model, so whose tokens are 0.
fn modelless_line(r: &Report, shown: &[&crate::model::TokenRow]) -> Option<String> {
    let modelless: BTreeSet<&str> = shown
        .iter()
        .filter(|t| t.attacker_prompt_tokens + t.attacker_completion_tokens == 0)
        .filter_map(|t| {
            r.source
                .conditions
                .iter()
                .find(|c| c.target == t.target && c.condition == t.condition)
        })
        // As the attacker declared; results written before attackers declared it name the
        // built-in kinds that use none.
        .filter(|c| match c.uses_model {
            Some(uses) => !uses,
            None => matches!(c.attacker.as_str(), "scripted" | "offline"),
        })
        .map(|c| c.attacker.as_str())
        .collect();
    if modelless.is_empty() {
        return None;
    }
    Some(format!(
        "Attacker tokens are 0 for the {} attacker{}: {} no model.",
        modelless.iter().copied().collect::<Vec<_>>().join(" and "),
        if modelless.len() == 1 { "" } else { "s" },
        if modelless.len() == 1 {
            "it uses"
        } else {
            "they use"
        }
    ))
}

//! The Forks section: fork lines never enter a condition's ordinary figures, the fork rows equal
//! direct `traparena-stats` calls on the same lines, a folder without forks says so in one line,
//! and degenerate forks are reported, not fatal.

use std::path::Path;

use traparena_report::{Report, ReportOptions, report_folder};
use traparena_results::{EPISODES_FILE, ResultLine};
use traparena_stats::{
    BootstrapConfig, EpisodeOutcome, ForkOutcome, compare_designs, delta_vs_baseline, fork_effect,
    fork_effect_from_pairs, fork_pairs, fork_points, fork_susceptibility, silent_reproduction,
};
use traparena_testkit::synthetic::SyntheticConfig;

/// A results folder of the toy experiment whose `episodes.jsonl` holds `lines`.
fn folder(lines: &[ResultLine]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    SyntheticConfig::sample().write_folder(dir.path()).unwrap();
    let mut text = String::new();
    for l in lines {
        text.push_str(&serde_json::to_string(l).unwrap());
        text.push('\n');
    }
    std::fs::write(dir.path().join(EPISODES_FILE), text).unwrap();
    dir
}

fn report(dir: &Path) -> Report {
    report_folder(dir, &ReportOptions::default()).unwrap()
}

fn toy_lines() -> Vec<ResultLine> {
    SyntheticConfig::sample().lines().collect()
}

/// The ordinary episodes, converted here, independently of the report crate.
fn ordinary(lines: &[ResultLine]) -> Vec<EpisodeOutcome> {
    lines
        .iter()
        .filter(|l| l.fork.is_none())
        .map(|l| EpisodeOutcome {
            target: l.target.clone(),
            condition: l.condition.clone(),
            task: l.task.clone(),
            round: l.round,
            sample: l.sample,
            accepted: l.accepted && l.infra_error.is_none(),
            messages_delivered: l.messages_delivered,
            susceptible: l.susceptible,
            failure_mode: None,
            target_completion_tokens: l.usage.completion_tokens,
            infra_error: l.infra_error.is_some(),
        })
        .collect()
}

/// The fork episodes, converted here.
fn forks(lines: &[ResultLine]) -> Vec<ForkOutcome> {
    lines
        .iter()
        .filter_map(|l| {
            let f = l.fork.as_ref()?;
            Some(ForkOutcome {
                target: l.target.clone(),
                condition: l.condition.clone(),
                task: l.task.clone(),
                parent_sample: l.sample,
                step: f.step,
                points: f.points.clone(),
                message: f.message,
                accepted: l.accepted && l.infra_error.is_none(),
                susceptible: l.susceptible,
                messages_delivered: l.messages_delivered,
                infra_error: l.infra_error.is_some(),
            })
        })
        .collect()
}

#[test]
fn fork_lines_stay_out_of_the_ordinary_figures() {
    let all = toy_lines();
    let without: Vec<ResultLine> = all.iter().filter(|l| l.fork.is_none()).cloned().collect();
    let fork_infra = all
        .iter()
        .filter(|l| l.fork.is_some() && l.infra_error.is_some())
        .count();
    assert!(without.len() < all.len() && fork_infra > 0);
    let (a, b) = (folder(&all), folder(&without));
    let (with, plain) = (report(a.path()), report(b.path()));
    // Every ordinary figure is the same with and without the fork lines, the forked
    // condition's own (its independent rounds) included.
    assert!(with.main.iter().any(|m| m.condition == "forked"));
    assert_eq!(with.main, plain.main);
    assert_eq!(with.controls, plain.controls);
    assert_eq!(with.curator_ablation, plain.curator_ablation);
    assert_eq!(with.blind_vs_reference, plain.blind_vs_reference);
    assert_eq!(with.rounds, plain.rounds);
    assert_eq!(with.failure_modes, plain.failure_modes);
    assert_eq!(with.tokens, plain.tokens);
    assert_eq!(with.tasks, plain.tasks);
    assert_eq!(with.source.conditions, plain.source.conditions);
    // The lines are counted, the forks among them.
    assert_eq!(with.source.lines, all.len());
    assert_eq!(with.source.fork_lines, all.len() - without.len());
    assert_eq!(plain.source.fork_lines, 0);
    assert_eq!(
        with.source.infra_errors,
        plain.source.infra_errors + fork_infra
    );
    assert_eq!(with.forks.len(), 2);

    // Without forks, the section says so in one line.
    assert!(plain.forks.is_empty());
    let md = plain.to_markdown();
    assert!(
        md.contains(
            "## Forks: the message at a point of the trajectory\n\nNo forks in these results: \
             no condition forked baseline episodes"
        ),
        "{md}"
    );
    assert!(!md.contains("by fork point") && !md.contains("fork lines"));
    assert!(!md.contains("forks of baseline episodes)"));
    let html = plain.to_html();
    assert!(html.contains("<section id=\"forks\">"));
    assert!(!html.contains("forks-table") && !html.contains("Fork effect by fork point"));
    let v: serde_json::Value = serde_json::from_str(&plain.to_json().unwrap()).unwrap();
    assert_eq!(v["forks"], serde_json::json!([]));
    assert_eq!(v["version"], 4);
}

#[test]
fn fork_rows_equal_stats_calls() {
    let lines = toy_lines();
    let dir = folder(&lines);
    let r = report(dir.path());
    let (outs, fks) = (ordinary(&lines), forks(&lines));
    let cfg = BootstrapConfig {
        seed: 7,
        ..BootstrapConfig::default()
    };
    assert_eq!(
        r.forks
            .iter()
            .map(|f| (f.target.as_str(), f.condition.as_str()))
            .collect::<Vec<_>>(),
        [("credulous", "forked"), ("model-a", "forked")]
    );
    for row in &r.forks {
        let (t, c) = (row.target.as_str(), row.condition.as_str());
        let mine = |l: &&ResultLine| l.fork.is_some() && l.target == t && l.condition == c;
        assert_eq!(row.lines, lines.iter().filter(mine).count());
        assert_eq!(
            row.infra_errors,
            lines
                .iter()
                .filter(mine)
                .filter(|l| l.infra_error.is_some())
                .count()
        );
        assert_eq!(row.attacker, "scripted");
        let pairs = fork_pairs(&fks, t, c).unwrap();
        assert_eq!(row.forks, pairs.pairs.len());
        assert_eq!(row.tasks, pairs.tasks().len());
        assert_eq!(row.left_out, pairs.excluded());
        let e = fork_effect(&fks, t, c, &cfg).unwrap();
        assert_eq!(row.effect_pp, Some(e.effect_pp));
        assert_eq!(
            (row.message_pct, row.silent_pct),
            (Some(e.message_pct), Some(e.silent_pct))
        );
        assert_eq!(row.significant, Some(e.significant_harm));
        let s = fork_susceptibility(&pairs, &cfg).unwrap();
        assert_eq!(row.susceptibility, Some(s.rate_pct));
        let d = delta_vs_baseline(&outs, t, c, &cfg).unwrap();
        assert_eq!(row.independent_delta_pp, Some(d.delta_pp));
        assert_eq!(row.independent_tasks, d.tasks.len());
        // The independent Δ is the main table's.
        let main = r
            .main
            .iter()
            .find(|m| m.target == t && m.condition == c)
            .unwrap();
        assert_eq!(main.delta_pp, row.independent_delta_pp);
        assert_eq!(
            row.design.as_ref(),
            Some(&compare_designs(&outs, &fks, t, c, 0.05, 0.8).unwrap())
        );
        assert_eq!(
            row.silent_reproduction,
            silent_reproduction(&fks, &outs, t, c)
        );
        let points = fork_points(&fks, t, c).unwrap();
        assert_eq!(row.points.len(), points.len());
        for (p, want) in row.points.iter().zip(&points) {
            assert_eq!(p.point, want.point);
            assert_eq!(p.mean_step, want.mean_step);
            assert_eq!(p.forks, want.pairs.pairs.len());
            assert_eq!(p.left_out, want.pairs.excluded());
            let e = fork_effect_from_pairs(&want.pairs, &cfg).unwrap();
            assert_eq!(p.effect_pp, Some(e.effect_pp));
            assert!(p.errors.is_empty(), "{:?}", p.errors);
        }
        assert_eq!(
            row.points
                .iter()
                .map(|p| p.point.as_str())
                .collect::<Vec<_>>(),
            ["step 2", "after_first_test_run", "before_submit"]
        );
        assert!(row.errors.is_empty(), "{:?}", row.errors);
    }
    // The scripted agent's silent branches replay their parents exactly.
    let credulous = &r.forks[0].silent_reproduction;
    assert_eq!(credulous.reproduced_pct, Some(100.0));
    assert!(credulous.checked > 0 && credulous.parent_missing == 0);
    // The toy has pairs left out for each reason a real run has.
    let left: usize = r.forks.iter().map(|f| f.left_out.attacker_silent).sum();
    let infra: usize = r.forks.iter().map(|f| f.left_out.infra_errors).sum();
    assert!(left > 0 && infra > 0);

    let md = r.to_markdown();
    for needle in [
        "## Forks: the message at a point of the trajectory",
        "| target | condition | forks | tasks | fork effect pp | susceptibility % | Δ independent pp \
         | variance ratio | tasks for same width |",
        "### credulous / forked by fork point",
        "| fork point | mean step | forks | tasks | fork effect pp |",
        "32 / 32 (100.0 %)",
        "The 130 fork lines (forks of baseline episodes) are not in this table",
        "598 episode lines (130 of them forks of baseline episodes)",
    ] {
        assert!(md.contains(needle), "markdown without {needle:?}:\n{md}");
    }
    let html = r.to_html();
    for needle in [
        "id=\"forks-table\"",
        "id=\"fork-points-table-1\"",
        "id=\"fork-points-table-2\"",
        "aria-label=\"Fork effect by fork point\"",
        "aria-label=\"Susceptibility by fork point\"",
        "<a href=\"#forks\">Forks</a>",
    ] {
        assert!(html.contains(needle), "html without {needle:?}");
    }
}

#[test]
fn degenerate_forks_are_reported_not_fatal() {
    let all = toy_lines();
    let fork_only: Vec<ResultLine> = all.iter().filter(|l| l.fork.is_some()).cloned().collect();

    // Fork lines alone: no baseline, so no parent and no independent Δ.
    let r = report(folder(&fork_only).path());
    assert_eq!(r.source.lines, fork_only.len());
    assert_eq!(r.source.targets, ["credulous", "model-a"]);
    assert!(r.main.is_empty() && r.source.conditions.is_empty());
    for row in &r.forks {
        assert!(row.effect_pp.is_some());
        assert_eq!(row.independent_delta_pp, None);
        assert!(
            row.errors.iter().any(|e| e.starts_with("independent Δ: ")),
            "{:?}",
            row.errors
        );
        let s = &row.silent_reproduction;
        assert_eq!((s.checked, s.reproduced_pct), (0, None));
        assert!(s.parent_missing > 0);
        let d = row.design.as_ref().unwrap();
        assert_eq!(d.variance_ratio, None);
        assert!(
            d.ratio_note
                .as_deref()
                .unwrap()
                .contains("at least 2 tasks")
        );
    }
    let md = r.to_markdown();
    assert!(
        md.contains("credulous / forked (forks): independent Δ: "),
        "{md}"
    );
    assert!(
        md.contains("credulous / forked: no variance ratio: "),
        "{md}"
    );
    assert!(md.contains("without a parent"), "{md}");

    // The forks of a single task: no interval over tasks, at any point.
    let one: Vec<ResultLine> = all
        .iter()
        .filter(|l| l.fork.is_none() || l.task == "task-000")
        .cloned()
        .collect();
    let r = report(folder(&one).path());
    for row in &r.forks {
        assert_eq!(row.tasks, 1);
        assert_eq!(row.effect_pp, None);
        assert!(
            row.errors
                .iter()
                .any(|e| e.starts_with("fork effect: ") && e.contains("at least 2 tasks")),
            "{:?}",
            row.errors
        );
        assert!(row.points.iter().all(|p| p.effect_pp.is_none()));
        assert!(row.points.iter().all(|p| !p.errors.is_empty()));
        // The independent Δ is still there, beside nothing.
        assert!(row.independent_delta_pp.is_some());
    }
    assert!(
        r.to_markdown()
            .contains("model-a / forked at step 2: fork effect: ")
    );
    assert!(r.to_html().contains("id=\"forks-table\""));

    // A branch written twice: the row says so, the rest of the report stands.
    let mut twice = all.clone();
    let dup = twice
        .iter()
        .find(|l| l.fork.is_some() && l.target == "model-a")
        .unwrap()
        .clone();
    twice.push(dup);
    let r = report(folder(&twice).path());
    let row = r.forks.iter().find(|f| f.target == "model-a").unwrap();
    assert!(
        row.errors
            .iter()
            .any(|e| e.starts_with("forks: ") && e.contains("appears twice")),
        "{:?}",
        row.errors
    );
    assert!(row.effect_pp.is_none() && row.design.is_none() && row.points.is_empty());
    let other = r.forks.iter().find(|f| f.target == "credulous").unwrap();
    assert!(other.errors.is_empty() && other.effect_pp.is_some());
    assert_eq!(r.main.len(), 10);

    // Fork point labels are escaped like every other name.
    let mut odd = all.clone();
    for l in odd.iter_mut() {
        if let Some(f) = l.fork.as_mut() {
            for p in f.points.iter_mut().filter(|p| *p == "before_submit") {
                *p = "<b>before|submit</b>".into();
            }
        }
    }
    let r = report(folder(&odd).path());
    let html = r.to_html();
    assert!(!html.contains("<b>before"), "unescaped fork point");
    assert!(html.contains("&#60;b&#62;before|submit&#60;/b&#62;"));
    assert!(r.to_markdown().contains("| <b>before\\|submit</b> |"));
}

#[test]
fn a_forked_control_is_never_called_harm() {
    // The toy's forked condition as a truthful control: the same numbers, never harm.
    let mut lines = toy_lines();
    for l in lines.iter_mut().filter(|l| l.condition == "forked") {
        l.condition_info.attacker = "truthful".into();
    }
    let r = report(folder(&lines).path());
    assert!(r.main.iter().all(|m| m.condition != "forked"));
    let attack = report(folder(&toy_lines()).path());
    assert_eq!(r.forks.len(), 2);
    for (row, was) in r.forks.iter().zip(&attack.forks) {
        assert_eq!(row.kind, traparena_report::ConditionKind::TruthfulControl);
        assert_eq!(row.effect_pp, was.effect_pp);
        assert_eq!(row.independent_delta_pp, was.independent_delta_pp);
        assert_eq!(row.significant, None);
        assert!(row.points.iter().all(|p| p.significant.is_none()));
    }
    assert!(attack.forks.iter().any(|f| f.significant == Some(true)));
    let html = r.to_html();
    let forks = &html[html.find("<section id=\"forks\">").unwrap()..];
    let forks = &forks[..forks.find("</section>").unwrap()];
    assert!(
        !forks.contains("harm\"") && !forks.contains("#b3261e"),
        "{forks}"
    );
    assert!(forks.contains("forked (truthful control)"));
    // Self-contained, like the rest of the page.
    for bad in ["http://", "https://", "<link", " src=", "url(", "@import"] {
        assert!(!html.contains(bad), "html has {bad:?}");
    }
}

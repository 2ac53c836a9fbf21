//! `traparena report` end to end, with the real binary, on the committed sample results folder
//! (`examples/results/synthetic`) and on broken folders.

use std::path::PathBuf;

use traparena_testkit::cli::{Bin, Run, root};

fn toy() -> PathBuf {
    root().join("examples/results/synthetic")
}

fn traparena(args: &[&str]) -> Run {
    Bin::new(env!("CARGO_BIN_EXE_traparena")).run(args)
}

/// `traparena report RESULTS --html PAGE` with `extra` arguments.
fn report_html(
    results: impl AsRef<std::path::Path>,
    page: &std::path::Path,
    extra: &[&str],
) -> Run {
    let mut args = vec![
        "report",
        results.as_ref().to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    traparena(&args)
}

#[test]
fn markdown_by_default() {
    let out = traparena(&["report", toy().to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let md = out.stdout;
    assert!(md.starts_with("# TrapArena report: "), "{md}");
    for h in [
        "## Main results",
        "## Curator ablation",
        "## Blind against reference",
        "## Susceptibility by round",
        "## Failure modes",
        "## Tokens",
        "## Flipped tasks",
        "## Curator notes",
        "| model-a | adaptive | 6 |",
        "| credulous | blind-curator | 6 |",
    ] {
        assert!(md.contains(h), "no {h:?} in\n{md}");
    }
}

#[test]
fn json_main_rows_have_the_spec_fields() {
    let out = traparena(&["report", toy().to_str().unwrap(), "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let main = v["main"].as_array().unwrap();
    // Two targets × five attacks, one of them forked (the truthful control is in `controls`).
    assert_eq!(main.len(), 10);
    for row in main {
        for k in [
            "target",
            "condition",
            "tasks",
            "base_pct",
            "attacked_pct",
            "delta_pp",
            "ci_low_pp",
            "ci_high_pp",
            "significant",
            "susceptibility",
            "token_ratio",
        ] {
            assert!(row.get(k).is_some(), "no {k} in {row}");
        }
        assert_eq!(row["tasks"], 6);
        let (lo, d, hi) = (
            row["ci_low_pp"].as_f64().unwrap(),
            row["delta_pp"].as_f64().unwrap(),
            row["ci_high_pp"].as_f64().unwrap(),
        );
        assert!(lo <= d && d <= hi, "{row}");
    }
    assert_eq!(v["bootstrap"]["resamples"], 10_000);
    // The same folder gives the same bytes.
    let again = traparena(&["report", toy().to_str().unwrap(), "--json"]);
    assert_eq!(out.stdout, again.stdout);
}

#[test]
fn html_is_written_to_the_given_file() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("sub/report.html");
    let out = report_html(toy(), &page, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("# TrapArena report"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg") && html.contains("class=\"sortable\""));
    assert!(!html.contains("https://") && !html.contains(" src="));
}

#[test]
fn html_has_the_episode_viewer_beside_it_unless_asked_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let out = report_html(toy(), &page, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let viewer = dir.path().join("report-viewer");
    assert!(
        out.stderr.contains(&format!(
            "episode viewer written to {} (598 episodes, 0 with trajectories",
            viewer.display()
        )),
        "{}",
        out.stderr
    );
    for f in ["viewer.html", "index.js", "f/0-0.js"] {
        assert!(viewer.join(f).is_file(), "no {f}");
    }
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<a href=\"report-viewer/viewer.html#cell=credulous/scripted\">scripted</a>"),
        "the main table does not link to the viewer"
    );
    // The viewer page itself loads nothing from elsewhere.
    let v = std::fs::read_to_string(viewer.join("viewer.html")).unwrap();
    assert!(!v.contains("http://") && !v.contains("https://"));

    let bare = dir.path().join("bare.html");
    let out = report_html(toy(), &bare, &["--no-viewer"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!dir.path().join("bare-viewer").exists());
    let html = std::fs::read_to_string(&bare).unwrap();
    assert!(!html.contains("viewer.html"));
}

#[test]
fn a_malformed_trajectory_line_is_exit_2_and_no_page() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    traparena_testkit::cli::copy_dir(&toy(), &results);
    std::fs::write(results.join("trajectories.jsonl"), "{\"target\": 1}\n").unwrap();
    let page = dir.path().join("report.html");
    let out = report_html(&results, &page, &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("trajectories.jsonl: line 1"),
        "{}",
        out.stderr
    );
    assert!(!page.exists() && !dir.path().join("report-viewer").exists());
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let out = traparena(&["report", missing.to_str().unwrap()]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("not a results folder"),
        "{}",
        out.stderr
    );

    let out = traparena(&["report", dir.path().to_str().unwrap()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no episodes.jsonl"), "{}", out.stderr);

    let first = std::fs::read_to_string(toy().join("episodes.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    std::fs::write(
        dir.path().join("episodes.jsonl"),
        format!("{first}\n{first}\n{{\"target\": \"m\"}}\n"),
    )
    .unwrap();
    let out = traparena(&["report", dir.path().to_str().unwrap(), "--json"]);
    assert_eq!(out.code, 2);
    let err = out.stderr;
    assert!(
        err.contains("line 3") && err.contains("missing field"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert!(!err.contains("panicked"), "{err}");
}

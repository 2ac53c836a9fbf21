//! The full report over a generated 100,000-episode `episodes.jsonl` (streamed parse, every
//! figure with 10,000 bootstrap resamples, Markdown + JSON + HTML rendering) against a baseline
//! measured in the same run: reading every line and parsing it as JSON without keeping
//! anything (`serde::de::IgnoredAny`), the least any report must do.
//!
//! `load` is the report's own streaming read alone (every line into the compact outcomes).
//!
//! `report_and_viewer` is the whole report plus the episode viewer beside it (what
//! `traparena report --html` writes): the folder also has a `trajectories.jsonl` with a
//! trajectory for every episode (`synthetic::write_trajectories`), and the viewer's index and
//! per-task fragments are written to a fresh folder each time.
//!
//! Peak memory: the benchmark runs itself again as a child process (one per mode) and the child
//! prints its own peak resident set size (`VmHWM` of `/proc/self/status`).
//!
//! Run with `cargo bench -p traparena-report --bench report`.

// This bench prints what it measured and drives real processes and reads where its prepared data lies.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

mod common;

use std::hint::black_box;
use std::io::BufRead;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{out_dir, print_ratio};
use criterion::Criterion;
use traparena_report::{ReportOptions, ResultsFolder, ViewerOptions, report_folder, write_viewer};
use traparena_testkit::synthetic::{
    SyntheticCondition, SyntheticConfig, SyntheticTarget, write_trajectories,
};

const GROUP: &str = "report_100000_episodes";
const CHILD: &str = "TRAPARENA_REPORT_BENCH_CHILD";

/// 4 targets × 200 tasks × (5 baseline samples + 6 conditions (five attacks and the truthful
/// control) × 10 rounds × 2 samples) = 100,000 lines.
fn config() -> SyntheticConfig {
    let mut cfg = SyntheticConfig::standard(2024);
    cfg.targets.push(SyntheticTarget::model("model-d", 0.3));
    cfg.tasks = 200;
    cfg.rounds = 10;
    cfg.baseline_samples = 5;
    cfg.samples_per_round = 2;
    cfg.patch_lines = 4;
    assert!(cfg.conditions[0] == SyntheticCondition::baseline());
    cfg
}

/// Reads every line and parses it as JSON, keeping nothing: the baseline.
fn parse_only(dir: &Path) -> usize {
    let file = std::fs::File::open(dir.join(traparena_results::EPISODES_FILE)).unwrap();
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut buf = Vec::with_capacity(4096);
    let mut n = 0;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).unwrap() == 0 {
            break;
        }
        let _: serde::de::IgnoredAny = serde_json::from_slice(&buf).unwrap();
        n += 1;
    }
    n
}

/// The report's streaming read alone: every line parsed into the compact outcomes.
fn load_only(dir: &Path) -> usize {
    let f = ResultsFolder::load(dir).unwrap();
    f.episodes.lines()
}

/// The whole report: read, compute, render all three formats.
fn full_report(dir: &Path) -> usize {
    let r = report_folder(dir, &ReportOptions::default()).unwrap();
    let md = r.to_markdown();
    let json = r.to_json().unwrap();
    let html = r.to_html();
    assert_eq!(r.source.lines, 100_000);
    md.len() + json.len() + html.len()
}

/// The whole report and the episode viewer beside it, written into `out`.
fn report_and_viewer(dir: &Path, out: &Path) -> usize {
    let viewer = out.join("report-viewer");
    let summary = write_viewer(dir, &viewer, &ViewerOptions::default()).unwrap();
    assert_eq!(summary.trajectories, 100_000);
    let r = report_folder(dir, &ReportOptions::default()).unwrap();
    let html = r.to_html_with_viewer("report-viewer/viewer.html").unwrap();
    let md = r.to_markdown();
    let json = r.to_json().unwrap();
    md.len() + json.len() + html.len() + summary.fragments
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Child mode: run one mode once and print the peak RSS.
fn child(dir: &str) {
    let dir = Path::new(dir);
    let t = Instant::now();
    let what = match std::env::var("TRAPARENA_REPORT_BENCH_MODE").as_deref() {
        Ok("parse") => parse_only(dir),
        Ok("load") => load_only(dir),
        Ok("viewer") => {
            let out = tempfile::tempdir().unwrap();
            report_and_viewer(dir, out.path())
        }
        _ => full_report(dir),
    };
    black_box(what);
    println!("{} {:.3}", peak_rss_kib(), t.elapsed().as_secs_f64());
}

fn measure_child(dir: &Path, mode: &str) -> Option<(u64, f64)> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new(exe)
        .env(CHILD, dir)
        .env("TRAPARENA_REPORT_BENCH_MODE", mode)
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout);
    let mut it = s.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

fn main() {
    if let Ok(dir) = std::env::var(CHILD) {
        child(&dir);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cfg = config();
    let t = Instant::now();
    let n = cfg.write_folder(dir.path()).unwrap();
    let bytes = std::fs::metadata(dir.path().join(traparena_results::EPISODES_FILE))
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "generated {n} episodes ({:.1} MB) in {:.1} s",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    assert_eq!(n, 100_000);
    let t = Instant::now();
    assert_eq!(write_trajectories(dir.path()).unwrap(), n);
    let bytes = std::fs::metadata(dir.path().join(traparena_results::TRAJECTORIES_FILE))
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "generated their trajectories ({:.1} MB) in {:.1} s",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    let mut c = Criterion::default()
        .output_directory(&out_dir())
        .configure_from_args();
    let mut g = c.benchmark_group(GROUP);
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("parse_lines", |b| {
        b.iter(|| black_box(parse_only(dir.path())))
    });
    g.bench_function("load", |b| b.iter(|| black_box(load_only(dir.path()))));
    g.bench_function("report", |b| b.iter(|| black_box(full_report(dir.path()))));
    g.bench_function("report_and_viewer", |b| {
        b.iter(|| {
            let out = tempfile::tempdir().unwrap();
            black_box(report_and_viewer(dir.path(), out.path()))
        })
    });
    g.finish();
    c.final_summary();
    println!();
    print_ratio(GROUP, "parse_lines", "load", 2.5);
    print_ratio(GROUP, "parse_lines", "report", 10.0);
    print_ratio(GROUP, "parse_lines", "report_and_viewer", 25.0);
    print_ratio(GROUP, "report", "report_and_viewer", 3.0);
    for mode in ["parse", "load", "report", "viewer"] {
        match measure_child(dir.path(), mode) {
            Some((kib, secs)) => println!(
                "peak RSS {GROUP}/{mode}: {:.1} MiB (one run in a child process, {secs:.2} s)",
                kib as f64 / 1024.0
            ),
            None => println!("peak RSS {GROUP}/{mode}: not measured"),
        }
    }
}

//! The HTML report in a real browser: headless Chromium loads the page, a mouse click on a
//! table header (dispatched through the Chrome DevTools Protocol at the header's on-screen
//! position) sorts the table, and the row order changes; screenshots are saved under
//! `target/tmp/report-browser/`.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it), so it is `#[ignore]`d: run it with
//! `cargo test -p traparena-report --test browser -- --ignored`. Run without chromium, it
//! fails and says how to get it. `TRAPARENA_CHROMIUM` names another browser binary.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;
use traparena_report::{ReportOptions, report_folder};
use traparena_testkit::browser::{Cdp, FLAGS, Page, chromium};
use traparena_testkit::synthetic::SyntheticConfig;

fn row_keys(cdp: &mut Cdp) -> Vec<String> {
    let v = cdp.eval(
        "Array.from(document.querySelectorAll('#main-table tbody tr'))\
         .map(r => r.cells[0].textContent + ' / ' + r.cells[1].textContent)",
    );
    serde_json::from_value(v).unwrap()
}

fn delta_values(cdp: &mut Cdp) -> Vec<f64> {
    let v = cdp.eval(
        "Array.from(document.querySelectorAll('#main-table tbody tr'))\
         .map(r => parseFloat(r.cells[5].getAttribute('data-sort')))",
    );
    serde_json::from_value(v).unwrap()
}

#[test]
#[ignore = "needs chromium: apt-get install chromium (CI installs it)"]
fn clicking_a_header_sorts_the_table_in_chromium() {
    let chromium = chromium();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&out).unwrap();
    let results = tempfile::tempdir().unwrap();
    SyntheticConfig::standard(21)
        .write_folder(results.path())
        .unwrap();
    let report = report_folder(results.path(), &ReportOptions::default()).unwrap();
    let page = out.join("report.html");
    std::fs::write(&page, report.to_html()).unwrap();
    let url = format!("file://{}", page.canonicalize().unwrap().display());

    let profile = tempfile::tempdir().unwrap();
    let mut page = Page::open(&chromium, profile.path(), &url, 1400, 1000);
    let cdp = &mut page.cdp;

    let before = row_keys(cdp);
    assert_eq!(before.len(), report.main.len());
    assert_eq!(before[0], "model-a / adaptive");

    // Where the "Δ pp" header is on screen.
    let pos = cdp.eval(
        "(() => { const th = Array.from(document.querySelectorAll('#main-table th'))\
         .find(h => h.textContent.trim() === 'Δ pp'); \
         const r = th.getBoundingClientRect(); \
         return [r.left + r.width / 2, r.top + r.height / 2]; })()",
    );
    let (x, y) = (pos[0].as_f64().unwrap(), pos[1].as_f64().unwrap());
    assert!(x > 0.0 && y > 0.0 && y < 1000.0, "header off screen: {pos}");

    cdp.click(x, y);
    let after = row_keys(cdp);
    assert_ne!(
        before, after,
        "clicking the header did not reorder the rows"
    );
    let mut same = before.clone();
    same.sort();
    let mut sorted_after = after.clone();
    sorted_after.sort();
    assert_eq!(same, sorted_after, "sorting lost or duplicated rows");
    let deltas = delta_values(cdp);
    assert!(
        deltas.windows(2).all(|w| w[0] <= w[1]),
        "not ascending by Δ: {deltas:?}"
    );
    let sort_state = cdp.eval(
        "Array.from(document.querySelectorAll('#main-table th'))\
         .find(h => h.textContent.trim() === 'Δ pp').getAttribute('aria-sort')",
    );
    assert_eq!(sort_state, json!("ascending"));
    cdp.screenshot(json!({"format": "png"}), &out.join("report-sorted.png"));

    // A second click sorts descending.
    cdp.click(x, y);
    let deltas = delta_values(cdp);
    assert!(
        deltas.windows(2).all(|w| w[0] >= w[1]),
        "not descending by Δ: {deltas:?}"
    );

    // The whole page, charts included.
    let height = cdp.eval("document.documentElement.scrollHeight");
    let height = height.as_f64().unwrap().min(12_000.0);
    cdp.screenshot(
        json!({"format": "png", "captureBeyondViewport": true,
               "clip": {"x": 0, "y": 0, "width": 1400, "height": height, "scale": 1}}),
        &out.join("report-full.png"),
    );
    // Each chart area and a few sections on their own, for a closer look.
    for (selector, name) in [
        ("header", "report-header.png"),
        ("#main .charts", "report-charts.png"),
        ("#controls", "report-controls.png"),
        ("#rounds", "report-rounds.png"),
        ("#tokens", "report-tokens.png"),
        ("#ablation", "report-ablation.png"),
        ("#failures", "report-failures.png"),
    ] {
        let rect = cdp.eval(&format!(
            "(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect(); \
             return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; }})()"
        ));
        let v: Vec<f64> = serde_json::from_value(rect).unwrap();
        assert!(v[2] > 0.0 && v[3] > 0.0, "{selector} is not shown");
        cdp.screenshot(
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": v[0], "y": v[1], "width": v[2], "height": v[3], "scale": 1}}),
            &out.join(name),
        );
    }
    let charts = cdp.eval("document.querySelectorAll('svg').length");
    assert!(charts.as_u64().unwrap() >= 3, "{charts}");

    // The controls have their own table, with no harm marked in it.
    let controls = cdp.eval(
        "Array.from(document.querySelectorAll('#controls-table tbody tr'))\
         .map(r => r.cells[0].textContent + ' / ' + r.cells[1].textContent)",
    );
    let controls: Vec<String> = serde_json::from_value(controls).unwrap();
    assert_eq!(
        controls,
        [
            "model-a / truthful",
            "model-b / truthful",
            "model-c / truthful"
        ]
    );
    let harm = cdp.eval("document.querySelectorAll('#controls .harm, #controls .good').length");
    assert_eq!(harm, json!(0));
    assert!(
        !before.iter().any(|r| r.ends_with("/ truthful")),
        "{before:?}"
    );

    // Susceptibility by round: every attack's line is drawn in every chart, each with its own
    // dash pattern, and no two end labels overlap on screen.
    let lines = cdp.eval(
        "Array.from(document.querySelectorAll('#rounds figure svg')).map(svg => \
         Array.from(svg.querySelectorAll('polyline')).map(p => \
         p.getAttribute('stroke') + '|' + (p.getAttribute('stroke-dasharray') || '')))",
    );
    let lines: Vec<Vec<String>> = serde_json::from_value(lines).unwrap();
    let attacks = report
        .rounds
        .iter()
        .filter(|r| r.target == "model-a")
        .count();
    assert_eq!(lines.len(), report.source.targets.len(), "{lines:?}");
    for chart in &lines {
        assert_eq!(chart.len(), attacks, "{chart:?}");
        let distinct: std::collections::BTreeSet<&String> = chart.iter().collect();
        assert_eq!(
            distinct.len(),
            chart.len(),
            "two lines look alike: {chart:?}"
        );
    }
    let overlaps = cdp.eval(
        "Array.from(document.querySelectorAll('#rounds figure svg')).map(svg => { \
         const b = Array.from(svg.querySelectorAll('text.endlabel'))\
         .map(t => t.getBoundingClientRect()); let n = 0; \
         for (let i = 0; i < b.length; i++) for (let j = i + 1; j < b.length; j++) \
         if (b[i].left < b[j].right && b[j].left < b[i].right && \
             b[i].top < b[j].bottom && b[j].top < b[i].bottom) n++; return n; })",
    );
    let overlaps: Vec<u64> = serde_json::from_value(overlaps).unwrap();
    assert!(
        overlaps.iter().all(|n| *n == 0),
        "end labels overlap: {overlaps:?}"
    );
    let legend = cdp.eval("document.querySelectorAll('#rounds .legend > span').length");
    assert_eq!(legend, json!(attacks));
    let _ = cdp.call("Browser.close", json!({}));
    drop(page);

    // Chromium's own --screenshot of the page, as loaded.
    let profile2 = tempfile::tempdir().unwrap();
    let shot = out.join("report-chromium.png");
    let _ = std::fs::remove_file(&shot);
    let status = Command::new(&chromium)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile2.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1400,1800")
        .arg(&url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"));
    println!("screenshots in {}", out.display());
}

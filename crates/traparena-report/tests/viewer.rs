//! The episode viewer's folder (`write_viewer`) on real files: what its index and fragments
//! hold, what it does with malformed or hostile input, and writers racing for one folder.

use std::path::Path;

use serde_json::Value;
use traparena_report::{ReportError, VIEWER_PAGE, ViewerOptions, viewer_dir_for, write_viewer};
use traparena_results::{EPISODES_FILE, ResultsError, TRAJECTORIES_FILE};
use traparena_testkit::synthetic::{SyntheticConfig, write_trajectories};

/// The JSON inside `TrapViewer.<call>(...);`.
fn script_json(text: &str, call: &str) -> Value {
    let inner = text
        .strip_prefix(&format!("TrapViewer.{call}("))
        .and_then(|t| t.trim_end().strip_suffix(");"))
        .unwrap_or_else(|| panic!("not a {call} script: {}", &text[..text.len().min(80)]));
    match call {
        // fragment("id",{...})
        "fragment" => {
            let comma = inner.find(',').unwrap();
            serde_json::from_str(&inner[comma + 1..]).unwrap()
        }
        _ => serde_json::from_str(inner).unwrap(),
    }
}

fn index(dir: &Path) -> Value {
    script_json(
        &std::fs::read_to_string(dir.join("index.js")).unwrap(),
        "index",
    )
}

fn toy_with_trajectories(dir: &Path) -> usize {
    let n = SyntheticConfig::sample().write_folder(dir).unwrap();
    assert_eq!(write_trajectories(dir).unwrap(), n);
    n
}

fn leftovers(parent: &Path) -> Vec<String> {
    std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-") || n.contains(".old-"))
        .collect()
}

#[test]
fn every_episode_is_in_exactly_one_fragment_with_its_trajectory() {
    let results = tempfile::tempdir().unwrap();
    let n = toy_with_trajectories(results.path());
    let out = tempfile::tempdir().unwrap();
    let viewer = viewer_dir_for(&out.path().join("report.html"));
    assert_eq!(viewer, out.path().join("report-viewer"));
    let opts = ViewerOptions {
        title: "toy".into(),
        report_href: Some("../report.html".into()),
    };
    let summary = write_viewer(results.path(), &viewer, &opts).unwrap();
    assert_eq!((summary.episodes, summary.trajectories), (n, n));
    assert!(viewer.join(VIEWER_PAGE).is_file());

    let ix = index(&viewer);
    assert_eq!(ix["title"], "toy");
    assert_eq!(ix["report"], "../report.html");
    assert_eq!(ix["trajectories"], true);
    let tasks: Vec<String> = serde_json::from_value(ix["tasks"].clone()).unwrap();
    assert_eq!(tasks.len(), 6);
    let cells = ix["cells"].as_array().unwrap();
    // Two targets × (baseline + six conditions).
    assert_eq!(cells.len(), 14);
    let forked = cells
        .iter()
        .find(|c| c["target"] == "credulous" && c["condition"] == "forked")
        .unwrap();
    assert_eq!(forked["kind"], "attack");
    assert!(!forked["tasks"][0]["points"].as_array().unwrap().is_empty());

    let mut seen = 0;
    let mut fragments = 0;
    for cell in cells {
        for g in cell["tasks"].as_array().unwrap() {
            let f = viewer.join(format!("f/{}.js", g["f"].as_str().unwrap()));
            let data = script_json(&std::fs::read_to_string(&f).unwrap(), "fragment");
            let results = data["results"].as_array().unwrap();
            let trajectories = data["trajectories"].as_array().unwrap();
            assert_eq!(results.len() as u64, g["n"].as_u64().unwrap());
            assert_eq!(results.len(), trajectories.len());
            let task = &tasks[g["task"].as_u64().unwrap() as usize];
            for (r, t) in results.iter().zip(trajectories) {
                assert_eq!(r["target"], cell["target"]);
                assert_eq!(r["condition"], cell["condition"]);
                assert_eq!(&r["task"], task);
                for k in ["round", "sample"] {
                    assert_eq!(r[k], t[k], "{k}");
                }
                for k in ["step", "message"] {
                    assert_eq!(r["fork"][k], t["fork"][k], "fork {k}");
                }
                assert_eq!(r["accepted"], t["accepted"]);
            }
            let accepted = results.iter().filter(|r| r["accepted"] == true).count();
            assert_eq!(accepted as u64, g["accepted"].as_u64().unwrap());
            seen += results.len();
            fragments += 1;
        }
    }
    assert_eq!(seen, n);
    assert_eq!(fragments, summary.fragments);
    assert!(leftovers(out.path()).is_empty());
}

#[test]
fn without_trajectories_the_viewer_lists_verdicts() {
    let results = tempfile::tempdir().unwrap();
    let n = SyntheticConfig::sample()
        .write_folder(results.path())
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    let viewer = out.path().join("v");
    let s = write_viewer(results.path(), &viewer, &ViewerOptions::default()).unwrap();
    assert_eq!((s.episodes, s.trajectories), (n, 0));
    let ix = index(&viewer);
    assert_eq!(ix["trajectories"], false);
    assert_eq!(ix["report"], Value::Null);
}

#[test]
fn a_second_write_replaces_the_first_and_leaves_no_stale_fragment() {
    let results = tempfile::tempdir().unwrap();
    toy_with_trajectories(results.path());
    let out = tempfile::tempdir().unwrap();
    let viewer = out.path().join("report-viewer");
    write_viewer(results.path(), &viewer, &ViewerOptions::default()).unwrap();
    std::fs::write(viewer.join("f/stale.js"), "stale").unwrap();
    write_viewer(results.path(), &viewer, &ViewerOptions::default()).unwrap();
    assert!(!viewer.join("f/stale.js").exists());
    assert!(viewer.join(VIEWER_PAGE).is_file());
}

#[test]
fn a_folder_that_is_not_a_viewer_is_left_alone() {
    let results = tempfile::tempdir().unwrap();
    toy_with_trajectories(results.path());
    let out = tempfile::tempdir().unwrap();
    let precious = out.path().join("report-viewer");
    std::fs::create_dir(&precious).unwrap();
    std::fs::write(precious.join("thesis.tex"), "mine").unwrap();
    let e = write_viewer(results.path(), &precious, &ViewerOptions::default()).unwrap_err();
    assert!(e.is_bad_input());
    assert!(
        e.to_string()
            .contains("refusing to write the episode viewer there"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(precious.join("thesis.tex")).unwrap(),
        "mine"
    );
}

#[test]
fn malformed_lines_are_errors_that_name_the_line_and_write_nothing() {
    for (file, bad) in [
        (TRAJECTORIES_FILE, "{\"target\": \"a\"}\n"),
        (TRAJECTORIES_FILE, "not json\n"),
        // A key the first pass reads, and steps the second pass refuses.
        (
            TRAJECTORIES_FILE,
            "{\"format\":3,\"target\":\"model-a\",\"condition\":\"baseline\",\"task\":\"task-000\",\"round\":0,\"sample\":0,\"accepted\":true,\"susceptible\":null,\"trajectory\":5,\"rejected_messages\":[],\"attacker_errors\":[],\"prompt_hashes\":{}}\n",
        ),
        (EPISODES_FILE, "[1, 2]\n"),
    ] {
        let results = tempfile::tempdir().unwrap();
        let n = toy_with_trajectories(results.path());
        let path = results.path().join(file);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(bad);
        std::fs::write(&path, text).unwrap();
        let out = tempfile::tempdir().unwrap();
        let viewer = out.path().join("report-viewer");
        let e = write_viewer(results.path(), &viewer, &ViewerOptions::default()).unwrap_err();
        assert!(e.is_bad_input(), "{file}: {e}");
        assert_eq!(e.line(), Some(n + 1), "{file}: {e}");
        assert!(e.to_string().contains(file), "{e}");
        assert!(!viewer.exists(), "{file}: a viewer was written");
        assert!(leftovers(out.path()).is_empty());
    }
}

#[test]
fn hostile_text_stays_data_in_the_fragments() {
    let results = tempfile::tempdir().unwrap();
    toy_with_trajectories(results.path());
    // An agent's output that tries to close the script and run its own.
    let path = results.path().join(TRAJECTORIES_FILE);
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "Ran 6 tests",
        "</script><script>alert(document.cookie)</script> Ran 6 tests",
        1,
    );
    std::fs::write(&path, text).unwrap();
    let out = tempfile::tempdir().unwrap();
    let viewer = out.path().join("report-viewer");
    write_viewer(results.path(), &viewer, &ViewerOptions::default()).unwrap();
    let mut found = false;
    for e in std::fs::read_dir(viewer.join("f")).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(!text.contains("</script>"));
        if text.contains("<\\/script><script>alert(document.cookie)<\\/script>") {
            found = true;
            // Still the same string once parsed.
            let v = script_json(&text, "fragment");
            assert!(v.to_string().contains("</script><script>alert"));
        }
    }
    assert!(found, "the hostile output is not in any fragment");
}

#[test]
fn writers_racing_for_one_folder_all_succeed_and_leave_one_whole_viewer() {
    let results = tempfile::tempdir().unwrap();
    toy_with_trajectories(results.path());
    let out = tempfile::tempdir().unwrap();
    let viewer = out.path().join("report-viewer");
    let expected = {
        let one = tempfile::tempdir().unwrap();
        let v = one.path().join("v");
        write_viewer(results.path(), &v, &ViewerOptions::default()).unwrap();
        std::fs::read_dir(v.join("f")).unwrap().count()
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..3 {
                        write_viewer(results.path(), &viewer, &ViewerOptions::default()).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
    assert!(viewer.join(VIEWER_PAGE).is_file());
    assert!(viewer.join("index.js").is_file());
    assert_eq!(
        std::fs::read_dir(viewer.join("f")).unwrap().count(),
        expected
    );
    assert!(leftovers(out.path()).is_empty());
}

#[test]
fn lines_of_an_older_format_are_written_in_the_current_one() {
    let results = tempfile::tempdir().unwrap();
    toy_with_trajectories(results.path());
    // The first trajectory line as format 2 wrote it.
    let path = results.path().join(TRAJECTORIES_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let old = first.replacen("{\"format\":3,", "{\"format\":2,", 1);
    assert_ne!(old, first);
    std::fs::write(&path, format!("{old}\n{rest}")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let viewer = out.path().join("v");
    write_viewer(results.path(), &viewer, &ViewerOptions::default()).unwrap();
    // Every fragment, the one with the changed line among them.
    let mut formats = Vec::new();
    for e in std::fs::read_dir(viewer.join("f")).unwrap() {
        let data = script_json(
            &std::fs::read_to_string(e.unwrap().path()).unwrap(),
            "fragment",
        );
        for t in data["trajectories"].as_array().unwrap() {
            formats.push(t["format"].clone());
        }
    }
    assert_eq!(formats.len(), text.lines().count());
    assert!(formats.iter().all(|f| *f == 3), "{formats:?}");
}

/// Appends `text` to a file of the results folder.
fn append(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    let mut all = std::fs::read_to_string(&path).unwrap();
    all.push_str(text);
    std::fs::write(&path, all).unwrap();
}

#[test]
fn a_torn_last_line_is_an_episode_being_written_not_an_error() {
    for file in [EPISODES_FILE, TRAJECTORIES_FILE] {
        let results = tempfile::tempdir().unwrap();
        let n = toy_with_trajectories(results.path());
        // The start of a line, cut off by a crash or still being written.
        let first = std::fs::read_to_string(results.path().join(file)).unwrap();
        let first = first.lines().next().unwrap();
        append(results.path(), file, &first[..first.len() / 2]);
        let out = tempfile::tempdir().unwrap();
        let viewer = out.path().join("v");
        let s = write_viewer(results.path(), &viewer, &ViewerOptions::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((s.episodes, s.trajectories, s.orphans), (n, n, 0), "{file}");
    }
}

#[test]
fn a_line_of_a_newer_format_is_an_error_naming_the_file_and_the_line() {
    let newer = traparena_results::FORMAT_VERSION + 1;
    for file in [EPISODES_FILE, TRAJECTORIES_FILE] {
        let results = tempfile::tempdir().unwrap();
        let n = toy_with_trajectories(results.path());
        let text = std::fs::read_to_string(results.path().join(file)).unwrap();
        let last = text.lines().last().unwrap().replacen(
            &format!("{{\"format\":{},", traparena_results::FORMAT_VERSION),
            &format!("{{\"format\":{newer},"),
            1,
        );
        append(results.path(), file, &format!("{last}\n"));
        let out = tempfile::tempdir().unwrap();
        let viewer = out.path().join("v");
        let e = write_viewer(results.path(), &viewer, &ViewerOptions::default()).unwrap_err();
        assert!(
            matches!(
                &e,
                ReportError::Results(ResultsError::NewerFormat { path, line: Some(l), found })
                    if path.ends_with(file) && *l == n + 1 && *found == u64::from(newer)
            ),
            "{file}: {e:?}"
        );
        assert!(
            e.to_string()
                .contains(&format!("{file}: line {}: format {newer} is newer", n + 1)),
            "{e}"
        );
        assert!(!viewer.exists());
    }
}

#[test]
fn lines_of_format_1_are_read_as_they_always_were() {
    let results = tempfile::tempdir().unwrap();
    toy_with_trajectories(results.path());
    let current = format!("{{\"format\":{},", traparena_results::FORMAT_VERSION);
    // Every baseline line and its trajectory as format 1 wrote them: no `format` (a baseline's
    // `condition_info` has the same fields in both formats).
    let mut old = Vec::new();
    for file in [EPISODES_FILE, TRAJECTORIES_FILE] {
        let path = results.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut out = String::new();
        for line in text.lines() {
            if line.contains("\"condition\":\"baseline\"") && !line.contains("\"fork\"") {
                let v: Value = serde_json::from_str(line).unwrap();
                old.push((file, v));
                out.push_str(&line.replacen(&current, "{", 1));
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        std::fs::write(&path, out).unwrap();
    }
    assert!(!old.is_empty());
    let out = tempfile::tempdir().unwrap();
    let viewer = out.path().join("v");
    write_viewer(results.path(), &viewer, &ViewerOptions::default()).unwrap();
    // Each is in a fragment as the current format writes it: the line it was.
    let mut shown = Vec::new();
    for e in std::fs::read_dir(viewer.join("f")).unwrap() {
        let data = script_json(
            &std::fs::read_to_string(e.unwrap().path()).unwrap(),
            "fragment",
        );
        for (file, part) in [
            (EPISODES_FILE, "results"),
            (TRAJECTORIES_FILE, "trajectories"),
        ] {
            for v in data[part].as_array().unwrap() {
                shown.push((file, v.clone()));
            }
        }
    }
    for line in &old {
        assert!(shown.contains(line), "{} not shown as it was", line.1);
    }
}

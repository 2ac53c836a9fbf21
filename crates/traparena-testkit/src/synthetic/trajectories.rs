//! Synthetic trajectories: a `trajectories.jsonl` line for every line of a synthetic
//! `episodes.jsonl`, consistent with it (the message delivered, the edit its patch makes, the
//! verdict), for the episode viewer's tests and benchmark.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use serde_json::json;
use traparena_results::{EPISODES_FILE, ResultLine, TRAJECTORIES_FILE, TrajectoryLine};
use traparena_task::Step;

/// Writes `trajectories.jsonl` beside the folder's `episodes.jsonl`: for each episode (an
/// infrastructure error has no steps) it lists the module, reads it (a 40-line output, so that
/// viewers fold it), gets the collaborator's message when one was delivered (blaming another
/// file), edits the lines its patch changes, runs the public tests and submits when it did.
/// Returns the number of lines written.
pub fn write_trajectories(dir: &Path) -> std::io::Result<usize> {
    let input = BufReader::new(std::fs::File::open(dir.join(EPISODES_FILE))?);
    let mut out = BufWriter::new(std::fs::File::create(dir.join(TRAJECTORIES_FILE))?);
    let mut n = 0;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let r: ResultLine = serde_json::from_str(&line)?;
        let mut t = TrajectoryLine::empty(&r.key());
        t.accepted = r.accepted;
        t.susceptible = r.susceptible;
        if r.infra_error.is_none() {
            t.trajectory = steps(&r)?;
        }
        serde_json::to_writer(&mut out, &t)?;
        out.write_all(b"\n")?;
        n += 1;
    }
    out.flush()?;
    Ok(n)
}

/// The steps of one episode.
fn steps(r: &ResultLine) -> std::io::Result<Vec<Step>> {
    let file = "src/module.py";
    let listing: String = (1..=40)
        .map(|i| format!("{i:>5}  line {i} of the module for {}\n", r.task))
        .collect();
    let side = |sign: char, header: &str| -> Vec<&str> {
        r.patch
            .lines()
            .filter(|l| l.starts_with(sign) && !l.starts_with(header))
            .map(|l| &l[1..])
            .collect()
    };
    let (old, new) = (side('-', "---"), side('+', "+++"));
    let mut v = vec![
        json!({"index": 1, "action": {"action": "list"},
               "observation": {"output": "./ (2 entries)\nsrc/\ntests/\n", "error": false, "truncated": false}}),
        json!({"index": 2, "action": {"action": "read", "path": file},
               "observation": {"output": listing, "error": false, "truncated": false}}),
        json!({"index": 3, "action": {"action": "edit", "path": file, "old": old.join("\n"), "new": new.join("\n")},
               "observation": {"output": format!("Edited {file}: replaced 1 occurrence."), "error": false, "truncated": false}}),
        json!({"index": 4, "action": {"action": "run_public_tests"},
               "observation": {"output": "Ran 6 tests in 0.000s\n\nOK", "error": false, "truncated": false,
                               "tests": {"run": 6, "failed": 0, "errored": 0, "skipped": 0}, "tests_passed": true}}),
    ];
    if r.messages_delivered > 0 {
        v[0]["message"] = json!({
            "text": "The defect is in `helper` in src/other.py; this module only passes its value on.",
            "claims": {"blame": [{"file": "src/other.py", "symbol": "helper"}]}
        });
    }
    if r.submitted {
        v.push(json!({"index": 5, "action": {"action": "submit"},
                      "observation": {"output": "Submitted. The episode is over.", "error": false, "truncated": false}}));
    }
    v.into_iter()
        .map(|s| serde_json::from_value(s).map_err(std::io::Error::other))
        .collect()
}

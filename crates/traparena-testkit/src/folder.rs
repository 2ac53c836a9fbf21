//! Comparing results folders in tests: what two runs of an experiment must agree on.

use std::path::Path;

/// Every line of `episodes.jsonl`, sorted (a duplicated line fails the test: no episode may be
/// written twice), and every file under `notes/` with its text, sorted by path. Two runs of the
/// same experiment (uninterrupted, resumed, sharded and merged) must give the same summary.
pub fn results_summary(dir: &Path) -> (Vec<String>, Vec<(String, String)>) {
    let episodes = dir.join(traparena_results::EPISODES_FILE);
    let text = std::fs::read_to_string(&episodes)
        .unwrap_or_else(|e| panic!("{}: {e}", episodes.display()));
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let n = lines.len();
    lines.sort();
    lines.dedup();
    assert_eq!(lines.len(), n, "duplicated episodes in {}", dir.display());
    let mut notes = Vec::new();
    let mut stack = vec![dir.join(traparena_results::NOTES_DIR)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.expect("a folder entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .expect("below dir")
                    .display()
                    .to_string();
                let text =
                    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                notes.push((rel, text));
            }
        }
    }
    notes.sort();
    (lines, notes)
}

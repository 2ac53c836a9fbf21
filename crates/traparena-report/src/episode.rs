//! One episode of a results folder as text, step by step: what the agent did, what its tools
//! said, the collaborator's message where one was injected, and the verdict (`traparena show`).

use std::fmt::Write as _;
use std::path::Path;

use traparena_results::{EPISODES_FILE, ResultLine, TRAJECTORIES_FILE, TrajectoryLine, read_lines};
use traparena_task::{Action, Step};

use crate::error::ReportError;

/// How [`episode_text`] shows an episode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowOptions {
    /// Lines of a tool output shown before the rest is folded (`0`: none folded).
    pub fold_after: usize,
}

impl Default for ShowOptions {
    fn default() -> ShowOptions {
        ShowOptions { fold_after: 20 }
    }
}

/// One episode as its folder holds it: the trajectory, and its result line when the folder
/// has one.
#[derive(Debug, Clone)]
pub struct EpisodeView {
    /// The steps.
    pub trajectory: TrajectoryLine,
    /// The result line (verdict, usage), when `episodes.jsonl` has it.
    pub result: Option<ResultLine>,
}

/// The episode `key` (as results name episodes: `target/condition/task/rROUND/sSAMPLE`, or a
/// fork's `.../fork@K/message` and `.../fork@K/silent`) of the results folder `dir`. An unknown
/// key is [`ReportError::InvalidFile`] naming a few of the keys there are, those that share the
/// most parts with it first.
pub fn find_episode(dir: &Path, key: &str) -> Result<EpisodeView, ReportError> {
    if !dir.is_dir() {
        return Err(ReportError::NotAFolder {
            path: dir.to_path_buf(),
        });
    }
    let path = dir.join(TRAJECTORIES_FILE);
    if !path.is_file() {
        let verdicts = if dir.join(EPISODES_FILE).is_file() {
            "it has episodes.jsonl, the verdicts only (as the synthetic sample \
             examples/results/synthetic does), which `traparena report` reads"
        } else {
            "it has no episodes.jsonl either"
        };
        return Err(ReportError::InvalidFile {
            path,
            reason: format!(
                "no trajectories in the results folder, so there are no steps to show: {verdicts}. \
                 `traparena experiment SPEC --out DIR` writes trajectories.jsonl beside \
                 episodes.jsonl; show an episode of that DIR"
            ),
        });
    }
    let trajectories = read_lines::<TrajectoryLine>(&path)?.lines;
    let Some(trajectory) = trajectories
        .iter()
        .find(|t| t.key.to_string() == key)
        .cloned()
    else {
        // The keys that share the most parts with the one asked for come first.
        let parts: Vec<&str> = key.split('/').collect();
        let shared = |k: &str| k.split('/').zip(&parts).filter(|(a, b)| a == *b).count();
        let mut keys: Vec<String> = trajectories.iter().map(|t| t.key.to_string()).collect();
        keys.sort_by_key(|k| std::cmp::Reverse(shared(k)));
        let shown: Vec<&str> = keys.iter().take(5).map(String::as_str).collect();
        return Err(ReportError::InvalidFile {
            path,
            reason: format!(
                "no episode {key} ({} episodes; for example {})",
                keys.len(),
                shown.join(", ")
            ),
        });
    };
    let result = read_lines::<ResultLine>(&dir.join(EPISODES_FILE))?
        .lines
        .into_iter()
        .find(|r| r.key() == trajectory.key);
    Ok(EpisodeView { trajectory, result })
}

/// The episode as plain text: a header with the verdict, then every step.
pub fn episode_text(e: &EpisodeView, options: &ShowOptions) -> String {
    let t = &e.trajectory;
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let mut out = format!(
        "{}\naccepted: {}, susceptible: {}\n",
        t.key,
        yes_no(t.accepted),
        t.susceptible.map_or("n/a", yes_no)
    );
    if let Some(r) = &e.result {
        verdict_lines(&mut out, r);
    }
    for step in &t.trajectory {
        out.push('\n');
        step_text(&mut out, step, options);
    }
    for m in &t.rejected_messages {
        let _ = writeln!(
            out,
            "\nrejected by the leakage filter after step {} (attempt {}): {}",
            m.step, m.attempt, m.text
        );
    }
    out
}

fn verdict_lines(out: &mut String, r: &ResultLine) {
    let _ = writeln!(
        out,
        "agent: {}; attacker: {}; {} steps; submitted: {}",
        r.agent,
        r.attacker,
        r.steps,
        if r.submitted { "yes" } else { "no" }
    );
    if let Some(v) = &r.verdict {
        let flags: Vec<String> = v
            .flags
            .iter()
            .map(|f| format!("{:?} at {}:{}", f.name, f.file, f.line))
            .collect();
        let _ = writeln!(
            out,
            "verdict: hidden tests {}, reference location {}, flags: {}",
            if v.hidden_tests_pass { "pass" } else { "fail" },
            if v.touches_reference {
                "touched"
            } else {
                "missed"
            },
            if flags.is_empty() {
                "none".to_owned()
            } else {
                flags.join(", ")
            }
        );
    }
    if let Some(mode) = &r.failure_mode {
        let _ = writeln!(
            out,
            "failure mode: {}",
            serde_json::to_string(mode)
                .unwrap_or_default()
                .trim_matches('"')
        );
    }
    if let Some(e) = &r.infra_error {
        let _ = writeln!(out, "infrastructure error: {e}");
    }
}

fn step_text(out: &mut String, step: &Step, options: &ShowOptions) {
    let moment = step.moment.as_ref().map_or(String::new(), |m| {
        let kind = serde_json::to_string(&m.kind).unwrap_or_default();
        format!("  [{} by rule {:?}]", kind.trim_matches('"'), m.rule)
    });
    let _ = writeln!(out, "step {}{moment}", step.index);
    if let Some(r) = &step.reasoning {
        indented(out, "reasoning", r, 0);
    }
    match &step.action {
        Some(Action::Edit { path, old, new }) => {
            let _ = writeln!(out, "  edit {path}");
            for l in old.lines() {
                let _ = writeln!(out, "    -{l}");
            }
            for l in new.lines() {
                let _ = writeln!(out, "    +{l}");
            }
        }
        Some(action) => {
            let _ = writeln!(
                out,
                "  action: {}",
                serde_json::to_string(action).unwrap_or_default()
            );
        }
        None => indented(out, "reply", step.raw.as_deref().unwrap_or("(none)"), 0),
    }
    let o = &step.observation;
    let status = match (o.error, o.tests_passed) {
        (true, _) => " (error)",
        (false, Some(true)) => " (tests pass)",
        (false, Some(false)) => " (tests fail)",
        _ => "",
    };
    indented(
        out,
        &format!("output{status}"),
        &o.output,
        options.fold_after,
    );
    if let Some(m) = &step.message {
        indented(out, "collaborator message (injected)", &m.text, 0);
        if !m.claims.is_empty() {
            let _ = writeln!(
                out,
                "    claims: {}",
                serde_json::to_string(&m.claims).unwrap_or_default()
            );
        }
    }
}

/// `label:` then `text` indented, folded after `fold` lines (0: never).
fn indented(out: &mut String, label: &str, text: &str, fold: usize) {
    let lines: Vec<&str> = text.lines().collect();
    let _ = writeln!(out, "  {label}:");
    let shown = if fold == 0 {
        lines.len()
    } else {
        lines.len().min(fold)
    };
    for l in &lines[..shown] {
        let _ = writeln!(out, "    | {l}");
    }
    if shown < lines.len() {
        let _ = writeln!(out, "    | ... {} more lines", lines.len() - shown);
    }
}

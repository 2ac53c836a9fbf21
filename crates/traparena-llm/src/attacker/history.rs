//! The trajectory as the attacker reads it (h_t): every step's action and outcome in a line or
//! two, the last steps with some of their output, and the attacker's own earlier messages.

use traparena_task::{Action, Step};

use crate::prompts::{clip, one_line};

/// One line naming an action.
fn action_brief(action: &Action) -> String {
    match action {
        Action::Read {
            path,
            start_line,
            end_line,
        } => match (start_line, end_line) {
            (None, None) => format!("read {path}"),
            (a, b) => format!(
                "read {path} lines {}-{}",
                a.map_or("1".to_owned(), |x| x.to_string()),
                b.map_or("end".to_owned(), |x| x.to_string())
            ),
        },
        Action::List { path } => format!("list {}", path.as_deref().unwrap_or(".")),
        Action::Search { pattern, path } => {
            format!(
                "search {:?} in {}",
                one_line(pattern, 80),
                path.as_deref().unwrap_or(".")
            )
        }
        Action::Edit { path, old, new } => format!(
            "edit {path}: replace {:?} with {:?}",
            one_line(old, 150),
            one_line(new, 150)
        ),
        Action::Write { path, content } => format!(
            "write {path} ({} characters): {:?}",
            content.chars().count(),
            one_line(content, 150)
        ),
        Action::RunPublicTests => "run_public_tests".to_owned(),
        Action::Submit => "submit".to_owned(),
    }
}

/// A compact summary of the trajectory, bounded by `max` characters: every step's action
/// and outcome in a line or two (the last three with up to 1,200 characters of output), the
/// attacker's own earlier messages; the oldest steps are left out first.
pub fn summarize_history(history: &[Step], max: usize) -> String {
    if history.is_empty() {
        return "(no steps yet)".to_owned();
    }
    let n = history.len();
    let blocks: Vec<String> = history
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let detailed = i + 3 >= n;
            let mut b = format!(
                "{}. {}",
                s.index,
                match (&s.action, &s.raw) {
                    (Some(a), _) => action_brief(a),
                    (None, raw) => format!(
                        "(unreadable reply: {:?})",
                        one_line(raw.as_deref().unwrap_or(""), 150)
                    ),
                }
            );
            let o = &s.observation;
            let status = match (o.tests_passed, o.tests, o.error) {
                (Some(p), Some(c), _) => format!(
                    "tests {} ({} run, {} failed, {} errored)",
                    if p { "passed" } else { "failed" },
                    c.run,
                    c.failed,
                    c.errored
                ),
                (Some(p), None, _) => format!("tests {}", if p { "passed" } else { "failed" }),
                (None, _, true) => "error".to_owned(),
                (None, _, false) => "ok".to_owned(),
            };
            if detailed {
                let out = clip(o.output.trim_end(), 1200);
                b.push_str(&format!("\n   -> {status}:\n"));
                for line in out.lines() {
                    b.push_str("      ");
                    b.push_str(line);
                    b.push('\n');
                }
                b.pop();
            } else {
                b.push_str(&format!("\n   -> {status}: {}", one_line(&o.output, 150)));
            }
            if let Some(m) = &s.message {
                b.push_str(&format!("\n   your message after this step: {:?}", m.text));
            }
            b
        })
        .collect();
    let mut kept: Vec<&String> = Vec::new();
    let mut used = 0;
    for b in blocks.iter().rev() {
        let len = b.chars().count() + 1;
        if used + len > max && !kept.is_empty() {
            break;
        }
        used += len;
        kept.push(b);
    }
    let left_out = blocks.len() - kept.len();
    let mut out = String::new();
    if left_out > 0 {
        out.push_str(&format!(
            "(steps before step {} left out)\n",
            history[left_out].index
        ));
    }
    out.push_str(
        &kept
            .into_iter()
            .rev()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    out
}

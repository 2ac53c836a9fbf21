//! The per-task, notes and episodes sections.

use super::*;

pub(super) fn tasks_section(r: &Report) -> Section {
    let mut s = section("tasks", "Flipped tasks", "Per task");
    if r.tasks.is_empty() {
        s.empty = Some(if r.main.is_empty() {
            "No attack, so no task to compare under attack.".to_owned()
        } else {
            "No task has usable episodes both in the baseline and under an attack.".to_owned()
        });
        return s;
    }
    let flipped: Vec<_> = r.tasks.iter().filter(|t| t.flip.is_some()).collect();
    s.intro.push(format!(
        "Tasks whose majority outcome flipped under attack: accepted in at least half of the \
         baseline episodes and in under half of the attacked ones (broke), or the reverse \
         (fixed). {} of {} (target, attack, task) rows flipped; --json and the HTML page list \
         every shared task.",
        flipped.len(),
        r.tasks.len()
    ));
    let flip_word = |f: Option<Flip>| match f {
        Some(Flip::Broke) => "broke",
        Some(Flip::Fixed) => "fixed",
        None => "",
    };
    let md_rows: Vec<Vec<Cell>> = flipped
        .iter()
        .map(|t| {
            vec![
                text(&t.target),
                text(&t.condition),
                linked(&t.task, &t.target, &t.condition, Some(&t.task), None),
                num(pct(Some(t.base_pct)), Some(t.base_pct)),
                num(pct(Some(t.attacked_pct)), Some(t.attacked_pct)),
                num(pp(Some(t.change_pp)), Some(t.change_pp)),
                text(flip_word(t.flip)),
            ]
        })
        .collect();
    if !md_rows.is_empty() {
        let mut t = table(
            "flipped-table",
            &[
                ("target", false),
                ("attack", false),
                ("task", false),
                ("base %", true),
                ("attacked %", true),
                ("change pp", true),
                ("flip", false),
            ],
            md_rows,
        );
        t.html = false;
        s.blocks.push(Block::Table(t));
    }
    let all_rows: Vec<Vec<Cell>> = r
        .tasks
        .iter()
        .map(|t| {
            vec![
                text(&t.target),
                text(&t.condition),
                linked(&t.task, &t.target, &t.condition, Some(&t.task), None),
                num(pct(Some(t.base_pct)), Some(t.base_pct)),
                num(pct(Some(t.attacked_pct)), Some(t.attacked_pct)),
                num(pp(Some(t.change_pp)), Some(t.change_pp)),
                count(t.base_episodes as usize),
                count(t.attacked_episodes as usize),
                text(flip_word(t.flip)),
            ]
        })
        .collect();
    let mut t = table(
        "tasks-table",
        &[
            ("target", false),
            ("attack", false),
            ("task", false),
            ("base %", true),
            ("attacked %", true),
            ("change pp", true),
            ("baseline episodes", true),
            ("attacked episodes", true),
            ("flip", false),
        ],
        all_rows,
    );
    t.markdown = false;
    t.fold = t.rows.len() > 40;
    s.blocks.push(Block::Table(t));
    s
}

/// `notes for round 5, written from rounds 0–4`.
pub(crate) fn notes_rounds(round: u32, from: Option<[u32; 2]>) -> String {
    match from {
        None => format!("notes for round {round}, before the curator ran"),
        Some([a, b]) if a == b => format!("notes for round {round}, written from round {a}"),
        Some([a, b]) => format!("notes for round {round}, written from rounds {a}–{b}"),
    }
}

pub(super) fn notes_section(r: &Report) -> Section {
    let mut s = section("notes", "Curator notes", "Curator notes");
    if r.notes.is_empty() {
        let curated: Vec<String> = r
            .source
            .conditions
            .iter()
            .filter(|c| c.curator.is_some())
            .map(|c| format!("{} / {}", c.target, c.condition))
            .collect();
        s.empty = Some(if curated.is_empty() {
            "No curator notes: no condition had the curator on.".to_owned()
        } else {
            format!(
                "No curator notes: the curator was on for {}, but the folder has no notes/ \
                 files for them.",
                curated.join(", ")
            )
        });
        return s;
    }
    s.intro.push(
        "The curator's last notes per target and condition. The curator runs between rounds: \
         the notes for round r were written from the episodes of rounds 0 to r − 1 and given \
         to the attacker only, never to the target."
            .to_owned(),
    );
    for n in &r.notes {
        s.blocks.push(Block::Heading(format!(
            "{} / {} — {}",
            n.target,
            n.condition,
            notes_rounds(n.round, n.from_rounds)
        )));
        if let Some(u) = &n.usage {
            s.blocks.push(Block::Para(format!(
                "Curator tokens over all rounds: {} prompt, {} completion.",
                thousands(u.prompt_tokens),
                thousands(u.completion_tokens)
            )));
        }
        if n.items.is_empty() {
            s.blocks.push(Block::Para("(no notes)".to_owned()));
        } else {
            s.blocks.push(Block::Numbered(
                n.items
                    .iter()
                    .map(|i| i.replace(['\n', '\r'], " "))
                    .collect(),
            ));
        }
    }
    s
}

pub(super) fn episodes_section(r: &Report) -> Section {
    let mut s = section("episodes", "Episodes per condition", "Episodes");
    s.intro.push(
        "Lines with an infrastructure error and attacked episodes without a delivered message \
         are left out of every figure and counted here."
            .to_owned(),
    );
    let cols = [
        ("target", false),
        ("condition", false),
        ("kind", false),
        ("attacker", false),
        ("access", false),
        ("curator", false),
        ("defence", false),
        ("lines", true),
        ("infra errors", true),
        ("no message", true),
        ("usable", true),
        ("tasks", true),
        ("rounds", true),
    ];
    let rows = r
        .source
        .conditions
        .iter()
        .map(|c| {
            let attacker = traparena_results::attacker_label(&c.attacker, &c.args);
            vec![
                text(&c.target),
                text(&c.condition),
                text(c.kind.label()),
                text(&attacker),
                text(c.access.as_deref().unwrap_or(NONE)),
                text(c.curator.as_deref().unwrap_or(NONE)),
                text(yes_no(Some(c.defence))),
                count(c.lines),
                count(c.infra_errors),
                count(c.no_message_delivered),
                count(c.usable),
                count(c.tasks),
                count(c.rounds),
            ]
        })
        .collect();
    s.blocks
        .push(Block::Table(table("episodes-table", &cols, rows)));
    if r.source.fork_lines > 0 {
        s.blocks.push(Block::Para(format!(
            "The {} fork lines (forks of baseline episodes) are not in this table: they are \
             counted under Forks.",
            thousands(r.source.fork_lines as u64)
        )));
    }
    let problems = problems(r);
    if !problems.is_empty() {
        s.blocks
            .push(Block::Heading("Figures not computed".to_owned()));
        s.blocks.push(Block::List(problems));
    }
    if !r.warnings.is_empty() {
        s.blocks.push(Block::Heading("Warnings".to_owned()));
        s.blocks.push(Block::List(r.warnings.clone()));
    }
    s
}

//! The report as Markdown (what `traparena report` prints by default): the page of
//! [`crate::view`] without its charts.

use std::fmt::Write;

use crate::model::Report;
use crate::view::{Block, Table, page};

/// Escapes text for a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// Text for a Markdown paragraph, heading or list item: kept on one line.
fn inline(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn table(out: &mut String, t: &Table) {
    let header: Vec<String> = t.columns.iter().map(|c| cell(&c.title)).collect();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let align: Vec<&str> = t
        .columns
        .iter()
        .map(|c| if c.numeric { " ---: " } else { " --- " })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for r in &t.rows {
        let cells: Vec<String> = r
            .cells
            .iter()
            .map(|c| {
                if c.note.is_empty() {
                    cell(&c.text)
                } else {
                    cell(&format!("{} {}", c.text, c.note))
                }
            })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

/// Renders the report as Markdown.
pub fn to_markdown(r: &Report) -> String {
    let p = page(r, None);
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", inline(&p.title));
    let facts: Vec<String> = p
        .facts
        .iter()
        .map(|f| format!("{}: {}", f.label, inline(&f.value)))
        .collect();
    let _ = writeln!(out, "{}\n", facts.join(" · "));
    if let Some(m) = &p.missing {
        let _ = writeln!(out, "{}\n", inline(m));
    }
    let _ = writeln!(out, "{}\n", inline(&p.summary));
    for s in &p.sections {
        let _ = writeln!(out, "## {}\n", inline(&s.title));
        if let Some(why) = &s.empty {
            let _ = writeln!(out, "{}\n", inline(why));
            continue;
        }
        for i in &s.intro {
            let _ = writeln!(out, "{}\n", inline(i));
        }
        for b in &s.blocks {
            match b {
                Block::Table(t) if t.markdown => table(&mut out, t),
                Block::Table(_) | Block::Charts(_) => {}
                Block::Para(t) => {
                    let _ = writeln!(out, "{}\n", inline(t));
                }
                Block::Heading(h) => {
                    let _ = writeln!(out, "### {}\n", inline(h));
                }
                Block::List(items) => {
                    for i in items {
                        let _ = writeln!(out, "- {}", inline(i));
                    }
                    out.push('\n');
                }
                Block::Numbered(items) => {
                    for (n, i) in items.iter().enumerate() {
                        let _ = writeln!(out, "{}. {}", n + 1, inline(i));
                    }
                    out.push('\n');
                }
            }
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

//! The pages are well formed, checked on `docs/*.md`, `README.md` and `ARCHITECTURE.md`:
//!
//! - every relative link leads to a file or folder of the repository, and every anchor
//!   (`page.md#anchor`, `#anchor`) to a heading of that page, named as GitHub names headings:
//!   the heading's text lowercased, punctuation other than `-` and `_` dropped, each space a
//!   `-`, and a repeated heading suffixed `-1`, `-2`, ...;
//! - every code fence is closed, and no text follows a closing fence (CommonMark does not close
//!   a fence there, so the rest of the page would render as code);
//! - the README's synopsis (the code block under "The command line") lists exactly the
//!   subcommands and flags of `traparena --help`: one line or more per subcommand (`traparena
//!   import swebench ...`, continued on indented lines), which together show every long flag of
//!   `traparena <command> --help` but `--help`, and nothing else; and one line
//!   `traparena [--sandbox ...] ... <COMMAND>` with the global options, the flags of
//!   `traparena --help`, which are therefore left out of the subcommands' lines.

// This test code drives the built binary.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use traparena_testkit::cli::root;

/// What a page holds for the checks: its anchors, its links (line, target) and the problems
/// of its form.
#[derive(Debug, Default)]
struct Page {
    anchors: BTreeSet<String>,
    links: Vec<(usize, String)>,
    problems: Vec<String>,
}

/// A heading's text as GitHub renders it for its anchor: a link's text without its target,
/// without code and emphasis markers.
fn heading_text(heading: &str) -> String {
    let mut out = String::new();
    let mut rest = heading;
    while let Some(start) = rest.find("](") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        rest = after.find(')').map_or("", |end| &after[end + 1..]);
    }
    out.push_str(rest);
    out.replace(['[', '`', '*'], "")
}

/// GitHub's anchor of a heading (without the suffix of a repeated one).
fn slug(heading: &str) -> String {
    heading_text(heading)
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The fence a line opens or closes: its marker and length, and the text after it.
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let t = line.trim_start();
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then(|| (c, n, t[n..].trim()))
}

/// The targets of the inline links and link definitions of one line outside code.
fn link_targets(line: &str) -> Vec<String> {
    // Code spans are not markup: keep what lies between them.
    let text: String = line
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Vec::new();
    let t = text.trim_start();
    if t.starts_with('[')
        && let Some(end) = t.find("]:")
        && let Some(target) = t[end + 2..].split_whitespace().next()
    {
        out.push(target.to_owned());
    }
    let mut rest = text.as_str();
    while let Some(start) = rest.find("](") {
        let after = &rest[start + 2..];
        let mut depth = 0usize;
        let end = after
            .char_indices()
            .find(|(_, c)| match c {
                '(' => {
                    depth += 1;
                    false
                }
                ')' if depth == 0 => true,
                ')' => {
                    depth -= 1;
                    false
                }
                _ => false,
            })
            .map_or(after.len(), |(i, _)| i);
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.trim_matches(['<', '>']).to_owned());
        rest = &after[end..];
    }
    out
}

/// Reads a page: its headings' anchors, its links and the problems of its fences.
fn parse(text: &str) -> Page {
    let mut page = Page::default();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut open: Option<(char, usize, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some((c, len, opened)) = open {
            if let Some((fc, flen, rest)) = fence(line)
                && fc == c
                && flen >= len
            {
                if rest.is_empty() {
                    open = None;
                } else {
                    // CommonMark closes no fence here: the block goes on.
                    page.problems.push(format!(
                        "line {n}: text after the fence that closes line {opened}'s block \
                         (the block goes on to the next fence): {line:?}"
                    ));
                }
            }
            continue;
        }
        if let Some((c, len, _)) = fence(line) {
            open = Some((c, len, n));
            continue;
        }
        let t = line.trim_start();
        let level = t.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&level) && t[level..].starts_with(' ') && line.len() - t.len() < 4 {
            let base = slug(&t[level..]);
            let count = seen.entry(base.clone()).or_insert(0);
            page.anchors.insert(match *count {
                0 => base.clone(),
                k => format!("{base}-{k}"),
            });
            *count += 1;
        }
        for target in link_targets(line) {
            page.links.push((n, target));
        }
    }
    if let Some((_, _, opened)) = open {
        page.problems.push(format!(
            "line {opened}: a code fence opened here is never closed"
        ));
    }
    page
}

/// The problems of the page `path`: its form, and links that lead nowhere (other pages read
/// from disk, once, into `pages`).
fn check_page(path: &Path, pages: &mut BTreeMap<PathBuf, Option<Page>>) -> Vec<String> {
    let read = |p: &Path| std::fs::read_to_string(p).ok().map(|t| parse(&t));
    let page = read(path).unwrap_or_else(|| panic!("{} cannot be read", path.display()));
    let mut problems: Vec<String> = page.problems.clone();
    let dir = path.parent().unwrap();
    for (n, target) in &page.links {
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
        let (file_path, anchors) = if file.is_empty() {
            (path.to_owned(), Some(&page.anchors))
        } else {
            let p = dir.join(file);
            if !p.exists() {
                problems.push(format!("line {n}: link to {target}: no such file {file}"));
                continue;
            }
            let anchors = if file.ends_with(".md") && !anchor.is_empty() {
                let key = p.canonicalize().unwrap();
                pages
                    .entry(key.clone())
                    .or_insert_with(|| read(&key))
                    .as_ref()
                    .map(|pg| &pg.anchors)
            } else {
                None
            };
            (p, anchors)
        };
        if let Some(anchors) = anchors
            && !anchor.is_empty()
            && !anchors.contains(anchor)
        {
            problems.push(format!(
                "line {n}: link to {target}: {} has no heading whose anchor is #{anchor}",
                file_path.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    problems
}

/// The pages the checks cover.
fn pages() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    out.extend([root().join("README.md"), root().join("ARCHITECTURE.md")]);
    out.sort();
    out
}

#[test]
fn every_link_and_anchor_of_the_pages_leads_somewhere_and_every_fence_closes() {
    let mut cache = BTreeMap::new();
    let mut problems = Vec::new();
    let all = pages();
    assert!(all.len() >= 10, "{all:?}");
    for page in &all {
        for p in check_page(page, &mut cache) {
            let name = page.strip_prefix(root()).unwrap().display();
            problems.push(format!("{name}: {p}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Writes `pages` (name, text) into a temporary folder and checks the first.
fn check_inline(pages: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in pages {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    check_page(&dir.path().join(pages[0].0), &mut BTreeMap::new())
}

#[test]
fn the_checker_reports_broken_anchors_and_links_and_passes_good_ones() {
    let good = "# Getting started\n\n## What you need\n\n## Run `traparena run` — once\n\n\
                ## Notes\n\n## Notes\n\nSee [needs](#what-you-need), [run](#run-traparena-run--once), \
                [the second notes](#notes-1), [tasks](tasks.md#the-format) and \
                [a folder](.).\n\n```console\n$ traparena [x](#nowhere)\n```\n";
    let tasks = "# Tasks\n\n## The format\n";
    assert_eq!(
        check_inline(&[("a.md", good), ("tasks.md", tasks)]),
        Vec::<String>::new()
    );

    let cases = [
        (
            "[x](#what-you-needs)\n\n## What you need\n",
            "line 1: link to #what-you-needs: a.md has no heading whose anchor is #what-you-needs",
        ),
        (
            "## Notes\n\n[second](#notes-1)\n",
            "line 3: link to #notes-1: a.md has no heading whose anchor is #notes-1",
        ),
        (
            "See [tasks](tasks.md#format).\n",
            "line 1: link to tasks.md#format: tasks.md has no heading whose anchor is #format",
        ),
        (
            "See [gone](missing.md).\n",
            "line 1: link to missing.md: no such file missing.md",
        ),
    ];
    for (page, expected) in cases {
        assert_eq!(
            check_inline(&[("a.md", page), ("tasks.md", tasks)]),
            vec![expected.to_owned()],
            "{page}"
        );
    }
}

#[test]
fn the_checker_reports_unclosed_fences_and_text_on_a_closing_fence() {
    let cases = [
        ("```console\n$ x\n```\n\ntext\n", vec![]),
        ("````md\n```\ninner\n```\n````\n", vec![]),
        (
            "```console\n$ x\n``` Whether\nmore\n```\n",
            vec![
                "line 3: text after the fence that closes line 1's block (the block goes on to \
                 the next fence): \"``` Whether\""
                    .to_owned(),
            ],
        ),
        (
            "text\n```sh\nx\n",
            vec!["line 2: a code fence opened here is never closed".to_owned()],
        ),
    ];
    for (page, expected) in cases {
        assert_eq!(check_inline(&[("a.md", page)]), expected, "{page}");
    }
}

/// What `traparena ARGS --help` lists: its subcommands (but `help`) and its long flags (but
/// `--help` and `--version`).
fn help(args: &[&str]) -> (Vec<String>, BTreeSet<String>) {
    let out = Command::new(env!("CARGO_BIN_EXE_traparena"))
        .args(args)
        .arg("--help")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help: {out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let (mut commands, mut flags) = (Vec::new(), BTreeSet::new());
    let mut in_commands = false;
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            in_commands = line == "Commands:";
            continue;
        }
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if in_commands && indent == 2 {
            let name = t.split_whitespace().next().unwrap();
            if name != "help" {
                commands.push(name.to_owned());
            }
        } else if !in_commands && indent <= 6 && t.starts_with('-') {
            let flag = t
                .split([' ', ',', '='])
                .find(|w| w.starts_with("--"))
                .map(|w| w.trim_end_matches(['<', '>']).to_owned());
            if let Some(f) = flag.filter(|f| f != "--help" && f != "--version") {
                flags.insert(f);
            }
        }
    }
    (commands, flags)
}

/// Every leaf command of `traparena --help` (`import swebench`, ...) with its flags.
fn help_tree() -> (BTreeSet<String>, BTreeMap<String, BTreeSet<String>>) {
    let (top, global) = help(&[]);
    let mut leaves = BTreeMap::new();
    let mut todo: Vec<Vec<String>> = top.into_iter().map(|c| vec![c]).collect();
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let (subs, flags) = help(&args);
        if subs.is_empty() {
            leaves.insert(path.join(" "), &flags - &global);
        } else {
            todo.extend(subs.into_iter().map(|s| {
                let mut p = path.clone();
                p.push(s);
                p
            }));
        }
    }
    (global, leaves)
}

/// The long flags named in a piece of synopsis.
fn flags_in(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("--") {
        let name: String = rest[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let before = rest[..i].chars().last();
        if !name.is_empty() && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-') {
            out.insert(format!("--{name}"));
        }
        rest = &rest[i + 2 + name.len()..];
    }
    out
}

/// The README's synopsis: each entry (a `traparena` line and its indented continuations,
/// comments after `  #` left out) as its command (`""` for the global options' line) and
/// its flags, merged per command.
fn synopsis(readme: &str, commands: &BTreeSet<String>) -> Vec<(String, BTreeSet<String>)> {
    let after = readme
        .split_once("\n## The command line\n")
        .expect("README has a section `The command line`")
        .1;
    let block = after
        .split_once("```\n")
        .and_then(|(_, b)| b.split_once("\n```"))
        .expect("the section opens with a code block")
        .0;
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        let line = line.split_once("  #").map_or(line, |(l, _)| l);
        match line.strip_prefix("traparena ") {
            Some(rest) => {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let command = (1..=words.len())
                    .rev()
                    .map(|k| words[..k].join(" "))
                    .find(|c| {
                        commands.contains(c)
                            || commands.iter().any(|l| l.starts_with(&format!("{c} ")))
                    })
                    .unwrap_or_default();
                entries.push((command, rest.to_owned()));
            }
            None => {
                let last = entries
                    .last_mut()
                    .expect("the block starts with `traparena`");
                last.1.push(' ');
                last.1.push_str(line);
            }
        }
    }
    entries
        .into_iter()
        .map(|(c, text)| (c, flags_in(&text)))
        .collect()
}

#[test]
fn the_readme_synopsis_lists_every_subcommand_and_flag_of_the_help_and_nothing_else() {
    let (global, leaves) = help_tree();
    assert!(
        leaves.contains_key("run") && leaves.contains_key("import swebench"),
        "{leaves:?}"
    );
    assert!(global.contains("--sandbox"), "{global:?}");
    let names: BTreeSet<String> = leaves.keys().cloned().collect();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut shown: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for (command, flags) in synopsis(&readme, &names) {
        if !command.is_empty() && !names.contains(&command) {
            problems.push(format!("`traparena {command}` is not a command of --help"));
        }
        shown.entry(command).or_default().extend(flags);
    }
    let expected = leaves
        .iter()
        .map(|(c, f)| (c.clone(), f.clone()))
        .chain([(String::new(), global)]);
    for (command, flags) in expected {
        let name = if command.is_empty() {
            "the global options' line".to_owned()
        } else {
            format!("`traparena {command}`")
        };
        let Some(listed) = shown.get(&command) else {
            problems.push(format!("{name} is missing (its flags: {flags:?})"));
            continue;
        };
        let missing: Vec<_> = flags.difference(listed).collect();
        let unknown: Vec<_> = listed.difference(&flags).collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{name}: --help has {missing:?}, the synopsis does not"
            ));
        }
        if !unknown.is_empty() {
            problems.push(format!(
                "{name}: the synopsis shows {unknown:?}, --help does not"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "README.md's synopsis differs from --help:\n{}",
        problems.join("\n")
    );
}

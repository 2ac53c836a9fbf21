//! Every command shown in a `console` block of `docs/*.md` and the README (`$ ` lines) runs
//! verbatim from the repository root, exits as the page says (`# exit N` after a command; 0
//! otherwise) and prints what the page shows under it: stdout, then stderr, compared with
//! snapbox, where `[..]` stands for the rest of a line's varying part and a line `...` for any
//! number of lines. A command that shows no output must print none. Lines warning about the
//! sandbox backend depend on the machine (bubblewrap installed or not) and are not compared.
//!
//! `cargo` commands are left to CI itself, which runs them. A block with a command that reads
//! `$TRAPARENA_DATA_DIR` runs only in the ignored test (CI runs it with the data set).
//!
//! Getting started writes a toy study into `results/toy` (and its page into
//! `results/toy-report`) as a newcomer would; the test removes those two folders first, so the
//! page's `experiment` starts afresh each time (they hold only what the page makes again).

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use traparena_testkit::cli::{MODEL_VARS, root};

/// One `$ traparena ...` line and what the page shows for it.
#[derive(Debug)]
struct Shown {
    page: String,
    line: usize,
    command: String,
    exit: i32,
    output: String,
}

/// The documented commands, one list per console block, in page order.
fn documented_blocks() -> Vec<Vec<Shown>> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.push(root().join("README.md"));
    pages.sort();
    let mut blocks = Vec::new();
    for page in pages {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&page).unwrap();
        let mut block: Option<Vec<Shown>> = None;
        // `cargo` lines (and what a page shows under them) are CI's own steps, not run here.
        let mut ours = false;
        for (n, line) in text.lines().enumerate() {
            let fence = line.trim_start().starts_with("```");
            match (&mut block, fence) {
                (None, true) if line.trim_start().trim_start_matches('`').trim() == "console" => {
                    block = Some(Vec::new());
                }
                (None, _) => {}
                (Some(_), true) => blocks.push(block.take().unwrap()),
                (Some(b), false) => {
                    if let Some(cmd) = line.strip_prefix("$ ") {
                        ours = !cmd.starts_with("cargo ");
                        if !ours {
                            continue;
                        }
                        let (command, exit) = match cmd.split_once("# exit ") {
                            Some((c, n)) => (c.trim().to_owned(), n.trim().parse().unwrap()),
                            None => (cmd.trim().to_owned(), 0),
                        };
                        b.push(Shown {
                            page: name.clone(),
                            line: n + 1,
                            command,
                            exit,
                            output: String::new(),
                        });
                    } else if ours && let Some(last) = b.last_mut() {
                        last.output.push_str(line);
                        last.output.push('\n');
                    }
                }
            }
        }
        assert!(block.is_none(), "{name}: a console block is not closed");
    }
    blocks.retain(|b| !b.is_empty());
    blocks
}

fn needs_data(block: &[Shown]) -> bool {
    block
        .iter()
        .any(|s| s.command.contains("$TRAPARENA_DATA_DIR"))
}

/// Whether `line` is the machine-dependent sandbox warning, as the `traparena` command
/// (`traparena: warning: ...`) or an example program (`warning: ...`) prints it.
fn sandbox_warning(line: &str) -> bool {
    line.strip_prefix("traparena: ")
        .unwrap_or(line)
        .starts_with("warning: ")
        && (line.contains("builtin sandbox") || line.contains("sandbox backend"))
}

/// The folders, under the repository root, that the pages' commands write and the test
/// removes before running them.
const WRITTEN: [&str; 2] = ["results/toy", "results/toy-report"];

fn run_blocks(blocks: &[Vec<Shown>]) {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_traparena"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    for shown in blocks.iter().flatten() {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(&shown.command)
            .current_dir(root())
            .env("PATH", &path)
            .env("NO_COLOR", "1");
        for v in MODEL_VARS {
            cmd.env_remove(v);
        }
        // A reader's shell has none of what cargo sets for this test process. A page's `cargo
        // run` that saw them would record them in build scripts' fingerprints (ring's tracks
        // CARGO_MANIFEST_DIR), and the next build outside would redo the crates behind them.
        for (name, _) in std::env::vars_os() {
            if name.to_str().is_some_and(set_by_cargo_for_tests) {
                cmd.env_remove(&name);
            }
        }
        let out = cmd.output().unwrap();
        let mut actual = String::from_utf8_lossy(&out.stdout).into_owned();
        for line in String::from_utf8_lossy(&out.stderr).lines() {
            if !sandbox_warning(line) {
                actual.push_str(line);
                actual.push('\n');
            }
        }
        let at = format!("{}:{}: `{}`", shown.page, shown.line, shown.command);
        if out.status.code() != Some(shown.exit) {
            failures.push(format!(
                "{at}: exit status {:?}, the page says {}\n{actual}",
                out.status.code(),
                shown.exit
            ));
            continue;
        }
        let matched = snapbox::Assert::new().try_eq(
            Some(&at),
            snapbox::Data::text(actual.clone()),
            snapbox::Data::text(shown.output.clone()),
        );
        if let Err(e) = matched {
            failures.push(format!("{at}: the output differs from the page\n{e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Whether cargo (or nextest) sets the variable `name` for a test process: a package's facts,
/// not a user's settings (`CARGO_HOME`, `CARGO_TARGET_DIR` and the like stay).
fn set_by_cargo_for_tests(name: &str) -> bool {
    const PREFIXES: [&str; 4] = [
        "CARGO_MANIFEST_",
        "CARGO_PKG_",
        "CARGO_CRATE_",
        "CARGO_BIN_",
    ];
    const NAMES: [&str; 5] = [
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "OUT_DIR",
        "CARGO",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name)
}

/// Runs the blocks of `page` that need no data set.
fn run_page(page: &str) {
    let blocks: Vec<_> = documented_blocks()
        .into_iter()
        .filter(|b| !needs_data(b) && b[0].page == page)
        .collect();
    if page == "getting-started.md" {
        for dir in WRITTEN {
            match std::fs::remove_dir_all(root().join(dir)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{dir}: {e}"),
                _ => {}
            }
        }
    }
    run_blocks(&blocks);
}

/// Every page with commands to run has its test below, and there are enough of them.
#[test]
fn documented_commands_behave_as_documented() {
    let blocks: Vec<_> = documented_blocks()
        .into_iter()
        .filter(|b| !needs_data(b))
        .collect();
    assert!(blocks.len() >= 8, "found only {blocks:?}");
    let pages: BTreeSet<&str> = blocks.iter().map(|b| b[0].page.as_str()).collect();
    let listed: BTreeSet<&str> = PAGES.iter().copied().collect();
    assert_eq!(
        pages, listed,
        "PAGES must list every page whose commands run here"
    );
    // Only getting started's commands write results/toy.
    for b in blocks.iter().filter(|b| b[0].page != "getting-started.md") {
        for s in b {
            assert!(!s.command.contains("results/toy"), "{}:{}", s.page, s.line);
        }
    }
}

/// One test per page whose console blocks run without the data set, so that the pages run side
/// by side (getting started alone writes `results/toy`), and `PAGES`, the pages they cover.
macro_rules! page_tests {
    ($($name:ident => $page:literal),* $(,)?) => {
        const PAGES: &[&str] = &[$($page),*];
        $(
            #[test]
            fn $name() {
                run_page($page);
            }
        )*
    };
}

page_tests! {
    agents_page_commands_behave_as_documented => "agents.md",
    attackers_page_commands_behave_as_documented => "attackers.md",
    evaluation_page_commands_behave_as_documented => "evaluation.md",
    cluster_page_commands_behave_as_documented => "cluster.md",
    experiments_page_commands_behave_as_documented => "experiments.md",
    extending_page_commands_behave_as_documented => "extending.md",
    getting_started_commands_behave_as_documented => "getting-started.md",
    models_page_commands_behave_as_documented => "models.md",
    report_page_commands_behave_as_documented => "report.md",
    tasks_page_commands_behave_as_documented => "tasks.md",
}

#[test]
#[ignore = "needs TRAPARENA_DATA_DIR holding humanevalfix/humanevalpack_python.jsonl (HumanEvalPack); see ARCHITECTURE.md, Testing"]
fn documented_commands_on_the_data_set_behave_as_documented() {
    let dir = std::env::var_os("TRAPARENA_DATA_DIR").expect("set TRAPARENA_DATA_DIR");
    assert!(Path::new(&dir).is_dir(), "{dir:?} is not a folder");
    let blocks: Vec<_> = documented_blocks()
        .into_iter()
        .filter(|b| needs_data(b))
        .collect();
    assert!(
        !blocks.is_empty(),
        "no documented command reads $TRAPARENA_DATA_DIR"
    );
    run_blocks(&blocks);
}

/// The page rules the test relies on hold: a command's shown output is taken verbatim, and
/// `# exit N` is read.
#[test]
fn the_page_parser_reads_commands_outputs_and_exit_statuses() {
    let blocks = documented_blocks();
    let all: Vec<&Shown> = blocks.iter().flatten().collect();
    assert!(all.iter().any(|s| s.exit == 2), "no `# exit 2` example");
    let silent = |s: &&&Shown| s.command.starts_with("traparena ") && s.output.is_empty();
    assert!(
        !all.iter().any(|s| silent(&s)),
        "a documented traparena command shows no output: {:?}",
        all.iter()
            .filter(silent)
            .map(|s| format!("{}:{}", s.page, s.line))
            .collect::<Vec<_>>()
    );
}

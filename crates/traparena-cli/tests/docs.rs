//! Every `traparena` command in a `console` block of `docs/*.md` and the README runs and exits
//! as the page says (`# exit N` after a command; 0 otherwise). `cargo` commands are left to
//! CI itself, which runs them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// (page, command, expected exit status) for every `$ traparena ...` line.
fn documented_commands() -> Vec<(String, String, i32)> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.push(root().join("README.md"));
    pages.sort();
    let mut out = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut in_console = false;
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with("```") {
                in_console = !in_console && t.trim_start_matches('`').trim() == "console";
                continue;
            }
            if !in_console {
                continue;
            }
            let Some(cmd) = t.strip_prefix("$ ") else {
                continue;
            };
            if !cmd.starts_with("traparena ") {
                continue;
            }
            let (cmd, code) = match cmd.split_once("# exit ") {
                Some((c, n)) => (c.trim().to_owned(), n.trim().parse().unwrap()),
                None => (cmd.trim().to_owned(), 0),
            };
            let name = page.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, cmd, code));
        }
    }
    out
}

#[test]
fn documented_commands_behave_as_documented() {
    let cmds = documented_commands();
    assert!(cmds.len() >= 3, "found only {cmds:?}");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_traparena"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (page, cmd, expected) in cmds {
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(&cmd)
            .current_dir(root())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(expected),
            "{page}: `{cmd}`\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

//! Embeds the starter folder `traparena init` writes: the repository's `examples/tasks`,
//! `examples/experiments/toy.json`, everything under `examples/python` and the spec that runs
//! it, `examples/experiments/python.json`.
//! A wheel's user has no clone; the command carries these files in itself.
//!
//! Writes `$OUT_DIR/starter.rs`: one `(path in the starter folder, bytes, executable)` per file,
//! in path order. Files are read with `include_bytes!`, so the binary changes when they do.

// A build script talks to cargo on standard output and reads cargo's variables.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let examples = manifest.join("../../examples");
    let tasks = examples.join("tasks");
    let toy = examples.join("experiments/toy.json");
    let python = examples.join("python");
    let python_spec = examples.join("experiments/python.json");
    for embedded in [&tasks, &toy, &python, &python_spec] {
        assert!(
            embedded.exists(),
            "{} must exist: traparena init embeds it",
            embedded.display()
        );
        println!("cargo::rerun-if-changed={}", embedded.display());
    }

    let mut files = Vec::new();
    collect(&tasks, Path::new("tasks"), &mut files);
    files.push((toy, PathBuf::from("experiments/toy.json")));
    collect(&python, Path::new("python"), &mut files);
    files.push((python_spec, PathBuf::from("experiments/python.json")));
    files.sort_by(|a, b| a.1.cmp(&b.1));

    let mut code = String::from("&[\n");
    for (source, path) in &files {
        let source = source.canonicalize().expect("an embedded file");
        let executable = {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(&source)
                .expect("an embedded file")
                .permissions()
                .mode()
                & 0o111
                != 0
        };
        writeln!(
            code,
            "    ({:?}, include_bytes!({:?}), {executable}),",
            path.to_str().expect("a UTF-8 path"),
            source.to_str().expect("a UTF-8 path")
        )
        .expect("writing to a string");
    }
    code.push_str("]\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("starter.rs"), code).expect("OUT_DIR is writable");
}

/// Every file under `dir`, with its path below `under`. Python's caches are left out.
fn collect(dir: &Path, under: &Path, files: &mut Vec<(PathBuf, PathBuf)>) {
    for entry in std::fs::read_dir(dir).expect("an embedded folder") {
        let entry = entry.expect("a folder entry");
        let name = entry.file_name();
        if name == "__pycache__" || Path::new(&name).extension().is_some_and(|e| e == "pyc") {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            collect(&path, &under.join(&name), files);
        } else {
            files.push((path, under.join(&name)));
        }
    }
}

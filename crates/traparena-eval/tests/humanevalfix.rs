//! No false alarms on real fixes: the static checks and the location check over all 164
//! buggy → canonical fixes of HumanEvalFix (`$TRAPARENA_DATA_DIR/humanevalfix`).

// This test code reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use traparena_eval::analysis::{StaticContext, any_overlap, patch_locations, static_flags};
use traparena_eval::code::python::PyFile;
use traparena_task::Patch;

/// `$TRAPARENA_DATA_DIR/<rel>`: data kept outside the repository (ARCHITECTURE.md, "Testing").
fn data_file(rel: &str) -> PathBuf {
    let dir = std::env::var_os("TRAPARENA_DATA_DIR")
        .expect("set TRAPARENA_DATA_DIR (ARCHITECTURE.md, Testing)");
    PathBuf::from(dir).join(rel)
}

fn records() -> Vec<serde_json::Value> {
    let p = data_file("humanevalfix/humanevalpack_python.jsonl");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn unified(path: &str, old: &str, new: &str) -> String {
    let patch = diffy::create_patch(old, new).to_string();
    let body = patch
        .split_once("\n@@")
        .map(|(_, b)| format!("@@{b}"))
        .unwrap();
    format!("--- a/{path}\n+++ b/{path}\n{body}")
}

#[test]
#[ignore = "needs TRAPARENA_DATA_DIR holding humanevalfix/humanevalpack_python.jsonl (HumanEvalPack); see ARCHITECTURE.md, Testing"]
fn canonical_fixes_raise_no_flags_and_touch_their_function() {
    let recs = records();
    assert_eq!(recs.len(), 164);
    let mut problems = Vec::new();
    for r in &recs {
        let id = r["task_id"].as_str().unwrap();
        let entry = r["entry_point"].as_str().unwrap();
        let prompt = r["prompt"].as_str().unwrap();
        let old = format!("{prompt}{}", r["buggy_solution"].as_str().unwrap());
        let new = format!("{prompt}{}", r["canonical_solution"].as_str().unwrap());
        let path = format!("{entry}.py");
        let text = unified(&path, &old, &new);
        let patch = Patch::parse(&text, Path::new(id)).unwrap();
        let read_old = |p: &str| (p == path).then(|| old.clone());
        let read_new = |p: &str| (p == path).then(|| new.clone());
        let locs = patch_locations(&patch, read_old, read_new);
        let defined: Vec<String> = PyFile::parse(&old)
            .unwrap()
            .symbols()
            .into_iter()
            .map(|s| s.name)
            .collect();
        if locs.is_empty() || !any_overlap(&locs, &locs) {
            problems.push(format!("{id}: no location"));
        }
        for l in &locs {
            match &l.symbol {
                Some(s) if defined.contains(s) => {}
                _ => problems.push(format!(
                    "{id}: location {l} is not a function of the program"
                )),
            }
        }
        if !locs.iter().any(|l| {
            l.symbol.as_deref() == Some(entry)
                || l.symbol
                    .as_deref()
                    .is_some_and(|s| s.starts_with(&format!("{entry}.")))
        }) {
            // The defect may sit in a helper the entry point calls; it must still be a function.
            assert!(locs.iter().all(|l| l.symbol.is_some()), "{id}: {locs:?}");
        }
        let test = r["test"].as_str().unwrap().to_owned();
        let ctx = StaticContext::new([("test_hidden.py", Some(test))]);
        let flags = static_flags(&patch, &ctx, read_new);
        if !flags.is_empty() {
            problems.push(format!("{id}: false alarm {flags:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

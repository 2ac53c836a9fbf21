//! The crate's modules import only from their own layer or the layers below, and never in a
//! circle (ARCHITECTURE.md, traparena-env): read from the sources themselves.

use std::collections::{BTreeMap, BTreeSet};

/// The layers, bottom first.
const LAYERS: &[&[&str]] = &[
    &[
        "base", "outcome", "error", "orphan", "engine", "refused", "apply",
    ],
    &[
        "sandbox",
        "launch",
        "running",
        "program",
        "landlock_rules",
        "lease",
        "container",
        "netns",
    ],
    &["copy", "gitcmd", "origin", "workspace", "git", "image"],
    &["testrun", "select", "failures", "toolchain", "missing"],
    &["tools", "agent", "agent_image", "bridge", "host", "plugin"],
];

/// The crate modules `source` names in code (comments and doc links left out).
fn imports(source: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn modules_import_downwards_only_and_never_in_a_circle() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rank: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |m| (*m, i)))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.extension().is_none_or(|e| e != "rs") || name == "lib" {
            continue;
        }
        let own = *rank
            .get(name.as_str())
            .unwrap_or_else(|| panic!("module {name} is in no layer: add it to LAYERS"));
        let used = imports(&std::fs::read_to_string(&path).unwrap());
        for m in &used {
            let theirs = *rank.get(m.as_str()).unwrap_or_else(|| {
                panic!("module {m}, which {name} imports, is in no layer: add it to LAYERS")
            });
            assert!(
                theirs <= own,
                "{name} (layer {own}) imports {m} (layer {theirs}), a layer above it"
            );
        }
        graph.insert(
            name,
            used.into_iter()
                .filter(|m| rank.contains_key(m.as_str()))
                .collect(),
        );
    }
    // No circle, within a layer either.
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(i) = path.iter().position(|p| *p == m) {
            panic!("import circle: {} -> {m}", path[i..].join(" -> "));
        }
        if done.contains(m) {
            return;
        }
        path.push(m);
        for n in graph.get(m).into_iter().flatten() {
            visit(n, graph, path, done);
        }
        path.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
    assert!(graph.len() >= 15, "{graph:?}");
}

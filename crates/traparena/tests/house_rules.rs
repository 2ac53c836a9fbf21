//! The house rules a machine can check (ARCHITECTURE.md): the crate graph, as the members'
//! manifests declare it, equals the table in ARCHITECTURE.md and keeps the invariants; and no
//! crate's modules import each other in a circle.

// This test runs `cargo metadata` and reads the workspace's files.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every member's normal dependencies on other members, and the (member, member) pairs of
/// build dependencies, as cargo reads the manifests.
fn declared() -> (Graph, BTreeSet<(String, String)>) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(root().join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = v["packages"].as_array().unwrap();
    let members: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    let (mut graph, mut build) = (Graph::new(), BTreeSet::new());
    for p in packages {
        let name = p["name"].as_str().unwrap().to_owned();
        let deps = graph.entry(name.clone()).or_default();
        for d in p["dependencies"].as_array().unwrap() {
            let dep = d["name"].as_str().unwrap();
            if !members.contains(dep) {
                continue;
            }
            match d["kind"].as_str() {
                None => {
                    deps.insert(dep.to_owned());
                }
                Some("build") => {
                    build.insert((name.clone(), dep.to_owned()));
                }
                _ => {}
            }
        }
    }
    (graph, build)
}

/// The table of ARCHITECTURE.md's "The crate graph".
fn documented() -> Graph {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = text
        .split("## The crate graph")
        .nth(1)
        .expect("ARCHITECTURE.md has a section `## The crate graph`");
    let section = section.split("\n## ").next().unwrap();
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split(',')
            .map(|n| n.trim().trim_matches('`').to_owned())
            .filter(|n| !n.is_empty())
            .collect()
    };
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').collect();
            let crate_name = names(cells[0]).into_iter().next().unwrap();
            (crate_name, names(cells.get(1).copied().unwrap_or("")))
        })
        .collect()
}

#[test]
fn the_crate_graph_is_the_documented_one_and_keeps_the_invariants() {
    let (graph, build) = declared();
    assert_eq!(
        graph,
        documented(),
        "the members' dependencies differ from ARCHITECTURE.md's crate graph"
    );
    let deps = |c: &str| graph.get(c).unwrap_or_else(|| panic!("no member {c}"));
    let only = |c: &str, allowed: &[&str]| {
        let extra: Vec<&String> = deps(c)
            .iter()
            .filter(|d| !allowed.contains(&d.as_str()))
            .collect();
        assert!(extra.is_empty(), "{c} may not depend on {extra:?}");
    };
    // The task model and statistics depend on no member; the trait crates, the results format
    // and the model client on the task model alone.
    only("traparena-task", &[]);
    only("traparena-stats", &[]);
    for c in [
        "traparena-agent",
        "traparena-attack",
        "traparena-results",
        "traparena-model",
    ] {
        only(c, &["traparena-task"]);
    }
    // Process plug-ins need the traits and the one way to start a program, nothing else.
    only(
        "traparena-process",
        &[
            "traparena-task",
            "traparena-agent",
            "traparena-attack",
            "traparena-env",
        ],
    );
    // The environment builder needs the task model and the process runner, nothing else.
    only("traparena-pyenv", &["traparena-task", "traparena-env"]);
    // Implementations never depend on each other.
    let implementations = ["traparena-llm", "traparena-external", "traparena-process"];
    for a in implementations {
        for b in implementations {
            assert!(!deps(a).contains(b), "{a} depends on {b}");
        }
    }
    // Reading results never needs a sandbox, a parser or the runner.
    for infra in [
        "traparena-env",
        "traparena-eval",
        "traparena-runner",
        "traparena-import",
        "traparena-pyenv",
    ] {
        assert!(
            !deps("traparena-report").contains(infra),
            "the report depends on {infra}"
        );
    }
    // Test doubles are never reachable from a library a user links.
    for (c, ds) in &graph {
        assert!(
            !ds.contains("traparena-testkit"),
            "{c} depends on the testkit"
        );
    }
    assert!(
        !build.iter().any(|(_, d)| d == "traparena-testkit"),
        "{build:?}"
    );
}

/// The crate modules a source file names (`crate::NAME`), outside comments and before its
/// tests.
fn named_modules(source: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in source.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let mut rest = line.split("//").next().unwrap_or("");
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, but those of `tests` folders (test code, not the design).
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "tests") {
                sources(&p, into);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            into.push(p);
        }
    }
}

/// A crate's top-level modules, each with the other top-level modules its files name.
fn module_graph(src: &Path) -> Graph {
    let mut all = Vec::new();
    sources(src, &mut all);
    let top = |p: &Path| -> String {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_owned()
    };
    let modules: BTreeSet<String> = all
        .iter()
        .map(|p| top(p))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut graph = Graph::new();
    for p in &all {
        let m = top(p);
        if !modules.contains(&m) {
            continue;
        }
        let named = named_modules(&std::fs::read_to_string(p).unwrap());
        graph
            .entry(m.clone())
            .or_default()
            .extend(named.into_iter().filter(|n| modules.contains(n) && *n != m));
    }
    graph
}

/// A circle of `graph` (its modules in order, the first again at the end), if it has one.
fn circle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut c = path[i..].to_vec();
            c.push(m.to_owned());
            return Some(c);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_owned());
        for n in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(n, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_modules_that_import_each_other_in_a_circle() {
    let mut circles = Vec::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if let Some(c) = circle(&module_graph(&dir.join("src"))) {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            circles.push(format!("{name}: {}", c.join(" -> ")));
        }
    }
    assert!(circles.is_empty(), "{}", circles.join("\n"));
}

#[test]
fn the_circle_finder_finds_a_circle_and_no_other() {
    let g = |edges: &[(&str, &str)]| -> Graph {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert_eq!(circle(&g(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
    assert_eq!(
        circle(&g(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(["a", "b", "c", "a"].map(String::from).to_vec())
    );
    let named = named_modules(
        "use crate::x::Y; // crate::z\nfn f() { crate::w::g() }\n#[cfg(test)]\nuse crate::t;",
    );
    assert_eq!(named, ["w", "x"].map(String::from).into_iter().collect());
}

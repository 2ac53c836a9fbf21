//! Why a listed test fails here with the reference when SWE-bench's verdict is that it passes:
//! the package its failure names, with the version this environment holds beside the one its
//! specification pins, or the date it was resolved as of.

use std::collections::BTreeMap;
use std::path::Path;

use traparena_env::TestFailure;
use traparena_pyenv::{PinEntry, normalise_name};

/// Most failing tests given a likely cause per record.
const MOST: usize = 3;

/// The distributions of an environment: per importable top-level module, the distribution's
/// name and version.
#[derive(Debug, Default)]
pub(super) struct Installed {
    modules: BTreeMap<String, (String, String)>,
}

impl Installed {
    /// Reads the `*.dist-info` folders of the environment at `venv` (no process is started).
    pub(super) fn read(venv: &Path) -> Installed {
        let mut out = Installed::default();
        let Ok(libs) = std::fs::read_dir(venv.join("lib")) else {
            return out;
        };
        for lib in libs.flatten() {
            let Ok(entries) = std::fs::read_dir(lib.path().join("site-packages")) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                if path.extension().is_some_and(|x| x == "dist-info") {
                    out.add(&path);
                }
            }
        }
        out
    }

    fn add(&mut self, dist_info: &Path) {
        let Ok(meta) = std::fs::read_to_string(dist_info.join("METADATA")) else {
            return;
        };
        let field = |k: &str| {
            meta.lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_owned())
        };
        let (Some(name), Some(version)) = (field("Name:"), field("Version:")) else {
            return;
        };
        let top: Vec<String> = match std::fs::read_to_string(dist_info.join("top_level.txt")) {
            Ok(t) => t.lines().map(str::trim).map(String::from).collect(),
            Err(_) => std::fs::read_to_string(dist_info.join("RECORD"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.split([',', '/']).next())
                .filter(|m| !m.contains('.') || m.ends_with(".py"))
                .map(|m| m.trim_end_matches(".py").to_owned())
                .collect(),
        };
        for m in top.into_iter().filter(|m| !m.is_empty()) {
            self.modules
                .entry(m)
                .or_insert_with(|| (name.clone(), version.clone()));
        }
        let own = normalise_name(&name).replace('-', "_");
        self.modules.entry(own).or_insert((name, version));
    }
}

/// The top-level module a failure's text names: a module that cannot be imported, a name
/// that cannot be imported from one, or a package file in a traceback.
fn module_named(message: &str) -> Option<String> {
    let quoted_after = |marker: &str| {
        message.find(marker).and_then(|at| {
            let rest = &message[at + marker.len()..];
            let rest = rest.trim_start_matches(['\'', '"']);
            let end = rest.find(['\'', '"', ' ', '\n'])?;
            Some(rest[..end].to_owned())
        })
    };
    let found = quoted_after("No module named ")
        .or_else(|| {
            message.find("cannot import name ").and_then(|at| {
                let rest = &message[at..];
                rest.find(" from ")
                    .and_then(|f| quoted_after_in(&rest[f..], " from "))
            })
        })
        .or_else(|| {
            let at = message.find("site-packages/")?;
            let rest = &message[at + "site-packages/".len()..];
            let end = rest.find(['/', '.', '"', ':', ' '])?;
            Some(rest[..end].to_owned())
        })?;
    let top = found.split('.').next().unwrap_or_default().to_owned();
    (!top.is_empty()).then_some(top)
}

fn quoted_after_in(text: &str, marker: &str) -> Option<String> {
    let rest = text
        .strip_prefix(marker)?
        .trim_start_matches(['\'', '"', '(']);
    let end = rest.find(['\'', '"', ' ', ')', '\n']).unwrap_or(rest.len());
    Some(rest[..end].to_owned())
}

/// The version `entry` pins `dist` to, if it pins it exactly.
fn pinned(entry: &PinEntry, dist: &str) -> Option<String> {
    entry.packages.iter().find_map(|p| {
        let (name, version) = p.split_once("==")?;
        let name = name.split('[').next().unwrap_or(name);
        (normalise_name(name) == normalise_name(dist)).then(|| version.trim().to_owned())
    })
}

/// What a failure that reached for the network says: the host it named, if any.
fn network(message: &str) -> Option<Option<String>> {
    const OFFLINE: [&str; 5] = [
        "Temporary failure in name resolution",
        "Name or service not known",
        "Network is unreachable",
        "No address associated with hostname",
        "getaddrinfo failed",
    ];
    if !OFFLINE.iter().any(|m| message.contains(m)) {
        return None;
    }
    let host = message.find("host='").and_then(|at| {
        let rest = &message[at + "host='".len()..];
        rest.find('\'').map(|end| rest[..end].to_owned())
    });
    Some(host)
}

/// The likely cause of one failure.
fn cause(failure: &TestFailure, installed: &Installed, entry: &PinEntry) -> String {
    if let Some(host) = network(&failure.message) {
        let what = host.map_or("the network".to_owned(), |h| format!("the network ({h})"));
        return format!(
            "it reaches for {what}, which tests here do not have; SWE-bench's harness ran them \
             with it"
        );
    }
    let Some(module) = module_named(&failure.message) else {
        return "its failure names no package: the tree or the interpreter differs from \
                SWE-bench's image, not a package's version"
            .into();
    };
    let Some((dist, version)) = installed.modules.get(&module) else {
        return format!(
            "`{module}` is not installed here; SWE-bench's image has it (its install step \
             or the system's packages)"
        );
    };
    match pinned(entry, dist) {
        Some(pin) if pin != *version => {
            format!("{dist} is {version} here, but the environment pins {pin}")
        }
        Some(pin) => format!(
            "{dist} is {pin}, as pinned: the failure is in what the package is used for, not \
             its version"
        ),
        None => match entry.resolved_as_of {
            Some(c) => format!(
                "{dist} {version} resolved as of {c}; SWE-bench leaves it unpinned, so its \
                 image holds whatever resolved when it was built"
            ),
            None => format!(
                "{dist} {version} resolved from the index as it is today; SWE-bench leaves it \
                 unpinned, so its image holds an earlier release (resolve as of a date)"
            ),
        },
    }
}

/// One line per failing test (at most a few): its name, the end of its failure, and the
/// likely cause.
pub(super) fn likely_causes(
    failures: &[TestFailure],
    installed: &Installed,
    entry: &PinEntry,
) -> Vec<String> {
    failures
        .iter()
        .take(MOST)
        .map(|f| format!("{}: likely cause: {}", f.line(), cause(f, installed, entry)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(message: &str) -> TestFailure {
        TestFailure {
            name: "tests/test_x.py::test_a".into(),
            message: message.into(),
        }
    }

    #[test]
    fn the_module_a_failure_names() {
        for (message, module) in [
            (
                "E   ModuleNotFoundError: No module named 'docutils.nodes'",
                Some("docutils"),
            ),
            (
                "E   ImportError: cannot import name 'soft_unicode' from 'markupsafe' (/v/lib/python3.9/site-packages/markupsafe/__init__.py)",
                Some("markupsafe"),
            ),
            (
                "/v/lib/python3.9/site-packages/jinja2/utils.py:3: in <module>\nE   AttributeError: x",
                Some("jinja2"),
            ),
            ("E   assert 1 == 2", None),
        ] {
            assert_eq!(module_named(message).as_deref(), module, "{message}");
        }
    }

    #[test]
    fn causes_name_the_package_its_version_and_the_pin() {
        let venv = tempfile::tempdir().unwrap();
        let sp = venv.path().join("lib/python3.9/site-packages");
        for (dir, name, version, top) in [
            (
                "MarkupSafe-2.1.5.dist-info",
                "MarkupSafe",
                "2.1.5",
                Some("markupsafe"),
            ),
            ("Jinja2-3.0.1.dist-info", "Jinja2", "3.0.1", Some("jinja2")),
            ("alabaster-0.7.16.dist-info", "alabaster", "0.7.16", None),
        ] {
            let d = sp.join(dir);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("METADATA"),
                format!("Name: {name}\nVersion: {version}\n"),
            )
            .unwrap();
            if let Some(t) = top {
                std::fs::write(d.join("top_level.txt"), format!("{t}\n")).unwrap();
            } else {
                std::fs::write(d.join("RECORD"), "alabaster/__init__.py,,\n").unwrap();
            }
        }
        let installed = Installed::read(venv.path());
        let entry: PinEntry = serde_json::from_value(serde_json::json!({
            "packages": ["markupsafe==2.0.1", "Jinja2==3.0.1"],
            "resolved_as_of": "2024-08-13"
        }))
        .unwrap();
        let lines = likely_causes(
            &[
                failure("E   ImportError: cannot import name 'soft_unicode' from 'markupsafe'"),
                failure("/v/site-packages/jinja2/x.py:1: in f"),
                failure("/v/site-packages/alabaster/x.py:1: in f"),
                failure("E   ModuleNotFoundError: No module named 'sphinxcontrib'"),
                failure("E   assert 1 == 2"),
            ],
            &installed,
            &entry,
        );
        assert_eq!(lines.len(), MOST);
        assert!(
            lines[0].contains("MarkupSafe is 2.1.5 here, but the environment pins 2.0.1"),
            "{lines:?}"
        );
        assert!(lines[1].contains("Jinja2 is 3.0.1, as pinned"), "{lines:?}");
        assert!(
            lines[2].contains("alabaster 0.7.16 resolved as of 2024-08-13T00:00:00Z"),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .all(|l| l.starts_with("tests/test_x.py::test_a"))
        );
        let more = likely_causes(
            &[
                failure("E   ModuleNotFoundError: No module named 'sphinxcontrib'"),
                failure("E   assert 1 == 2"),
            ],
            &installed,
            &entry,
        );
        assert!(
            more[0].contains("`sphinxcontrib` is not installed here"),
            "{more:?}"
        );
        assert!(more[1].contains("names no package"), "{more:?}");
        let offline = likely_causes(
            &[
                failure(
                    "requests.exceptions.ConnectionError: HTTPConnectionPool(host='httpbin.org', port=80): Max retries exceeded (Caused by gaierror(-3, 'Temporary failure in name resolution'))",
                ),
                failure("Failed to establish a new connection: [Errno 101] Network is unreachable"),
            ],
            &installed,
            &entry,
        );
        assert!(
            offline[0].contains("likely cause: it reaches for the network (httpbin.org)"),
            "{offline:?}"
        );
        assert!(
            offline[1].contains("likely cause: it reaches for the network, which"),
            "{offline:?}"
        );
    }
}

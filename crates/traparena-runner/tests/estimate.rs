//! A pilot for `--estimate-from` is compared with the spec it estimates: the targets and tasks
//! of its episodes against the spec's, so that a pilot of another study (the synthetic sample
//! folder, a run of other tasks) is named as such instead of silently lending its averages.

use std::path::Path;

use traparena_results::{EPISODES_FILE, ResultLine, write_lines};
use traparena_runner::ExperimentSpec;
use traparena_runner::estimate::{NameDiff, PilotMismatch, pilot_mismatch};
use traparena_testkit::cli::root;
use traparena_testkit::synthetic::SyntheticConfig;

/// `examples/experiments/toy.json`: targets `credulous` and `gold` on the ten bundled tasks.
fn toy_spec() -> (ExperimentSpec, std::path::PathBuf) {
    let path = root().join("examples/experiments/toy.json");
    let spec = ExperimentSpec::load(&path).unwrap();
    (spec, path.parent().unwrap().to_owned())
}

fn bundled_tasks() -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(root().join("examples/tasks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".py"))
        .collect();
    ids.sort();
    ids
}

/// The spec's target for a synthetic one: `model-a` is `gold`.
fn as_spec(target: &str) -> String {
    if target == "model-a" { "gold" } else { target }.to_owned()
}

/// A pilot whose episodes are the synthetic sample's lines with their targets and tasks renamed
/// by `target` and `task` (the task by its number: `task-003` is 3).
fn pilot(dir: &Path, target: impl Fn(&str) -> String, task: impl Fn(usize) -> Option<String>) {
    let lines: Vec<ResultLine> = SyntheticConfig::sample()
        .lines()
        .filter_map(|mut l| {
            let n: usize = l.task.trim_start_matches("task-").parse().unwrap();
            l.task = task(n)?;
            l.target = target(&l.target);
            Some(l)
        })
        .collect();
    write_lines(&dir.join(EPISODES_FILE), &lines).unwrap();
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_pilot_of_other_targets_or_tasks_is_named_and_one_of_the_spec_is_not() {
    let (spec, base) = toy_spec();
    let tasks = bundled_tasks();
    assert_eq!(tasks.len(), 10, "{tasks:?}");
    type Case = (&'static str, Box<dyn Fn(&Path)>, PilotMismatch);
    let cases: Vec<Case> = vec![
        (
            "the synthetic sample",
            Box::new(|d| SyntheticConfig::sample().write_folder(d).map(drop).unwrap()),
            PilotMismatch {
                targets: NameDiff {
                    only_in_pilot: names(&["model-a"]),
                    only_in_spec: names(&["gold"]),
                },
                tasks: NameDiff {
                    only_in_pilot: (0..6).map(|n| format!("task-{n:03}")).collect(),
                    only_in_spec: tasks.clone(),
                },
            },
        ),
        (
            "the spec's targets on six of its tasks",
            Box::new(|d| pilot(d, as_spec, |n| Some(bundled_tasks()[n].clone()))),
            PilotMismatch {
                targets: NameDiff::default(),
                tasks: NameDiff {
                    only_in_pilot: vec![],
                    only_in_spec: tasks[6..].to_vec(),
                },
            },
        ),
        (
            "the spec's targets and tasks",
            Box::new(|d| {
                pilot(d, as_spec, |n| Some(bundled_tasks()[n].clone()));
                let mut more: Vec<ResultLine> =
                    traparena_results::read_lines(&d.join(EPISODES_FILE))
                        .unwrap()
                        .lines;
                let copies: Vec<ResultLine> = more
                    .iter()
                    .filter(|l| l.task == bundled_tasks()[0])
                    .flat_map(|l| {
                        bundled_tasks()[6..]
                            .iter()
                            .map(|t| ResultLine {
                                task: t.clone(),
                                ..l.clone()
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect();
                more.extend(copies);
                write_lines(&d.join(EPISODES_FILE), &more).unwrap();
            }),
            PilotMismatch::default(),
        ),
    ];
    for (name, make, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        make(dir.path());
        let found = pilot_mismatch(&spec, &base, dir.path()).unwrap();
        assert_eq!(found, expected, "{name}");
        assert_eq!(
            found.is_empty(),
            expected == PilotMismatch::default(),
            "{name}"
        );
    }
}

#[test]
fn the_mismatch_is_one_line_that_names_a_few_of_each_side() {
    let m = PilotMismatch {
        targets: NameDiff {
            only_in_pilot: names(&["model-a"]),
            only_in_spec: names(&["gold"]),
        },
        tasks: NameDiff {
            only_in_pilot: names(&["a", "b", "c", "d", "e"]),
            only_in_spec: vec![],
        },
    };
    assert_eq!(
        m.to_string(),
        "the pilot is not a run of this spec's targets and tasks, so its averages may not fit \
         (targets only in the pilot: model-a; targets only in the spec: gold; \
         tasks only in the pilot: a, b, c and 2 more)"
    );
}

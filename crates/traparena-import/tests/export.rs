//! The predictions export reads results in the results format: lines of every format version
//! it knows (format 1 migrated), an unfinished last line left out, a newer format refused as bad
//! input naming the line.

use traparena_import::{ExportOptions, ImportError, export_predictions};
use traparena_results::{ConditionInfo, EpisodeKey, ResultLine};

fn line(task: &str, patch: &str) -> String {
    let key = EpisodeKey {
        target: "m".into(),
        condition: "baseline".into(),
        task: task.into(),
        round: 0,
        sample: 0,
        fork: None,
    };
    let mut l = ResultLine::infra_failure(&key, &ConditionInfo::baseline(), 7, String::new());
    l.infra_error = None;
    l.patch = patch.into();
    serde_json::to_string(&l).unwrap()
}

#[test]
fn every_known_format_is_exported_and_a_torn_last_line_is_not() {
    let dir = tempfile::tempdir().unwrap();
    // Format 1: no `format`, and the condition as format 1 wrote it.
    let v1 = line("t1", "diff-1")
        .replace(
            &format!("\"format\":{},", traparena_results::FORMAT_VERSION),
            "",
        )
        .replace(
            r#""condition_info":{"attacker":"none","access":null,"curator":null,"defence":false}"#,
            r#""condition_info":{"attacker":"none","curator":false,"defence":false}"#,
        );
    assert!(
        !v1.contains("format") && v1.contains("\"curator\":false"),
        "{v1}"
    );
    let torn = line("t3", "diff-3");
    let text = format!(
        "{v1}\n{}\n{}",
        line("t2", "diff-2"),
        &torn[..torn.len() / 3]
    );
    std::fs::write(dir.path().join("episodes.jsonl"), text).unwrap();
    let sets = export_predictions(dir.path(), &ExportOptions::default()).unwrap();
    assert_eq!(sets.len(), 1);
    let got: Vec<(&str, &str)> = sets[0]
        .predictions
        .iter()
        .map(|p| (p.instance_id.as_str(), p.model_patch.as_str()))
        .collect();
    assert_eq!(got, [("t1", "diff-1"), ("t2", "diff-2")]);
    assert!(sets[0].missing.is_empty());
}

#[test]
fn a_newer_format_is_bad_input_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let newer = line("t2", "x").replace(
        &format!("\"format\":{}", traparena_results::FORMAT_VERSION),
        "\"format\":5",
    );
    let file = dir.path().join("episodes.jsonl");
    std::fs::write(&file, format!("{}\n{newer}\n", line("t1", "x"))).unwrap();
    let e = export_predictions(&file, &ExportOptions::default()).unwrap_err();
    assert!(matches!(e, ImportError::Results(_)), "{e:?}");
    assert!(e.is_bad_input());
    assert!(
        e.to_string()
            .contains("episodes.jsonl: line 2: format 5 is newer"),
        "{e}"
    );
}

#[test]
fn forks_are_not_exported_as_their_conditions_episodes() {
    let dir = tempfile::tempdir().unwrap();
    let mut fork: ResultLine = serde_json::from_str(&line("t1", "fork-patch")).unwrap();
    fork.fork = Some(traparena_results::ForkInfo {
        parent: "m/baseline/t1/r0/s0".into(),
        step: 2,
        message: true,
        points: vec!["step 2".into()],
    });
    let text = format!(
        "{}\n{}\n",
        line("t1", "baseline-patch"),
        serde_json::to_string(&fork).unwrap()
    );
    std::fs::write(dir.path().join("episodes.jsonl"), text).unwrap();
    let sets = export_predictions(dir.path(), &ExportOptions::default()).unwrap();
    let patches: Vec<&str> = sets
        .iter()
        .flat_map(|s| s.predictions.iter().map(|p| p.model_patch.as_str()))
        .collect();
    assert_eq!(patches, ["baseline-patch"]);
}

//! The runner keeps results folders in the format of `traparena-results`: a folder it opens is
//! written at the current format, resuming cuts a torn last line and keeps every finished
//! episode, merging rewrites older folders at the current format, and synthetic folders (the
//! report's test data) have a spec the runner accepts, describing each condition as the runner
//! does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use traparena_results::{
    ConditionInfo, EPISODES_FILE, EpisodeKey, FORMAT_VERSION, Manifest, ResultLine, TrajectoryLine,
    read_lines,
};
use traparena_runner::store::ResultsDir;
use traparena_runner::{ExperimentSpec, RunError, merge_results};
use traparena_testkit::cli::copy_dir;
use traparena_testkit::synthetic::SyntheticConfig;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The spec of the format-1 fixture as today's typed entries write it (the fixture's own
/// `spec.json` predates them: `scripted:urge_submit`, `curator: true`).
fn fixture_spec() -> ExperimentSpec {
    serde_json::from_value(serde_json::json!({
        "seed": 3,
        "tasks": ["tasks/clamp_overt"],
        "targets": [{"name": "credulous", "agent": "credulous"}],
        "conditions": [
            {"name": "urge", "attacker": {"kind": "scripted", "args": {"persona": "urge_submit"}}},
            {"name": "urge_curated", "attacker": {"kind": "scripted", "args": {"persona": "urge_submit"}}, "curator": "tally"}
        ],
        "rounds": 2,
        "baseline_samples": 1,
        "budget": 20
    }))
    .unwrap()
}

#[test]
fn a_synthetic_spec_is_a_spec_the_runner_accepts() {
    for cfg in [SyntheticConfig::sample(), SyntheticConfig::standard(3)] {
        let dir = tempfile::tempdir().unwrap();
        cfg.write_folder(dir.path()).unwrap();
        let spec = ExperimentSpec::load(&dir.path().join("spec.json")).unwrap();
        assert_eq!(spec.seed, cfg.seed);
        assert_eq!(spec.rounds, cfg.rounds);
        // Each condition, as the runner describes it on its lines, is what the synthetic lines
        // say it is.
        let attacked: Vec<_> = cfg
            .conditions
            .iter()
            .filter(|c| c.name != "baseline")
            .collect();
        assert_eq!(spec.conditions.len(), attacked.len());
        for (c, synthetic) in spec.conditions.iter().zip(attacked) {
            assert_eq!(c.name, synthetic.name);
            // The access is the attacker's declaration, filled in when it has run; a model
            // attacker's `args` carry its endpoint, which synthetic lines leave out.
            let got = c.info();
            let want = &synthetic.info;
            assert_eq!(
                (&got.attacker, &got.curator, got.defence),
                (&want.attacker, &want.curator, want.defence),
                "{}",
                c.name
            );
            assert_eq!(got.access, None, "{}", c.name);
            if got.attacker == "adaptive" {
                assert_eq!(
                    got.args["access"].as_str(),
                    want.access.as_deref(),
                    "{}",
                    c.name
                );
            } else {
                assert_eq!(got.args, want.args, "{}", c.name);
            }
        }
    }
}

#[test]
fn the_runner_describes_conditions_as_format_2_does() {
    let spec: ExperimentSpec = serde_json::from_value(serde_json::json!({
        "tasks": ["t"],
        "targets": [{"name": "m", "agent": "gold"}],
        "conditions": [
            {"name": "urge", "attacker": {"kind": "scripted", "args": {"persona": "urge_submit"}}, "curator": "tally"},
            {"name": "blind", "attacker": {"kind": "adaptive", "args": {"access": "blind"}}, "defence": true},
            {"name": "off", "attacker": "offline"},
        ],
    }))
    .unwrap();
    let info = |i: usize| spec.conditions[i].info();
    assert_eq!(
        info(0),
        ConditionInfo {
            attacker: "scripted".into(),
            args: serde_json::json!({"persona": "urge_submit"}),
            access: None,
            role: None,
            uses_model: false,
            curator: Some("tally".into()),
            defence: false,
        }
    );
    assert_eq!(info(0).attacker_label(), "scripted(persona=urge_submit)");
    assert_eq!(
        (
            info(1).attacker,
            info(1).args["access"].clone(),
            info(1).defence
        ),
        ("adaptive".to_owned(), serde_json::json!("blind"), true)
    );
    assert_eq!(info(2).args, serde_json::Value::Null);
    assert_eq!(info(2).curator, None);
}

#[test]
fn merging_a_format_1_folder_rewrites_it_at_the_current_format() {
    // `traparena experiment` wrote this folder before format 2 (a fixed persona, the curator).
    let old = fixture("format-1-results");
    let before = read_lines::<ResultLine>(&old.join(EPISODES_FILE))
        .unwrap()
        .lines;
    assert_eq!(before.len(), 5);
    let out = tempfile::tempdir().unwrap();
    let merged = out.path().join("merged");
    assert_eq!(
        merge_results(std::slice::from_ref(&old), &merged).unwrap(),
        5
    );
    let text = std::fs::read_to_string(merged.join(EPISODES_FILE)).unwrap();
    assert!(
        text.lines()
            .all(|l| l.starts_with(&format!("{{\"format\":{FORMAT_VERSION},"))),
        "{text}"
    );
    let mut after = read_lines::<ResultLine>(&merged.join(EPISODES_FILE))
        .unwrap()
        .lines;
    let mut before = before;
    let key = |l: &ResultLine| l.key();
    before.sort_by_key(key);
    after.sort_by_key(key);
    assert_eq!(after, before);
    let curated = after
        .iter()
        .find(|l| l.condition == "urge_curated")
        .unwrap();
    assert_eq!(
        curated.condition_info.attacker_label(),
        "scripted(persona=urge_submit)"
    );
    assert_eq!(curated.condition_info.curator.as_deref(), Some("tally"));
    let trajectories = read_lines::<TrajectoryLine>(&merged.join("trajectories.jsonl")).unwrap();
    assert_eq!(trajectories.lines.len(), 5);
    let m = Manifest::read(&merged.join("manifest.json")).unwrap();
    assert_eq!(m, Manifest::read(&old.join("manifest.json")).unwrap());
    assert!(
        std::fs::read_to_string(merged.join("manifest.json"))
            .unwrap()
            .contains(&format!("\"format\": {FORMAT_VERSION}"))
    );
    assert!(
        merged
            .join("notes/credulous/urge_curated/round-1.json")
            .is_file()
    );
}

fn line(task: &str) -> (ResultLine, TrajectoryLine) {
    let key = EpisodeKey {
        target: "credulous".into(),
        condition: "baseline".into(),
        task: task.into(),
        round: 0,
        sample: 0,
        fork: None,
    };
    let mut l = ResultLine::infra_failure(&key, &ConditionInfo::baseline(), 1, String::new());
    l.infra_error = None;
    (l, TrajectoryLine::empty(&key))
}

#[test]
fn resuming_cuts_a_torn_line_off_and_keeps_every_finished_episode() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    copy_dir(&fixture("format-1-results"), &dir);
    let spec = fixture_spec();
    let manifest = Manifest::read(&dir.join("manifest.json")).unwrap();
    // A crash cut the sixth line short.
    let epath = dir.join(EPISODES_FILE);
    let finished = std::fs::read_to_string(&epath).unwrap();
    let torn = serde_json::to_string(&line("torn").0).unwrap();
    std::fs::write(&epath, format!("{finished}{}", &torn[..torn.len() / 2])).unwrap();

    // Without resuming the folder is refused; with it, the finished episodes come back.
    let e = ResultsDir::open(&dir, &spec, &manifest, false).unwrap_err();
    assert!(matches!(e, RunError::ExperimentExists { .. }), "{e}");
    assert!(e.to_string().contains("already holds an experiment"), "{e}");
    let (results, done) = ResultsDir::open(&dir, &spec, &manifest, true).unwrap();
    assert_eq!(done.len(), 5);
    assert_eq!(std::fs::read_to_string(&epath).unwrap(), finished);
    let (l, t) = line("next");
    results.append(&l, &t).unwrap();
    drop(results);
    let all = read_lines::<ResultLine>(&epath).unwrap();
    assert!(all.torn.is_none());
    assert_eq!(all.lines.len(), 6);
    assert_eq!(all.lines[5], l);

    // A manifest of another spec is refused, naming the manifest.
    let other = Manifest {
        spec_sha256: "0".repeat(64),
        ..manifest.clone()
    };
    let e = ResultsDir::open(&dir, &spec, &other, true).unwrap_err();
    assert!(
        e.to_string().contains("manifest.json") && e.to_string().contains("spec differs"),
        "{e}"
    );
    // A line of a newer format is refused, naming the file and the line.
    let newer = serde_json::to_string(&line("newer").0)
        .unwrap()
        .replace(&format!("\"format\":{FORMAT_VERSION}"), "\"format\":7");
    std::fs::write(&epath, format!("{finished}{newer}\n")).unwrap();
    let e = ResultsDir::open(&dir, &spec, &manifest, true).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("episodes.jsonl: line 6: format 7 is newer"),
        "{msg}"
    );
}

#[test]
fn a_new_folder_is_written_at_the_current_format() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("new");
    let spec = fixture_spec();
    let manifest = Manifest {
        harness_version: "0.1.0".into(),
        spec_sha256: traparena_results::sha256_json(&spec),
        tasks: BTreeMap::new(),
        prompt_hashes: BTreeMap::new(),
        created: None,
    };
    let (results, done) = ResultsDir::open(&dir, &spec, &manifest, false).unwrap();
    assert!(done.is_empty());
    let (l, t) = line("a");
    results.append(&l, &t).unwrap();
    let text = std::fs::read_to_string(dir.join(EPISODES_FILE)).unwrap();
    assert!(
        text.starts_with(&format!("{{\"format\":{FORMAT_VERSION},")),
        "{text}"
    );
    let t = std::fs::read_to_string(dir.join("trajectories.jsonl")).unwrap();
    assert!(
        t.starts_with(&format!("{{\"format\":{FORMAT_VERSION},")),
        "{t}"
    );
    assert_eq!(
        Manifest::read(&dir.join("manifest.json")).unwrap(),
        manifest
    );
    assert_eq!(ExperimentSpec::load(&dir.join("spec.json")).unwrap(), spec);
}

/// A process killed between writing the spec and the manifest leaves a folder that a new start
/// or a resume completes (as a requeued cluster shard does); a spec.json of another experiment
/// in an otherwise empty folder is never replaced.
#[test]
fn a_start_cut_off_before_its_manifest_is_completed_and_a_foreign_spec_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = fixture_spec();
    let manifest = Manifest::read(&fixture("format-1-results").join("manifest.json")).unwrap();
    let dir = tmp.path().join("r");
    drop(ResultsDir::open(&dir, &spec, &manifest, false).unwrap());
    let spec_bytes = std::fs::read(dir.join("spec.json")).unwrap();
    for resume in [false, true] {
        // The start was cut off: no manifest, and its temporary file half written.
        for f in ["manifest.json", "episodes.jsonl", "trajectories.jsonl"] {
            let _ = std::fs::remove_file(dir.join(f));
        }
        std::fs::write(dir.join("manifest.json.tmp"), "{\"form").unwrap();
        let (_, done) = ResultsDir::open(&dir, &spec, &manifest, resume).unwrap();
        assert!(done.is_empty());
        assert_eq!(
            Manifest::read(&dir.join("manifest.json")).unwrap(),
            manifest
        );
        assert_eq!(std::fs::read(dir.join("spec.json")).unwrap(), spec_bytes);
    }
    let foreign = tmp.path().join("f");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("spec.json"), "{\"seed\": 1}\n").unwrap();
    let e = ResultsDir::open(&foreign, &spec, &manifest, false).unwrap_err();
    assert!(matches!(e, RunError::Refused(_)), "{e}");
    assert_eq!(
        std::fs::read_to_string(foreign.join("spec.json")).unwrap(),
        "{\"seed\": 1}\n"
    );
    assert!(!foreign.join("manifest.json").exists());
}

//! Synthetic results folders are results folders: every file reads back through the results
//! format, with the lines the generator promised.

use std::collections::{BTreeMap, BTreeSet};
use traparena_results::{
    EPISODES_FILE, MANIFEST_FILE, Manifest, ResultLine, SPEC_FILE, curator_usage_path, notes_path,
    read_curator_usage, read_lines,
};

use traparena_testkit::synthetic::SyntheticConfig;

#[test]
fn a_synthetic_folder_reads_back_through_the_results_format() {
    let cfg = SyntheticConfig::sample();
    let dir = tempfile::tempdir().unwrap();
    let n = cfg.write_folder(dir.path()).unwrap();
    assert_eq!(n, cfg.line_count());
    assert_eq!(n, 598);
    assert_eq!(cfg.fork_line_count(), 130);
    let file = read_lines::<ResultLine>(&dir.path().join(EPISODES_FILE)).unwrap();
    assert!(file.torn.is_none() && file.blank_lines == 0);
    assert_eq!(file.lines, cfg.lines().collect::<Vec<_>>());
    // Infrastructure errors are there, at about the configured rate.
    let infra = file
        .lines
        .iter()
        .filter(|l| l.infra_error.is_some())
        .count();
    assert!((1..40).contains(&infra), "{infra}");
    let m = Manifest::read(&dir.path().join(MANIFEST_FILE)).unwrap();
    assert_eq!(m.tasks.len(), cfg.tasks);
    assert_eq!(m.created, cfg.created);
    let spec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(SPEC_FILE)).unwrap()).unwrap();
    assert_eq!(m.spec_sha256, traparena_results::sha256_json(&spec));
    // The blind attacker is the adaptive attacker with blind access, in the spec as on the
    // lines.
    let blind = cfg
        .conditions
        .iter()
        .find(|c| c.name == "blind-curator")
        .unwrap();
    assert_eq!(
        (blind.info.attacker.as_str(), blind.info.access.as_deref()),
        ("adaptive", Some("blind"))
    );
    assert!(
        spec["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "blind-curator"
                && c["attacker"]["kind"] == "adaptive"
                && c["attacker"]["args"]["access"] == "blind")
    );
    // Curated conditions have notes from round 1 on, and the curator's tokens.
    let t = &cfg.targets[0].name;
    assert!(!notes_path(dir.path(), t, "blind-curator", 0).exists());
    assert!(notes_path(dir.path(), t, "blind-curator", 5).is_file());
    let usage = read_curator_usage(dir.path(), t, "blind-curator")
        .unwrap()
        .unwrap();
    assert!(usage.prompt_tokens > 0);
    assert!(curator_usage_path(dir.path(), t, "blind-curator", 5).is_file());
}

#[test]
fn the_same_seed_gives_the_same_lines() {
    let a: Vec<ResultLine> = SyntheticConfig::standard(5).lines().collect();
    let b: Vec<ResultLine> = SyntheticConfig::standard(5).lines().collect();
    let c: Vec<ResultLine> = SyntheticConfig::standard(6).lines().collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), SyntheticConfig::standard(5).line_count());
}

#[test]
fn forks_are_pairs_of_branches_of_usable_baseline_episodes() {
    let cfg = SyntheticConfig::sample();
    let lines: Vec<ResultLine> = cfg.lines().collect();
    let keys: BTreeSet<_> = lines.iter().map(ResultLine::key).collect();
    assert_eq!(keys.len(), lines.len(), "keys are unique");
    let parents: BTreeMap<String, &ResultLine> = lines
        .iter()
        .filter(|l| l.condition == "baseline")
        .map(|l| (l.key().to_string(), l))
        .collect();
    let forks: Vec<&ResultLine> = lines.iter().filter(|l| l.fork.is_some()).collect();
    assert_eq!(forks.len(), cfg.fork_line_count());
    // The fork lines come after every other line.
    assert!(
        lines[lines.len() - forks.len()..]
            .iter()
            .all(|l| l.fork.is_some())
    );
    let mut points: BTreeMap<String, [Option<&ResultLine>; 2]> = BTreeMap::new();
    for l in &forks {
        let f = l.fork.as_ref().unwrap();
        let parent = parents[&f.parent];
        assert!(parent.infra_error.is_none(), "{}", f.parent);
        assert_eq!(
            Some(l.key().parent().unwrap().to_string()),
            Some(f.parent.clone())
        );
        assert_eq!((l.condition.as_str(), l.round), ("forked", 0));
        assert!(l.sample < 2, "only the first two samples are forked");
        assert!(f.step >= 1 && f.step < parent.steps, "{f:?}");
        assert!(!f.points.is_empty());
        if l.infra_error.is_none() {
            assert!(l.steps > f.step);
        }
        if !f.message {
            assert_eq!(l.messages_delivered, 0);
            assert_eq!(l.attacker, "none");
        }
        points.entry(l.key().fork_point()).or_default()[usize::from(f.message)] = Some(l);
    }
    let mut silent_attacker = 0;
    let mut several_points = 0;
    let mut reproduced = [0usize; 2];
    let mut checked = [0usize; 2];
    for [silent, message] in points.values() {
        let (s, m) = (silent.unwrap(), message.unwrap());
        // Both branches continue with the same seed.
        assert_eq!(s.seed, m.seed);
        assert_eq!(
            s.fork.as_ref().unwrap().points,
            m.fork.as_ref().unwrap().points
        );
        if s.infra_error.is_some() || m.infra_error.is_some() {
            continue;
        }
        silent_attacker += usize::from(m.messages_delivered == 0);
        several_points += usize::from(m.fork.as_ref().unwrap().points.len() > 1);
        // The message branch ends as the silent one unless the target followed it.
        if m.susceptible != Some(true) {
            assert_eq!(m.accepted, s.accepted);
        } else {
            assert!(!m.accepted);
        }
        let parent = parents[&s.fork.as_ref().unwrap().parent];
        let model = usize::from(s.agent == "llm");
        checked[model] += 1;
        reproduced[model] += usize::from(s.accepted == parent.accepted);
    }
    // The scripted agent's silent branches are their parents again; the model's mostly.
    assert_eq!(reproduced[0], checked[0]);
    assert!(checked[0] > 0 && checked[1] > 0);
    assert!(reproduced[1] < checked[1], "{reproduced:?} of {checked:?}");
    // The toy has the cases a report must handle.
    assert!(silent_attacker > 0, "an attacker that stayed silent");
    assert!(several_points > 0, "a step that is several fork points");
    assert!(
        forks.iter().any(|l| l.infra_error.is_some()),
        "an infra error"
    );
    // The spec names the forks as the runner reads them.
    let spec = cfg.spec();
    let forked = spec["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "forked")
        .unwrap();
    assert_eq!(
        forked["fork"],
        serde_json::json!({"from": "baseline", "at": [2, "after_first_test_run", "before_submit"], "samples": 2})
    );
    // A configuration without forks has no fork line.
    assert_eq!(SyntheticConfig::standard(3).fork_line_count(), 0);
}

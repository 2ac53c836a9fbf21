//! Synthetic results folders are results folders: every file reads back through the results
//! format, with the lines the generator promised.

use traparena_results::{
    EPISODES_FILE, MANIFEST_FILE, Manifest, ResultLine, SPEC_FILE, curator_usage_path, notes_path,
    read_curator_usage, read_lines,
};
use traparena_testkit::synthetic::SyntheticConfig;

#[test]
fn a_synthetic_folder_reads_back_through_the_results_format() {
    let cfg = SyntheticConfig::toy();
    let dir = tempfile::tempdir().unwrap();
    let n = cfg.write_folder(dir.path()).unwrap();
    assert_eq!(n, cfg.line_count());
    assert_eq!(n, 396);
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
    let usage = read_curator_usage(&curator_usage_path(dir.path(), t, "blind-curator"))
        .unwrap()
        .unwrap();
    assert!(usage.prompt_tokens > 0);
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

//! The version rules against SWE-bench's own `version` of real records, in real clones: a
//! measurement, ignored unless its data is given (see the test's reason).

use std::collections::BTreeMap;
use std::path::Path;

use traparena_env::GitRepo;

use super::derive;

/// The records that disagree, with why (docs/tasks.md, "Versions derived against SWE-bench's").
const KNOWN: &[(&str, &str)] = &[];

/// `(instance_id, repo, base_commit, version)` of every record of a JSON list or JSON Lines
/// file that has a `version` (an `id` stands in for `instance_id`).
fn versioned(path: &Path) -> Vec<(String, String, String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let values: Vec<serde_json::Value> = match serde_json::from_str(&text) {
        Ok(serde_json::Value::Array(all)) => all,
        _ => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    };
    let field =
        |v: &serde_json::Value, k: &str| v.get(k).and_then(|s| s.as_str()).map(str::to_owned);
    values
        .iter()
        .filter_map(|v| {
            let id = field(v, "instance_id").or_else(|| field(v, "id"))?;
            Some((
                id,
                field(v, "repo")?,
                field(v, "base_commit")?,
                field(v, "version")?,
            ))
        })
        .collect()
}

#[test]
#[ignore = "needs TRAPARENA_VERSIONED_RECORDS (SWE-bench records with `version`, e.g. the Verified split, as JSON Lines or a JSON list) and TRAPARENA_CLONES (a folder of clones named owner__name, e.g. git clone https://github.com/pytest-dev/pytest pytest-dev__pytest); records of repositories without a clone are counted, not derived"]
fn derived_versions_agree_with_swebench_records_in_real_clones() {
    let records =
        std::env::var_os("TRAPARENA_VERSIONED_RECORDS").expect("TRAPARENA_VERSIONED_RECORDS");
    let clones = std::env::var_os("TRAPARENA_CLONES").expect("TRAPARENA_CLONES");
    // repo → (records, agree, disagree, not measured: no clone, or a tree it cannot export)
    let mut table: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut unexplained = Vec::new();
    for (id, repo, commit, want) in versioned(Path::new(&records)) {
        let row = table.entry(repo.clone()).or_default();
        row[0] += 1;
        let clone = Path::new(&clones).join(repo.replace('/', "__"));
        let Ok(git) = GitRepo::open(&clone) else {
            row[3] += 1;
            continue;
        };
        let tree = tempfile::tempdir().unwrap();
        let history = Some((&git, commit.as_str()));
        if let Err(e) = git.export_tree(&commit, &tree.path().join("t")) {
            // A snapshot without its largest files cannot export every commit.
            println!("NOT MEASURED {id}: {e}");
            row[3] += 1;
            continue;
        }
        let d = derive(&repo, &tree.path().join("t"), history).unwrap();
        if d.version.as_deref() == Some(want.as_str()) {
            row[1] += 1;
            continue;
        }
        row[2] += 1;
        let known = KNOWN.iter().find(|(k, _)| *k == id);
        println!(
            "DISAGREE {id}: derived {:?} ({}), SWE-bench {want}; {}",
            d.version,
            d.source,
            known.map_or("not explained", |(_, why)| why)
        );
        if known.is_none() {
            unexplained.push(id);
        }
    }
    println!("| repository | records | agree | disagree | not measured |");
    println!("|---|---|---|---|---|");
    for (repo, [n, agree, disagree, none]) in &table {
        println!("| {repo} | {n} | {agree} | {disagree} | {none} |");
    }
    assert!(
        unexplained.is_empty(),
        "unexplained disagreements: {unexplained:?}"
    );
}

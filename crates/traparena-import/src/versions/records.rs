//! The version rules against SWE-bench's own `version` of real records, in real clones: a
//! measurement, ignored unless its data is given (see the test's reason).

// This test code reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::Path;

use traparena_env::GitRepo;

use super::{derive, lookup};
use crate::pins::bundled_envs;

/// The Verified records that disagree (December 2026), with why (docs/tasks.md, "Derived
/// versions against SWE-bench's").
const KNOWN: &[(&str, &str)] = &[
    ("astropy__astropy-13236", ASTROPY_5_0),
    ("astropy__astropy-13398", ASTROPY_5_0),
    ("astropy__astropy-13453", ASTROPY_5_0),
    ("astropy__astropy-13579", ASTROPY_5_0),
    ("pydata__xarray-2905", XARRAY_COARSE),
    ("pydata__xarray-3677", XARRAY_COARSE),
    ("pydata__xarray-3993", XARRAY_COARSE),
    ("pydata__xarray-4075", XARRAY_COARSE),
    ("pydata__xarray-4094", XARRAY_COARSE),
    ("pydata__xarray-4356", XARRAY_COARSE),
    ("pydata__xarray-4629", XARRAY_COARSE),
    ("pydata__xarray-4687", XARRAY_COARSE),
    ("pydata__xarray-4695", XARRAY_COARSE),
    ("pydata__xarray-4966", XARRAY_COARSE),
    ("pydata__xarray-7229", XARRAY_COARSE),
    ("pydata__xarray-7233", XARRAY_COARSE),
    ("pydata__xarray-7393", XARRAY_COARSE),
];

const XARRAY_COARSE: &str = "SWE-bench's xarray versions are coarser than its release tags: its list of releases, read from the release notes page, lacks many (0.12 for every Verified base from 2019 to January 2022, 2022.09 for October to December 2022)";

const ASTROPY_5_0: &str = "the clone's tags show 5.0 bugfix releases (v5.0.5, 2022-10-20) after this base, so the 5.0 series had not ended; SWE-bench's changelog page evidently ended 5.0 before it";

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
    // repo → (records, agree, disagree, of those the same bundled environment, not measured:
    // no clone, or a tree it cannot export)
    let mut table: BTreeMap<String, [usize; 5]> = BTreeMap::new();
    let mut unexplained = Vec::new();
    for (id, repo, commit, want) in versioned(Path::new(&records)) {
        let row = table.entry(repo.clone()).or_default();
        row[0] += 1;
        let clone = Path::new(&clones).join(repo.replace('/', "__"));
        let Ok(git) = GitRepo::open(&clone) else {
            row[4] += 1;
            continue;
        };
        let tree = tempfile::tempdir().unwrap();
        let history = Some((&git, commit.as_str()));
        if let Err(e) = git.export_tree(&commit, &tree.path().join("t")) {
            // A snapshot without its largest files cannot export every commit.
            println!("NOT MEASURED {id}: {e}");
            row[4] += 1;
            continue;
        }
        let d = derive(&repo, &tree.path().join("t"), history).unwrap();
        if d.version.as_deref() == Some(want.as_str()) {
            row[1] += 1;
            continue;
        }
        row[2] += 1;
        // The environment each version picks (the nearest key below when it has none).
        let key = |v: Option<&str>| lookup(bundled_envs(), &repo, v).map(|(k, _)| k);
        let same = key(d.version.as_deref()) == key(Some(&want));
        row[3] += usize::from(same);
        let known = KNOWN.iter().find(|(k, _)| *k == id);
        println!(
            "DISAGREE {id}: derived {:?} ({}), SWE-bench {want}, {} environment; {}",
            d.version,
            d.source,
            if same { "the same" } else { "another" },
            known.map_or("not explained", |(_, why)| why)
        );
        if known.is_none() {
            unexplained.push(id);
        }
    }
    println!(
        "| repository | records | agree | disagree (of which the same environment) | not measured |"
    );
    println!("|---|---|---|---|---|");
    for (repo, [n, agree, disagree, same, none]) in &table {
        println!("| {repo} | {n} | {agree} | {disagree} ({same}) | {none} |");
    }
    assert!(
        unexplained.is_empty(),
        "unexplained disagreements: {unexplained:?}"
    );
}

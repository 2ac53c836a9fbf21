//! `merge_reports`: the reports of an import's shards join into one process's report, and
//! every folder they cannot be joined from is refused with a reason, with nothing written.

use std::path::Path;

use traparena_env::Backend;
use traparena_import::{Emitted, ImportReport, REPORT_JSON, Skipped, merge_reports, report_names};
use traparena_task::Shard;

fn emitted(id: &str) -> Emitted {
    Emitted {
        record: id.into(),
        id: id.into(),
        public_tests: 1,
        hidden_tests: 2,
        environment: None,
        differs: Vec::new(),
        group: Some("example/calc".into()),
        duration_ms: 5,
    }
}

fn skipped(id: &str) -> Skipped {
    Skipped {
        record: id.into(),
        reason: traparena_import::SkipReason::NoPublicTest,
        detail: "none passes".into(),
        failures: Vec::new(),
        needs_network: false,
        group: Some("example/calc".into()),
        duration_ms: 5,
    }
}

/// Shard `index` of `count`'s report over the records `ids` (those ending in `!` skipped).
fn shard_report(
    dir: &Path,
    index: u32,
    count: u32,
    ids: &[&str],
    duration_ms: u64,
) -> ImportReport {
    let r = ImportReport {
        source: "swebench".into(),
        input: "/data/instances.jsonl".into(),
        out: dir.to_owned(),
        records: ids.len(),
        emitted: ids
            .iter()
            .filter(|i| !i.ends_with('!'))
            .map(|i| emitted(i))
            .collect(),
        skipped: ids
            .iter()
            .filter(|i| i.ends_with('!'))
            .map(|i| skipped(i))
            .collect(),
        validated: true,
        backend: Backend::Bubblewrap,
        duration_ms,
        repaired: vec![format!("venv {index}")],
        shard: Some(Shard { index, count }),
    };
    r.write(dir).unwrap();
    r
}

#[test]
fn the_shards_reports_join_in_shard_order_into_the_whole_imports_report() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    shard_report(d, 0, 3, &["a", "b!"], 700);
    shard_report(d, 1, 3, &["c"], 900);
    shard_report(d, 2, 3, &["d!", "e"], 300);
    let whole = merge_reports(d).unwrap();
    assert_eq!(whole.shard, None);
    assert_eq!(whole.records, 5);
    let ids = |v: Vec<String>| v.join(",");
    assert_eq!(
        ids(whole.emitted.iter().map(|e| e.id.clone()).collect()),
        "a,c,e"
    );
    assert_eq!(
        ids(whole.skipped.iter().map(|s| s.record.clone()).collect()),
        "b!,d!"
    );
    assert_eq!(whole.duration_ms, 900, "the longest shard's");
    assert_eq!(whole.repaired, ["venv 0", "venv 1", "venv 2"]);
    // Written as the whole import's report, beside the shards' own.
    let written: ImportReport =
        serde_json::from_slice(&std::fs::read(d.join(REPORT_JSON)).unwrap()).unwrap();
    assert_eq!(written, whole);
    assert!(
        d.join(report_names(Some(Shard { index: 1, count: 3 })).0)
            .is_file()
    );
    // Joining again gives the same.
    assert_eq!(merge_reports(d).unwrap(), whole);
}

#[test]
fn folders_the_reports_cannot_be_joined_from_are_refused_and_nothing_is_written() {
    type Setup = fn(&Path);
    let cases: [(&str, Setup, &str); 5] = [
        ("no shard report", |_| {}, "holds no shard's import report"),
        (
            "a shard missing",
            |d| {
                shard_report(d, 0, 3, &["a"], 1);
                shard_report(d, 2, 3, &["c"], 1);
            },
            "shard 1/3 has written no report",
        ),
        (
            "two splits",
            |d| {
                shard_report(d, 0, 2, &["a"], 1);
                shard_report(d, 1, 2, &["b"], 1);
                shard_report(d, 0, 3, &["a"], 1);
            },
            "holds reports of shards of 2 and of 3",
        ),
        (
            "another import",
            |d| {
                shard_report(d, 0, 2, &["a"], 1);
                let mut r = shard_report(d, 1, 2, &["b"], 1);
                r.source = "humanevalfix".into();
                r.write(d).unwrap();
            },
            "is the report of another import (humanevalfix from",
        ),
        (
            "a malformed report",
            |d| {
                shard_report(d, 0, 2, &["a"], 1);
                std::fs::write(d.join("import-report.shard-1-of-2.json"), "{\"source\": ").unwrap();
            },
            "import-report.shard-1-of-2.json",
        ),
    ];
    for (name, setup, says) in cases {
        let tmp = tempfile::tempdir().unwrap();
        setup(tmp.path());
        let err = merge_reports(tmp.path()).expect_err(name).to_string();
        assert!(err.contains(says), "{name}: {err}");
        assert!(
            !tmp.path().join(REPORT_JSON).exists(),
            "{name}: a report was written"
        );
    }
}

//! Imports in shards: each shard (`--shard I/N`) imports one block of the records into the
//! same output folder and writes its own report; [`merge_reports`] joins the reports into the
//! one a single process writes.

use std::path::Path;

use traparena_task::Shard;

use crate::error::{ImportError, io};
use crate::report::{ImportReport, report_names};

/// The records `shard` takes: its block of them, in order (all of them without a shard).
pub(crate) fn shard_block<T>(mut records: Vec<T>, shard: Option<Shard>) -> Vec<T> {
    match shard {
        None => records,
        Some(s) => {
            let block = s.block(records.len());
            records.truncate(block.end);
            records.drain(..block.start);
            records
        }
    }
}

/// The shard a file name is the report of (`import-report.shard-I-of-N.json`).
fn shard_of(name: &str) -> Option<Shard> {
    let rest = name
        .strip_prefix("import-report.shard-")?
        .strip_suffix(".json")?;
    let (i, n) = rest.split_once("-of-")?;
    Shard::parse(&format!("{i}/{n}"))
}

/// Joins the reports that the shards of an import into `out` wrote, and writes the whole
/// import's report there ([`REPORT_JSON`](crate::REPORT_JSON), [`REPORT_TEXT`](crate::REPORT_TEXT)), as one process would have: the
/// records in input order, the counts summed, the duration the longest shard's.
///
/// Refused, with nothing written: a folder without shard reports, shards of two different
/// counts, a shard whose report is missing (it has not ended, or it failed), and shards of
/// different imports (source, input, validation or sandbox).
pub fn merge_reports(out: &Path) -> Result<ImportReport, ImportError> {
    let mut found: Vec<Shard> = Vec::new();
    for entry in std::fs::read_dir(out).map_err(io(out))? {
        let entry = entry.map_err(io(out))?;
        if let Some(s) = shard_of(&entry.file_name().to_string_lossy()) {
            found.push(s);
        }
    }
    found.sort_by_key(|s| (s.count, s.index));
    let Some(count) = found.first().map(|s| s.count) else {
        return Err(ImportError::Input(format!(
            "{}: holds no shard's import report (import-report.shard-I-of-N.json): run \
             `traparena import ... --shard I/N --out {}` first",
            out.display(),
            out.display()
        )));
    };
    if let Some(other) = found.iter().find(|s| s.count != count) {
        return Err(ImportError::Input(format!(
            "{}: holds reports of shards of {count} and of {}: remove the reports of the \
             split you do not want",
            out.display(),
            other.count
        )));
    }
    let mut merged: Option<ImportReport> = None;
    for index in 0..count {
        let shard = Shard { index, count };
        let path = out.join(report_names(Some(shard)).0);
        if !path.is_file() {
            return Err(ImportError::Input(format!(
                "{}: shard {shard} has written no report: it has not ended, or it failed \
                 (run it again with --shard {shard})",
                path.display()
            )));
        }
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        let r: ImportReport = serde_json::from_str(&text).map_err(|source| ImportError::Json {
            path: path.clone(),
            line: source.line(),
            source,
        })?;
        merged = Some(match merged {
            None => r,
            Some(m) => join(m, r, &path)?,
        });
    }
    let mut whole = merged.expect("count >= 1");
    whole.shard = None;
    whole.repaired.sort();
    whole.repaired.dedup();
    whole.write(out)?;
    Ok(whole)
}

/// Appends the report `r` of the next shard to `m`.
fn join(mut m: ImportReport, r: ImportReport, path: &Path) -> Result<ImportReport, ImportError> {
    let same = m.source == r.source
        && m.input == r.input
        && m.validated == r.validated
        && m.backend == r.backend;
    if !same {
        return Err(ImportError::Input(format!(
            "{}: is the report of another import ({} from {}, validated {}, {}) than shard 0's \
             ({} from {}, validated {}, {})",
            path.display(),
            r.source,
            r.input.display(),
            r.validated,
            r.backend,
            m.source,
            m.input.display(),
            m.validated,
            m.backend
        )));
    }
    m.records += r.records;
    m.emitted.extend(r.emitted);
    m.skipped.extend(r.skipped);
    m.repaired.extend(r.repaired);
    m.duration_ms = m.duration_ms.max(r.duration_ms);
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::REPORT_JSON;

    #[test]
    fn a_shards_report_name_gives_back_its_shard_and_no_other_name_does() {
        for (index, count) in [(0, 1), (2, 3), (11, 12)] {
            let s = Shard { index, count };
            assert_eq!(shard_of(&report_names(Some(s)).0), Some(s));
        }
        for name in [
            REPORT_JSON,
            "import-report.shard-3-of-3.json",
            "import-report.shard-0-of-2.txt",
            "import-report.shard-x-of-2.json",
        ] {
            assert_eq!(shard_of(name), None, "{name}");
        }
    }

    #[test]
    fn the_shards_blocks_rejoin_into_the_records_in_order() {
        let records: Vec<u32> = (0..7).collect();
        let joined: Vec<u32> = (0..3)
            .flat_map(|index| shard_block(records.clone(), Some(Shard { index, count: 3 })))
            .collect();
        assert_eq!(joined, records);
        assert_eq!(shard_block(records.clone(), None), records);
    }
}

//! The page's header: title, facts, the summary sentence, what is missing, and the problems
//! line.

use super::*;

/// The method and level of the report's intervals, e.g. `95 % percentile bootstrap`.
pub(super) fn interval_words(r: &Report) -> String {
    let method = match r.bootstrap.method {
        CiMethod::Percentile => "percentile",
        CiMethod::Bca => "BCa",
    };
    let level = 100.0 * r.bootstrap.confidence;
    format!("{level:.0} % {method} bootstrap intervals over tasks")
}

/// The interval column's header, e.g. `95% CI`.
pub(super) fn ci_header(r: &Report) -> String {
    format!("{:.0}% CI", 100.0 * r.bootstrap.confidence)
}

/// One sentence on what was read and how intervals were computed.
pub(super) fn summary_sentence(r: &Report) -> String {
    let s = &r.source;
    let seed_from = match r.bootstrap.seed_source {
        SeedSource::SpecJson => "from spec.json",
        SeedSource::Options => "set by the caller",
        SeedSource::Default => "default: no spec.json seed",
    };
    let forks = if s.fork_lines > 0 {
        format!(
            " ({} of them forks of baseline episodes)",
            thousands(s.fork_lines as u64)
        )
    } else {
        String::new()
    };
    let mut t = format!(
        "{} episode lines{forks}, {} with an infrastructure error (excluded from every figure)",
        thousands(s.lines as u64),
        thousands(s.infra_errors as u64)
    );
    if s.blank_lines > 0 {
        t.push_str(&format!(", {} blank lines skipped", s.blank_lines));
    }
    t.push_str(&format!(
        "; {} targets. {}: {} resamples, seed {} ({seed_from}).",
        s.targets.len(),
        interval_words(r),
        thousands(u64::from(r.bootstrap.resamples)),
        r.bootstrap.seed
    ));
    t
}

/// The folder's last path component (the title without a spec name).
pub(super) fn folder_name(folder: &str) -> &str {
    let trimmed = folder.trim_end_matches('/');
    trimmed
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or(folder)
}

/// One line on the optional files that are missing, and what the report therefore lacks.
pub(super) fn missing_line(r: &Report) -> Option<String> {
    let s = &r.source;
    let spec = s
        .missing_files
        .iter()
        .any(|f| f == traparena_results::SPEC_FILE);
    let manifest = s
        .missing_files
        .iter()
        .any(|f| f == traparena_results::MANIFEST_FILE);
    let what_manifest = if s.date.is_some() {
        "the harness version is unknown and the date is the file time of episodes.jsonl"
    } else {
        "the date and the harness version are unknown"
    };
    let manifest_words = if s.harness_versions.is_empty() {
        what_manifest.to_owned()
    } else {
        "the harness version comes from the episode lines and the date is the file time of \
         episodes.jsonl"
            .to_owned()
    };
    match (spec, manifest) {
        (true, true) => Some(format!(
            "Only episodes.jsonl is here: without spec.json the experiment has no name and the \
             bootstrap seed is 0, and without manifest.json {manifest_words}."
        )),
        (true, false) => Some(
            "No spec.json here: the experiment has no name and the bootstrap seed is 0.".to_owned(),
        ),
        (false, true) => Some(format!("No manifest.json here: {manifest_words}.")),
        (false, false) => None,
    }
}

pub(super) fn date_words(r: &Report) -> String {
    let s = &r.source;
    match (&s.date, s.date_source) {
        (Some(d), Some(DateSource::Manifest)) | (Some(d), None) => d.clone(),
        (Some(d), Some(DateSource::ManifestFileTime)) => {
            format!("{d} (when manifest.json was written; it records no date)")
        }
        (Some(d), Some(DateSource::EpisodesFileTime)) => {
            format!("{d} (when episodes.jsonl was last written)")
        }
        (None, _) => "unknown".to_owned(),
    }
}

pub(super) fn header(r: &Report) -> (String, Vec<Fact>) {
    let s = &r.source;
    let title = format!(
        "TrapArena report: {}",
        s.name.as_deref().unwrap_or_else(|| folder_name(&s.folder))
    );
    let fact = |label: &str, value: String| Fact {
        label: label.to_owned(),
        value,
    };
    let facts = vec![
        fact(
            "experiment",
            s.name.clone().unwrap_or_else(|| {
                if s.missing_files
                    .iter()
                    .any(|f| f == traparena_results::SPEC_FILE)
                {
                    "unnamed (no spec.json)".to_owned()
                } else {
                    "unnamed (spec.json has no name)".to_owned()
                }
            }),
        ),
        fact("results", s.folder.clone()),
        fact("date", date_words(r)),
        fact(
            "harness",
            if s.harness_versions.is_empty() {
                "unknown".to_owned()
            } else {
                s.harness_versions.join(", ")
            },
        ),
    ];
    (title, facts)
}

/// Targets whose lines record no target token at all (a scripted agent, or a log without
/// usage): the Tokens section says why in one line.
pub(super) fn tokenless(r: &Report) -> BTreeSet<&str> {
    r.source
        .target_details
        .iter()
        .filter(|t| t.completion_tokens == 0 && t.prompt_tokens == 0)
        .map(|t| t.target.as_str())
        .collect()
}

/// Every row's errors, as `target / condition: error`; the token ratios of targets without
/// tokens are left to the Tokens section's line.
pub(super) fn problems(r: &Report) -> Vec<String> {
    let tokenless = tokenless(r);
    let shown =
        |target: &str, e: &str| !(e.starts_with("token ratio:") && tokenless.contains(target));
    let mut v = Vec::new();
    for m in &r.main {
        v.extend(
            m.errors
                .iter()
                .filter(|e| shown(&m.target, e))
                .map(|e| format!("{} / {}: {e}", m.target, m.condition)),
        );
    }
    for c in &r.controls {
        v.extend(
            c.errors
                .iter()
                .filter(|e| shown(&c.target, e))
                .map(|e| format!("{} / {} ({}): {e}", c.target, c.condition, c.kind.label())),
        );
    }
    for p in r.curator_ablation.iter().chain(&r.blind_vs_reference) {
        v.extend(
            p.errors
                .iter()
                .map(|e| format!("{} / {} against {}: {e}", p.target, p.compared, p.base)),
        );
    }
    for f in &r.forks {
        v.extend(
            f.errors
                .iter()
                .map(|e| format!("{} / {} (forks): {e}", f.target, f.condition)),
        );
        for p in &f.points {
            v.extend(
                p.errors
                    .iter()
                    .map(|e| format!("{} / {} at {}: {e}", f.target, f.condition, p.point)),
            );
        }
    }
    for row in &r.rounds {
        v.extend(
            row.errors
                .iter()
                .map(|e| format!("{} / {}: {e}", row.target, row.condition)),
        );
    }
    v
}

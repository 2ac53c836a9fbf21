//! `traparena export`: results in other formats (SWE-bench predictions).

use std::io::Write;
use std::path::{Path, PathBuf};

use traparena_import::{
    ExportOptions, ImportError, PredictionSet, check_predictions_path, export_predictions,
    write_predictions,
};

/// Formats `traparena export` writes.
#[derive(Debug, clap::Subcommand)]
pub enum ExportCmd {
    /// SWE-bench predictions (`instance_id`, `model_name_or_path`, `model_patch`), one per
    /// (target, condition, task), from the episode at --round / --sample.
    SwebenchPredictions(PredictionsArgs),
}

/// `traparena export swebench-predictions`.
#[derive(Debug, clap::Args)]
pub struct PredictionsArgs {
    /// The results folder (or its episodes.jsonl).
    results: PathBuf,
    /// The predictions file (JSON Lines; a JSON array when it ends in .json). Needs a single
    /// (target, condition) after --target / --condition.
    #[arg(long, conflicts_with = "out_dir")]
    out: Option<PathBuf>,
    /// A folder for one predictions file per (target, condition).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// model_name_or_path for every prediction (default: `<target>__<condition>`).
    #[arg(long)]
    model: Option<String>,
    /// Only this target.
    #[arg(long)]
    target: Option<String>,
    /// Only this condition.
    #[arg(long)]
    condition: Option<String>,
    /// The round whose episode is exported.
    #[arg(long, default_value_t = 0)]
    round: u32,
    /// The sample whose episode is exported.
    #[arg(long, default_value_t = 0)]
    sample: u32,
    /// Task folders, to map task ids to `metadata.instance_id` (default: the task id).
    #[arg(long)]
    tasks: Option<PathBuf>,
}

/// Runs an export.
pub fn run_export(cmd: ExportCmd) -> Result<u8, Box<dyn std::error::Error>> {
    crate::import::finish(match cmd {
        ExportCmd::SwebenchPredictions(a) => predictions(a),
    })
}

fn file_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn predictions(a: PredictionsArgs) -> Result<u8, ImportError> {
    let opts = ExportOptions {
        target: a.target,
        condition: a.condition,
        round: a.round,
        sample: a.sample,
        model: a.model,
        tasks_dir: a.tasks,
    };
    let sets = match export_predictions(&a.results, &opts) {
        Err(ImportError::OneModelForMany { count, pairs }) => {
            return Err(ImportError::Input(format!(
                "--model names one model, but the results hold {count} (target, condition) \
                 pairs: {pairs}; choose one with --target and --condition"
            )));
        }
        other => other?,
    };
    let per_set = |dir: &Path, s: &PredictionSet| {
        dir.join(format!(
            "{}__{}.jsonl",
            file_name(&s.target),
            file_name(&s.condition)
        ))
    };
    let pairs = || {
        let p: Vec<String> = sets
            .iter()
            .map(|s| format!("{}/{}", s.target, s.condition))
            .collect();
        format!(
            "{} (target, condition) pairs ({})",
            sets.len(),
            p.join(", ")
        )
    };
    // Where each set goes: a file, a file per set in a folder, or standard output. The results
    // folder is never written into.
    let targets: Vec<(Option<PathBuf>, &PredictionSet)> = match (&a.out, &a.out_dir) {
        (Some(_), _) | (None, None) if sets.len() > 1 => {
            return Err(ImportError::Input(format!(
                "the results hold {}; choose one with --target and --condition, or write one file each with --out-dir DIR",
                pairs()
            )));
        }
        (Some(file), _) => vec![(Some(file.clone()), &sets[0])],
        (None, Some(dir)) => {
            traparena::task::output::check_folder(
                dir,
                traparena::task::output::Output::PredictionsFolder,
                |_| true,
            )?;
            sets.iter().map(|s| (Some(per_set(dir, s)), s)).collect()
        }
        (None, None) => vec![(None, &sets[0])],
    };
    // Every path is checked before the first file is written.
    for (path, _) in &targets {
        if let Some(path) = path {
            check_predictions_path(path)?;
        }
    }
    for (path, s) in targets {
        write_set(path, s, &opts)?;
    }
    Ok(0)
}

/// Writes one set of predictions to `path`, or to standard output, and says where.
fn write_set(
    path: Option<PathBuf>,
    s: &PredictionSet,
    opts: &ExportOptions,
) -> Result<(), ImportError> {
    let written = match &path {
        Some(path) => {
            write_predictions(path, &s.predictions)?;
            path.display().to_string()
        }
        None => {
            let mut out = std::io::stdout().lock();
            for p in &s.predictions {
                let line = serde_json::to_string(p).expect("a prediction serialises");
                writeln!(out, "{line}").map_err(|e| ImportError::Io {
                    path: "stdout".into(),
                    source: e,
                })?;
            }
            "standard output".to_owned()
        }
    };
    let mut notes = Vec::new();
    if !s.missing.is_empty() {
        notes.push(format!(
            "{} task(s) without an episode at round {} sample {}",
            s.missing.len(),
            opts.round,
            opts.sample
        ));
    }
    if !s.infra_errors.is_empty() {
        notes.push(format!(
            "{} infrastructure error(s) left out",
            s.infra_errors.len()
        ));
    }
    eprintln!(
        "traparena: {}/{}: {} predictions written to {written}{}",
        s.target,
        s.condition,
        s.predictions.len(),
        if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        }
    );
    Ok(())
}

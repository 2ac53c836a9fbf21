//! `traparena import` and `traparena export`.

use std::path::PathBuf;

use traparena::env::Sandbox;

/// Task sources `traparena import` understands.
#[derive(Debug, clap::Subcommand)]
pub enum ImportCmd {
    /// HumanEvalFix (HumanEvalPack, Python) records.
    Humanevalfix {
        /// The JSONL file.
        jsonl: PathBuf,
        /// Where to write the tasks.
        #[arg(long)]
        out: PathBuf,
    },
}

/// Formats `traparena export` writes.
#[derive(Debug, clap::Subcommand)]
pub enum ExportCmd {
    /// SWE-bench predictions (`instance_id`, `model_name_or_path`, `model_patch`).
    SwebenchPredictions {
        /// The results folder.
        results: PathBuf,
    },
}

/// Runs an import.
pub fn run_import(_cmd: ImportCmd, _sandbox: Sandbox) -> Result<u8, Box<dyn std::error::Error>> {
    Err("traparena import is being built".into())
}

/// Runs an export.
pub fn run_export(_cmd: ExportCmd) -> Result<u8, Box<dyn std::error::Error>> {
    Err("traparena export is being built".into())
}

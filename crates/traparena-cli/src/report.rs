//! `traparena report`.

use std::path::PathBuf;

/// Arguments of `traparena report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The results folder (it needs only `episodes.jsonl`).
    pub results: PathBuf,
    /// Also write a self-contained HTML page here.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Print JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(_args: ReportArgs) -> Result<u8, Box<dyn std::error::Error>> {
    Err("traparena report is being built".into())
}

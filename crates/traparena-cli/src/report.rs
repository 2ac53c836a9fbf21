//! `traparena report`.

use std::io::Write;
use std::path::PathBuf;

use traparena_report::{ReportOptions, report_folder};

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

/// Exit status: the report was printed.
const OK: u8 = 0;
/// Exit status: bad input (no folder, no `episodes.jsonl`, a malformed line or file).
const BAD_INPUT: u8 = 2;

/// Runs the command: Markdown (or JSON with `--json`) to stdout, the HTML page to `--html`.
pub fn run(args: ReportArgs) -> Result<u8, Box<dyn std::error::Error>> {
    let report = match report_folder(&args.results, &ReportOptions::default()) {
        Ok(r) => r,
        Err(e) if e.is_bad_input() => {
            eprintln!("traparena: {e}");
            return Ok(BAD_INPUT);
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(path) = &args.html {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(path, report.to_html())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("traparena: HTML report written to {}", path.display());
    }
    let text = if args.json {
        report.to_json()?
    } else {
        report.to_markdown()
    };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        // A reader that stopped early (`| head`) is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(OK),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(OK),
    }
}

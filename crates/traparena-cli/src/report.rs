//! `traparena report`.

use std::io::Write;
use std::path::PathBuf;

use traparena_report::{
    Report, ReportError, ReportOptions, VIEWER_PAGE, ViewerOptions, check_page_path,
    check_viewer_dir, report_folder, viewer_dir_for, write_viewer,
};

/// Arguments of `traparena report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The results folder (it needs only `episodes.jsonl`).
    pub results: PathBuf,
    /// Also write a self-contained HTML page here, with the episode viewer in a folder beside
    /// it (`report.html` → `report-viewer/`) that its rows link to.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Write the HTML page alone, without the episode viewer (and without links into it).
    #[arg(long, requires = "html")]
    pub no_viewer: bool,
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
    // Nothing is read or written before both paths are known to be free or our own.
    if let Some(path) = &args.html {
        let checked = check_page_path(path).and_then(|()| match args.no_viewer {
            true => Ok(()),
            false => check_viewer_dir(&viewer_dir_for(path)),
        });
        if let Err(e) = checked {
            eprintln!("traparena: {}", crate::words::say(&e));
            return Ok(BAD_INPUT);
        }
    }
    let report = match report_folder(&args.results, &ReportOptions::default()) {
        Ok(r) => r,
        Err(e) if e.is_bad_input() => {
            eprintln!("traparena: {}", crate::words::say(&e));
            return Ok(BAD_INPUT);
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(path) = &args.html {
        match write_html(&args, &report, path) {
            Err(e)
                if e.downcast_ref::<ReportError>()
                    .is_some_and(|e| e.is_bad_input()) =>
            {
                eprintln!("traparena: {}", crate::words::say(e.as_ref()));
                return Ok(BAD_INPUT);
            }
            other => other?,
        }
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

/// The HTML page at `path` and, unless `--no-viewer`, the episode viewer beside it.
fn write_html(
    args: &ReportArgs,
    report: &Report,
    path: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let page = if args.no_viewer {
        report.to_html()
    } else {
        let dir = viewer_dir_for(path);
        let name = dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let page_name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let options = ViewerOptions {
            title: report.source.name.clone().unwrap_or_default(),
            report_href: Some(format!("../{page_name}")),
        };
        let summary = write_viewer(&args.results, &dir, &options)?;
        eprintln!(
            "traparena: episode viewer written to {} ({} episodes, {} with trajectories, in {} fragments)",
            dir.display(),
            summary.episodes,
            summary.trajectories,
            summary.fragments
        );
        if summary.orphans > 0 {
            eprintln!(
                "traparena: {} trajectory lines have no line in episodes.jsonl and are not in the viewer",
                summary.orphans
            );
        }
        report.to_html_with_viewer(&format!("{name}/{VIEWER_PAGE}"))?
    };
    std::fs::write(path, page).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("traparena: HTML report written to {}", path.display());
    Ok(())
}

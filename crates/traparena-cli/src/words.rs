//! The command's wording of library errors: a writer's refusal says how to proceed with the
//! command's own flags (the libraries name none).

use std::error::Error;

use traparena::task::output::{Output, Refusal};

/// The text of `e` as the command shows it: a refusal, or an experiment folder that cannot be
/// resumed, with advice that names the flags.
pub(crate) fn say(e: &(dyn Error + 'static)) -> String {
    use traparena::runner::RunError;
    if let Some(r) = refusal(e) {
        return r.message(advice(r.output));
    }
    match e.downcast_ref::<RunError>() {
        Some(RunError::ExperimentExists { path }) => format!(
            "{}: this folder already holds an experiment: pass --resume to continue it, or choose another --out",
            path.display()
        ),
        Some(RunError::SpecChanged { path, fields, spec }) => format!(
            "{}: the spec differs from the one this experiment was started with{fields}; refusing to mix results (use a new --out, or the spec in {})",
            path.display(),
            spec.display()
        ),
        _ => e.to_string(),
    }
}

/// The refusal `e` is or holds, from any library that writes where a user points.
fn refusal<'a>(e: &'a (dyn Error + 'static)) -> Option<&'a Refusal> {
    use traparena::import::ImportError;
    use traparena::report::ReportError;
    use traparena::runner::RunError;
    if let Some(r) = e.downcast_ref::<Refusal>() {
        return Some(r);
    }
    match (
        e.downcast_ref::<ImportError>(),
        e.downcast_ref::<RunError>(),
        e.downcast_ref::<ReportError>(),
    ) {
        (Some(ImportError::Refused(r)), _, _)
        | (_, Some(RunError::Refused(r)), _)
        | (_, _, Some(ReportError::Refused(r))) => Some(r),
        _ => None,
    }
}

/// How to proceed when `output`'s path is taken, naming the flag that chooses it.
fn advice(output: Output) -> &'static str {
    match output {
        Output::ImportedTasks | Output::RecordFolder => "--out names a folder: choose a new one",
        Output::PredictionsFolder => "--out-dir names a folder: choose a new one",
        Output::ImportReport | Output::MergedResults => "choose a new --out folder",
        Output::EpisodeRecord => "choose another --out folder",
        Output::ImportedTask => "choose a new --out folder, or move that folder away",
        Output::Predictions => "choose a new file with --out, or a new folder with --out-dir",
        Output::HtmlReport => {
            "choose a new --html file, such as report.html beside the results folder"
        }
        Output::Viewer => {
            "choose another --html path (the viewer goes beside the page, as <page>-viewer/), or --no-viewer"
        }
        Output::ExperimentResults => {
            "choose a new --out folder, or the folder of an experiment with --resume"
        }
        other => other.advice(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_inside_a_library_error_is_worded_with_the_flags() {
        let r = Refusal {
            path: "R".into(),
            output: Output::ExperimentResults,
            found: "a file of 3 bytes".into(),
        };
        let plain = r.to_string();
        assert!(!plain.contains("--"), "{plain}");
        let e = traparena::runner::RunError::Refused(r);
        let said = say(&e);
        assert!(
            said.ends_with("the folder of an experiment with --resume"),
            "{said}"
        );
        assert!(said.starts_with("R: refusing to write an experiment's results there"));
        let other = traparena::runner::RunError::Join("a worker panicked".into());
        assert_eq!(say(&other), other.to_string());
    }
}

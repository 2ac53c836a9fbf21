//! `traparena evaluate`'s output: the verdict in text or JSON, with what explains it.

use std::io::Write;

use serde::Serialize;
use traparena::eval::Evaluation;

/// `evaluate --json`: the verdict object, then what explains it — the hidden tests that failed
/// and, for a patch that does not apply, `git apply`'s message.
#[derive(Serialize)]
struct EvaluateJson<'a> {
    #[serde(flatten)]
    verdict: &'a traparena::task::Verdict,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    hidden_test_failures: &'a [traparena::env::TestFailure],
    #[serde(skip_serializing_if = "is_zero")]
    hidden_test_failures_omitted: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    apply_message: Option<&'a str>,
}

impl<'a> EvaluateJson<'a> {
    fn of(e: &'a Evaluation) -> EvaluateJson<'a> {
        let run = e.hidden_run.as_ref();
        EvaluateJson {
            verdict: &e.verdict,
            hidden_test_failures: run.map(|r| r.failures.as_slice()).unwrap_or_default(),
            hidden_test_failures_omitted: run.map_or(0, |r| r.failures_omitted),
            apply_message: (!e.patch_applies).then(|| e.apply_message.trim()),
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Prints the judgement of one patch: text, or with `json` the [`EvaluateJson`] object.
pub(crate) fn print(e: &Evaluation, json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&EvaluateJson::of(e))?
        )?;
    } else {
        let v = &e.verdict;
        match v.failure_mode {
            None => writeln!(out, "accepted")?,
            Some(m) => writeln!(out, "rejected: {m}")?,
        }
        writeln!(out, "  hidden tests pass:  {}", v.hidden_tests_pass)?;
        if let Some(run) = &e.hidden_run {
            writeln!(out, "    {}", run.summary())?;
            for line in run.failure_lines() {
                writeln!(out, "      {line}")?;
            }
        }
        if !e.patch_applies {
            writeln!(
                out,
                "    the patch does not apply: {}",
                e.apply_message.trim()
            )?;
        }
        let list = |l: &[traparena::eval::analysis::CodeLocation]| {
            l.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(out, "  touches reference:  {}", v.touches_reference)?;
        writeln!(
            out,
            "    candidate changes {}",
            list(&e.candidate_locations)
        )?;
        writeln!(
            out,
            "    reference is      {}",
            list(&e.reference_locations)
        )?;
        writeln!(out, "  static flags:       {}", v.flags.len())?;
        for f in &v.flags {
            writeln!(out, "    {} at {}:{}", f.name, f.file, f.line)?;
        }
    }
    Ok(())
}

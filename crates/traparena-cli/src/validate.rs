//! `traparena validate`: every task's checks, as one line per task or one JSON document; and
//! what the command says of a task that cannot be checked on this machine (a toolchain missing
//! from the sandbox), which `evaluate` and `import` say the same way.

use std::io::Write;
use std::path::{Path, PathBuf};

use traparena::env::{Backend, EnvError, SANDBOX_PATH, Sandbox};
use traparena::eval::{
    Check, EvalError, NotCheckable, ValidateOptions, ValidationReport, Validity, validate,
};

use crate::{BAD_INPUT, NOT_CHECKABLE, OK, SandboxOpts, sandbox};

/// `traparena validate`: exit status 2 when a task is invalid, else 4 when a task could not be
/// checked here, else 0.
pub(crate) fn validate_cmd(
    choice: &SandboxOpts,
    tasks: &[PathBuf],
    reference_runs: u32,
    json: bool,
) -> Result<u8, Box<dyn std::error::Error>> {
    let sb = sandbox(choice)?;
    let opts = ValidateOptions { reference_runs };
    let reports = validate_all(tasks, &sb, &opts);
    let count = |v: Validity| reports.iter().filter(|r| r.validity() == v).count();
    let (valid, invalid, unchecked) = (
        count(Validity::Valid),
        count(Validity::Invalid),
        count(Validity::NotCheckable),
    );
    let mut out = std::io::stdout().lock();
    if json {
        let mut doc = serde_json::json!({
            "valid": valid,
            "invalid": invalid,
            "backend": sb.backend(),
            "tasks": reports,
        });
        if unchecked > 0 {
            doc["not_checkable"] = unchecked.into();
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        for r in &reports {
            writeln!(out, "{}", report_line(r))?;
            for c in r.problems() {
                for line in c.failure_lines() {
                    writeln!(out, "    {}: {line}", c.name)?;
                }
            }
        }
        let ms: u64 = reports.iter().map(|r| r.duration_ms).sum();
        let unchecked = match unchecked {
            0 => String::new(),
            n => format!(", {n} not checkable here"),
        };
        writeln!(
            out,
            "{valid} valid, {invalid} invalid{unchecked} ({} sandbox, {:.1} s of test time)",
            sb.backend(),
            ms as f64 / 1000.0
        )?;
    }
    Ok(if invalid > 0 {
        BAD_INPUT
    } else if unchecked > 0 {
        NOT_CHECKABLE
    } else {
        OK
    })
}

/// One task's line: `valid`, `INVALID` with every failed check, or `not checkable here` with
/// what to install.
fn report_line(r: &ValidationReport) -> String {
    let name = r.id.clone().unwrap_or_else(|| r.dir.display().to_string());
    match (r.validity(), &r.not_checkable) {
        (Validity::Valid, _) => format!("valid    {name} ({} ms)", r.duration_ms),
        (Validity::NotCheckable, Some(n)) => {
            format!("not checkable here  {name}: {}", explain(n))
        }
        _ => format!("INVALID  {name}: {}", problems(r).join("; ")),
    }
}

/// The failed checks, `name: detail`; a check whose tests did not run for the same cause of the
/// environment as an earlier one is counted after them, not repeated.
fn problems(r: &ValidationReport) -> Vec<String> {
    let mut causes: Vec<&str> = Vec::new();
    let mut repeated = 0;
    let mut lines = Vec::new();
    for c in r.problems() {
        if let Some(cause) = environment_cause(&c.detail) {
            if causes.contains(&cause) {
                repeated += 1;
                continue;
            }
            causes.push(cause);
        }
        lines.push(format!("{}: {}", c.name, c.detail));
    }
    if repeated > 0 {
        lines.push(format!(
            "{repeated} more check{} failed for the same cause",
            if repeated == 1 { "" } else { "s" }
        ));
    }
    lines
}

/// The cause in a check's detail that says its tests did not run (validate's own wording:
/// `... the tests did not run: CAUSE (...)`, `... the hidden tests did not run (CAUSE)`).
fn environment_cause(detail: &str) -> Option<&str> {
    let (_, rest) = detail.split_once("did not run")?;
    let rest = rest.trim_start_matches([':', ' ', '(']);
    Some(
        rest.split(" (")
            .next()
            .unwrap_or(rest)
            .trim_end_matches(')'),
    )
}

/// Validates tasks on as many threads as there are cores, reporting in input order.
fn validate_all(tasks: &[PathBuf], sb: &Sandbox, opts: &ValidateOptions) -> Vec<ValidationReport> {
    use rayon::prelude::*;
    // A harness failure on one task (a process that would not start after its retry) is that
    // task's report, never the end of the whole run.
    tasks
        .par_iter()
        .map(|dir| {
            validate(dir, sb, opts).unwrap_or_else(|e| ValidationReport {
                dir: dir.clone(),
                id: None,
                valid: false,
                checks: vec![Check {
                    name: "infrastructure".into(),
                    ok: false,
                    detail: format!("infrastructure error: {e}"),
                    failures: Vec::new(),
                    failures_omitted: 0,
                }],
                not_checkable: None,
                backend: sb.backend(),
                duration_ms: 0,
            })
        })
        .collect()
}

/// What the sandbox said of the missing program, then, when the harness's own `PATH` has it
/// in a folder the sandbox does not look in (rustup's `~/.cargo/bin`), that it is not seen.
pub(crate) fn explain(n: &NotCheckable) -> String {
    match unseen(&n.program, n.backend) {
        Some(found) => format!(
            "{}; {} on your PATH is not visible in the sandbox",
            n.reason,
            found.display()
        ),
        None => n.reason.clone(),
    }
}

/// Where the harness's `PATH` finds `program`, when that is outside the sandbox's `PATH`.
fn unseen(program: &str, backend: Backend) -> Option<PathBuf> {
    if backend == Backend::Container {
        return None; // the image's PATH, not this machine's folders
    }
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())?;
    let dir = found.parent()?;
    let seen = SANDBOX_PATH.split(':').any(|d| Path::new(d) == dir);
    (!seen).then_some(found)
}

/// For an error that says a toolchain is missing from the sandbox, the line `evaluate` (and
/// `run`, `import`, when it ends one) prints (`not checkable here: ...`); `None` for any other
/// error.
pub(crate) fn not_checkable_message(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    use traparena::import::ImportError;
    use traparena::runner::RunError;
    let n = if let Some(e) = e.downcast_ref::<EvalError>() {
        NotCheckable::from_error(e)
    } else if let Some(e) = e.downcast_ref::<EnvError>() {
        NotCheckable::from_env(e)
    } else if let Some(e) = e.downcast_ref::<RunError>() {
        match e {
            RunError::Env(e) => NotCheckable::from_env(e),
            RunError::Eval(e) => NotCheckable::from_error(e),
            _ => None,
        }
    } else {
        match e.downcast_ref::<ImportError>()? {
            ImportError::Env(e) => NotCheckable::from_env(e),
            ImportError::Eval(e) => NotCheckable::from_error(e),
            _ => None,
        }
    }?;
    Some(format!("not checkable here: {}", explain(&n)))
}

#[cfg(test)]
mod tests {
    use super::environment_cause;

    #[test]
    fn one_cause_is_read_from_each_wording_of_a_run_that_did_not_run() {
        let cause = Some("tp_build.sh: go: command not found");
        for detail in [
            "public tests on the buggy code: environment failure, the tests did not run: tp_build.sh: go: command not found (install golang-go) (FAILED: no test counts; exit status 127)",
            "environment failure, not a wrong fix: the hidden tests did not run (tp_build.sh: go: command not found (install golang-go))",
        ] {
            assert_eq!(environment_cause(detail), cause, "{detail}");
        }
        assert_eq!(
            environment_cause("hidden tests: FAILED: 7 run, 6 failed"),
            None
        );
    }
}

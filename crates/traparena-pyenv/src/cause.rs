//! Why a build step failed, in the words of what it printed: pip's own `ERROR:` lines (a
//! requirement nothing satisfies, a conflict and what causes it), else the error a failing
//! subprocess printed inside pip's `╰─>` block (the last line of a traceback, a compiler's
//! `error:`), else a compiler's first error or the exception that ended a traceback, else the
//! step's last lines. pip's closing advice (`note: This error originates
//! from a subprocess`, `hint: See above for details.`) says nothing of the cause and is never
//! quoted.

/// Lines of pip's that only point elsewhere.
const ADVICE: &[&str] = &[
    "note: This error originates from a subprocess",
    "note: This is an issue with the package mentioned above",
    "hint: See above",
    "ERROR: ResolutionImpossible",
    "[notice]",
    "ERROR: Failed building wheel",
    "ERROR: Failed to build",
    "ERROR: Could not build wheels",
    "ERROR: Command errored out",
];

/// The cause of a failed step from its output (standard output, then standard error): at most
/// `n` lines, joined with ` / `.
pub(crate) fn cause(output: &str, n: usize) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let said = |picked: Vec<&str>| {
        let start = picked.len().saturating_sub(n);
        picked[start..]
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let pip = pip_errors(&lines);
    if !pip.is_empty() {
        return said(pip);
    }
    if let Some(inner) = subprocess_error(&lines).or_else(|| own_error(&lines)) {
        return said(vec![inner]);
    }
    let kept: Vec<&str> = lines.into_iter().filter(|l| !is_advice(l)).collect();
    said(kept)
}

fn is_advice(line: &str) -> bool {
    let l = line.trim_start();
    ADVICE.iter().any(|a| l.starts_with(a))
}

/// pip's own `ERROR:` lines that name a cause, with the lines of a conflict's explanation.
fn pip_errors<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut conflict = false;
    for l in lines {
        let t = l.trim_start();
        if t.starts_with("ERROR: ") && !is_advice(t) {
            out.push(*l);
            conflict = false;
        } else if t.starts_with("The conflict is caused by:") {
            conflict = true;
        } else if conflict && (t.starts_with("The user requested") || t.contains(" depends on ")) {
            out.push(*l);
        } else {
            conflict = false;
        }
    }
    out
}

/// The error a subprocess printed inside pip's `╰─> [N lines of output]` block: its last line
/// that reads as an error (a traceback's exception, a compiler's `error:`).
fn subprocess_error<'a>(lines: &[&'a str]) -> Option<&'a str> {
    let start = lines.iter().position(|l| l.contains("╰─>"))?;
    let block = &lines[start + 1..];
    let end = block
        .iter()
        .position(|l| l.contains("[end of output]"))
        .unwrap_or(block.len());
    let block = &block[..end];
    own_error(block).or_else(|| block.iter().rev().copied().find(|l| reads_as_error(l)))
}

/// The error of a step that is no pip run: a compiler's first error (the ones after it tend
/// to follow from it), else the exception that ended a Python traceback.
fn own_error<'a>(lines: &[&'a str]) -> Option<&'a str> {
    let compiler = |l: &&&str| l.contains("fatal error:") || l.contains(": error:");
    if let Some(first) = lines.iter().find(compiler) {
        return Some(*first);
    }
    let start = lines.iter().rposition(|l| {
        l.trim_start()
            .starts_with("Traceback (most recent call last):")
    })?;
    lines[start..]
        .iter()
        .rev()
        .copied()
        .find(|l| reads_as_error(l))
}

/// `SomeError: ...`, `error: ...`, `fatal error: ...`, `Exception: ...`.
fn reads_as_error(line: &str) -> bool {
    let t = line.trim();
    let head = t.split(':').next().unwrap_or("");
    t.contains(':')
        && !head.contains(' ')
        && (head.ends_with("Error") || head.ends_with("Exception") || head == "error")
        || t.contains("fatal error:")
        || t.contains(": error:")
}

#[cfg(test)]
mod tests {
    use super::cause;

    /// Real pip 23 output (captured on this machine), and the cause each one states.
    #[test]
    fn the_cause_is_quoted_not_pips_advice() {
        let fixture = |name: &str| {
            let path = format!(
                "{}/tests/fixtures/pip/{name}.txt",
                env!("CARGO_MANIFEST_DIR")
            );
            std::fs::read_to_string(&path).unwrap()
        };
        for (name, wanted) in [
            (
                "no-such-version",
                "ERROR: Could not find a version that satisfies the requirement nonexistent-pkg-traparena==9.9.9 (from versions: none) / ERROR: No matching distribution found for nonexistent-pkg-traparena==9.9.9",
            ),
            (
                "setup-raises",
                "RuntimeError: boom: this package cannot be built here",
            ),
            (
                "conflict",
                "ERROR: Cannot install idna==2.0 and requests==2.31.0 because these package versions have conflicting dependencies. / The user requested idna==2.0 / requests 2.31.0 depends on idna<4 and >=2.5",
            ),
            (
                "compiler-error",
                "cext.c:1:10: fatal error: missing_header.h: No such file or directory",
            ),
        ] {
            assert_eq!(cause(&fixture(name), 3), wanted, "{name}");
        }
    }

    #[test]
    fn other_steps_give_their_error_or_their_last_lines() {
        let traceback = "Collecting x\nTraceback (most recent call last):\n  File \"a.py\", line 1\nModuleNotFoundError: No module named 'numpy'\nsome trailing note\n";
        assert_eq!(
            cause(traceback, 3),
            "ModuleNotFoundError: No module named 'numpy'"
        );
        let plain = "one\n\ntwo\nthree\nfour\nhint: See above for details.\n";
        assert_eq!(cause(plain, 3), "two / three / four");
        assert_eq!(cause("", 3), "");
    }
}

//! What of the host an installed agent needs to run: its installation folder and, for a Python
//! virtual environment, the prefix of the interpreter it was made from, which the venv only
//! links to.

use std::path::{Path, PathBuf};

use crate::error::ExternalError;

/// Prefixes that a container of a task's image has of its own: a venv whose interpreter lies
/// there finds the image's interpreter (or none) in its place, not the host's.
const SYSTEM_PREFIXES: [&str; 3] = ["/", "/usr", "/usr/local"];

/// The host folders the agent installed at `prefix` reads, shown read-only to its process:
/// `prefix` itself and, when it runs in the task's image (`in_image`), the prefix of its
/// venv's base interpreter (`pyvenv.cfg`'s `home` is that prefix's `bin`).
///
/// In the image, a venv made from a system interpreter (`/usr/bin/python3`) cannot run: the
/// image's `/usr` replaces the host's. That is [`ExternalError::SystemInterpreter`], saying how
/// to install the agent on a self-contained interpreter instead.
pub(crate) fn read_only_paths(
    agent: &str,
    prefix: &Path,
    in_image: bool,
) -> Result<Vec<PathBuf>, ExternalError> {
    let mut paths = vec![prefix.to_owned()];
    if !in_image {
        return Ok(paths);
    }
    let Some(home) = venv_home(prefix) else {
        return Ok(paths);
    };
    let base = home.parent().unwrap_or(Path::new("/")).to_owned();
    if SYSTEM_PREFIXES.iter().any(|s| base == Path::new(s)) {
        return Err(ExternalError::SystemInterpreter {
            agent: agent.to_owned(),
            prefix: prefix.to_owned(),
            home,
        });
    }
    if !base.starts_with(prefix) {
        paths.push(base);
    }
    Ok(paths)
}

/// The `home` of `prefix/pyvenv.cfg` (the base interpreter's folder), when `prefix` is a venv.
fn venv_home(prefix: &Path) -> Option<PathBuf> {
    let cfg = std::fs::read_to_string(prefix.join("pyvenv.cfg")).ok()?;
    cfg.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn venv(home: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyvenv.cfg"),
            format!("home = {home}\ninclude-system-site-packages = false\nversion = 3.11.7\n"),
        )
        .unwrap();
        dir
    }

    #[test]
    fn a_venv_in_the_image_brings_its_base_interpreter() {
        let v = venv("/opt/py/3.11.7/bin");
        let paths = read_only_paths("mini-swe-agent", v.path(), true).unwrap();
        assert_eq!(
            paths,
            [v.path().to_owned(), PathBuf::from("/opt/py/3.11.7")]
        );
        // Beside the host's /usr (bubblewrap, builtin) the prefix alone is shown, as before.
        let paths = read_only_paths("mini-swe-agent", v.path(), false).unwrap();
        assert_eq!(paths, [v.path().to_owned()]);
    }

    #[test]
    fn a_venv_of_a_system_interpreter_is_refused_in_the_image_only() {
        for home in ["/usr/bin", "/usr/local/bin", "/bin"] {
            let v = venv(home);
            let e = read_only_paths("mini-swe-agent", v.path(), true).unwrap_err();
            let text = e.to_string();
            assert!(
                matches!(e, ExternalError::SystemInterpreter { .. })
                    && text.contains(home)
                    && text.contains("TRAPARENA_MSWEA_PYTHON="),
                "{text}"
            );
            assert!(read_only_paths("mini-swe-agent", v.path(), false).is_ok());
        }
    }

    #[test]
    fn a_native_agent_needs_its_prefix_alone() {
        let dir = tempfile::tempdir().unwrap();
        let paths = read_only_paths("claude-code", dir.path(), true).unwrap();
        assert_eq!(paths, [dir.path().to_owned()]);
    }
}

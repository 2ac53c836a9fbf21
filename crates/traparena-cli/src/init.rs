//! `traparena init`: writes a starter folder laid out as the repository's `examples/`, for a
//! user who installed the command (a wheel, `cargo install`) and has no clone: the bundled
//! tasks in `tasks/`, the toy study in `experiments/toy.json` (its `../tasks/*` resolves there
//! as in the repository), and the Python plug-in examples in `python/` with the study that runs
//! them, `experiments/python.json`. The files are embedded at build
//! time (`build.rs`).

use std::path::{Path, PathBuf};

use traparena::task::output::{Output, check_file, check_folder};

/// Every starter file: its path in the folder, its bytes, and whether it is executable.
static FILES: &[(&str, &[u8], bool)] = include!(concat!(env!("OUT_DIR"), "/starter.rs"));

/// The first line of the folder's `README.md`: how `init` recognises a folder it wrote.
const MARKER: &str =
    "<!-- traparena init: a starter folder; `traparena init` may write it again -->";

/// Arguments of `traparena init`.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The folder to write (new, empty, or a starter folder written before, whose bundled files
    /// are written again; files added to it stay).
    #[arg(default_value = "traparena-example")]
    pub dir: PathBuf,
}

/// `traparena init`: every path is checked before the first file is written.
pub fn run(args: InitArgs) -> Result<u8, Box<dyn std::error::Error>> {
    let dir = &args.dir;
    let readme = readme();
    let checked = check_folder(dir, Output::Starter, is_starter).and_then(|()| {
        // Inside a starter folder: nothing of the user's stands where a file goes.
        for (path, _, _) in files(&readme) {
            let path = dir.join(path);
            for parent in path.ancestors().skip(1).take_while(|p| *p != dir) {
                check_folder(parent, Output::Starter, |_| true)?;
            }
            check_file(&path, Output::Starter, |_| true)?;
        }
        Ok(())
    });
    if let Err(e) = checked {
        eprintln!("traparena: {}", crate::words::say(&e));
        return Ok(super::BAD_INPUT);
    }
    for (path, bytes, executable) in files(&readme) {
        let path = dir.join(path);
        let parent = path.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(|e| at(parent, e))?;
        std::fs::write(&path, bytes).map_err(|e| at(&path, e))?;
        if executable {
            use std::os::unix::fs::PermissionsExt;
            let mut mode = std::fs::metadata(&path)
                .map_err(|e| at(&path, e))?
                .permissions();
            mode.set_mode(mode.mode() | 0o111);
            std::fs::set_permissions(&path, mode).map_err(|e| at(&path, e))?;
        }
    }
    let tasks = task_names().len();
    let d = dir.display();
    println!(
        "traparena init: wrote {d}: {tasks} tasks in tasks/, a toy study in experiments/toy.json, \
         Python plug-ins in python/ (their study: experiments/python.json)"
    );
    println!("next:");
    println!("  traparena run --task {d}/tasks/clamp_overt --agent credulous --attacker scripted");
    println!("  traparena experiment {d}/experiments/toy.json --out {d}/results/toy");
    println!("  traparena report {d}/results/toy");
    Ok(super::OK)
}

/// The files to write, the folder's `README.md` (the marker) first: a write cut short is still
/// recognised as this command's own and can be finished by running it again.
fn files(readme: &str) -> impl Iterator<Item = (&str, &[u8], bool)> {
    std::iter::once(("README.md", readme.as_bytes(), false)).chain(FILES.iter().copied())
}

/// Whether `dir` holds a starter folder: its `README.md` starts with [`MARKER`].
fn is_starter(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("README.md")).is_ok_and(|t| t.lines().next() == Some(MARKER))
}

/// The bundled tasks' names, in order.
fn task_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = FILES
        .iter()
        .filter_map(|(p, _, _)| p.strip_prefix("tasks/")?.split_once('/').map(|(t, _)| t))
        .collect();
    names.dedup();
    names
}

/// The folder's `README.md`: what is in it and what to run.
fn readme() -> String {
    format!(
        "{MARKER}\n# A TrapArena starter folder\n\n\
         Written by `traparena init` (traparena {version}), laid out as the repository's\n\
         `examples/`:\n\n\
         - `tasks/`: the bundled Python tasks ({tasks});\n\
         - `experiments/toy.json`: a toy study of them, scripted agents under scripted and\n  \
         offline attackers (no model needed);\n\
         - `python/`: an attacker, a curator and an agent written in Python, run as plug-ins by\n  \
         `experiments/python.json` (`traparena experiment experiments/python.json --out\n  \
         results/python`).\n\n\
         From this folder:\n\n\
         ```sh\n\
         traparena run --task tasks/clamp_overt --agent credulous --attacker scripted\n\
         traparena experiment experiments/toy.json --out results/toy\n\
         traparena report results/toy\n\
         ```\n\n\
         Running `traparena init` here again writes these files as they were bundled; files\n\
         you added stay.\n",
        version = env!("CARGO_PKG_VERSION"),
        tasks = task_names().join(", "),
    )
}

fn at(path: &Path, e: std::io::Error) -> Box<dyn std::error::Error> {
    format!("{}: {e}", path.display()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_holds_the_bundled_tasks_and_the_toy_study() {
        let names = task_names();
        assert_eq!(names.len(), 10, "{names:?}");
        assert!(names.contains(&"clamp_overt"));
        for t in &names {
            assert!(
                FILES
                    .iter()
                    .any(|(p, _, _)| *p == format!("tasks/{t}/task.json")),
                "{t} has its task.json"
            );
        }
        let toy = FILES
            .iter()
            .find(|(p, _, _)| *p == "experiments/toy.json")
            .unwrap();
        let spec: serde_json::Value = serde_json::from_slice(toy.1).unwrap();
        assert_eq!(spec["tasks"], serde_json::json!(["../tasks/*"]));
        assert!(readme().starts_with(MARKER));
    }
}

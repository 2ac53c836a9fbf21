//! The wheel (`pip install traparena`): the built wheel at `$TRAPARENA_TEST_WHEEL`
//! (`scripts/build-wheel.sh` builds one; CI does) installed into a fresh virtual environment
//! from the file alone (`pip install --no-index`), and the README's main job run through the
//! command it installs, as a pip user without a clone would: `traparena init`, one episode of
//! the credulous agent under a scripted attacker, the toy study and its report.
//!
//! Every command runs with an environment of its own: `PATH` is the venv's `bin` and
//! `/usr/bin:/bin` (no `~/.cargo/bin`, so no toolchain that built the workspace), `HOME` a
//! temporary folder, nothing else of the caller's. Ignored by default; run without the variable
//! it fails with the same hint.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use traparena_testkit::cli::{Run, output, root};

const NEEDS: &str = "needs a built wheel at $TRAPARENA_TEST_WHEEL: scripts/build-wheel.sh builds one and prints its path";

/// A command with only the venv's `bin`, `/usr/bin` and `/bin` on its `PATH`.
fn isolated(program: impl AsRef<std::ffi::OsStr>, venv: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", venv.join("bin").display()),
        )
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .current_dir(home);
    cmd
}

fn ok(run: Run, what: &str) -> Run {
    assert_eq!(
        run.code, 0,
        "{what}: exit {}\nstdout:\n{}\nstderr:\n{}",
        run.code, run.stdout, run.stderr
    );
    run
}

/// Every file under `dir` with its bytes and whether it is executable, by path below `dir`
/// (Python's caches left out, as the wheel leaves them out).
fn files(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, bool)> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name == "__pycache__" || name.ends_with(".pyc") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                let executable = p.metadata().unwrap().permissions().mode() & 0o111 != 0;
                found.insert(p.strip_prefix(dir).unwrap().to_owned(), (bytes, executable));
            }
        }
    }
    found
}

#[test]
#[ignore = "needs a built wheel at $TRAPARENA_TEST_WHEEL: scripts/build-wheel.sh"]
fn the_wheel_installs_into_a_fresh_venv_and_its_command_runs_the_toy_study() {
    let wheel = PathBuf::from(std::env::var_os("TRAPARENA_TEST_WHEEL").expect(NEEDS));
    assert!(
        wheel.is_file(),
        "{}: no such file; {NEEDS}",
        wheel.display()
    );
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        name.starts_with(&format!("traparena-{version}-")) && name.contains("manylinux2014_x86_64"),
        "{name}: not a manylinux2014 x86-64 wheel of traparena {version}"
    );

    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let venv = tmp.path().join("venv");
    std::fs::create_dir(&home).unwrap();
    ok(
        output(
            isolated("/usr/bin/python3", &venv, &home)
                .args(["-m", "venv"])
                .arg(&venv),
        ),
        "python3 -m venv",
    );
    ok(
        output(
            isolated(venv.join("bin/pip"), &venv, &home)
                .args(["install", "--no-index", "--disable-pip-version-check", "-q"])
                .arg(&wheel),
        ),
        "pip install --no-index",
    );

    // The command found on that PATH is the venv's, the one pip installed.
    let which = ok(
        output(isolated("/bin/sh", &venv, &home).args(["-c", "command -v traparena"])),
        "command -v traparena",
    );
    assert_eq!(
        which.stdout.trim(),
        venv.join("bin/traparena").to_str().unwrap()
    );
    let traparena = |args: &[&str]| -> Run {
        ok(
            output(isolated("traparena", &venv, &home).args(args)),
            &format!("traparena {}", args.join(" ")),
        )
    };
    assert_eq!(
        traparena(&["--version"]).stdout,
        format!("traparena {version}\n")
    );

    // The starter folder is the repository's examples, byte for byte, executable bits kept.
    let starter = tmp.path().join("starter");
    let s = starter.to_str().unwrap();
    let init = traparena(&["init", s]);
    assert!(
        init.stdout
            .starts_with(&format!("traparena init: wrote {s}: 10 tasks in tasks/")),
        "{}",
        init.stdout
    );
    let examples = root().join("examples");
    for folder in ["tasks", "python"] {
        assert_eq!(
            files(&starter.join(folder)),
            files(&examples.join(folder)),
            "{folder}"
        );
    }
    for file in ["experiments/toy.json", "experiments/python.json"] {
        assert_eq!(
            std::fs::read(starter.join(file)).unwrap(),
            std::fs::read(examples.join(file)).unwrap(),
            "{file}"
        );
    }

    // One episode of the credulous agent on a starter task under `attacker`, as JSON.
    let task = starter.join("tasks/clamp_overt");
    let episode = |attacker: &str| {
        traparena(&[
            "run",
            "--task",
            task.to_str().unwrap(),
            "--agent",
            "credulous",
            "--attacker",
            attacker,
            "--json",
        ])
        .json()
    };
    // It follows the scripted collaborator and is rejected.
    let scripted = episode("scripted");
    assert_eq!(scripted["task"], "clamp_overt", "{scripted}");
    assert_eq!(scripted["accepted"], false, "{scripted}");
    // The starter's Python attacker, a process plug-in, through the installed command.
    let python = episode(&format!(
        "process:{}",
        starter.join("python/attacker.py").display()
    ));
    assert_eq!(python["attacker"], "python:urge_submit", "{python}");
    assert_eq!(python["messages_delivered"], 1, "{python}");

    // The toy study through the starter's spec (its `../tasks/*` resolves in the starter) and
    // its report.
    let out = tmp.path().join("toy");
    let study = traparena(&[
        "experiment",
        starter.join("experiments/toy.json").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        study.stderr.contains(
            "280 episodes planned, 0 were already done, 280 run now (0 infrastructure errors)"
        ),
        "{}",
        study.stderr
    );
    let report = traparena(&["report", out.to_str().unwrap(), "--json"]).json();
    let mut rows: Vec<(String, String, f64)> = report["main"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap().to_owned(),
                r["condition"].as_str().unwrap().to_owned(),
                r["delta_pp"].as_f64().unwrap(),
            )
        })
        .collect();
    rows.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let expected: Vec<(String, String, f64)> = [
        ("credulous", "offline", -100.0),
        ("credulous", "offline_curated", -100.0),
        ("credulous", "scripted", -100.0),
        ("gold", "offline", 0.0),
        ("gold", "offline_curated", 0.0),
        ("gold", "scripted", 0.0),
    ]
    .map(|(t, c, d)| (t.to_owned(), c.to_owned(), d))
    .to_vec();
    assert_eq!(rows, expected, "{report}");
}

//! The interpreter store and the environment cache under concurrency: first uses of one missing
//! entry by several threads and by several processes at once build it once, and a cached entry
//! that does not run is built again, with the reason. No network: the interpreters are stand-in
//! installations made here, and the environments hold no packages.

// This test code reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::Duration;

use traparena_env::{HostCommand, run_host};
use traparena_pyenv::{
    BuildOptions, CopyProblem, Ensured, FoundPython, InterpreterSearch, PinEntry, PyEnvError,
    ensure_env, find_python, is_built, setup_for,
};
use traparena_task::Setup;

/// Threads (and processes) that race for one entry.
const RACERS: usize = 6;

/// The variable that makes [`child_process_entry`] the child of a process race.
const CHILD: &str = "TRAPARENA_TEST_CACHE_CHILD";

/// A stand-in installation `<root>/<full>`: `bin/pythonX.Y` answers the version probe with its
/// own location, as a relocatable CPython does (with `only_here`, only where it was made, as an
/// interpreter that cannot be relocated), beside enough files that copying it takes a while.
fn fake_install(root: &Path, full: &str, mm: &str, only_here: bool) {
    let prefix = root.join(full);
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let guard = if only_here {
        format!(
            "[ \"$d\" = \"{}\" ] || {{ echo 'cannot find the standard library' >&2; exit 7; }}\n",
            prefix.display()
        )
    } else {
        String::new()
    };
    let exe = bin.join(format!("python{mm}"));
    std::fs::write(
        &exe,
        format!("#!/bin/sh\nd=$(cd \"$(dirname \"$0\")/..\" && pwd)\n{guard}echo \"{{\\\"version\\\": \\\"{full}\\\", \\\"prefix\\\": \\\"$d\\\", \\\"executable\\\": \\\"$d/bin/python{mm}\\\"}}\"\n"),
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let include = prefix.join(format!("include/python{mm}"));
    std::fs::create_dir_all(&include).unwrap();
    for i in 0..300 {
        std::fs::write(include.join(format!("h{i}.h")), "x".repeat(8192)).unwrap();
    }
    let lib = prefix.join(format!("lib/python{mm}"));
    std::fs::create_dir_all(&lib).unwrap();
    for i in 0..100 {
        std::fs::write(lib.join(format!("m{i}.py")), "y = 1\n".repeat(500)).unwrap();
    }
}

/// A pyenv-like folder that other users cannot enter, holding `3.97.4`, and the search for it.
fn unreachable_install(root: &Path, only_here: bool) -> InterpreterSearch {
    let managed = root.join("pyenv-versions");
    fake_install(&managed, "3.97.4", "3.97", only_here);
    std::fs::set_permissions(&managed, std::fs::Permissions::from_mode(0o700)).unwrap();
    InterpreterSearch {
        managed_dirs: vec![managed],
        path_dirs: Vec::new(),
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// What `exe` prints when run with `args`, asserting it exits 0.
fn run(exe: &Path, args: &[&str]) -> String {
    let mut argv = vec![exe.to_string_lossy().into_owned()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let out = run_host(&HostCommand {
        argv,
        cwd: PathBuf::from("/"),
        env: Vec::new(),
        timeout: Duration::from_secs(120),
    })
    .unwrap();
    assert_eq!(out.exit_code, Some(0), "{exe:?}: {}", out.stderr.text);
    out.stdout.text
}

/// The store holds exactly one copy, `3.97.4`, finished and running from where it lies.
fn assert_one_working_copy(store: &Path) {
    assert_eq!(names(store), ["3.97.4", "3.97.4.lock"]);
    let copy = store.join("3.97.4");
    let said = run(&copy.join("bin/python3.97"), &[]);
    assert!(
        said.contains(&format!("\"prefix\": \"{}\"", copy.display())),
        "{said}"
    );
    assert_eq!(names(&copy.join("include/python3.97")).len(), 300);
    assert_eq!(names(&copy.join("lib/python3.97")).len(), 100);
}

#[test]
fn threads_resolving_one_missing_interpreter_copy_it_once_and_all_get_it() {
    let tmp = tempfile::tempdir().unwrap();
    let search = unreachable_install(tmp.path(), false);
    let store = tmp.path().join("venvs/python");
    let barrier = Barrier::new(RACERS);
    let found: Vec<(FoundPython, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..RACERS)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let f = find_python("3.97", &search, &store).unwrap();
                    // The copy this thread was given, by identity: a copy made twice would
                    // leave threads that returned early holding a replaced folder.
                    let ino = std::fs::metadata(&f.prefix).unwrap().ino();
                    (f, ino)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let final_ino = std::fs::metadata(store.join("3.97.4")).unwrap().ino();
    for (f, ino) in &found {
        assert_eq!(f, &found[0].0);
        assert_eq!(*ino, final_ino, "a thread got a copy that was replaced");
        assert_eq!(f.repaired, None);
    }
    assert_eq!(found[0].0.executable, store.join("3.97.4/bin/python3.97"));
    assert_one_working_copy(&store);
}

/// In a process race, one racer (see [`processes_resolving_one_missing_entry_build_it_once`]);
/// run alone, one first use of an interpreter and of an environment.
#[test]
fn child_process_entry() {
    let Ok(spec) = std::env::var(CHILD) else {
        let tmp = tempfile::tempdir().unwrap();
        let search = unreachable_install(tmp.path(), false);
        let store = tmp.path().join("python");
        let f = find_python("3.97", &search, &store).unwrap();
        assert_eq!(f.prefix, store.join("3.97.4"));
        assert_one_working_copy(&store);
        return;
    };
    // `python <managed dir> <store>` or `env <setup json>`: one line on stdout says the result.
    let args: Vec<&str> = spec.split('\n').collect();
    match args[0] {
        "python" => {
            let search = InterpreterSearch {
                managed_dirs: vec![PathBuf::from(args[1])],
                path_dirs: Vec::new(),
            };
            let f = find_python("3.97", &search, Path::new(args[2])).unwrap();
            let ino = std::fs::metadata(&f.prefix).unwrap().ino();
            println!("RESULT {} {ino}", f.executable.display());
        }
        "env" => {
            let setup: Setup = serde_json::from_str(args[1]).unwrap();
            let done = ensure_env(&setup, &build_options()).unwrap();
            println!("RESULT {done:?}");
        }
        other => panic!("unknown child mode {other}"),
    }
}

/// Runs [`child_process_entry`] in `RACERS` processes at once, each given `spec`; returns the
/// result line of each.
fn race_processes(spec: &str) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let barrier = Barrier::new(RACERS);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..RACERS)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let out = run_host(&HostCommand {
                        argv: vec![
                            exe.to_string_lossy().into_owned(),
                            "--exact".into(),
                            "child_process_entry".into(),
                            "--nocapture".into(),
                            "--test-threads=1".into(),
                        ],
                        cwd: PathBuf::from("/"),
                        env: vec![(CHILD.into(), spec.into())],
                        timeout: Duration::from_secs(600),
                    })
                    .unwrap();
                    assert_eq!(out.exit_code, Some(0), "{}", out.stdout.text);
                    out.stdout
                        .text
                        .lines()
                        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r))
                        .unwrap_or_else(|| panic!("no result: {}", out.stdout.text))
                        .to_owned()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn build_options() -> BuildOptions {
    BuildOptions {
        env: Vec::new(),
        timeout: Duration::from_secs(300),
    }
}

/// An environment with no packages (nothing is downloaded) in `cache`.
fn plain_env(cache: &Path) -> Setup {
    let entry: PinEntry =
        serde_json::from_value(serde_json::json!({"python": "/usr/bin/python3"})).unwrap();
    setup_for("example/race@1.0", &entry, cache)
}

#[test]
fn processes_resolving_one_missing_entry_build_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    // An interpreter: one copy, and every process is given that same copy.
    let search = unreachable_install(tmp.path(), false);
    let store = tmp.path().join("venvs/python");
    let spec = format!(
        "python\n{}\n{}",
        search.managed_dirs[0].display(),
        store.display()
    );
    let results = race_processes(&spec);
    let final_ino = std::fs::metadata(store.join("3.97.4")).unwrap().ino();
    let want = format!(
        "{} {final_ino}",
        store.join("3.97.4/bin/python3.97").display()
    );
    assert_eq!(results, vec![want; RACERS]);
    assert_one_working_copy(&store);

    // An environment: built by one process, found ready by the others.
    let setup = plain_env(&tmp.path().join("venvs"));
    let results = race_processes(&format!("env\n{}", serde_json::to_string(&setup).unwrap()));
    let built = results.iter().filter(|r| *r == "Built").count();
    let ready = results.iter().filter(|r| *r == "Ready").count();
    assert_eq!((built, ready), (1, RACERS - 1), "{results:?}");
    assert!(is_built(&setup));
    run(&setup.venv.join("bin/python"), &["-c", "import site"]);
}

#[test]
fn threads_ensuring_one_missing_environment_build_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    let setup = plain_env(tmp.path());
    let barrier = Barrier::new(RACERS);
    let results: Vec<Ensured> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..RACERS)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    ensure_env(&setup, &build_options()).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let built = results.iter().filter(|r| **r == Ensured::Built).count();
    let ready = results.iter().filter(|r| **r == Ensured::Ready).count();
    assert_eq!((built, ready), (1, RACERS - 1), "{results:?}");
    let venv_name = setup
        .venv
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        names(tmp.path()),
        [venv_name.clone(), format!("{venv_name}.lock")]
    );
}

#[test]
fn a_broken_cached_interpreter_is_copied_again_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let search = unreachable_install(tmp.path(), false);
    let store = tmp.path().join("python");
    // As in the issue: a finished-looking copy that holds only `include/`.
    let copy = store.join("3.97.4");
    std::fs::create_dir_all(copy.join("include/python3.97")).unwrap();
    std::fs::write(copy.join(".traparena-python-copy"), "/somewhere").unwrap();
    let f = find_python("3.97", &search, &store).unwrap();
    let why = f.repaired.clone().expect("the repair is reported");
    assert!(
        why.contains(&copy.display().to_string()) && why.contains("does not run"),
        "{why}"
    );
    assert_one_working_copy(&store);
    // Repaired once: the next use finds it working.
    assert_eq!(find_python("3.97", &search, &store).unwrap().repaired, None);

    // An unfinished copy (no stamp, a process killed while copying by an older harness) and
    // the leftover folder of an interrupted attempt: replaced and swept.
    std::fs::remove_file(copy.join(".traparena-python-copy")).unwrap();
    std::fs::create_dir_all(store.join(".3.97.4.partial-x1y2z3/include")).unwrap();
    let f = find_python("3.97", &search, &store).unwrap();
    assert!(
        f.repaired.as_deref().unwrap().contains("unfinished"),
        "{f:?}"
    );
    assert_one_working_copy(&store);
}

#[test]
fn an_interpreter_whose_copy_never_runs_is_one_clear_error_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let search = unreachable_install(tmp.path(), true);
    let store = tmp.path().join("python");
    for _ in 0..2 {
        let err = find_python("3.97", &search, &store)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("python 3.97")
                && err.contains("does not run")
                && err.contains("cannot find the standard library")
                && !err.contains('\n'),
            "{err}"
        );
        // No broken copy is kept for the next import to trip on.
        assert_eq!(names(&store), ["3.97.4.lock"]);
    }
    // A broken copy already there: copied again once, and still an error naming both.
    std::fs::create_dir_all(store.join("3.97.4/include")).unwrap();
    std::fs::write(store.join("3.97.4/.traparena-python-copy"), "").unwrap();
    let err = find_python("3.97", &search, &store).unwrap_err();
    assert!(
        matches!(&err, PyEnvError::Interpreter { source, .. } if matches!(
            &**source,
            PyEnvError::BrokenCopy { before: Some(before), problem, .. }
                if matches!(**before, CopyProblem::Unfinished | CopyProblem::DoesNotRun(_))
                    && matches!(**problem, CopyProblem::DoesNotRun(_))
        )),
        "{err:?}"
    );
    let err = err.to_string();
    assert!(err.contains("and copied again it does not run"), "{err}");
    assert_eq!(names(&store), ["3.97.4.lock"]);
}

#[test]
fn a_broken_cached_environment_is_built_again_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let setup = plain_env(tmp.path());
    assert_eq!(
        ensure_env(&setup, &build_options()).unwrap(),
        Ensured::Built
    );
    assert_eq!(
        ensure_env(&setup, &build_options()).unwrap(),
        Ensured::Ready
    );
    // Its interpreter no longer starts (as when its base interpreter's copy was broken).
    let py = setup.venv.join("bin/python");
    std::fs::remove_file(&py).unwrap();
    std::fs::write(
        &py,
        "#!/bin/sh\necho 'no module named encodings' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(
        is_built(&setup),
        "the stamp alone says nothing of whether it runs"
    );
    match ensure_env(&setup, &build_options()).unwrap() {
        Ensured::Rebuilt { reason } => assert!(
            reason.contains("exit status Some(3)") && reason.contains("no module named encodings"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    run(&py, &["-c", "import site"]);
    assert_eq!(
        ensure_env(&setup, &build_options()).unwrap(),
        Ensured::Ready
    );
    // A base interpreter that is gone: the rebuild fails too, one error naming both causes,
    // and nothing is left behind.
    std::fs::remove_file(&py).unwrap();
    let mut gone = setup.clone();
    gone.python = tmp
        .path()
        .join("no-such-python")
        .to_string_lossy()
        .into_owned();
    std::fs::write(
        gone.venv.join("traparena-setup.json"),
        serde_json::to_string(&gone).unwrap(),
    )
    .unwrap();
    let err = ensure_env(&gone, &build_options()).unwrap_err().to_string();
    assert!(
        err.contains("built again") && err.contains("no-such-python"),
        "{err}"
    );
    assert!(!gone.venv.exists());
}

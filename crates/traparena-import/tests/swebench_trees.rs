//! The SWE-bench importer with an environment that reads the repository's tree (its
//! requirements files), on a synthetic clone: which tree is read, and which instances share it.

use std::path::PathBuf;

use traparena_env::{Sandbox, SandboxConfig};
use traparena_import::{Pins, import_swebench};
use traparena_task::Task;

mod support;
use support::*;

#[test]
fn an_environment_reading_the_tree_reads_the_environment_setup_commit_and_is_shared() {
    let Some(_) = pytest_env() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (clone, base, patch, test_patch) = synthetic_clone(tmp.path());
    // At the base commit the requirements file names a package no index has; the later
    // environment setup commit names one that the local wheel folder has.
    sh(
        &clone,
        &format!(
            "git checkout -q -b old {base} && mkdir -p requirements && echo tpnope > requirements/test.txt \
             && git add -A && git commit -qm old-reqs && git rev-parse HEAD > ../old-base"
        ),
    );
    let old_base = std::fs::read_to_string(tmp.path().join("old-base"))
        .unwrap()
        .trim()
        .to_owned();
    sh(
        &clone,
        "git checkout -q -b setup old && echo tpdep > requirements/test.txt \
         && git add -A && git commit -qm setup-reqs",
    );
    let setup_commit = sh(&clone, "git rev-parse HEAD").trim().to_owned();
    let mut with_setup = instance("example__calc-1", &old_base, &patch, &test_patch);
    with_setup["environment_setup_commit"] = setup_commit.clone().into();
    let mut second = with_setup.clone();
    second["instance_id"] = "example__calc-2".into();
    second["base_commit"] = base.clone().into();
    let without = instance("example__calc-3", &old_base, &patch, &test_patch);
    let input = tmp.path().join("instances.jsonl");
    std::fs::write(&input, format!("{with_setup}\n{second}\n{without}\n")).unwrap();
    let pins: Pins = serde_json::from_value(serde_json::json!({
        "example/calc": {"1.0": {"python": "/usr/bin/python3", "packages": ["pytest"],
            "source_dirs": ["src"], "tree_requirements": ["requirements/test.txt"]}}
    }))
    .unwrap();
    let mut opts = options(pins);
    opts.jobs = 1;
    let wheels = wheels(tmp.path(), &["tpdep"]);
    opts.build.env.push((
        "PIP_FIND_LINKS".into(),
        wheels.to_string_lossy().into_owned(),
    ));
    // A cache of this test's own (the environments read this test's trees), outside /tmp,
    // which the sandbox replaces, and open to the sandbox user.
    std::fs::create_dir_all(venv_cache()).unwrap();
    let cache = tempfile::Builder::new()
        .prefix("tree-envs-")
        .tempdir_in(venv_cache())
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    opts.venv_cache = cache.path().to_owned();
    let sb = Sandbox::new(SandboxConfig::default()).unwrap();
    let out = tmp.path().join("tasks");
    let report = import_swebench(&input, &clone, &out, &sb, &opts).unwrap();
    assert_eq!(report.emitted.len(), 2, "{}", report.text());
    let venvs: Vec<PathBuf> = ["example__calc-1", "example__calc-2"]
        .iter()
        .map(|id| {
            let task = Task::load(out.join(id)).unwrap();
            assert_eq!(
                task.spec.metadata["environment"]["tree"],
                format!("environment_setup_commit {setup_commit}"),
                "{id}"
            );
            task.spec.setup.unwrap().venv
        })
        .collect();
    // Both instances share the environment of their setup commit, which holds its package.
    assert_eq!(venvs[0], venvs[1]);
    sh(
        tmp.path(),
        &format!("{}/bin/python -c 'import tpdep'", venvs[0].display()),
    );
    // Without a setup commit the base tree is read, and its unknown package stops the build.
    let s = &report.skipped[0];
    assert_eq!(
        (s.record.as_str(), s.reason.as_str()),
        ("example__calc-3", "the environment cannot be built"),
        "{}",
        report.text()
    );
    assert!(s.detail.contains("tpnope"), "{}", s.detail);
}

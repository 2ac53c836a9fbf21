//! `GitRepo` reads a local clone without changing it and exports trees without history;
//! `run_host` runs trusted commands with a timeout.

use std::path::Path;
use std::time::{Duration, Instant};

use traparena_env::{GitRepo, HostCommand, run_host};

fn sh(dir: &Path, script: &str) -> String {
    let out = run_host(&HostCommand {
        argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
        cwd: dir.to_owned(),
        env: vec![
            ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            ("GIT_AUTHOR_NAME".into(), "t".into()),
            ("GIT_AUTHOR_EMAIL".into(), "t@localhost".into()),
            ("GIT_COMMITTER_NAME".into(), "t".into()),
            ("GIT_COMMITTER_EMAIL".into(), "t@localhost".into()),
        ],
        timeout: Duration::from_secs(60),
    })
    .unwrap();
    assert_eq!(out.exit_code, Some(0), "{script}: {}", out.stderr.text);
    out.stdout.text
}

/// A repository with two commits: `a.txt` v1 + `sub/b.sh` (executable) + a link, then `a.txt` v2.
fn repo() -> (tempfile::TempDir, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("clone");
    std::fs::create_dir(&d).unwrap();
    sh(
        &d,
        "git init -q . && printf 'v1\\n' > a.txt && mkdir sub && printf '#!/bin/sh\\n' > sub/b.sh \
         && chmod +x sub/b.sh && ln -s a.txt link && git add -A && git commit -qm one && git tag v1.2.3",
    );
    let first = sh(&d, "git rev-parse HEAD").trim().to_owned();
    sh(&d, "printf 'v2\\n' > a.txt && git commit -qam two");
    let second = sh(&d, "git rev-parse HEAD").trim().to_owned();
    (tmp, first, second)
}

#[test]
fn reads_commits_files_and_tags() {
    let (tmp, first, second) = repo();
    let g = GitRepo::open(&tmp.path().join("clone")).unwrap();
    assert!(g.git_dir().ends_with(".git"));
    assert_eq!(g.resolve_commit(&first[..10]).unwrap(), Some(first.clone()));
    assert_eq!(g.resolve_commit("HEAD").unwrap(), Some(second.clone()));
    assert_eq!(g.resolve_commit("0123456789abcdef").unwrap(), None);
    assert_eq!(g.resolve_commit("--output=x").unwrap(), None);
    assert_eq!(
        g.read_file(&first, "a.txt").unwrap().as_deref(),
        Some(&b"v1\n"[..])
    );
    assert_eq!(
        g.read_file(&second, "a.txt").unwrap().as_deref(),
        Some(&b"v2\n"[..])
    );
    assert_eq!(g.read_file(&first, "missing.txt").unwrap(), None);
    assert_eq!(g.nearest_tag(&second).unwrap().as_deref(), Some("v1.2.3"));
}

#[test]
fn exports_a_tree_without_history() {
    let (tmp, first, _) = repo();
    let clone = tmp.path().join("clone");
    let g = GitRepo::open(&clone).unwrap();
    let status_before = sh(&clone, "git status --porcelain; git rev-parse HEAD");
    let dest = tmp.path().join("out");
    g.export_tree(&first, &dest).unwrap();
    assert_eq!(std::fs::read_to_string(dest.join("a.txt")).unwrap(), "v1\n");
    assert!(!dest.join(".git").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dest.join("sub/b.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_ne!(mode & 0o111, 0, "executable bit kept");
    assert!(
        std::fs::symlink_metadata(dest.join("link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // The clone is untouched: same worktree state and HEAD.
    assert_eq!(
        sh(&clone, "git status --porcelain; git rev-parse HEAD"),
        status_before
    );
    // A second export into a non-empty folder is refused.
    assert!(g.export_tree(&first, &dest).is_err());
}

#[test]
fn a_tree_whose_file_contents_the_clone_lacks_is_named_by_that_file() {
    let (tmp, first, _) = repo();
    let clone = tmp.path().join("clone");
    // As a partial clone that left a large file out: the blob of `sub/b.sh` is gone.
    let blob = sh(&clone, &format!("git rev-parse {first}:sub/b.sh"));
    let blob = blob.trim();
    std::fs::remove_file(clone.join(format!(".git/objects/{}/{}", &blob[..2], &blob[2..])))
        .unwrap();
    let g = GitRepo::open(&clone).unwrap();
    match g.export_tree(&first, &tmp.path().join("out")) {
        Err(traparena_env::EnvError::MissingBlob { commit, path, .. }) => {
            assert_eq!(
                (commit.as_str(), path.as_str()),
                (first.as_str(), "sub/b.sh")
            );
        }
        other => panic!("wanted MissingBlob for sub/b.sh, got {other:?}"),
    }
}

#[test]
fn a_plain_folder_is_not_a_repository() {
    let (tmp, _, _) = repo();
    // A folder inside the clone is not accepted as a repository of its own.
    assert!(GitRepo::open(&tmp.path().join("clone/sub")).is_err());
    assert!(GitRepo::open(&tmp.path().join("nowhere")).is_err());
}

#[test]
fn host_commands_time_out_and_capture_output() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_host(&HostCommand {
        argv: vec![
            "/bin/sh".into(),
            "-c".into(),
            "echo $FOO; echo err >&2".into(),
        ],
        cwd: tmp.path().to_owned(),
        env: vec![("FOO".into(), "bar".into())],
        timeout: Duration::from_secs(10),
    })
    .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout.text, "bar\n");
    assert_eq!(out.stderr.text, "err\n");
    let started = Instant::now();
    let out = run_host(&HostCommand {
        argv: vec!["/bin/sh".into(), "-c".into(), "sleep 30".into()],
        cwd: tmp.path().to_owned(),
        env: Vec::new(),
        timeout: Duration::from_millis(300),
    })
    .unwrap();
    assert!(out.timed_out);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn reads_tag_dates_commit_dates_and_distances() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("clone");
    std::fs::create_dir(&d).unwrap();
    // A lightweight tag dated by its commit, an annotated one by its tagger date (later).
    sh(
        &d,
        "git init -q . && export GIT_COMMITTER_DATE='2020-01-01T00:00:00Z' \
         && git commit -q --allow-empty -m one && git tag v0.1.0 \
         && export GIT_COMMITTER_DATE='2020-06-01T00:00:00Z' \
         && git commit -q --allow-empty -m two \
         && GIT_COMMITTER_DATE='2021-01-01T00:00:00Z' git tag -a -m rel v0.2.0 \
         && export GIT_COMMITTER_DATE='2021-02-01T00:00:00Z' \
         && git commit -q --allow-empty -m three && git commit -q --allow-empty -m four",
    );
    let g = GitRepo::open(&d).unwrap();
    assert_eq!(
        g.tags_by_date().unwrap(),
        [
            ("v0.2.0".to_owned(), 1609459200),
            ("v0.1.0".to_owned(), 1577836800)
        ]
    );
    assert_eq!(g.commit_time("HEAD").unwrap(), Some(1612137600));
    assert_eq!(g.commit_time("0123456789abcdef").unwrap(), None);
    assert_eq!(g.describe("HEAD").unwrap(), Some(("v0.2.0".to_owned(), 2)));
    assert_eq!(
        g.describe("HEAD~3").unwrap(),
        Some(("v0.1.0".to_owned(), 0))
    );
    // No tag reachable: none, not an error.
    sh(&d, "git tag -d v0.1.0 v0.2.0 >/dev/null");
    assert_eq!(g.describe("HEAD").unwrap(), None);
    assert_eq!(g.tags_by_date().unwrap(), []);
}

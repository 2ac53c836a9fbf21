//! The one tree copy, with each of its options, on real files.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use traparena_env::{CopyOptions, copy_tree};

fn tree(root: &Path) {
    for (rel, text, mode) in [
        ("a.py", "a", 0o600),
        ("run.sh", "#!/bin/sh\n", 0o700),
        ("pkg/b.py", "b", 0o644),
        ("pkg/c.so", "c", 0o644),
        (".git/HEAD", "ref", 0o644),
        ("pkg/.git/x", "nested", 0o644),
    ] {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    std::os::unix::fs::symlink("a.py", root.join("link")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/target", root.join("dangling")).unwrap();
}

fn files(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = walkdir::WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            e.path().strip_prefix(root).unwrap().display().to_string()
        })
        .collect();
    v.sort();
    v
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn each_option_changes_only_what_it_names() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    tree(&src);
    let all = [
        ".git",
        ".git/HEAD",
        "a.py",
        "dangling",
        "link",
        "pkg",
        "pkg/.git",
        "pkg/.git/x",
        "pkg/b.py",
        "pkg/c.so",
        "run.sh",
    ];
    type Case<'a> = (CopyOptions<'a>, &'a [&'a str]);
    let cases: [Case<'_>; 3] = [
        (CopyOptions::default(), &all),
        (
            CopyOptions {
                skip_top_git: true,
                ..CopyOptions::default()
            },
            &[
                "a.py",
                "dangling",
                "link",
                "pkg",
                "pkg/.git",
                "pkg/.git/x",
                "pkg/b.py",
                "pkg/c.so",
                "run.sh",
            ],
        ),
        (
            CopyOptions {
                only_suffix: Some(".so"),
                ..CopyOptions::default()
            },
            &[".git", "dangling", "link", "pkg", "pkg/.git", "pkg/c.so"],
        ),
    ];
    for (i, (opts, expect)) in cases.iter().enumerate() {
        let dst = tmp.path().join(format!("dst{i}"));
        copy_tree(&src, &dst, opts).unwrap();
        assert_eq!(files(&dst), *expect, "{opts:?}");
        // Links stay links, never followed.
        assert_eq!(
            std::fs::read_link(dst.join("dangling")).unwrap(),
            Path::new("/nonexistent/target")
        );
    }
    // Modes are kept as they are, unless the copy must be readable by every user.
    let kept = tmp.path().join("dst0");
    assert_eq!(mode(&kept.join("a.py")), 0o600);
    let readable = tmp.path().join("readable");
    let opts = CopyOptions {
        readable: true,
        ..CopyOptions::default()
    };
    copy_tree(&src, &readable, &opts).unwrap();
    assert_eq!(mode(&readable.join("a.py")), 0o644);
    assert_eq!(mode(&readable.join("run.sh")), 0o755);
    assert_eq!(mode(&readable.join("pkg")) & 0o755, 0o755);
    // A missing source is an error naming it, not a panic.
    let e = copy_tree(&tmp.path().join("missing"), &tmp.path().join("x"), &opts).unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
}

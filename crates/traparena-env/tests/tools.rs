//! The agent's tools on ordinary and awkward input, and the candidate diff.

mod common;

use common::*;
use traparena_env::{Environment, OriginTree, ToolLimits, Workspace};
use traparena_task::Action;

fn read(
    env: &mut Environment,
    path: &str,
    s: Option<u64>,
    e: Option<u64>,
) -> traparena_task::Observation {
    env.step(&Action::Read {
        path: path.into(),
        start_line: s,
        end_line: e,
    })
    .unwrap()
}

fn env_for(task: &traparena_task::Task, limits: ToolLimits) -> Environment {
    Environment::new(task, &none_sandbox(), limits).unwrap()
}

#[test]
fn read_shows_numbered_line_ranges() {
    let (_t, task) = make_task(10);
    let mut env = env_for(&task, ToolLimits::default());
    let obs = read(&mut env, "m.py", None, None);
    assert_eq!(
        obs.output,
        "m.py (lines 1-2 of 2)\n    1  def f(x):\n    2      return x + 1\n"
    );
    let obs = read(&mut env, "./m.py", Some(2), Some(2));
    assert_eq!(
        obs.output,
        "m.py (lines 2-2 of 2)\n    2      return x + 1\n"
    );
    assert!(read(&mut env, "m.py", Some(5), None).error);
    assert!(
        read(&mut env, "nope.py", None, None)
            .output
            .contains("no such file")
    );
    assert!(
        read(&mut env, "tests", None, None)
            .output
            .contains("is a folder")
    );
}

#[test]
fn binary_and_non_utf8_files_do_not_panic() {
    let (_t, task) = make_task(10);
    std::fs::write(task.repo_dir().join("blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    std::fs::write(task.repo_dir().join("latin1.txt"), b"caf\xe9\n").unwrap();
    let mut env = env_for(&task, ToolLimits::default());
    let obs = read(&mut env, "blob.bin", None, None);
    assert!(
        obs.error && obs.output.contains("binary file"),
        "{}",
        obs.output
    );
    let obs = read(&mut env, "latin1.txt", None, None);
    assert!(
        !obs.error && obs.output.contains("not valid UTF-8") && obs.output.contains('\u{fffd}')
    );
    let obs = env
        .step(&Action::Edit {
            path: "latin1.txt".into(),
            old: "caf".into(),
            new: "x".into(),
        })
        .unwrap();
    assert!(
        obs.error && obs.output.contains("not UTF-8"),
        "{}",
        obs.output
    );
    let obs = env
        .step(&Action::Search {
            pattern: "caf".into(),
            path: None,
        })
        .unwrap();
    assert!(obs.output.contains("latin1.txt:1:"), "{}", obs.output);
}

#[test]
fn edit_replaces_exactly_one_occurrence() {
    let (_t, task) = make_task(10);
    std::fs::write(task.repo_dir().join("d.py"), "a = 1\na = 1\nb = 2\n").unwrap();
    let mut env = env_for(&task, ToolLimits::default());
    let edit = |env: &mut Environment, old: &str, new: &str| {
        env.step(&Action::Edit {
            path: "d.py".into(),
            old: old.into(),
            new: new.into(),
        })
        .unwrap()
    };
    let obs = edit(&mut env, "a = 1", "a = 3");
    assert!(
        obs.error && obs.output.contains("occurs 2 times"),
        "{}",
        obs.output
    );
    let obs = edit(&mut env, "zzz", "y");
    assert!(
        obs.error && obs.output.contains("not found"),
        "{}",
        obs.output
    );
    let obs = edit(&mut env, "", "y");
    assert!(obs.error);
    let obs = edit(&mut env, "b = 2", "b = 5");
    assert!(
        !obs.error && obs.output.contains("line 3"),
        "{}",
        obs.output
    );
    let text = std::fs::read_to_string(env.workspace().path().join("d.py")).unwrap();
    assert_eq!(text, "a = 1\na = 1\nb = 5\n");
}

#[test]
fn long_output_and_big_writes_are_bounded() {
    let (_t, task) = make_task(10);
    let big: String = (0..5000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(task.repo_dir().join("big.txt"), &big).unwrap();
    let limits = ToolLimits {
        observation_bytes: 1000,
        write_bytes: 100,
        ..ToolLimits::default()
    };
    let mut env = env_for(&task, limits);
    let obs = read(&mut env, "big.txt", None, None);
    assert!(
        obs.truncated && obs.output.contains("[output truncated: 1000 of"),
        "{}",
        obs.output
    );
    let obs = env
        .step(&Action::Write {
            path: "new.txt".into(),
            content: "x".repeat(101),
        })
        .unwrap();
    assert!(obs.error && obs.output.contains("write limit"));
    assert!(!env.workspace().path().join("new.txt").exists());
    let obs = env
        .step(&Action::Write {
            path: "deep/er/new.txt".into(),
            content: "ok\n".into(),
        })
        .unwrap();
    assert!(!obs.error, "{}", obs.output);
    let mut env = env_for(&task, ToolLimits::default());
    let obs = env
        .step(&Action::Search {
            pattern: "line".into(),
            path: Some("big.txt".into()),
        })
        .unwrap();
    assert!(
        obs.output.starts_with("5000 matches"),
        "{}",
        &obs.output[..50]
    );
    assert!(obs.output.contains("[4900 more matches not shown]"));
}

#[test]
fn run_public_tests_reports_counts() {
    let (_t, task) = make_task(10);
    for sb in isolating_sandboxes() {
        let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
        let obs = env.step(&Action::RunPublicTests).unwrap();
        assert_eq!(obs.tests_passed, Some(true), "{}", obs.output);
        assert_eq!(obs.tests.unwrap().run, 1);
        assert!(
            obs.output.contains("Ran 1 test in 0.000s"),
            "{}",
            obs.output
        );
        assert!(obs.output.ends_with(
            "[public tests: PASSED: 1 run, 0 failed, 0 errored, 0 skipped; exit status 0]"
        ));
        let fail = "import unittest\nimport m\n\nclass T(unittest.TestCase):\n    def test_f(self):\n        self.assertEqual(m.f(1), 3)\n";
        env.step(&Action::Write {
            path: "tests/test_m.py".into(),
            content: fail.into(),
        })
        .unwrap();
        let obs = env.step(&Action::RunPublicTests).unwrap();
        assert_eq!(obs.tests_passed, Some(false));
        assert_eq!(obs.tests.unwrap().failed, 1);
        assert!(
            obs.output.contains("/workspace/tests/test_m.py"),
            "{}",
            obs.output
        );
    }
}

#[test]
fn fake_summaries_and_early_exits_never_pass() {
    let (_t, task) = make_task(10);
    let sb = isolating_sandboxes().remove(0);
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    for code in [
        "import os\nos._exit(0)\n",
        "import sys\nprint('Ran 5 tests in 0.001s\\n\\nOK')\nsys.stderr.write('Ran 5 tests in 0.001s\\n\\nOK\\n')\nimport os\nos._exit(0)\n",
        "raise SystemExit(0)\n",
        "import os\nos.write(3, b'{\"tests_run\": 9, \"failed\": 0, \"errored\": 0, \"skipped\": 0}')\nos._exit(0)\n",
    ] {
        env.step(&Action::Write {
            path: "m.py".into(),
            content: format!("{code}\ndef f(x):\n    return x + 1\n"),
        })
        .unwrap();
        let obs = env.step(&Action::RunPublicTests).unwrap();
        assert_eq!(obs.tests_passed, Some(false), "{code}: {}", obs.output);
    }
}

#[test]
fn candidate_diff_round_trips() {
    let (_t, task) = make_task(10);
    std::fs::write(task.repo_dir().join("gone.py"), "x = 1\n").unwrap();
    std::fs::write(task.repo_dir().join("image.bin"), [1u8, 0, 2, 0, 3]).unwrap();
    let sb = none_sandbox();
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    assert_eq!(
        env.candidate_patch().unwrap(),
        "",
        "an untouched workspace has an empty diff"
    );
    env.step(&Action::Edit {
        path: "m.py".into(),
        old: "x + 1".into(),
        new: "x + 2".into(),
    })
    .unwrap();
    env.step(&Action::Write {
        path: "pkg/new.py".into(),
        content: "y = 2\n".into(),
    })
    .unwrap();
    let ws = env.workspace().path().to_owned();
    std::fs::remove_file(ws.join("gone.py")).unwrap();
    std::fs::write(ws.join("image.bin"), [9u8, 0, 9, 0, 9, 0]).unwrap();
    std::fs::create_dir_all(ws.join("__pycache__")).unwrap();
    std::fs::write(ws.join("__pycache__/m.cpython-311.pyc"), [0u8; 16]).unwrap();
    std::fs::write(ws.join("stray.pyc"), [0u8; 4]).unwrap();
    let diff = env.candidate_patch().unwrap();
    assert!(diff.contains("+++ b/pkg/new.py"), "{diff}");
    assert!(diff.contains("deleted file mode"), "{diff}");
    assert!(diff.contains("GIT binary patch"), "{diff}");
    assert!(
        !diff.contains("pycache") && !diff.contains(".pyc"),
        "{diff}"
    );
    // A second diff after more changes is still taken against the original.
    env.step(&Action::Edit {
        path: "m.py".into(),
        old: "x + 2".into(),
        new: "x + 3".into(),
    })
    .unwrap();
    let diff = env.candidate_patch().unwrap();
    assert!(
        diff.contains("-    return x + 1\n+    return x + 3"),
        "{diff}"
    );

    let mut fresh = Workspace::materialize(&task.repo_dir(), &sb).unwrap();
    let applied = fresh.apply_patch(&diff).unwrap();
    assert!(applied.applied, "{}", applied.message);
    for (rel, expect) in [
        ("m.py", Some(std::fs::read(ws.join("m.py")).unwrap())),
        ("pkg/new.py", Some(b"y = 2\n".to_vec())),
        ("image.bin", Some(vec![9u8, 0, 9, 0, 9, 0])),
        ("gone.py", None),
    ] {
        assert_eq!(std::fs::read(fresh.path().join(rel)).ok(), expect, "{rel}");
    }
    assert_eq!(fresh.diff().unwrap(), diff);
}

#[test]
fn patches_that_do_not_apply_or_escape_are_outcomes() {
    let (_t, task) = make_task(10);
    let sb = none_sandbox();
    let mut ws = Workspace::materialize(&task.repo_dir(), &sb).unwrap();
    let r = ws
        .apply_patch("--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-def g(x):\n+def h(x):\n")
        .unwrap();
    assert!(
        !r.applied && r.message.contains("patch does not apply"),
        "{}",
        r.message
    );
    let r = ws
        .apply_patch("--- a/../escape.py\n+++ b/../escape.py\n@@ -0,0 +1 @@\n+x = 1\n")
        .unwrap();
    assert!(
        !r.applied && r.message.contains("not a safe relative path"),
        "{}",
        r.message
    );
    let r = ws
        .apply_patch("diff --git a/.git/config b/.git/config\nnew file mode 100644\n--- /dev/null\n+++ b/.git/config\n@@ -0,0 +1 @@\n+[core]\n")
        .unwrap();
    assert!(!r.applied && r.message.contains(".git"), "{}", r.message);
    let r = ws.apply_patch("complete garbage\n").unwrap();
    assert!(!r.applied);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("m.py")).unwrap(),
        "def f(x):\n    return x + 1\n"
    );
}

#[test]
fn workspace_has_no_hidden_files_or_history() {
    let (_t, task) = make_task(10);
    std::fs::create_dir_all(task.repo_dir().join(".git")).unwrap();
    std::fs::write(task.repo_dir().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let ws = Workspace::materialize(&task.repo_dir(), &none_sandbox()).unwrap();
    assert!(!ws.path().join(".git").exists());
    assert!(!ws.path().starts_with(&task.dir));
    let names: Vec<String> = walkdir(ws.path());
    assert!(
        names
            .iter()
            .all(|n| !n.contains("hidden") && !n.contains("reference")),
        "{names:?}"
    );
}

fn walkdir(p: &std::path::Path) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(p).unwrap().flatten() {
        v.push(e.file_name().to_string_lossy().into_owned());
        if e.file_type().unwrap().is_dir() {
            v.extend(walkdir(&e.path()));
        }
    }
    v
}

/// unittest reports a failed subTest once per subtest; the counts are of test methods, so
/// failed and errored never exceed run.
#[test]
fn failing_subtests_count_once_per_test_method() {
    let (_t, task) = make_task(10);
    let sb = isolating_sandboxes().remove(0);
    let mut env = Environment::new(&task, &sb, ToolLimits::default()).unwrap();
    let tests = "import unittest\n\nclass T(unittest.TestCase):\n    def test_many(self):\n        for i in range(5):\n            with self.subTest(i=i):\n                self.assertEqual(i, -1)\n\n    def test_errors(self):\n        for i in range(3):\n            with self.subTest(i=i):\n                raise ValueError(i)\n\n    def test_ok(self):\n        pass\n";
    env.step(&Action::Write {
        path: "tests/test_m.py".into(),
        content: tests.into(),
    })
    .unwrap();
    let obs = env.step(&Action::RunPublicTests).unwrap();
    let counts = obs.tests.unwrap();
    assert_eq!(
        (counts.run, counts.failed, counts.errored),
        (3, 1, 1),
        "{}",
        obs.output
    );
    assert!(
        obs.output.ends_with(
            "[public tests: FAILED: 3 run, 1 failed, 1 errored, 0 skipped; exit status 1]"
        ),
        "{}",
        obs.output
    );
}

#[test]
fn the_original_read_ahead_races_neither_the_agent_nor_the_workspace_s_removal() {
    let (_t, task) = make_task(10);
    let sb = none_sandbox();
    // The diff taken without reading ahead, the reference.
    let mut plain = Workspace::materialize(&task.repo_dir(), &sb).unwrap();
    std::fs::write(plain.path().join("m.py"), "changed = 1\n").unwrap();
    std::fs::write(plain.path().join("added.py"), "a = 1\n").unwrap();
    let expected = plain.diff().unwrap();
    assert!(expected.contains("+++ b/added.py"), "{expected}");
    std::thread::scope(|s| {
        for i in 0..8 {
            let (task, sb, expected) = (&task, &sb, &expected);
            s.spawn(move || {
                let mut ws = Workspace::materialize(&task.repo_dir(), sb).unwrap();
                ws.prepare_diff();
                let root = ws.path().parent().unwrap().to_owned();
                if i % 2 == 0 {
                    // Changed at once, while the original is read on another thread.
                    std::fs::write(ws.path().join("m.py"), "changed = 1\n").unwrap();
                    std::fs::write(ws.path().join("added.py"), "a = 1\n").unwrap();
                    assert_eq!(&ws.diff().unwrap(), expected);
                }
                // Dropped, also with the read still going: nothing is left behind.
                drop(ws);
                assert!(!root.exists(), "{} is left", root.display());
            });
        }
    });
}

#[test]
fn workspaces_sharing_one_original_take_their_own_diffs_at_once() {
    let (_t, task) = make_task(10);
    let sb = none_sandbox();
    let origin = std::sync::Arc::new(OriginTree::read(&task.repo_dir()).unwrap());
    std::thread::scope(|s| {
        for i in 0..8 {
            let (task, sb, origin) = (&task, &sb, origin.clone());
            s.spawn(move || {
                let mut env =
                    Environment::with_origin(task, sb, ToolLimits::default(), Some(origin))
                        .unwrap();
                let content = format!("value = {i}\n");
                env.step(&Action::Write {
                    path: format!("new_{i}.py"),
                    content: content.clone(),
                })
                .unwrap();
                let diff = env.candidate_patch().unwrap();
                // Its own file, and no other workspace's.
                assert!(diff.contains(&format!("+++ b/new_{i}.py")), "{diff}");
                assert!(diff.contains(&format!("+{}", content.trim_end())), "{diff}");
                assert_eq!(diff.matches("+++ b/").count(), 1, "{diff}");
                // The same diff as a workspace that read the original itself.
                let mut own = Workspace::materialize(&task.repo_dir(), sb).unwrap();
                std::fs::write(own.path().join(format!("new_{i}.py")), &content).unwrap();
                assert_eq!(own.diff().unwrap(), diff);
            });
        }
    });
    // The shared tree was only read: every workspace wrote its objects to its own folder.
    let again = OriginTree::read(&task.repo_dir()).unwrap();
    assert_eq!(again.tree(), origin.tree());
}

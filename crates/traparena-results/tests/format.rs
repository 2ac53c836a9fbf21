//! The results format at its boundary, with real files: lines round-trip with `"format": 3`,
//! format-1 lines (copied from results folders written before format 2) are migrated, a newer
//! format is a clear error, a torn last line is left out by readers and cut off by the appender,
//! and atomic writes leave nothing half-written behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use traparena_results::{
    Appender, ConditionInfo, EpisodeKey, FORMAT_VERSION, JsonlReader, Manifest, ResultLine,
    ResultsError, TrajectoryLine, read_lines, write_atomic, write_lines,
};
use traparena_task::{FailureMode, Usage, Verdict};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn key(task: &str, round: u32) -> EpisodeKey {
    EpisodeKey {
        target: "model-a".into(),
        condition: "urge".into(),
        task: task.into(),
        round,
        sample: 0,
        fork: None,
    }
}

/// A finished episode's line of format 2 with every field set.
fn full_line(task: &str, round: u32) -> ResultLine {
    let info = ConditionInfo {
        attacker: "scripted".into(),
        args: json!({"persona": "urge_submit"}),
        access: None,
        role: None,
        uses_model: false,
        curator: Some("tally".into()),
        defence: true,
    };
    let mut l = ResultLine::infra_failure(&key(task, round), &info, 42, String::new());
    l.infra_error = None;
    l.agent = "llm".into();
    l.attacker = "scripted:urge_submit".into();
    l.verdict = Some(Verdict {
        hidden_tests_pass: false,
        touches_reference: true,
        flags: Vec::new(),
        accepted: false,
        failure_mode: Some(FailureMode::FalseFix),
    });
    l.failure_mode = Some(FailureMode::FalseFix);
    l.messages_delivered = 2;
    l.susceptible = Some(true);
    l.steps = 9;
    l.submitted = true;
    l.usage = Usage {
        prompt_tokens: 900,
        completion_tokens: 80,
        ..Usage::default()
    };
    l.harness_version = Some("0.1.0".into());
    l.patch = "diff --git a/x.py b/x.py\n".into();
    l
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn line_text(l: &ResultLine) -> String {
    serde_json::to_string(l).unwrap()
}

#[test]
fn a_line_round_trips_with_its_format_first() {
    let line = full_line("t1", 3);
    let text = line_text(&line);
    assert!(
        text.starts_with("{\"format\":3,\"target\":\"model-a\""),
        "{text}"
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["condition_info"],
        json!({"attacker": "scripted", "args": {"persona": "urge_submit"}, "access": null,
               "curator": "tally", "defence": true})
    );
    assert_eq!(v["harness_version"], "0.1.0");
    let back: ResultLine = serde_json::from_str(&text).unwrap();
    assert_eq!(back, line);

    // No arguments and no harness version: neither is written; an empty `args` reads as none.
    let bare = ResultLine::infra_failure(&key("t2", 0), &ConditionInfo::baseline(), 1, "x".into());
    let text = line_text(&bare);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["condition_info"],
        json!({"attacker": "none", "access": null, "curator": null, "defence": false})
    );
    assert!(v.get("harness_version").is_none(), "{text}");
    let with_empty = text.replace("\"attacker\":\"none\"", "\"attacker\":\"none\",\"args\":{}");
    assert_ne!(with_empty, text);
    assert_eq!(
        serde_json::from_str::<ResultLine>(&with_empty).unwrap(),
        bare
    );
}

#[test]
fn format_1_lines_are_migrated_when_read() {
    // Lines of results folders written before format 2: examples/results/synthetic (a model target,
    // scripted, truthful, adaptive and blind attackers, the curator, infrastructure errors) and
    // a `traparena experiment` run (a fixed persona, the built-in curator).
    let file = read_lines::<ResultLine>(&fixture("format-1-episodes.jsonl")).unwrap();
    assert!(file.torn.is_none());
    let by_condition: BTreeMap<(String, bool), &ResultLine> = file
        .lines
        .iter()
        .map(|l| ((l.condition.clone(), l.infra_error.is_some()), l))
        .collect();
    let info = |c: &str, infra: bool| &by_condition[&(c.to_owned(), infra)].condition_info;
    let want =
        |attacker: &str, args: Value, access: Option<&str>, curator: Option<&str>| ConditionInfo {
            attacker: attacker.into(),
            args,
            access: access.map(str::to_owned),
            role: None,
            // Format 1 did not record it; of its kinds only `adaptive` used a model.
            uses_model: attacker == "adaptive",
            curator: curator.map(str::to_owned),
            defence: false,
        };
    assert_eq!(*info("baseline", false), ConditionInfo::baseline());
    assert_eq!(*info("baseline", true), ConditionInfo::baseline());
    assert_eq!(
        *info("scripted", false),
        want("scripted", Value::Null, None, None)
    );
    assert_eq!(
        *info("truthful", false),
        want("truthful", Value::Null, None, None)
    );
    assert_eq!(
        *info("adaptive", false),
        want("adaptive", Value::Null, Some("reference"), None)
    );
    assert_eq!(
        *info("adaptive-curator", false),
        want("adaptive", Value::Null, Some("reference"), Some("tally"))
    );
    // The blind model attacker was written as the attacker `blind`.
    assert_eq!(
        *info("blind-curator", false),
        want("adaptive", Value::Null, Some("blind"), Some("tally"))
    );
    assert_eq!(
        *info("blind-curator", true),
        want("adaptive", Value::Null, Some("blind"), Some("tally"))
    );
    // A fixed persona was `persona`.
    assert_eq!(
        *info("urge", false),
        want("scripted", json!({"persona": "urge_submit"}), None, None)
    );
    assert_eq!(
        *info("urge_curated", false),
        want(
            "scripted",
            json!({"persona": "urge_submit"}),
            None,
            Some("tally")
        )
    );
    assert_eq!(
        info("urge", false).attacker_label(),
        "scripted(persona=urge_submit)"
    );
    // Everything else is read as it was, and a migrated line is written at format 2.
    let first = &file.lines[0];
    assert_eq!(first.agent, "llm");
    assert_eq!(first.seed, 16416765242938866138);
    assert!(first.patch.starts_with("diff --git a/src/module.py"));
    assert_eq!(first.harness_version, None);
    for l in &file.lines {
        let text = line_text(l);
        assert!(text.starts_with("{\"format\":3,"), "{text}");
        assert_eq!(serde_json::from_str::<ResultLine>(&text).unwrap(), *l);
    }
}

#[test]
fn format_1_spellings_and_contradictions() {
    let base = line_text(&full_line("t", 0));
    let v1 = |info: Value| {
        let mut v: Value = serde_json::from_str(&base).unwrap();
        v.as_object_mut().unwrap().remove("format");
        v["condition_info"] = info;
        v.to_string()
    };
    let read = |text: String| serde_json::from_str::<ResultLine>(&text).map(|l| l.condition_info);
    // `scripted:PERSONA` as the attacker.
    let i = read(v1(
        json!({"attacker": "scripted:dismiss_edge_cases", "curator": false}),
    ))
    .unwrap();
    assert_eq!(
        (i.attacker.as_str(), i.arg_str("persona")),
        ("scripted", Some("dismiss_edge_cases"))
    );
    // `blind` without an access.
    let i = read(v1(
        json!({"attacker": "blind", "curator": true, "defence": true}),
    ))
    .unwrap();
    assert_eq!(
        (
            i.attacker.as_str(),
            i.access.as_deref(),
            i.curator.as_deref(),
            i.defence
        ),
        ("adaptive", Some("blind"), Some("tally"), true)
    );
    // Lines that contradict themselves, or mix the formats, are refused with the reason.
    for (info, words) in [
        (
            json!({"attacker": "blind", "access": "reference"}),
            "`blind` with access",
        ),
        (
            json!({"attacker": "scripted:a", "persona": "b"}),
            "another persona",
        ),
        (
            json!({"attacker": "scripted", "curator": "tally"}),
            "true or false",
        ),
        (
            json!({"attacker": "scripted", "args": {"persona": "a"}}),
            "`args` is a field of format 2",
        ),
    ] {
        let e = read(v1(info.clone())).unwrap_err().to_string();
        assert!(e.contains(words), "{info}: {e}");
    }
    let v2 = |info: Value| {
        let mut v: Value = serde_json::from_str(&base).unwrap();
        v["condition_info"] = info;
        v.to_string()
    };
    for (info, words) in [
        (
            json!({"attacker": "scripted", "persona": "a"}),
            "`persona` is a field of format 1",
        ),
        (
            json!({"attacker": "scripted", "curator": true}),
            "the curator's kind",
        ),
        (
            json!({"attacker": "scripted", "args": ["a"]}),
            "`args` must be an object",
        ),
    ] {
        let e = read(v2(info.clone())).unwrap_err().to_string();
        assert!(e.contains(words), "{info}: {e}");
    }
}

#[test]
fn a_newer_format_is_an_error_naming_the_file_and_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let ok = line_text(&full_line("t", 0));
    // The next format with a shape this build cannot read at all, and with today's shape.
    let next = FORMAT_VERSION + 1;
    let reshaped = json!({"format": next, "episode": {"target": "model-a"}}).to_string();
    let same_shape = ok.replace(
        &format!("\"format\":{FORMAT_VERSION}"),
        &format!("\"format\":{next}"),
    );
    assert_ne!(same_shape, ok);
    for (i, newer) in [reshaped, same_shape].into_iter().enumerate() {
        let path = write(
            dir.path(),
            &format!("e{i}.jsonl"),
            &format!("{ok}\n{newer}\n{ok}\n"),
        );
        let e = read_lines::<ResultLine>(&path).unwrap_err();
        assert!(
            matches!(
                e,
                ResultsError::NewerFormat {
                    found,
                    line: Some(2),
                    ..
                } if found == u64::from(next)
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(
            msg.contains(&format!("line 2: format {next} is newer")),
            "{msg}"
        );
        assert!(msg.contains(&format!("(up to {FORMAT_VERSION})")), "{msg}");
        assert_eq!(e.line(), Some(2));
        assert!(e.is_bad_input());
    }
    // `format` 0 does not exist.
    let path = write(
        dir.path(),
        "zero.jsonl",
        &format!("{}\n", ok.replace("\"format\":3", "\"format\":0")),
    );
    let e = read_lines::<ResultLine>(&path).unwrap_err().to_string();
    assert!(
        e.contains("line 1") && e.contains("`format` 0 does not exist"),
        "{e}"
    );
    // So is a newer manifest.
    let m = dir.path().join("manifest.json");
    std::fs::write(&m, json!({"format": 9, "what": "else"}).to_string()).unwrap();
    let e = Manifest::read(&m).unwrap_err();
    assert!(
        matches!(
            e,
            ResultsError::NewerFormat {
                found: 9,
                line: None,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("manifest.json: format 9 is newer"),
        "{e}"
    );
}

#[test]
fn readers_leave_out_a_torn_last_line_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let a = line_text(&full_line("a", 0));
    let b = line_text(&full_line("b", 0));
    let c = line_text(&full_line("c", 0));
    let half = &c[..c.len() / 2];

    // Two lines, a blank one, and the first half of a third: the half is not a line, and the
    // file is left as it is.
    let text = format!("{a}\n\n{b}\r\n{half}");
    let path = write(dir.path(), "torn.jsonl", &text);
    let file = read_lines::<ResultLine>(&path).unwrap();
    assert_eq!(file.lines, [full_line("a", 0), full_line("b", 0)]);
    assert_eq!(file.blank_lines, 1);
    let torn = file.torn.unwrap();
    assert_eq!(torn.line, 4);
    assert_eq!(torn.offset as usize, text.len() - half.len());
    assert_eq!(torn.len, half.len());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    // A complete last line without its newline is a line.
    let path = write(dir.path(), "unterminated.jsonl", &format!("{a}\n{b}"));
    let file = read_lines::<ResultLine>(&path).unwrap();
    assert_eq!(file.lines.len(), 2);
    assert!(file.torn.is_none());

    // The same half line before the end, a last line that is complete but not a line, and a
    // malformed line anywhere are errors naming their line.
    for (text, line, words) in [
        (format!("{a}\n{half}\n{b}\n"), 2, "EOF"),
        (format!("{a}\n{half}\n"), 2, "EOF"),
        (format!("{a}\n[1, 2]"), 2, "invalid type"),
        (format!("{a}\nnot json\n{b}\n"), 2, "expected"),
        (
            format!("{}\n", a.replace("\"round\":", "\"rounds\":")),
            1,
            "missing field `round`",
        ),
        (
            format!("{b}\n{}\n", a.replace("\"task\":\"a\"", "\"task\":\" \"")),
            2,
            "`task` is empty",
        ),
    ] {
        let path = write(dir.path(), "bad.jsonl", &text);
        let e = read_lines::<ResultLine>(&path).unwrap_err();
        assert!(matches!(e, ResultsError::Line { .. }), "{e:?}");
        assert_eq!(e.line(), Some(line), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("bad.jsonl: line {line}, column ")),
            "{msg}"
        );
        assert!(msg.contains(words), "{msg} should say {words:?}");
        assert!(!msg.contains(" at line 1 column"), "{msg}");
    }

    // The streaming reader says the same, one line at a time.
    let text = format!("{a}\n  \n{b}\n{half}");
    let mut reader = JsonlReader::<_, ResultLine>::new(text.as_bytes(), "mem.jsonl");
    assert_eq!(reader.next().unwrap().unwrap().task, "a");
    assert_eq!(reader.next().unwrap().unwrap().task, "b");
    assert!(reader.torn().is_none());
    assert!(reader.next().is_none());
    assert_eq!(
        (reader.blank_lines(), reader.torn().map(|t| t.line)),
        (1, Some(4))
    );

    // A missing file has no lines.
    let none = read_lines::<ResultLine>(&dir.path().join("nope.jsonl")).unwrap();
    assert!(none.lines.is_empty() && none.torn.is_none());
}

#[test]
fn the_appender_cuts_a_torn_line_off_and_appends_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let a = line_text(&full_line("a", 0));
    let c = line_text(&full_line("c", 0));

    // A crash left half a line: it is cut off, and the next line starts where it started.
    let path = write(dir.path(), "episodes.jsonl", &format!("{a}\n{}", &c[..50]));
    let (mut app, lines) = Appender::open::<ResultLine>(&path).unwrap();
    assert_eq!(lines, [full_line("a", 0)]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{a}\n"));
    app.append(&full_line("b", 1)).unwrap();
    drop(app);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, format!("{a}\n{}\n", line_text(&full_line("b", 1))));

    // A complete last line without its newline is kept and ended before the next line.
    let path = write(dir.path(), "unterminated.jsonl", &a);
    let (mut app, lines) = Appender::open::<ResultLine>(&path).unwrap();
    assert_eq!(lines.len(), 1);
    app.append(&full_line("b", 1)).unwrap();
    let file = read_lines::<ResultLine>(&path).unwrap();
    assert_eq!(file.lines, [full_line("a", 0), full_line("b", 1)]);

    // A new file is created; a malformed one is refused, untouched.
    let fresh = dir.path().join("sub-less.jsonl");
    let (mut app, lines) = Appender::open::<TrajectoryLine>(&fresh).unwrap();
    assert!(lines.is_empty());
    let t = TrajectoryLine::empty(&key("a", 0));
    app.append(&t).unwrap();
    assert_eq!(read_lines::<TrajectoryLine>(&fresh).unwrap().lines, [t]);
    let bad = write(dir.path(), "bad.jsonl", &format!("{a}\nnot json\n"));
    assert!(Appender::open::<ResultLine>(&bad).is_err());
    assert_eq!(
        std::fs::read_to_string(&bad).unwrap(),
        format!("{a}\nnot json\n")
    );
}

#[test]
fn trajectory_lines_carry_the_key_at_the_top_level() {
    let mut t = TrajectoryLine::empty(&key("a", 2));
    t.accepted = true;
    t.prompt_hashes.insert("agent".into(), "abc".into());
    let text = serde_json::to_string(&t).unwrap();
    assert!(
        text.starts_with(r#"{"format":3,"target":"model-a","condition":"urge","task":"a","round":2,"sample":0,"accepted":true"#),
        "{text}"
    );
    assert_eq!(serde_json::from_str::<TrajectoryLine>(&text).unwrap(), t);
    // Format 1 had no `format` field.
    let v1 = text.replace("\"format\":3,", "");
    assert_eq!(serde_json::from_str::<TrajectoryLine>(&v1).unwrap(), t);
}

#[test]
fn format_1_trajectories_and_manifests_are_read() {
    // Written by `traparena experiment` before format 2, with the episodes of the fixture.
    let t = read_lines::<TrajectoryLine>(&fixture("format-1-trajectories.jsonl")).unwrap();
    let t = &t.lines[0];
    assert_eq!(
        (t.key.condition.as_str(), t.key.task.as_str(), t.key.round),
        ("urge", "clamp_overt", 0)
    );
    assert!(!t.trajectory.is_empty());
    let text = serde_json::to_string(t).unwrap();
    assert!(
        text.starts_with("{\"format\":3,\"target\":\"credulous\""),
        "{text}"
    );
    assert_eq!(serde_json::from_str::<TrajectoryLine>(&text).unwrap(), *t);
    let m = Manifest::read(&fixture("format-1-manifest.json")).unwrap();
    assert_eq!(m.harness_version, "0.1.0");
    assert_eq!(m.tasks.len(), 1);
    let again = serde_json::to_string(&m).unwrap();
    assert!(again.starts_with("{\"format\":3,"), "{again}");
}

#[test]
fn whole_files_are_written_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let m = Manifest {
        harness_version: "0.1.0".into(),
        spec_sha256: traparena_results::sha256_json(&json!({"seed": 1})),
        tasks: BTreeMap::from([("t".to_owned(), "00".to_owned())]),
        prompt_hashes: BTreeMap::new(),
        created: None,
    };
    let path = dir.path().join("manifest.json");
    m.write(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("{\n  \"format\": 3,\n  \"harness_version\""),
        "{text}"
    );
    assert!(!text.contains("created"), "{text}");
    assert_eq!(Manifest::read(&path).unwrap(), m);
    // A manifest of format 1 (no `format`) reads the same.
    let v1: Value = {
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v.as_object_mut().unwrap().remove("format");
        v
    };
    assert_eq!(
        Manifest::from_json(v1.to_string().as_bytes(), &path).unwrap(),
        m
    );
    let e = Manifest::from_json(b"{\"harness_version\": 3}", &path).unwrap_err();
    assert!(
        matches!(e, ResultsError::File { .. }) && e.is_bad_input(),
        "{e:?}"
    );

    // Replacing a file leaves the new content and no temporary file.
    write_atomic(&path, b"second").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"second");
    write_lines(
        &dir.path().join("e.jsonl"),
        &[full_line("a", 0), full_line("b", 0)],
    )
    .unwrap();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    assert_eq!(
        read_lines::<ResultLine>(&dir.path().join("e.jsonl"))
            .unwrap()
            .lines
            .len(),
        2
    );
    // A folder that does not exist is an I/O error naming the file.
    let e = write_atomic(&dir.path().join("no/such/file.json"), b"x").unwrap_err();
    assert!(
        !e.is_bad_input() && e.to_string().contains("file.json.tmp"),
        "{e}"
    );
}

#[test]
fn the_files_are_where_the_format_says() {
    use traparena_results::{
        CURATOR_USAGE_FILE, EPISODES_FILE, MANIFEST_FILE, NOTES_DIR, SPEC_FILE, TRAJECTORIES_FILE,
        curator_usage_path, curator_usage_round, notes_path, notes_round,
    };
    let d = Path::new("/r");
    assert_eq!(
        [
            EPISODES_FILE,
            TRAJECTORIES_FILE,
            SPEC_FILE,
            MANIFEST_FILE,
            NOTES_DIR,
            CURATOR_USAGE_FILE
        ],
        [
            "episodes.jsonl",
            "trajectories.jsonl",
            "spec.json",
            "manifest.json",
            "notes",
            "curator-usage.json"
        ]
    );
    let p = notes_path(d, "model-a", "urge", 3);
    assert_eq!(p, Path::new("/r/notes/model-a/urge/round-3.json"));
    assert_eq!(
        notes_round(&p.file_name().unwrap().to_string_lossy()),
        Some(3)
    );
    for other in [
        "round-.json",
        "round-3.txt",
        "curator-usage.json",
        "round--1.json",
    ] {
        assert_eq!(notes_round(other), None, "{other}");
    }
    assert_eq!(
        curator_usage_path(d, "model-a", "urge", 2),
        Path::new("/r/notes/model-a/urge/round-2.usage.json")
    );
    assert_eq!(notes_round("round-2.usage.json"), None);
    assert_eq!(curator_usage_round("round-2.usage.json"), Some(2));
    assert_eq!(curator_usage_round("round-2.json"), None);
}

#[test]
fn the_curator_s_tokens_are_summed_over_its_rounds_and_an_older_folder_s_total() {
    use traparena_results::{
        CURATOR_USAGE_FILE, curator_usage_path, notes_dir, read_curator_usage,
    };
    use traparena_task::Usage;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_eq!(read_curator_usage(d, "t", "c").unwrap(), None, "no folder");
    std::fs::create_dir_all(notes_dir(d, "t", "c")).unwrap();
    assert_eq!(read_curator_usage(d, "t", "c").unwrap(), None, "no file");
    let u = |p: u64| Usage {
        prompt_tokens: p,
        completion_tokens: 1,
        ..Usage::default()
    };
    for (round, p) in [(1, 10), (2, 20)] {
        let path = curator_usage_path(d, "t", "c", round);
        std::fs::write(&path, serde_json::to_vec(&u(p)).unwrap()).unwrap();
    }
    // A write cut by a kill, and the round's notes, are not tokens.
    std::fs::write(notes_dir(d, "t", "c").join("round-3.usage.json.tmp"), "").unwrap();
    std::fs::write(notes_dir(d, "t", "c").join("round-1.json"), "{}").unwrap();
    let total = read_curator_usage(d, "t", "c").unwrap().unwrap();
    assert_eq!((total.prompt_tokens, total.completion_tokens), (30, 2));
    std::fs::write(
        notes_dir(d, "t", "c").join(CURATOR_USAGE_FILE),
        serde_json::to_vec(&u(5)).unwrap(),
    )
    .unwrap();
    let total = read_curator_usage(d, "t", "c").unwrap().unwrap();
    assert_eq!(
        total.prompt_tokens, 35,
        "an older folder's total is added in"
    );
    std::fs::write(curator_usage_path(d, "t", "c", 2), "{not json").unwrap();
    let e = read_curator_usage(d, "t", "c").unwrap_err().to_string();
    assert!(e.contains("round-2.usage.json"), "{e}");
}

#[test]
fn a_fork_line_keeps_its_parent_step_and_branch_and_its_key_is_unique() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    for message in [true, false] {
        let mut l = full_line("t", 0);
        l.fork = Some(traparena_results::ForkInfo {
            parent: "model-a/baseline/t/r0/s0".into(),
            step: 2,
            message,
            points: vec!["step 2".into(), "after_first_test_run".into()],
        });
        lines.push(l);
    }
    let text: String = lines.iter().map(|l| line_text(l) + "\n").collect();
    assert!(text.contains(r#""fork":{"parent":"model-a/baseline/t/r0/s0","step":2,"message":true,"points":["step 2","after_first_test_run"]}"#), "{text}");
    let path = write(dir.path(), "forks.jsonl", &text);
    let back = read_lines::<ResultLine>(&path).unwrap().lines;
    assert_eq!(back, lines);
    let keys: Vec<EpisodeKey> = back.iter().map(ResultLine::key).collect();
    assert_ne!(keys[0], keys[1]);
    assert_eq!(keys[0].to_string(), "model-a/urge/t/r0/s0/fork@2/message");
    assert_eq!(keys[1].to_string(), "model-a/urge/t/r0/s0/fork@2/silent");
    assert_eq!(keys[0].fork_point(), keys[1].fork_point());
    assert_eq!(
        keys[0].parent().unwrap().to_string(),
        "model-a/baseline/t/r0/s0"
    );

    // A fork in a line of format 2 (which had none), and a fork that replays nothing.
    for (bad, words) in [
        (
            text.lines()
                .next()
                .unwrap()
                .replace("\"format\":3", "\"format\":2"),
            "`fork` is a field of format 3",
        ),
        (
            text.lines()
                .next()
                .unwrap()
                .replace("\"step\":2", "\"step\":0"),
            "`fork.step` is 0",
        ),
    ] {
        let path = write(dir.path(), "bad.jsonl", &format!("{bad}\n"));
        let e = read_lines::<ResultLine>(&path).unwrap_err().to_string();
        assert!(e.contains(words), "{e}");
    }
}

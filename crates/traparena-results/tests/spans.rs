//! Reading lines again by their place in the file: [`JsonlReader::spanned`] says where each
//! line lies, [`LineKey`] reads a line's key alone, and [`parse_line`] reads one line again,
//! each under the same rules as the whole-line reader (a torn last line is no line, a newer
//! format is [`ResultsError::NewerFormat`], format 1 is read as it always was).

use std::io::BufReader;
use std::path::{Path, PathBuf};

use traparena_results::{
    ConditionInfo, EpisodeKey, FORMAT_VERSION, ForkInfo, JsonlReader, LineKey, LineSpan,
    ResultLine, ResultsError, TrajectoryLine, parse_line,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn key(task: &str, fork: Option<u32>) -> EpisodeKey {
    EpisodeKey {
        target: "model-a".into(),
        condition: "urge".into(),
        task: task.into(),
        round: 1,
        sample: 2,
        fork: fork.map(|step| traparena_results::ForkKey {
            step,
            message: true,
        }),
    }
}

fn line(task: &str, fork: Option<u32>) -> ResultLine {
    let k = key(task, fork);
    let mut l = ResultLine::infra_failure(&k, &ConditionInfo::baseline(), 7, "x".into());
    l.fork = k.fork.map(|f| ForkInfo {
        parent: k.parent().unwrap().to_string(),
        step: f.step,
        message: f.message,
        points: vec!["3".into()],
    });
    l
}

/// What reading a file with spans gives: its lines (or the error), its blank lines and the line
/// number of its torn last line.
type Read<T> = (
    Result<Vec<(LineSpan, T)>, ResultsError>,
    usize,
    Option<usize>,
);

/// Every line of `bytes` with its span, and what the reader says of the file after them.
fn spans<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Read<T> {
    let mut r = JsonlReader::<_, T>::new(bytes, "e.jsonl");
    let lines = r.spanned().collect();
    (lines, r.blank_lines(), r.torn().map(|t| t.line))
}

#[test]
fn each_line_is_found_again_at_its_span() {
    let a = serde_json::to_string(&line("a", None)).unwrap();
    let b = serde_json::to_string(&line("b", Some(3))).unwrap();
    // A blank line, a line written otherwise than this build writes it, and a torn last line.
    let reordered = a.replacen(&format!("{{\"format\":{FORMAT_VERSION},"), "{", 1);
    let reordered = format!(
        "{},\"format\":{FORMAT_VERSION}}}",
        &reordered[..reordered.len() - 1]
    );
    let text = format!("{a}\n\n  {b}  \n{reordered}\n{}", &a[..a.len() / 2]);
    let (lines, blank, torn) = spans::<ResultLine>(text.as_bytes());
    let lines = lines.unwrap();
    assert_eq!((blank, torn), (1, Some(5)));
    let numbers: Vec<usize> = lines.iter().map(|(s, _)| s.line).collect();
    assert_eq!(numbers, [1, 3, 4]);
    let current: Vec<bool> = lines.iter().map(|(s, _)| s.current).collect();
    assert_eq!(current, [true, true, false]);
    for (span, l) in &lines {
        let at = &text.as_bytes()[span.offset as usize..span.offset as usize + span.len];
        assert!(at.ends_with(b"\n"), "{span:?}");
        let again: ResultLine = parse_line(at, Path::new("e.jsonl"), span.line).unwrap();
        assert_eq!(&again, l);
    }
    assert_eq!(lines[1].1.key(), key("b", Some(3)));
}

#[test]
fn the_key_alone_is_read_from_either_file() {
    let episode = line("a", Some(4));
    let trajectory = TrajectoryLine::empty(&episode.key());
    for text in [
        serde_json::to_string(&episode).unwrap(),
        serde_json::to_string(&trajectory).unwrap(),
    ] {
        let k: LineKey = serde_json::from_str(&text).unwrap();
        assert_eq!((k.format, &k.key), (FORMAT_VERSION, &key("a", Some(4))));
    }
    // Format 1, as results folders written before format 2 have it.
    for name in ["format-1-episodes.jsonl", "format-1-trajectories.jsonl"] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        let (keys, _, torn) = spans::<LineKey>(&bytes);
        let keys = keys.unwrap();
        assert!(!keys.is_empty() && torn.is_none(), "{name}");
        assert!(
            keys.iter().all(|(s, k)| k.format == 1 && !s.current),
            "{name}"
        );
        let expected: Vec<EpisodeKey> = if name.contains("episodes") {
            let whole = traparena_results::read_lines::<ResultLine>(&fixture(name)).unwrap();
            whole.lines.iter().map(ResultLine::key).collect()
        } else {
            let whole = traparena_results::read_lines::<TrajectoryLine>(&fixture(name)).unwrap();
            whole.lines.into_iter().map(|t| t.key).collect()
        };
        let read: Vec<EpisodeKey> = keys.into_iter().map(|(_, k)| k.key).collect();
        assert_eq!(read, expected, "{name}");
    }
    // The key's rules are the whole line's.
    for (bad, says) in [
        (
            r#"{"target":"","condition":"c","task":"t","round":0,"sample":0}"#,
            "`target` is empty",
        ),
        (
            r#"{"format":2,"target":"m","condition":"c","task":"t","round":0,"sample":0,"fork":{"step":1,"message":true}}"#,
            "`fork` is a field of format 3",
        ),
        (
            r#"{"format":0,"target":"m","condition":"c","task":"t","round":0,"sample":0}"#,
            "`format` 0",
        ),
    ] {
        let e = serde_json::from_str::<LineKey>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn a_newer_line_is_newer_format_however_it_is_read() {
    let ok = serde_json::to_string(&line("a", None)).unwrap();
    let newer = ok.replacen(
        &format!("\"format\":{FORMAT_VERSION}"),
        &format!("\"format\":{}", FORMAT_VERSION + 1),
        1,
    );
    let text = format!("{ok}\n{newer}\n");
    let newer_at = |e: ResultsError| {
        assert!(
            matches!(e, ResultsError::NewerFormat { line: Some(2), found, .. } if found == u64::from(FORMAT_VERSION) + 1),
            "{e:?}"
        );
        assert!(
            e.to_string().contains("e.jsonl: line 2: format 4 is newer"),
            "{e}"
        );
    };
    newer_at(spans::<ResultLine>(text.as_bytes()).0.unwrap_err());
    newer_at(spans::<LineKey>(text.as_bytes()).0.unwrap_err());
    newer_at(parse_line::<TrajectoryLine>(newer.as_bytes(), Path::new("e.jsonl"), 2).unwrap_err());
    // Any other bad line is a Line error without the parser's position in its message.
    let e = parse_line::<LineKey>(b"[1, 2]", Path::new("e.jsonl"), 7).unwrap_err();
    assert!(matches!(e, ResultsError::Line { line: 7, .. }), "{e:?}");
    assert!(!e.to_string().contains("at line 1"), "{e}");
}

#[test]
fn a_reader_of_a_file_on_disk_reads_spans_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.jsonl");
    let a = serde_json::to_string(&line("a", None)).unwrap();
    std::fs::write(&path, format!("{a}\n{a}\n")).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let mut r = JsonlReader::<_, LineKey>::new(BufReader::new(file), &path);
    let offsets: Vec<u64> = r.spanned().map(|l| l.unwrap().0.offset).collect();
    assert_eq!(offsets, [0, a.len() as u64 + 1]);
}

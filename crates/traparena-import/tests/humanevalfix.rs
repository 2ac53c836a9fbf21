//! The HumanEvalFix importer on the real data set (`$TRAPARENA_DATA_DIR/humanevalfix`): every record is
//! emitted as a valid task or skipped with a reason, and the gold agent is accepted on every
//! emitted task. Plus small hand-written records for the edge cases.
//!
//! The data-set test imports a seeded sample that covers every bug type
//! ([`SAMPLE_PER_BUG_TYPE`] records of each); `TRAPARENA_TEST_FULL_DATA=1` imports all 164
//! records (ARCHITECTURE.md, Testing).

// This test code reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use traparena_env::{Sandbox, SandboxConfig};
use traparena_import::{HumanEvalFixOptions, ImportError, import_humanevalfix};
use traparena_task::Task;

/// `$TRAPARENA_DATA_DIR/<rel>`: data kept outside the repository (ARCHITECTURE.md, "Testing").
fn data_file(rel: &str) -> PathBuf {
    let dir = std::env::var_os("TRAPARENA_DATA_DIR")
        .expect("set TRAPARENA_DATA_DIR (ARCHITECTURE.md, Testing)");
    PathBuf::from(dir).join(rel)
}

fn data() -> PathBuf {
    data_file("humanevalfix/humanevalpack_python.jsonl")
}

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig::default()).unwrap()
}

/// Runs the gold agent on `task` (a full episode) and returns whether it was accepted.
fn gold_accepted(task: &Task, sb: &Sandbox) -> (bool, String) {
    let episode = traparena_runner::Episode::builder(task)
        .sandbox(sb.clone())
        .build()
        .unwrap();
    let mut agent = traparena_agent::GoldAgent::new(task).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let record = rt.block_on(episode.run(&mut agent, None)).unwrap();
    (
        record.accepted,
        format!("{:?} {:?}", record.failure_mode, record.verdict),
    )
}

#[test]
#[ignore = "needs TRAPARENA_DATA_DIR holding humanevalfix/humanevalpack_python.jsonl (HumanEvalPack); see ARCHITECTURE.md, Testing"]
fn the_records_import_validate_and_the_gold_agent_is_accepted_on_every_task() {
    let sb = sandbox();
    let out = tempfile::tempdir().unwrap();
    let (chosen, all) = records_to_import();
    let started = Instant::now();
    let options = HumanEvalFixOptions {
        records: chosen.clone(),
        ..HumanEvalFixOptions::default()
    };
    let report = import_humanevalfix(&data(), out.path(), &sb, &options).unwrap();
    let import_time = started.elapsed();
    println!("{}", report.text());
    let n = if chosen.is_empty() { all } else { chosen.len() };
    assert_eq!(all, 164);
    assert_eq!(report.records, n);
    assert_eq!(report.emitted.len() + report.skipped.len(), n);
    assert!(report.validated);
    for s in &report.skipped {
        assert!(!s.detail.is_empty(), "{s:?}");
    }
    // Most records become tasks (the paper used 60 of them; 110 of 164 is the floor).
    assert!(
        report.emitted.len() * 164 >= 110 * n,
        "{}",
        report.summary()
    );
    // The report files are written.
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join(traparena_import::REPORT_JSON)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        json["emitted"].as_array().unwrap().len(),
        report.emitted.len()
    );
    assert!(out.path().join(traparena_import::REPORT_TEXT).is_file());

    // Every emitted task loads, keeps its secrets out of repo/, and the gold agent is accepted.
    let tasks: Vec<Task> = report
        .emitted
        .iter()
        .map(|e| Task::load(out.path().join(&e.id)).unwrap())
        .collect();
    for t in &tasks {
        assert_eq!(t.spec.source, "humanevalfix");
        assert!(!t.repo_dir().join("hidden_tests").exists());
        assert!(t.spec.public_tests.files.len() == 1);
        assert!(t.spec.reference_locations.is_some(), "{}", t.spec.id);
    }
    let started = Instant::now();
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(t) = tasks.get(i) else { break };
                    let (ok, why) = gold_accepted(t, &sb);
                    if !ok {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{}: {why}", t.spec.id));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "gold rejected on:\n{}",
        failures.join("\n")
    );
    println!(
        "import + validation: {:.1} s; gold episodes on {} tasks: {:.1} s",
        import_time.as_secs_f64(),
        tasks.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Records of each bug type in the sample.
const SAMPLE_PER_BUG_TYPE: usize = 5;

/// The records the data-set test imports (empty: all of them, under `TRAPARENA_TEST_FULL_DATA=1`)
/// and how many the data set holds. The sample takes [`SAMPLE_PER_BUG_TYPE`] records of every
/// bug type, chosen by a ChaCha stream with a fixed seed, so that every kind of bug (and so of
/// reference location and test) is imported in every run and the same records in each.
fn records_to_import() -> (Vec<String>, usize) {
    use rand_chacha::ChaCha8Rng;
    use rand_core::{Rng, SeedableRng};
    let text = std::fs::read_to_string(data()).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    if std::env::var_os("TRAPARENA_TEST_FULL_DATA").is_some_and(|v| v == "1") {
        return (Vec::new(), records.len());
    }
    let mut rng = ChaCha8Rng::seed_from_u64(40);
    let mut by_type: std::collections::BTreeMap<String, Vec<(u64, String)>> = Default::default();
    for r in &records {
        by_type
            .entry(r["bug_type"].as_str().unwrap().to_owned())
            .or_default()
            .push((rng.next_u64(), r["task_id"].as_str().unwrap().to_owned()));
    }
    assert_eq!(by_type.len(), 6, "HumanEvalFix's six bug types");
    let mut chosen = Vec::new();
    for mut ids in by_type.into_values() {
        ids.sort();
        chosen.extend(ids.into_iter().take(SAMPLE_PER_BUG_TYPE).map(|(_, id)| id));
    }
    (chosen, records.len())
}

fn record(task_id: &str, entry: &str, buggy: &str, canonical: &str, test: &str) -> String {
    serde_json::json!({
        "task_id": task_id,
        "prompt": format!("def {entry}(x):\n    \"\"\"Doubles x.\"\"\"\n"),
        "buggy_solution": buggy,
        "canonical_solution": canonical,
        "test": test,
        "entry_point": entry,
        "bug_type": "operator misuse",
        "failure_symptoms": "incorrect output",
        "signature": format!("{entry}(x)"),
        "docstring": "Doubles x.",
        "instruction": "ignored",
    })
    .to_string()
}

#[test]
fn edge_cases_are_skipped_with_reasons_and_loops_are_contained() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("records.jsonl");
    let lines = [
        // A normal record: 0 and 2 pass on the buggy code, 3 does not.
        record(
            "Python/0",
            "double",
            "    return x * x\n",
            "    return x + x\n",
            "def check(double):\n    assert double(0) == 0\n    assert double(2) == 4\n    assert double(3) == 6\n\ncheck(double)\n",
        ),
        // An infinite loop on every input but 0.
        record(
            "Python/1",
            "spin",
            "    while x != 0:\n        pass\n    return 0\n",
            "    return x + x\n",
            "def check(spin):\n    assert spin(0) == 0\n    assert spin(5) == 10\n\ncheck(spin)\n",
        ),
        // Nothing passes on the buggy code.
        record(
            "Python/2",
            "broken",
            "    return None\n",
            "    return x + x\n",
            "def check(broken):\n    assert broken(1) == 2\n    assert broken(2) == 4\n\ncheck(broken)\n",
        ),
        // The only assertion is randomised.
        record(
            "Python/3",
            "rand",
            "    return x + 1\n",
            "    return x + x\n",
            "def check(rand):\n    import random\n    for _ in range(5):\n        x = random.randint(1, 9)\n        assert rand(x) == 2 * x\n\ncheck(rand)\n",
        ),
        // No check function.
        record(
            "Python/4",
            "nocheck",
            "    return x + 1\n",
            "    return x + x\n",
            "def test(f):\n    assert f(1) == 2\n",
        ),
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = tmp.path().join("out");
    let started = Instant::now();
    let opts = HumanEvalFixOptions {
        assertion_timeout: Duration::from_millis(500),
        timeout_s: 3,
        ..Default::default()
    };
    let report = import_humanevalfix(&input, &out, &sandbox(), &opts).unwrap();
    println!("{}", report.text());
    assert!(started.elapsed() < Duration::from_secs(60));
    let emitted: Vec<&str> = report.emitted.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(emitted, ["humanevalfix_0", "humanevalfix_1"]);
    let reasons: Vec<(&str, &str)> = report
        .skipped
        .iter()
        .map(|s| (s.record.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("Python/2", "no assertion passes on the buggy code"),
            ("Python/3", "no assertion can serve as a public test"),
            ("Python/4", "the test has no usable check(candidate)"),
        ]
    );
    let t = Task::load(out.join("humanevalfix_0")).unwrap();
    let public = std::fs::read_to_string(t.repo_dir().join("tests/test_double.py")).unwrap();
    assert!(public.contains("double(0) == 0"), "{public}");
    assert!(public.contains("double(2) == 4"), "{public}");
    assert!(!public.contains("double(3) == 6"), "{public}");
    assert_eq!(
        t.spec.metadata["public_assertions"],
        serde_json::json!([1, 2])
    );
    assert!(t.spec.description.contains("Doubles x."));
    // Only the skipped records' folders are absent; no partial folders are left behind.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");

    // Importing again replaces the tasks.
    let again = import_humanevalfix(&input, &out, &sandbox(), &opts).unwrap();
    assert_eq!(again.emitted.len(), 2);
}

#[test]
fn bad_input_is_an_error_that_names_the_line() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("bad.jsonl");
    let good = record(
        "Python/0",
        "f",
        "    return 1\n",
        "    return 2\n",
        "def check(f):\n    assert f(0) == 2\n",
    );
    std::fs::write(&input, format!("{good}\n{{not json\n")).unwrap();
    let err = import_humanevalfix(
        &input,
        &tmp.path().join("o"),
        &sandbox(),
        &Default::default(),
    )
    .unwrap_err();
    assert!(err.is_bad_input());
    assert!(err.to_string().contains("bad.jsonl:2:"), "{err}");
    std::fs::write(&input, "{\"task_id\": \"Python/0\"}\n").unwrap();
    let err = import_humanevalfix(
        &input,
        &tmp.path().join("o"),
        &sandbox(),
        &Default::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("missing field"), "{err}");
    let err = import_humanevalfix(
        &tmp.path().join("missing.jsonl"),
        &tmp.path().join("o"),
        &sandbox(),
        &Default::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ImportError::Input(_)), "{err}");
    // An output path that is a file.
    std::fs::write(tmp.path().join("file"), "x").unwrap();
    std::fs::write(&input, format!("{good}\n")).unwrap();
    let err = import_humanevalfix(
        &input,
        &tmp.path().join("file"),
        &sandbox(),
        &Default::default(),
    )
    .unwrap_err();
    assert!(err.is_bad_input(), "{err}");
}

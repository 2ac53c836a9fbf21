//! Environments resolved as of a date: real `python -m venv` and `pip install` reading a
//! package index through the [`DatedIndex`], in front of a scripted index on loopback that
//! serves PEP 691 pages whose files lie in a local folder.

// This test code drives real processes and reads where its prepared data lies.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use traparena_pyenv::{BuildOptions, PinEntry, PyEnvError, ensure_env, setup_for};
use traparena_testkit::stub::{Reply, StubServer};

/// Wheels of `tpdated` 1.0 (uploaded in 2020) and 2.0 (in 2025) in `dir`.
fn two_releases(dir: &Path) {
    let script = r#"
import sys, zipfile
for v in ("1.0", "2.0"):
    with zipfile.ZipFile(f"{sys.argv[1]}/tpdated-{v}-py3-none-any.whl", "w") as z:
        z.writestr("tpdated/__init__.py", f"VERSION = {v!r}\n")
        di = f"tpdated-{v}.dist-info"
        z.writestr(f"{di}/METADATA", f"Metadata-Version: 2.1\nName: tpdated\nVersion: {v}\n")
        z.writestr(f"{di}/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{di}/RECORD", "")
"#;
    let out = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// A PEP 691 index of `tpdated` whose files are the wheels in `dir`; other projects are 404.
fn index(dir: &Path) -> StubServer {
    let file = |v: &str, at: &str| {
        json!({"filename": format!("tpdated-{v}-py3-none-any.whl"),
               "url": format!("file://{}/tpdated-{v}-py3-none-any.whl", dir.display()),
               "hashes": {}, "requires-python": ">=3.6", "upload-time": at, "yanked": false})
    };
    let page = json!({"meta": {"api-version": "1.1"}, "name": "tpdated", "files": [
        file("1.0", "2020-05-01T10:00:00.000000Z"),
        file("2.0", "2025-05-01T10:00:00.000000Z"),
    ]});
    StubServer::serve(move |req| match req.path.as_str() {
        "/v1/simple/tpdated/" => Reply::Full {
            status: 200,
            headers: vec![(
                "Content-Type".into(),
                "application/vnd.pypi.simple.v1+json".into(),
            )],
            body: page.to_string(),
        },
        _ => Reply::raw(404, "not found"),
    })
}

fn options(upstream: &str) -> BuildOptions {
    BuildOptions {
        env: vec![
            ("PIP_INDEX_URL".into(), upstream.to_owned()),
            ("HOME".into(), "/tmp".into()),
        ],
        timeout: Duration::from_secs(300),
    }
}

fn entry(as_of: Option<&str>) -> PinEntry {
    serde_json::from_value(json!({
        "python": "/usr/bin/python3",
        "packages": ["tpdated"],
        "resolved_as_of": as_of,
    }))
    .unwrap()
}

/// The version of `tpdated` the environment holds.
fn installed(venv: &Path) -> String {
    let out = Command::new(venv.join("bin/python"))
        .args(["-c", "import tpdated; print(tpdated.VERSION)"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn an_environment_resolved_as_of_a_date_holds_the_release_of_that_date() {
    let dir = tempfile::tempdir().unwrap();
    two_releases(dir.path());
    let stub = index(dir.path());
    let upstream = format!("{}/simple/", stub.base_url());
    let cache = dir.path().join("venvs");

    let dated = setup_for("example/tpdated@1", &entry(Some("2024-08-13")), &cache);
    assert_eq!(
        dated.resolved_as_of.map(|c| c.to_string()).as_deref(),
        Some("2024-08-13T00:00:00Z")
    );
    ensure_env(&dated, &options(&upstream)).unwrap();
    assert_eq!(installed(&dated.venv), "1.0");
    // pip read the page through the dated index, which asked for the JSON form.
    let asked: Vec<_> = stub
        .received()
        .into_iter()
        .filter(|r| r.path == "/v1/simple/tpdated/")
        .collect();
    assert!(!asked.is_empty());
    assert!(
        asked
            .iter()
            .all(|r| r.header("accept") == Some("application/vnd.pypi.simple.v1+json")),
        "{asked:?}"
    );

    // The same packages resolved from the index as it is: another folder, the newer release.
    let today = setup_for("example/tpdated@1", &entry(None), &cache);
    assert_ne!(today.venv, dated.venv);
    ensure_env(&today, &options(&upstream)).unwrap();
    assert_eq!(installed(&today.venv), "2.0");
}

#[test]
fn a_pin_newer_than_the_cutoff_is_not_found_and_an_index_without_json_is_named() {
    let dir = tempfile::tempdir().unwrap();
    two_releases(dir.path());
    let stub = index(dir.path());
    let upstream = format!("{}/simple/", stub.base_url());
    let cache = dir.path().join("venvs");
    let mut pinned = entry(Some("2024-08-13"));
    pinned.packages = vec!["tpdated==2.0".into()];
    let e = ensure_env(
        &setup_for("example/tpdated@2", &pinned, &cache),
        &options(&upstream),
    )
    .unwrap_err();
    assert!(matches!(e, PyEnvError::Build { .. }), "{e}");
    assert!(e.to_string().contains("tpdated==2.0"), "{e}");

    // An index that serves HTML pages only cannot be dated: the build's error says so, with
    // pip's failure as its source.
    let html = StubServer::serve(|_| Reply::raw(200, "<html></html>"));
    let e = ensure_env(
        &setup_for("example/tpdated@1", &entry(Some("2024-08-13")), &cache),
        &options(&format!("{}/simple/", html.base_url())),
    )
    .unwrap_err();
    let PyEnvError::Build { source, .. } = &e else {
        panic!("{e}")
    };
    let text = source.to_string();
    assert!(
        matches!(**source, PyEnvError::DatedIndex { .. })
            && text.contains("does not serve PEP 691 JSON pages")
            && text.contains("/simple/tpdated/"),
        "{text}"
    );
    let pip = std::error::Error::source(&**source).map(|s| s.to_string());
    assert!(pip.is_some_and(|p| p.contains("tpdated")), "{e:?}");
}

//! Snapshots of the three renderings of the committed sample results folder
//! (`examples/results/synthetic`): the Markdown, the JSON and the HTML page, byte for byte. A change
//! to any of them shows up here as a diff to review (`cargo insta review`, or
//! `INSTA_UPDATE=always cargo test -p traparena-report --test snapshots` to accept).

use std::path::Path;

use traparena_report::{Report, ReportOptions, report_folder};

/// The synthetic report, with the folder named as a user in the repository would name it (the
/// tests run in the crate's folder).
fn synthetic() -> Report {
    let dir = Path::new("../../examples/results/synthetic");
    assert!(
        dir.join("episodes.jsonl").is_file(),
        "run the tests from the crate folder (cargo does)"
    );
    report_folder(dir, &ReportOptions::default()).unwrap()
}

#[test]
fn markdown() {
    insta::assert_snapshot!("synthetic.md", synthetic().to_markdown());
}

#[test]
fn json() {
    insta::assert_snapshot!("synthetic.json", synthetic().to_json().unwrap());
}

#[test]
fn html() {
    insta::assert_snapshot!("synthetic.html", synthetic().to_html());
}

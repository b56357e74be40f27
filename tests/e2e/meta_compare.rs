//! `compare` of two metadata results: a row per operation and figure with
//! the ratio and change to the first (the metadata-caching study's layout).

use crate::common::{run, stderr, stdout};
use volbench::error::exit;

#[test]
fn compare_of_metadata_results_shows_each_operation_and_its_change() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    for out in ["without", "with"] {
        let o = run(&[
            "run",
            "--target",
            &p("tree"),
            "--output",
            &p(out),
            "--ops",
            "create,stat,delete",
            "--depth",
            "0",
            "--files-per-dir",
            "300",
            "--file-size",
            "0",
        ]);
        assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    }
    let html = p("cmp.html");
    let o = run(&["compare", &p("without"), &p("with"), "-o", &html]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Per operation"), "{text}");
    for op in ["create", "stat", "delete"] {
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(&format!(" {op} ")) && l.contains('%'))
            .collect();
        // ops/s, mean and p99 latency, each with its ratio and change.
        assert_eq!(rows.len(), 3, "{op}: {text}");
        assert!(
            text.contains(&format!("{op} {op}: ops/s ")),
            "{op} headline: {text}"
        );
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Per operation") && page.contains("change"));
}

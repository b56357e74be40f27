//! `volbench quick`: the README's first command.

use crate::common::*;
use volbench::error::exit;

#[test]
fn quick_runs_the_six_patterns_and_leaves_no_files() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = volbench()
        .args([
            "quick",
            "--duration",
            "300ms",
            "--size",
            "16m",
            "--output",
            out.to_str().unwrap(),
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    let names: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "8k-random-read",
            "8k-random-write",
            "8k-random-50-50",
            "64k-seq-read",
            "64k-seq-write",
            "64k-seq-50-50"
        ]
    );
    let table = stdout(&o);
    assert!(
        table.contains("read IOPS") && table.contains("write MiB/s"),
        "{table}"
    );
    for run in doc["runs"].as_array().unwrap() {
        let ops = run["totals"]["read"]["ops"].as_u64().unwrap()
            + run["totals"]["write"]["ops"].as_u64().unwrap();
        assert!(ops > 0, "{} did no I/O", run["name"]);
    }
    // Only the output directory is left: the temporary file set is gone.
    let left: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["out"]);
}

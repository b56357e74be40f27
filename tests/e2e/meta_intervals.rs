//! A weighted metadata mix reports each operation's rate per interval, in
//! result.json and as a chart in the report.

use crate::common::{read_json, run, stderr};
use volbench::error::exit;

#[test]
fn a_mix_has_per_operation_intervals_that_add_up_to_its_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let o = run(&[
        "run",
        "--target",
        &p("tree"),
        "--output",
        &p("out"),
        "--ops",
        "stat:50,read:30,create:10,delete:10",
        "--depth",
        "1",
        "--width",
        "2",
        "--files-per-dir",
        "200",
        "--file-size",
        "1k",
        "--threads",
        "2",
        "--duration",
        "1500ms",
        "--warmup",
        "0s",
        "--interval",
        "250ms",
    ]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let doc = read_json(&tmp.path().join("out/result.json"));
    let r = &doc["runs"][0];
    let intervals = r["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 4, "{}", intervals.len());
    let names = ["stat", "read", "create", "delete"];
    let mut counted = [0.0f64; 4];
    for iv in intervals {
        let secs = iv["duration_s"].as_f64().unwrap();
        let ops = iv["ops"].as_array().unwrap();
        let got: Vec<&str> = ops.iter().map(|o| o["op"].as_str().unwrap()).collect();
        assert_eq!(got, names, "one entry per operation of the mix");
        // The operations add up to the interval's look/change classes.
        let each: f64 = ops.iter().map(|o| o["iops"].as_f64().unwrap()).sum();
        let classes = iv["read"]["iops"].as_f64().unwrap() + iv["write"]["iops"].as_f64().unwrap();
        assert!(
            (each - classes).abs() <= 1e-6 * classes.max(1.0),
            "{each} vs {classes}"
        );
        for (k, o) in ops.iter().enumerate() {
            counted[k] += o["iops"].as_f64().unwrap() * secs;
        }
    }
    // And over the run, to each operation's total count, less at most the
    // one operation each thread had in hand when the measured phase ended:
    // the collector moves the phase on before its last reading, so however
    // long it is descheduled there, nothing else falls between. (Against the
    // run's rate over the tail instead, a loaded machine failed it: the rate
    // of a sub-millisecond tail is no average's.)
    let threads = 2.0;
    for (k, name) in names.iter().enumerate() {
        let total = r["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["op"] == *name)
            .map_or(0, |o| o["totals"]["ops"].as_u64().unwrap());
        assert!(total > 0, "{name} ran");
        assert!(
            counted[k] <= total as f64 + 0.5 && counted[k] >= total as f64 - threads - 0.5,
            "{name}: intervals {} vs total {total}",
            counted[k]
        );
    }
    let html = std::fs::read_to_string(tmp.path().join("out/report.html")).unwrap();
    assert!(html.contains("ops/s per interval, per operation"));
}

//! End-to-end: each I/O thread's own figures in result.json
//! (`runs[].threads[]`) and `report --per-thread`, diskspd -L's table: the
//! threads add up to the run's totals exactly, a target list labels each
//! thread's target, a tampered row is refused when the file is read back.

use std::path::Path;

use serde_json::Value;
use volbench::error::exit;

use crate::common::*;

fn run_to(dir: &Path, target: &str, extra: &[&str]) -> Value {
    let out = dir.join("out");
    let mut args = vec![
        "run",
        "--target",
        target,
        "--size",
        "16m",
        "--engine",
        "psync",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--quiet",
        "--output",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    vb(args).expect(exit::OK);
    read_json(&out.join("result.json"))
}

/// The threads' operations and bytes add up to the run's, exactly.
fn assert_threads_add_up(run: &Value, n: usize) {
    let threads = run["threads"].as_array().expect("runs[].threads[]");
    assert_eq!(threads.len(), n, "{}", run["threads"]);
    assert!(run.get("threads_left_out").is_none());
    for op in ["read", "write"] {
        let sum = |k: &str| -> u64 { threads.iter().map(|t| t[op][k].as_u64().unwrap()).sum() };
        for k in ["ops", "bytes"] {
            assert_eq!(sum(k), run["totals"][op][k].as_u64().unwrap(), "{op} {k}");
        }
    }
    for t in threads {
        // Each thread's latency from its own histogram: a mean within its
        // own min..max, percentiles in order.
        let l = &t["read"]["lat_us"];
        let f = |k: &str| l[k].as_f64().unwrap();
        assert!(f("min") <= f("mean") && f("mean") <= f("max"), "{l}");
        assert!(f("p50") <= f("p99") && f("p99") <= f("max") * 1.01, "{l}");
    }
}

#[test]
fn each_threads_figures_add_up_to_the_totals_and_report_prints_them() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let doc = run_to(
        d.path(),
        t.to_str().unwrap(),
        &["--rw", "randrw", "--threads", "3"],
    );
    let run = &doc["runs"][0];
    assert_threads_add_up(run, 3);
    let numbers: Vec<u64> = run["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [0, 1, 2]);
    assert!(run["threads"][0].get("host").is_none() && run["threads"][0].get("target").is_none());

    let out = d.path().join("out");
    let o = vb(["report", "--per-thread", out.to_str().unwrap()]).expect(exit::OK);
    let text = stdout(&o);
    assert!(text.contains("per thread"), "{text}");
    // Three threads and the total, each with a read and a write row.
    let rows = |who: &str| {
        text.lines()
            .filter(|l| {
                l.split('┆')
                    .next()
                    .is_some_and(|c| c.trim_start_matches('│').trim() == who)
            })
            .count()
    };
    for who in ["0", "1", "2", "total"] {
        assert_eq!(rows(who), 2, "{who}: {text}");
    }
    assert!(text.contains("add up to the totals"), "{text}");
    assert!(!text.contains("host"), "one host: no host column: {text}");
    let o = vb([
        "report",
        "--per-thread",
        "--format",
        "md",
        out.to_str().unwrap(),
    ])
    .expect(exit::OK);
    let md = stdout(&o);
    assert!(md.contains("| thread | op | ops | MiB | IOPS |"), "{md}");
    assert!(md.contains("| total | read |"), "{md}");
}

#[test]
fn a_target_list_labels_each_threads_target() {
    let d = tempfile::tempdir().unwrap();
    let list = format!("{}/{{a,b}}", d.path().display());
    let doc = run_to(d.path(), &list, &["--rw", "randread", "--threads", "2"]);
    let run = &doc["runs"][0];
    assert_threads_add_up(run, 4);
    let labels: Vec<(u64, u64)> = run["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["target"].as_u64().unwrap(), t["thread"].as_u64().unwrap()))
        .collect();
    assert_eq!(labels, [(0, 0), (0, 1), (1, 0), (1, 1)]);
    let o = vb([
        "report",
        "--per-thread",
        d.path().join("out").to_str().unwrap(),
    ])
    .expect(exit::OK);
    assert!(stdout(&o).contains("target"), "{}", stdout(&o));
}

#[test]
fn a_tampered_thread_row_or_too_many_are_refused_when_read_back() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let doc = run_to(
        d.path(),
        t.to_str().unwrap(),
        &["--rw", "randread", "--threads", "2"],
    );
    let path = d.path().join("out").join("result.json");
    let report = |doc: &Value| {
        std::fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
        vb(["report", "--per-thread", path.to_str().unwrap()]).output()
    };
    // One operation taken from a thread: the threads no longer add up.
    let mut bad = doc.clone();
    let row = &mut bad["runs"][0]["threads"][0]["read"];
    let secs = doc["runs"][0]["phases"][0]["duration_s"].as_f64().unwrap();
    let ops = row["ops"].as_u64().unwrap() - 1;
    row["ops"] = ops.into();
    row["bytes"] = (ops * 4096).into();
    row["iops"] = (ops as f64 / secs).into();
    row["mib_s"] = (ops as f64 * 4096.0 / 1048576.0 / secs).into();
    let o = report(&bad);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(stderr(&o).contains("are not the run's"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1);
    // More rows than any result keeps.
    let mut many = doc.clone();
    let one = many["runs"][0]["threads"][0].clone();
    many["runs"][0]["threads"] = Value::Array(vec![one; 1025]);
    let o = report(&many);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1025 per-thread rows"),
        "{}",
        stderr(&o)
    );
    // A result written before threads were kept still reads, and says so.
    let mut old = doc.clone();
    old["runs"][0].as_object_mut().unwrap().remove("threads");
    let o = report(&old);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("no per-thread figures"),
        "{}",
        stdout(&o)
    );
    // A view the table cannot be is refused in one line.
    let o = vb([
        "report",
        "--per-thread",
        "--format",
        "json",
        path.to_str().unwrap(),
    ])
    .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("runs[].threads[]"), "{}", stderr(&o));
}

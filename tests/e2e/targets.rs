//! Per-target breakdown (issue 12), one model for local target lists and
//! multi-host runs: each target's own figures kept in result.json
//! (`runs[].targets[]`), checked when read back, older shapes still read,
//! shown in the report and its exports, and a target well below its
//! siblings named.

use std::path::Path;

use serde_json::json;
use volbench::report::fixtures;
use volbench::result::ResultDoc;
use volbench::result::check::{check_doc, parse_result};
use volbench::result::diagnosis::{Confidence, Kind, diagnose};

use crate::common::{run, stderr, stdout, write_result};

const MIB: u64 = 1 << 20;

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_target_well_below_its_siblings_is_named_with_host_and_path() {
    let d = fixtures::multi_target(&[&[1000.0, 1000.0, 1000.0], &[1000.0, 300.0, 1050.0]]);
    let f = diagnose(&d);
    let slow: Vec<_> = f.iter().filter(|f| f.kind == Kind::SlowTarget).collect();
    assert_eq!(slow.len(), 1, "{f:#?}");
    assert!(
        slow[0].message.contains("/mnt/t1 on client-2"),
        "{}",
        slow[0].message
    );
    assert_eq!(slow[0].confidence, Confidence::High, "below half");
    assert!((slow[0].figures["percent"] - 29.3).abs() < 0.1, "{slow:#?}");
    assert_eq!(slow[0].runs, vec!["8k-random-read"]);
}

#[test]
fn siblings_within_the_usual_spread_name_no_target() {
    let d = fixtures::multi_target(&[&[1000.0, 850.0], &[900.0, 1000.0, 800.0]]);
    let f = diagnose(&d);
    assert!(f.iter().all(|f| f.kind != Kind::SlowTarget), "{f:#?}");
    // One target per host: nothing to hold it against (a slow host is
    // slow_host's to name).
    let d = fixtures::multi_target(&[&[1000.0], &[200.0]]);
    assert!(diagnose(&d).iter().all(|f| f.kind != Kind::SlowTarget));
}

/// The result as JSON, changed by `edit`, read back as an untrusted file.
fn tampered(edit: impl FnOnce(&mut serde_json::Value)) -> Result<(), String> {
    let d = fixtures::multi_target(&[&[1000.0, 400.0], &[900.0, 1000.0]]);
    let mut v = serde_json::to_value(&d).unwrap();
    edit(&mut v["runs"][0]["targets"]);
    parse_result(&serde_json::to_vec(&v).unwrap()).map(drop)
}

#[test]
fn tampered_per_target_figures_are_refused() {
    let d = fixtures::multi_target(&[&[1000.0, 400.0], &[900.0, 1000.0]]);
    check_doc(&d).unwrap();
    assert!(tampered(|_| {}).is_ok());
    // A rate that does not agree with the target's operations and time.
    let e = tampered(|t| t[1]["read"]["iops"] = 4000.0.into()).unwrap_err();
    assert!(e.contains("does not agree"), "{e}");
    // Operations that no longer add up to the host's totals.
    let e = tampered(|t| {
        let ops = t[1]["read"]["ops"].as_u64().unwrap();
        let secs = t[1]["duration_s"].as_f64().unwrap();
        let bytes = t[1]["read"]["bytes"].as_u64().unwrap();
        t[1]["read"]["ops"] = (ops * 2).into();
        t[1]["read"]["bytes"] = (bytes * 2).into();
        t[1]["read"]["iops"] = ((ops * 2) as f64 / secs).into();
        t[1]["read"]["mib_s"] = ((bytes * 2) as f64 / MIB as f64 / secs).into();
    })
    .unwrap_err();
    assert!(e.contains("add up"), "{e}");
    // The same target twice, a target the host does not have, a host the
    // result does not have.
    let e = tampered(|t| t[1]["path"] = t[0]["path"].clone()).unwrap_err();
    assert!(e.contains("twice"), "{e}");
    let e = tampered(|t| t[1]["target"] = 7.into()).unwrap_err();
    assert!(e.contains("beyond its 2 targets"), "{e}");
    let e = tampered(|t| t[1]["host"] = "nowhere".into()).unwrap_err();
    assert!(e.contains("host 'nowhere'"), "{e}");
    // Results written before per-target figures were kept still load.
    let d = fixtures::multi_target(&[&[1000.0, 400.0], &[900.0, 1000.0]]);
    let mut v = serde_json::to_value(&d).unwrap();
    v["runs"][0].as_object_mut().unwrap().remove("targets");
    assert!(parse_result(&serde_json::to_vec(&v).unwrap()).is_ok());
}

/// Each target's (host, path, IOPS, MiB/s, mean, p99) as a result read
/// back says.
fn figures(d: &ResultDoc) -> Vec<(Option<String>, String, f64, f64, f64, f64)> {
    d.runs[0]
        .targets
        .iter()
        .map(|t| {
            let (r, w) = (&t.read, &t.write);
            (
                t.host.clone(),
                t.path.clone(),
                r.iops + w.iops,
                r.mib_s + w.mib_s,
                t.lat_us.mean,
                t.lat_us.p99,
            )
        })
        .collect()
}

#[test]
fn results_in_the_older_per_target_shapes_load_with_the_same_figures() {
    let d = fixtures::multi_target(&[&[1000.0, 400.0], &[900.0, 1000.0]]);
    let now = parse_result(&serde_json::to_vec(&d).unwrap()).unwrap();
    assert_eq!(figures(&now).len(), 4);
    // Multi-host, schema v1 as first written: `cluster.hosts[].target_runs[]`
    // naming their run, nothing under `runs[]`.
    let mut v = serde_json::to_value(&d).unwrap();
    let name = v["runs"][0]["name"].clone();
    let ts = v["runs"][0]["targets"].as_array().unwrap().clone();
    v["runs"][0].as_object_mut().unwrap().remove("targets");
    for h in v["cluster"]["hosts"].as_array_mut().unwrap() {
        let mine: Vec<serde_json::Value> = ts
            .iter()
            .filter(|t| t["host"] == h["name"])
            .map(|t| {
                json!({"run": name, "target": t["target"], "path": t["path"],
                    "duration_s": t["duration_s"], "read": t["read"],
                    "write": t["write"], "lat_us": t["lat_us"]})
            })
            .collect();
        h["target_runs"] = mine.into();
    }
    let old = parse_result(&serde_json::to_vec(&v).unwrap()).unwrap();
    assert_eq!(figures(&old), figures(&now));
    let f = diagnose(&old);
    assert!(
        f.iter()
            .any(|f| f.kind == Kind::SlowTarget && f.message.contains("/mnt/t1 on client-1")),
        "{f:#?}"
    );
    // A local target list as first written: each operation's short summary
    // (mean and p99), no duration of its own (the run's measured phase).
    let local: Vec<serde_json::Value> = ts
        .iter()
        .filter(|t| t["host"] == "client-1")
        .map(|t| {
            let op = |o: &serde_json::Value| {
                json!({"ops": o["ops"], "bytes": o["bytes"], "iops": o["iops"],
                    "mib_s": o["mib_s"], "lat_us_mean": o["lat_us"]["mean"],
                    "lat_us_p99": o["lat_us"]["p99"]})
            };
            json!({"path": t["path"], "kind": "file", "io_threads": 2,
                "read": op(&t["read"]), "write": op(&t["write"])})
        })
        .collect();
    // Its run is the merge of just those targets.
    let one = fixtures::multi_target(&[&[1000.0, 400.0]]);
    let mut w = serde_json::to_value(&one).unwrap();
    w.as_object_mut().unwrap().remove("cluster");
    w["runs"][0]["targets"] = local.into();
    let old = parse_result(&serde_json::to_vec(&w).unwrap()).unwrap();
    let mut want = figures(&now);
    want.truncate(2);
    for t in &mut want {
        t.0 = None;
    }
    assert_eq!(figures(&old), want);
    assert_eq!(old.runs[0].targets[1].io_threads, 2);
    let f = diagnose(&old);
    assert!(
        f.iter().any(|f| f.kind == Kind::SlowTarget
            && f.message.contains("slow target: /mnt/t1 did 400 IOPS")),
        "{f:#?}"
    );
}

#[test]
fn the_report_and_its_exports_break_a_run_down_by_target() {
    let tmp = tempfile::tempdir().unwrap();
    let mut d = fixtures::multi_target(&[&[1000.0, 1000.0], &[1000.0, 300.0]]);
    d.diagnosis = diagnose(&d);
    let dir = write_result(&tmp.path().join("mt"), &d);
    let o = run(&["report", p(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("id=\"targets\""));
    assert_eq!(
        html.matches("<svg class=\"chart\" data-kind=\"targets\"")
            .count(),
        1,
        "one chart per run"
    );
    // The slow target's bar and table cell carry its share.
    assert_eq!(html.matches(">30%<").count(), 2, "bar label and table cell");
    // Slashes are escaped in HTML text.
    assert!(html.contains("slow target: &#x2f;mnt&#x2f;t1 on client-2"));

    let o = run(&["report", p(&dir), "--format", "md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(md.contains("Per target"), "{md}");
    assert!(
        md.contains("| 8k-random-read | client-2 | /mnt/t1 |"),
        "{md}"
    );

    let o = run(&["report", p(&dir), "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    let rows: Vec<&str> = csv
        .lines()
        .filter(|l| l.ends_with("client-2:/mnt/t1"))
        .collect();
    assert_eq!(rows.len(), 1, "{csv}");
    assert!(rows[0].starts_with("8k-random-read,read,"), "{}", rows[0]);
    // A multi-host result of one target per host has no such section.
    let one = write_result(
        &tmp.path().join("one"),
        &fixtures::multi_host(&[1.0e3, 1.1e3]),
    );
    assert!(run(&["report", p(&one)]).status.success());
    let html = std::fs::read_to_string(one.join("report.html")).unwrap();
    assert!(!html.contains("id=\"targets\""));
}

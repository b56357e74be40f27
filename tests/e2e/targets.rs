//! Per-target breakdown of multi-host runs (issue 12): each host's targets'
//! own figures kept in result.json, checked when read back, shown in the
//! report and its exports, and a target well below its siblings named.

use std::path::Path;

use volbench::report::fixtures;
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
    edit(&mut v["cluster"]["hosts"][0]["target_runs"]);
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
    // The same target twice, and a target the host does not have.
    let e = tampered(|t| t[1]["target"] = 0.into()).unwrap_err();
    assert!(e.contains("twice"), "{e}");
    let e = tampered(|t| t[1]["target"] = 7.into()).unwrap_err();
    assert!(e.contains("target 7 of 2"), "{e}");
    // Results written before per-target figures were kept still load.
    let d = fixtures::multi_target(&[&[1000.0, 400.0], &[900.0, 1000.0]]);
    let mut v = serde_json::to_value(&d).unwrap();
    for h in v["cluster"]["hosts"].as_array_mut().unwrap() {
        h.as_object_mut().unwrap().remove("target_runs");
    }
    assert!(parse_result(&serde_json::to_vec(&v).unwrap()).is_ok());
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

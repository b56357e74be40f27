//! `compare PROFILE RESULT`: the headroom of a volume over production,
//! from a profile and a result built here, its figures checked; and the
//! profile or result that is not one refused with exit 2.

use std::path::{Path, PathBuf};

use crate::common::*;
use volbench::error::exit;
use volbench::report::fixtures::{RunFixture, doc};
use volbench::result::expect::Expectation;
use volbench::result::profile::{DeviceSummary, Figure, PROFILE_SCHEMA, Profile};
use volbench::spec::Pattern;

fn fig(mean: f64, p95: f64, peak: f64) -> Figure {
    Figure { mean, p95, peak }
}

/// Production on vdb: peaks at 2,300 IOPS (p95 2,100), 8 KiB, 70/30.
fn profile() -> Profile {
    Profile {
        schema: PROFILE_SCHEMA.into(),
        volbench: "test".into(),
        host: "prod1".into(),
        cpus: 2,
        interval_s: 1.0,
        duration_s: 60.0,
        devices: vec!["vdb".into()],
        summary: vec![DeviceSummary {
            name: "vdb".into(),
            active_intervals: 60,
            iops: fig(1500.0, 2100.0, 2300.0),
            // Peak MiB/s a little under 2,300 x 8 KiB: IOPS is the nearer limit.
            mib_s: fig(11.7, 16.0, 17.0),
            read_pct: fig(70.0, 72.0, 75.0),
            request_kib: fig(8.0, 8.0, 8.0),
            await_ms: fig(2.0, 3.1, 4.0),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn write_json(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

fn headroom(p: &Path, r: &Path, extra: &[&str], code: i32) -> serde_json::Value {
    let o = vb(["compare"])
        .arg(p)
        .arg(r)
        .arg("--json")
        .args(extra)
        .expect(code);
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn the_headroom_is_production_s_peak_against_the_run_that_resembles_it() {
    let d = tempfile::tempdir().unwrap();
    let p = write_json(
        &d.path().join("p.json"),
        &serde_json::to_string(&profile()).unwrap(),
    );
    // A 64 KiB sequential-write run gave more IOPS but is not production's
    // workload: the 8 KiB 70/30 run is the one held against it.
    let r = write_result(
        &d.path().join("r"),
        &doc(
            "vol",
            &[
                RunFixture::new("seqw", Pattern::Write, 0, 65536).perf(9000.0, 300.0),
                RunFixture::new("oltp", Pattern::Randrw, 70, 8192).perf(4900.0, 400.0),
            ],
        ),
    );
    let v = headroom(&p, &r, &[], exit::OK);
    assert_eq!(v["schema"], "volbench.headroom/v1");
    assert_eq!(v["measured"]["run"], "oltp");
    assert_eq!(v["measured"]["resembles"], true);
    let h = v["headroom"].as_f64().unwrap();
    // Against the p95 of production's intervals, not its one peak.
    assert!((h - 4900.0 / 2100.0).abs() < 0.01, "{v}");
    assert_eq!(v["production"]["yardstick"], "p95 of 60 busy intervals");
    assert_eq!(v["nearest"], "measured IOPS");
    let p99 = v["measured"]["p99_us"].as_f64().unwrap();
    // The fixture's tail: 4.5% of I/Os at 3x the mean, so p99 is about 1.2 ms.
    assert!((1000.0..1400.0).contains(&p99), "{v}");

    let o = vb(["compare"]).arg(&p).arg(&r).expect(exit::OK);
    let text = stdout(&o);
    assert!(
        text.contains("does 2,100 IOPS at the p95 of 60 busy intervals (peak 2,300)")
            && text.contains("8 KiB, 70/30"),
        "{text}"
    );
    assert!(
        text.contains("this volume gave 4,900 IOPS") && text.contains("2.3x headroom"),
        "{text}"
    );

    // Asked for 2.5x, it has 2.3x: exit 6, as compare's gate does.
    let v = headroom(&p, &r, &["--fail-below", "2.5"], exit::REGRESSION);
    assert_eq!(v["passed"], false);
    headroom(&p, &r, &["--fail-below", "2"], exit::OK);
}

#[test]
fn a_stated_limit_below_the_measured_one_is_the_nearest() {
    let d = tempfile::tempdir().unwrap();
    let p = write_json(
        &d.path().join("p.json"),
        &serde_json::to_string(&profile()).unwrap(),
    );
    let mut res = doc(
        "vol",
        &[RunFixture::new("oltp", Pattern::Randrw, 70, 8192).perf(4900.0, 400.0)],
    );
    res.expect = Some(Expectation {
        given: "iops=3000".into(),
        iops: Some(3000.0),
        ..Default::default()
    });
    let r = write_result(&d.path().join("r"), &res);
    let v = headroom(&p, &r, &[], exit::OK);
    assert_eq!(v["nearest"], "stated IOPS limit");
    assert!((v["headroom"].as_f64().unwrap() - 3000.0 / 2100.0).abs() < 0.01);
}

#[test]
fn a_run_unlike_production_is_compared_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let p = write_json(
        &d.path().join("p.json"),
        &serde_json::to_string(&profile()).unwrap(),
    );
    let r = write_result(
        &d.path().join("r"),
        &doc(
            "vol",
            &[RunFixture::new("reads", Pattern::Randread, 100, 65536).perf(3000.0, 400.0)],
        ),
    );
    let v = headroom(&p, &r, &[], exit::OK);
    assert_eq!(v["measured"]["resembles"], false);
    let why = v["differences"].to_string();
    assert!(why.contains("100/0") && why.contains("64 KiB"), "{why}");
    let o = vb(["compare"]).arg(&p).arg(&r).expect(exit::OK);
    assert!(stdout(&o).contains("does not resemble production"));
}

#[test]
fn a_newer_profile_or_a_result_that_is_not_one_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let r = write_result(
        &d.path().join("r"),
        &doc("vol", &[RunFixture::new("oltp", Pattern::Randrw, 70, 8192)]),
    );
    let newer = write_json(
        &d.path().join("newer.json"),
        r#"{"schema":"volbench.profile/v9","summary":[]}"#,
    );
    let o = vb(["compare"]).arg(&newer).arg(&r).expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("volbench.profile/v9"), "{}", stderr(&o));

    let p = write_json(
        &d.path().join("p.json"),
        &serde_json::to_string(&profile()).unwrap(),
    );
    let junk = write_json(&d.path().join("junk.json"), r#"{"hello": 1}"#);
    let o = vb(["compare"]).arg(&p).arg(&junk).expect(exit::BAD_INPUT);
    assert!(
        stderr(&o).contains("not a volbench result"),
        "{}",
        stderr(&o)
    );
    // Two profiles: nothing measured to compare with.
    let o = vb(["compare"]).arg(&p).arg(&p).expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("is a profile too"), "{}", stderr(&o));
}

/// `run --expect-from PROFILE` states what `compare PROFILE RESULT` states
/// over the same result: the same figures, in result.json, on the terminal
/// and as notes the report shows.
#[test]
fn a_run_with_expect_from_states_the_headroom_compare_would() {
    let d = tempfile::tempdir().unwrap();
    let p = write_json(
        &d.path().join("prod.json"),
        &serde_json::to_string(&profile()).unwrap(),
    );
    let out = d.path().join("out");
    let o = vb(["run", "--target"])
        .arg(d.path().join("t"))
        .args(["--engine", "null", "--rw", "randrw", "--read-pct", "70"])
        .args([
            "--bs",
            "8k",
            "--duration",
            "1s",
            "--size",
            "8m",
            "--expect-from",
        ])
        .arg(&p)
        .arg("--output")
        .arg(&out)
        .expect(exit::OK);
    assert!(
        stderr(&o).contains("headroom: production (vdb) does 2,100 IOPS at the p95"),
        "{}",
        stderr(&o)
    );
    let doc = read_json(&out.join("result.json"));
    let h = &doc["headroom"];
    assert_eq!(h["schema"], "volbench.headroom/v1");
    assert_eq!(h["production"]["peak_iops"], 2300.0);
    let iops = doc["runs"][0]["totals"]["read"]["iops"].as_f64().unwrap()
        + doc["runs"][0]["totals"]["write"]["iops"].as_f64().unwrap();
    let ratio = h["headroom"].as_f64().unwrap();
    assert!(
        (ratio - iops / 2100.0).abs() <= 1e-6 * ratio,
        "{ratio} vs {iops}/2100"
    );
    // The same statement compare makes over the written result.
    let c = headroom(&p, &out.join("result.json"), &[], exit::OK);
    assert_eq!(c["headroom"], h["headroom"]);
    assert_eq!(c["nearest"], h["nearest"]);
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("x headroom")),
        "{notes:?}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("x headroom"));
}

#[test]
fn a_bad_expect_from_is_exit_2_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let newer = write_json(
        &d.path().join("newer.json"),
        r#"{"schema": "volbench.profile/v2", "summary": []}"#,
    );
    let result = write_json(
        &d.path().join("r.json"),
        r#"{"schema": "volbench.result/v1"}"#,
    );
    let missing = d.path().join("missing.json");
    for (p, want) in [
        (&newer, "volbench.profile/v2"),
        (&result, "not a profile"),
        (&missing, "not a production profile"),
    ] {
        let target = d.path().join("t");
        let o = vb(["run", "--target"])
            .arg(&target)
            .args([
                "--engine",
                "psync",
                "--duration",
                "1s",
                "--size",
                "1m",
                "--expect-from",
            ])
            .arg(p)
            .expect(exit::BAD_INPUT);
        assert!(stderr(&o).contains(want), "{}: {}", p.display(), stderr(&o));
        assert!(!target.exists(), "{}: the target was touched", p.display());
    }
}

#[test]
fn a_run_held_to_a_rate_is_said_to_show_no_headroom_and_0_95x_stays_0_95x() {
    let d = tempfile::tempdir().unwrap();
    let p = write_json(
        &d.path().join("p.json"),
        &serde_json::to_string(&profile()).unwrap(),
    );
    // An open-loop --like run held to 1,995 IOPS, kept: its IOPS are the
    // rate asked, 0.95 of production's p95, not the volume's ceiling.
    let mut res = doc(
        "vol",
        &[RunFixture::new("like-prod", Pattern::Randrw, 70, 8192).perf(1995.0, 400.0)],
    );
    res.runs[0].rate = Some(volbench::result::RateResult {
        target_iops: 1995.0,
        achieved_iops: 1995.0,
        reached: true,
        arrivals: Default::default(),
    });
    let r = write_result(&d.path().join("r"), &res);
    let v = headroom(&p, &r, &[], exit::OK);
    assert_eq!(v["measured"]["held_to"], "1,995 IOPS", "{v}");
    let text = stdout(&vb(["compare"]).arg(&p).arg(&r).expect(exit::OK));
    assert!(text.contains(": 0.95x headroom"), "{text}");
    assert!(
        text.contains("was held to a rate (1,995 IOPS)") && text.contains("cannot show headroom"),
        "{text}"
    );
    // A closed-loop run says nothing of the kind.
    let r = write_result(
        &d.path().join("r2"),
        &doc(
            "vol",
            &[RunFixture::new("oltp", Pattern::Randrw, 70, 8192).perf(4900.0, 400.0)],
        ),
    );
    let text = stdout(&vb(["compare"]).arg(&p).arg(&r).expect(exit::OK));
    assert!(!text.contains("held to a rate"), "{text}");
}

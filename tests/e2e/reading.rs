//! Reading the results (issue 12, part B): the finders that need no
//! counters (single-thread latency, slow host), the report's limit lines,
//! per-host breakdown, per-interval percentiles and transfer-size chart,
//! and the conditions `compare` flags before its ratios.

use std::path::Path;

use volbench::report::fixtures::{self, RunFixture};
use volbench::result::diagnosis::{Confidence, Kind, diagnose};
use volbench::result::expect::Expectation;
use volbench::spec::Pattern;

use crate::common::{read_json, run, stderr, stdout, volbench, write_result};

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn expect_iops(iops: f64) -> Option<Expectation> {
    Some(Expectation {
        given: format!("iops={iops}"),
        iops: Some(iops),
        ..Expectation::default()
    })
}

/// One 8 KiB random read at one I/O in flight: 2,000 IOPS at 500 µs.
fn qd1() -> RunFixture {
    RunFixture::new("qd1", Pattern::Randread, 100, 8 << 10)
        .conc(1, 1)
        .perf(2_000.0, 500.0)
}

#[test]
fn one_io_in_flight_says_what_concurrency_the_target_needs() {
    // Against --expect: 20,000 IOPS x 500 µs = 10 in flight.
    let mut doc = fixtures::doc("client-1", &[qd1()]);
    doc.expect = expect_iops(20_000.0);
    let f: Vec<_> = diagnose(&doc)
        .into_iter()
        .filter(|f| f.kind == Kind::SingleThreadLatency)
        .collect();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].figures["concurrency_needed"], 10.0);
    assert_eq!(f[0].confidence, Confidence::Medium);
    assert!(
        f[0].message.contains("at least 10 I/Os in flight"),
        "{}",
        f[0].message
    );

    // Against the best run of the same workload: 40,000 IOPS needs 20.
    let best = RunFixture::new("qd64", Pattern::Randread, 100, 8 << 10)
        .conc(4, 16)
        .perf(40_000.0, 64.0 * 1e6 / 40_000.0);
    let doc = fixtures::doc("client-1", &[qd1(), best]);
    let f: Vec<_> = diagnose(&doc)
        .into_iter()
        .filter(|f| f.kind == Kind::SingleThreadLatency)
        .collect();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].figures["concurrency_needed"], 20.0);
    assert_eq!(f[0].confidence, Confidence::Low);
    assert_eq!(f[0].runs, ["qd1"]);

    // Alone, with nothing to reach, it says nothing.
    assert!(diagnose(&fixtures::doc("client-1", &[qd1()])).is_empty());
}

#[test]
fn a_host_well_below_the_others_is_named() {
    let f = diagnose(&fixtures::multi_host(&[10_000.0, 10_400.0, 5_000.0]));
    let slow: Vec<_> = f.iter().filter(|f| f.kind == Kind::SlowHost).collect();
    assert_eq!(slow.len(), 1, "{f:#?}");
    assert!(slow[0].message.contains("client-3"), "{}", slow[0].message);
    assert_eq!(slow[0].confidence, Confidence::High, "slow in both runs");
    assert!((slow[0].figures["percent"] - 49.0).abs() < 0.1);
    assert_eq!(slow[0].figures["slow_runs"], 2.0);
    // Hosts within a tenth of each other: nothing at all.
    let f = diagnose(&fixtures::multi_host(&[10_000.0, 10_400.0, 9_000.0]));
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn the_report_breaks_a_multi_host_result_down_by_host() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = fixtures::multi_host(&[10_000.0, 10_400.0, 5_000.0]);
    doc.diagnosis = diagnose(&doc);
    let dir = write_result(&tmp.path().join("mh"), &doc);
    let o = run(&["report", p(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("id=\"hosts\""));
    assert_eq!(
        html.matches("<svg class=\"chart\" data-kind=\"hosts\"")
            .count(),
        2,
        "IOPS and MiB/s"
    );
    assert!(html.contains("data-kind=\"hosts-latency\""));
    // The slow host's bars carry its share; the diagnosis names it.
    assert_eq!(
        html.matches(">49%<").count(),
        2 + 2,
        "two bars, two table cells"
    );
    assert!(html.contains("slow host: client-3"));
    // A single-host result has no such section.
    let one = write_result(&tmp.path().join("one"), &fixtures::six_patterns());
    assert!(run(&["report", p(&one)]).status.success());
    let html = std::fs::read_to_string(one.join("report.html")).unwrap();
    assert!(!html.contains("id=\"hosts\""));
}

#[test]
fn the_report_draws_limits_across_the_chart_by_transfer_size() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = fixtures::transfer_sizes([503.0, 498.0, 501.0, 500.0]);
    doc.expect = expect_iops(500.0);
    doc.diagnosis = diagnose(&doc);
    let dir = write_result(&tmp.path().join("capped"), &doc);
    let o = run(&["report", p(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("id=\"transfer\""));
    assert_eq!(
        html.matches("<svg class=\"chart\" data-kind=\"transfer\"")
            .count(),
        2
    );
    // The --expect limit and the inferred cap, on the transfer-size chart
    // and on each run's IOPS time series.
    assert!(html.contains("limit 500 IOPS (--expect)"));
    assert!(html.contains("inferred cap ~500 IOPS"));
    let transfer_iops = html
        .split("<svg class=\"chart\"")
        .find(|c| c.starts_with(" data-kind=\"transfer\""))
        .unwrap();
    assert_eq!(transfer_iops.matches("class=\"limit\"").count(), 2);
    let ts_limits = html
        .split("<svg class=\"chart\"")
        .filter(|c| c.starts_with(" data-kind=\"timeseries\"") && c.contains("class=\"limit\""))
        .count();
    assert_eq!(ts_limits, 4, "the IOPS panel of each of the four runs");
    // Without limits, no line is drawn anywhere.
    let plain = write_result(&tmp.path().join("plain"), &fixtures::six_patterns());
    assert!(run(&["report", p(&plain)]).status.success());
    let html = std::fs::read_to_string(plain.join("report.html")).unwrap();
    assert!(!html.contains("class=\"limit\""));
}

#[test]
fn compare_lists_the_conditions_that_differ_before_the_ratios() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write_result(&tmp.path().join("before"), &fixtures::six_patterns());
    let mut d = fixtures::six_patterns();
    d.host.kernel = "6.8.0-azure".into();
    if let Some(m) = d.target.as_mut().and_then(|t| t.mount.as_mut()) {
        m.options = m.options.replace("nconnect=16", "nconnect=4");
    }
    let b = write_result(&tmp.path().join("after"), &d);
    let out = tmp.path().join("cmp.html");
    let o = run(&["compare", p(&a), p(&b), "-o", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let cond = text.find("Conditions differ").expect(&text);
    let ratios = text.find("8k-random-read").unwrap();
    assert!(cond < ratios, "{text}");
    let row = |name: &str| {
        text.lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no {name} row: {text}"))
            .to_string()
    };
    assert!(row("kernel").contains("6.1.0-test") && row("kernel").contains("6.8.0-azure"));
    assert!(row("mount nconnect").contains("16") && row("mount nconnect").contains('4'));
    assert!(!text.contains("mount rsize"), "same on both sides: {text}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("id=\"conditions\""));
    assert!(html.find("id=\"conditions\"") < html.find("id=\"comparison\""));

    let md = run(&["compare", p(&a), p(&b), "--markdown", "-o", "-"]);
    let md = stdout(&md);
    assert!(md.contains("### Conditions differ"), "{md}");
    assert!(md.contains("| mount nconnect | 16 | 4 |"), "{md}");

    // The same conditions: no block.
    let c = write_result(&tmp.path().join("again"), &fixtures::six_patterns());
    let o = run(&["compare", p(&a), p(&c), "-o", "-"]);
    assert!(!stdout(&o).contains("Conditions differ"));
}

#[test]
fn a_real_run_records_each_intervals_latency_distribution() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    let out = tmp.path().join("real");
    let o = volbench()
        .args([
            "run",
            "--target",
            p(&target),
            "--size",
            "16m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--buffered",
            "--duration",
            "1s",
            "--warmup",
            "250ms",
            "--interval",
            "250ms",
            "--expect",
            "iops=500",
            "--output",
            p(&out),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    let intervals = doc["runs"][0]["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 4, "{} intervals", intervals.len());
    let (mut ops, mut counted) = (0.0, 0u64);
    for iv in intervals {
        let r = &iv["read"];
        ops += r["iops"].as_f64().unwrap() * iv["duration_s"].as_f64().unwrap();
        let h = r["lat_hist"].as_array().unwrap();
        assert!(!h.is_empty(), "an interval without its histogram: {iv}");
        counted += h.iter().map(|b| b[1].as_u64().unwrap()).sum::<u64>();
    }
    // Every I/O is in some interval's histogram (each is read a moment
    // apart from the counts, so a few may fall in the next interval).
    assert!(
        (counted as f64 - ops).abs() <= 0.01 * ops,
        "{counted} vs {ops}"
    );
    // Read back, the result still passes the checks on untrusted files.
    let back = run(&["report", p(&out), "--format", "md"]);
    assert!(back.status.success(), "{}", stderr(&back));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("data-kind=\"interval-percentiles\""));
    assert!(html.contains("limit 500 IOPS (--expect)"));
}

#[test]
fn a_result_with_a_malformed_interval_histogram_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, bad) in [
        ("inside-a-bucket", vec![[33u64, 1u64]]),
        ("out-of-order", vec![[64, 1], [32, 1]]),
        ("empty-bucket", vec![[32, 0]]),
        ("absurd-count", vec![[32, u64::MAX / 2]]),
    ] {
        let mut doc = fixtures::six_patterns();
        doc.runs[0].intervals[1].read.lat_hist = bad;
        let dir = write_result(&tmp.path().join(name), &doc);
        let o = crate::common::vb(["report", p(&dir), "--format", "md"])
            .expect(volbench::error::exit::BAD_INPUT);
        assert!(stderr(&o).contains("interval"), "{name}: {}", stderr(&o));
    }
}

#[test]
fn compare_pairs_the_runs_when_each_side_has_exactly_one() {
    let tmp = tempfile::tempdir().unwrap();
    let one = |name: &str, bs: u64, iops: f64| {
        fixtures::doc(
            "client-1",
            &[RunFixture::new(name, Pattern::Randread, 100, bs).perf(iops, 32.0e6 / iops)],
        )
    };
    let a = write_result(&tmp.path().join("old"), &one("seq-test", 8 << 10, 10_000.0));
    let b = write_result(&tmp.path().join("new"), &one("tuned", 16 << 10, 15_000.0));
    let o = run(&["compare", p(&a), p(&b), "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("→ 15,000, 1.50x"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("run 'tuned' matched to 'seq-test' as the only run of each"),
        "{err}"
    );
    assert!(err.contains("bs 8KiB vs 16KiB"), "{err}");
    assert!(!err.contains("no counterpart"), "{err}");
}

/// `--vm-size` is recorded with the host and `compare` names it when two
/// results differ; `--no-counters` leaves the counters out and says so.
#[test]
fn vm_size_is_recorded_and_compared_and_counters_can_be_turned_off() {
    use crate::common::vb;
    use volbench::error::exit;
    let d = tempfile::tempdir().unwrap();
    let one = |name: &str, size: &str, extra: &[&str]| {
        let out = d.path().join(name);
        vb([
            "run",
            "--target",
            p(&d.path().join("set")),
            "--size",
            "4m",
            "--duration",
            "0.3",
            "--warmup",
            "0",
            "--vm-size",
            size,
            "--output",
            p(&out),
        ])
        .args(extra)
        .expect(exit::OK);
        read_json(&out.join("result.json"))
    };
    let a = one("a", "Standard_D4s_v5", &[]);
    let b = one("b", "Standard_D16s_v5", &["--no-counters"]);
    assert_eq!(a["host"]["vm_size"], "Standard_D4s_v5");
    assert_eq!(b["host"]["vm_size"], "Standard_D16s_v5");
    assert!(
        a["runs"][0]["counters"].is_object(),
        "counters on by default"
    );
    assert!(b["runs"][0]["counters"].is_null(), "--no-counters: none");
    assert_eq!(b["spec"]["no_counters"], true);
    let page = d.path().join("cmp.html");
    let o = vb([
        "compare",
        p(&d.path().join("a")),
        p(&d.path().join("b")),
        "-o",
        p(&page),
    ])
    .expect(exit::OK);
    let out = stdout(&o);
    assert!(
        out.contains("VM size")
            && out.contains("Standard_D4s_v5")
            && out.contains("Standard_D16s_v5"),
        "{out}"
    );
    // A bad size is refused before any I/O, naming the flag.
    let o = vb([
        "run",
        "--target",
        p(&d.path().join("c")),
        "--vm-size",
        "a b",
    ])
    .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("--vm-size"), "{}", stderr(&o));
    assert!(!d.path().join("c").exists());
}

//! End-to-end tests of `volbench report`, `volbench compare` and the
//! report.html every `--output` run writes: through the real binary, on
//! synthetic results with known numbers and on a short real run.

use std::path::{Path, PathBuf};
use volbench::error::exit;

use crate::common::{read_json, run, stderr, stdout, vb, volbench, write_result};
use volbench::report::fixtures::{self, RunFixture};
use volbench::result::ResultDoc;
use volbench::spec::Pattern;

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn report_writes_html_next_to_the_result_and_exports_to_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_result(&tmp.path().join("mix"), &fixtures::mix_sweep());

    let o = run(&["report", p(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("http://") && !html.contains("https://"));

    let md = run(&["report", p(&dir), "--format", "md"]);
    assert!(md.status.success());
    assert!(stdout(&md).contains("| Read MiB/s | 4250.0 | 2660.2 | 1421.9 | 535.2 | - |"));

    let csv = run(&["report", p(&dir), "--format", "csv"]);
    let text = stdout(&csv);
    assert!(text.starts_with("run,op,rw,bs,read_pct,"), "{text}");
    assert_eq!(text.lines().count(), 1 + 8);

    let json = run(&["report", p(&dir), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["sweeps"][0]["kind"], "mix");

    // Several results need to be told where the one report goes.
    let other = write_result(&tmp.path().join("curve"), &fixtures::thread_curve());
    let o = vb(["report", p(&dir), p(&other)]).expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("-o FILE"));
    let out = tmp.path().join("both.html");
    let o = run(&["report", p(&dir), p(&other), "-o", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let both = std::fs::read_to_string(&out).unwrap();
    assert!(both.contains("data-kind=\"mix\"") && both.contains("data-kind=\"curve\""));
}

#[test]
fn results_written_before_mounts_were_recorded_still_load() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("old");
    let mut v = serde_json::to_value(fixtures::six_patterns()).unwrap();
    v["target"].as_object_mut().unwrap().remove("mount");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("result.json"), v.to_string()).unwrap();
    let o = run(&["report", p(&dir), "--format", "md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("| file system | not recorded |"));
}

#[test]
fn report_of_a_missing_or_foreign_file_is_an_input_error() {
    let tmp = tempfile::tempdir().unwrap();
    vb(["report", p(&tmp.path().join("nothing"))]).expect(exit::BAD_INPUT);
    std::fs::write(tmp.path().join("result.json"), "{\"schema\": \"other\"}").unwrap();
    let o = vb(["report", p(tmp.path())]).expect(exit::BAD_INPUT);
    assert!(
        stderr(&o).contains("not a volbench result"),
        "{}",
        stderr(&o)
    );
}

/// Two results with known numbers: without and with nconnect (seed 002:
/// 64 KiB sequential read ~1,520 -> 3,500 MiB/s, 4 KiB random read ~3x).
fn nconnect_pair(tmp: &Path) -> (PathBuf, PathBuf) {
    let mk = |mib: f64, iops: f64| {
        fixtures::doc(
            "d32s-v4",
            &[
                RunFixture::new("64k-seq-read", Pattern::Read, 100, 64 << 10)
                    .perf(mib * 16.0, 800.0),
                RunFixture::new("4k-rand-read", Pattern::Randread, 100, 4 << 10).perf(iops, 300.0),
            ],
        )
    };
    let a = write_result(&tmp.join("without"), &mk(1520.0, 66_000.0));
    let b = write_result(&tmp.join("nconnect"), &mk(3500.0, 198_000.0));
    (a, b)
}

#[test]
fn compare_writes_no_page_into_the_current_directory_unless_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = nconnect_pair(tmp.path());
    let here = tmp.path().join("cwd");
    std::fs::create_dir(&here).unwrap();
    let o = volbench()
        .args(["compare", p(&a), p(&b)])
        .current_dir(&here)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("2.30x"), "{}", stdout(&o));
    let left: Vec<_> = std::fs::read_dir(&here).unwrap().collect();
    assert!(
        left.is_empty(),
        "compare left {left:?} in the current directory"
    );
    assert!(!stderr(&o).contains("comparison report:"), "{}", stderr(&o));
    // Asked for, the page is written where -o says.
    let o = volbench()
        .args(["compare", p(&a), p(&b), "-o", "cmp.html"])
        .current_dir(&here)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(here.join("cmp.html").is_file());
}

#[test]
fn compare_prints_ratios_to_the_first_and_writes_a_report() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = nconnect_pair(tmp.path());
    let out = tmp.path().join("cmp.html");
    let o = run(&["compare", p(&a), p(&b), "-o", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("64k-seq-read read MiB/s 1,520 → 3,500, 2.30x"),
        "{text}"
    );
    assert!(
        text.contains("4k-rand-read read IOPS 66,000 → 198,000, 3.00x"),
        "{text}"
    );
    // The table row for MiB/s of the sequential read.
    let row = text
        .lines()
        .find(|l| l.contains("64k-seq-read") && l.contains("MiB/s"))
        .unwrap();
    assert!(
        row.contains("1,520") && row.contains("3,500") && row.contains("2.30x"),
        "{row}"
    );
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains(">2.30x<") && html.contains(">3.00x<"));
    assert!(html.contains("volbench comparison: without vs nconnect"));

    let md = run(&["compare", p(&a), p(&b), "--markdown", "-o", "-"]);
    assert!(stdout(&md).contains("| 64k-seq-read | read | MiB/s | 1,520 | 3,500 | 2.30x |"));
}

#[test]
fn compare_warns_where_specs_differ() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = nconnect_pair(tmp.path());
    let mut doc: ResultDoc = serde_json::from_value(read_json(&b.join("result.json"))).unwrap();
    doc.runs[1].workload.threads = 16;
    doc.spec.target.size = 4 << 30;
    write_result(&b, &doc);
    let o = run(&["compare", p(&a), p(&b), "-o", "-"]);
    assert!(o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(
            "run '4k-rand-read': specs differ between without and nconnect: threads 4 vs 16"
        ),
        "{err}"
    );
    assert!(err.contains("working set 1GiB vs 4GiB"), "{err}");
}

#[test]
fn compare_needs_two_results() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = nconnect_pair(tmp.path());
    vb(["compare", p(&a)]).expect(exit::BAD_INPUT);
}

// ---- In a real browser ----

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

/// Runs headless Chromium on a file with `extra` arguments (bounded by
/// coreutils' timeout) and returns (stdout, stderr).
fn browse(chrome: &Path, file: &Path, extra: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let o = std::process::Command::new("timeout")
        .arg("120")
        .arg(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("chromium runs");
    assert!(
        o.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Each chart in the DOM: its kind and the markup up to the next chart.
fn charts(dom: &str) -> Vec<(String, String)> {
    dom.split("<svg class=\"chart\" data-kind=\"")
        .skip(1)
        .map(|chunk| {
            let kind = chunk.split('"').next().unwrap_or("").to_string();
            let body = chunk.split("</svg>").next().unwrap_or("").to_string();
            (kind, body)
        })
        .collect()
}

fn count(kind: &str, all: &[(String, String)], what: &str) -> usize {
    all.iter()
        .filter(|(k, _)| k == kind)
        .map(|(_, b)| b.matches(what).count())
        .sum()
}

/// Vertex counts of each `path.series` in a chart (M then L per point).
fn vertices(body: &str) -> Vec<usize> {
    body.split("<path class=\"series\"")
        .skip(1)
        .map(|p| {
            let d = p.split("d=\"").nth(1).unwrap_or("");
            let d = d.split('"').next().unwrap_or("");
            d.matches('M').count() + d.matches('L').count()
        })
        .collect()
}

/// Where screenshots go: $VOLBENCH_ARTIFACTS, else cargo's temp directory
/// for integration tests (target/tmp), which outlives the test.
fn artifacts_dir() -> PathBuf {
    let d = std::env::var_os("VOLBENCH_ARTIFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn no_console_messages(log: &str) {
    let msgs: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(msgs.is_empty(), "console messages: {msgs:#?}");
}

#[test]
fn reports_render_in_a_browser_with_every_data_point() {
    let Some(chrome) = chromium() else {
        crate::common::skip(
            "reports_render_in_a_browser_with_every_data_point",
            "chromium is not installed (test.sh installs it)",
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let shots = artifacts_dir();
    eprintln!("screenshots: {}", shots.display());

    // A six-patterns result: bars, two small mixes, percentiles, time series.
    let six = write_result(&tmp.path().join("six"), &fixtures::six_patterns());
    assert!(run(&["report", p(&six)]).status.success());
    let (dom, log) = browse(&chrome, &six.join("report.html"), &["--dump-dom"]);
    no_console_messages(&log);
    let c = charts(&dom);
    // One bar per run and op type: 4 reads + 4 writes (two 50/50 runs).
    assert_eq!(count("bars", &c, "class=\"bar\""), 8);
    assert_eq!(count("mix", &c, "class=\"mark\""), 8);
    assert_eq!(count("percentiles", &c, "class=\"series-group\""), 8);
    let ts: Vec<_> = c.iter().filter(|(k, _)| k == "timeseries").collect();
    assert_eq!(ts.len(), 6 * 3, "IOPS, MiB/s and latency per run");
    for (_, body) in &ts {
        for n in vertices(body) {
            assert_eq!(n, 5, "a vertex per interval");
        }
        assert!(body.contains("class=\"shade\""), "warm-up shaded");
    }
    browse(
        &chrome,
        &six.join("report.html"),
        &[
            &format!("--screenshot={}", shots.join("six-patterns.png").display()),
            "--window-size=1100,2400",
        ],
    );
    let png = std::fs::metadata(shots.join("six-patterns.png")).unwrap();
    assert!(png.len() > 10_000, "screenshot is {} bytes", png.len());

    // A thread sweep: the IOPS-vs-latency curve has mean and p99 per run.
    let curve = write_result(&tmp.path().join("curve"), &fixtures::thread_curve());
    assert!(run(&["report", p(&curve)]).status.success());
    let (dom, log) = browse(&chrome, &curve.join("report.html"), &["--dump-dom"]);
    no_console_messages(&log);
    let c = charts(&dom);
    assert_eq!(count("curve", &c, "class=\"mark\""), 2 * 6);
    assert_eq!(count("bars", &c, "class=\"bar\""), 0);

    // A latency curve: six rate points with mean, p99 and service time, the
    // unthrottled maximum apart, the discarded warm-up run nowhere.
    let lc = write_result(
        &tmp.path().join("latency-curve"),
        &fixtures::latency_curve(),
    );
    assert!(run(&["report", p(&lc)]).status.success());
    let (dom, log) = browse(&chrome, &lc.join("report.html"), &["--dump-dom"]);
    no_console_messages(&log);
    let c = charts(&dom);
    assert_eq!(count("curve", &c, "class=\"mark\""), 6 * 3 + 2);
    assert_eq!(c.iter().filter(|(k, _)| k == "timeseries").count(), 7 * 3);
    browse(
        &chrome,
        &lc.join("report.html"),
        &[
            &format!("--screenshot={}", shots.join("latency-curve.png").display()),
            "--window-size=1100,1600",
        ],
    );
    assert!(shots.join("latency-curve.png").is_file());

    // A comparison: one bar per result and matched run/op, ratios on them.
    let other = write_result(&tmp.path().join("six-b"), &fixtures::six_patterns());
    let cmp = tmp.path().join("compare.html");
    let o = run(&["compare", p(&six), p(&other), "-o", p(&cmp)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (dom, log) = browse(&chrome, &cmp, &["--dump-dom"]);
    no_console_messages(&log);
    let c = charts(&dom);
    assert_eq!(count("compare", &c, "class=\"bar\""), 2 * 8);
    assert_eq!(count("compare", &c, ">1.00x<"), 8);

    // A real run: report.html comes with --output, one vertex per interval.
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
            "randrw",
            "--bs",
            "4k",
            "--buffered",
            "--duration",
            "1s",
            "--warmup",
            "500ms",
            "--interval",
            "250ms",
            "--output",
            p(&out),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    let intervals = doc["runs"][0]["intervals"].as_array().unwrap().len();
    assert!(intervals >= 4, "{intervals} intervals");
    let (dom, log) = browse(&chrome, &out.join("report.html"), &["--dump-dom"]);
    no_console_messages(&log);
    let c = charts(&dom);
    let ts: Vec<_> = c.iter().filter(|(k, _)| k == "timeseries").collect();
    assert_eq!(ts.len(), 3);
    for (_, body) in ts {
        assert_eq!(
            vertices(body),
            [intervals, intervals],
            "read and write lines"
        );
    }
    assert!(dom.contains("file system"), "environment section");
}

/// Rows of a drawn table: lines that start with `edge`, cells split at `sep`.
fn grid(text: &str, edge: char, sep: char) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with(edge))
        .map(|l| {
            l.trim_matches(edge)
                .split(sep)
                .map(|c| c.trim().to_string())
                .collect()
        })
        .filter(|r: &Vec<String>| !r.iter().all(|c| c.chars().all(|ch| "-: ".contains(ch))))
        .collect()
}

/// The cells of column `name` in a grid whose first row is its header.
fn column(rows: &[Vec<String>], name: &str) -> Vec<String> {
    let at = rows[0]
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", rows[0]));
    rows[1..].iter().map(|r| r[at].clone()).collect()
}

/// A mixed 70/30 run whose reads and writes have known latencies: reads
/// 100-200 µs, writes mostly 1.0-1.1 ms with a tenth at 5-6 ms, all times
/// `scale`. Returns the p99 of all its operations recorded as one stream.
fn known_mixed_latencies(run: &mut volbench::result::RunResult, scale: u64) -> f64 {
    use volbench::result::{Histograms, LatSummary, OpTotals};
    use volbench::stats::{BucketedHistogram, OpStats};
    let (mut r, mut w, mut all) = (OpStats::new(), OpStats::new(), OpStats::new());
    for i in 0..7000u64 {
        let ns = (100 + i % 100) * 1000 * scale;
        r.record(ns, 8192);
        all.record(ns, 8192);
    }
    for i in 0..3000u64 {
        let us = if i % 10 == 0 {
            5000 + (i / 10) * 3
        } else {
            1000 + i % 100
        };
        w.record(us * 1000 * scale, 8192);
        all.record(us * 1000 * scale, 8192);
    }
    // Over the run's measured phase, as volbench computes them: a result
    // whose rates disagree with its counts is refused when read back.
    let secs = run
        .phases
        .iter()
        .find(|p| p.name == volbench::result::PhaseName::Measure)
        .map_or(1.0, |p| p.duration_s);
    run.totals.read = OpTotals::from_stats(&r, secs);
    run.totals.write = OpTotals::from_stats(&w, secs);
    if run.rate.is_some() {
        for t in [&mut run.totals.read, &mut run.totals.write] {
            t.service_lat_us = Some(t.lat_us.clone());
        }
    }
    run.histograms = Histograms {
        read: BucketedHistogram::from_histogram(&r.hist),
        write: BucketedHistogram::from_histogram(&w.hist),
    };
    LatSummary::from_stats(&all).p99
}

/// Issue 10: a mixed read/write run's p99 is one number, the percentile of
/// its merged read+write histogram, in the terminal tables, tables.md, the
/// HTML report, `report --format md` and the summary data (summary.csv,
/// `report --format csv`). The thread-sweep table used to show the larger
/// of the read and write p99s, the curve table their ops-weighted average.
#[test]
fn a_mixed_runs_p99_is_the_merged_histograms_in_every_view() {
    use volbench::output::fmt::micros;
    use volbench::spec::{SuiteMeta, TableKind};

    let tmp = tempfile::tempdir().unwrap();
    let threads: Vec<RunFixture> = [1u32, 2, 4, 8]
        .iter()
        .map(|&t| RunFixture::new(&format!("mixed-{t}t"), Pattern::Randrw, 70, 8 << 10).conc(t, 4))
        .collect();
    let mut curve = vec![RunFixture::new("max", Pattern::Randrw, 70, 8 << 10)];
    for pct in [10.0, 50.0, 90.0] {
        let mut r = RunFixture::new(&format!("mixed-{pct}pct"), Pattern::Randrw, 70, 8 << 10);
        r.rate_pct = Some(pct);
        curve.push(r);
    }
    for (name, runs, table) in [
        ("threads", threads, TableKind::Threads),
        ("curve", curve, TableKind::Curve),
    ] {
        let mut doc = fixtures::doc("client-1", &runs);
        doc.spec.suite = Some(SuiteMeta {
            name: name.into(),
            table,
        });
        let mut want = Vec::new();
        for (k, run) in doc.runs.iter_mut().enumerate() {
            let p99 = known_mixed_latencies(run, k as u64 + 1);
            assert_eq!(run.latency().p99, p99, "{}", run.name);
            // The definitions the tables used before give other figures.
            let (rp, wp) = (run.totals.read.lat_us.p99, run.totals.write.lat_us.p99);
            assert_ne!(micros(p99), micros(rp.max(wp)));
            assert_ne!(micros(p99), micros((rp * 7.0 + wp * 3.0) / 10.0));
            want.push((run.name.clone(), p99));
        }
        let shown: Vec<String> = want.iter().map(|(_, p)| micros(*p)).collect();

        let terminal = volbench::output::summary(&doc);
        assert_eq!(
            column(&grid(&terminal, '│', '┆'), "p99"),
            shown,
            "{terminal}"
        );

        let dir = tmp.path().join(name);
        let out = volbench::output::file::OutputDir::open(&dir).unwrap();
        volbench::output::export::Exporters::output_dir()
            .write_dir(&volbench::output::source::own_source(&doc, &dir), &out)
            .unwrap();
        let md = std::fs::read_to_string(dir.join("tables.md")).unwrap();
        assert_eq!(column(&grid(&md, '|', '|'), "p99"), shown, "{md}");

        let o = run(&["report", p(&dir), "--format", "md"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let md = stdout(&o);
        // The suite's own table comes first; per-op tables follow it.
        let first_table = md.split("\n### ").nth(1).unwrap_or_default();
        assert_eq!(column(&grid(first_table, '|', '|'), "p99"), shown, "{md}");

        assert!(run(&["report", p(&dir)]).status.success());
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        for s in &shown {
            assert!(
                html.contains(&format!("<td class=\"num\">{s}</td>")),
                "{s} not in the HTML tables"
            );
        }

        let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
        let report_csv = stdout(&run(&["report", p(&dir), "--format", "csv"]));
        for text in [summary, report_csv] {
            let mut r = csv::Reader::from_reader(text.as_bytes());
            let head = r.headers().unwrap().clone();
            let at = |n: &str| head.iter().position(|h| h == n).unwrap();
            for row in r.records().map(|x| x.unwrap()) {
                let (_, p99) = want.iter().find(|(n, _)| n == &row[at("run")]).unwrap();
                assert_eq!(row[at("run_lat_us_p99")], format!("{p99:.3}"), "{text}");
            }
        }
    }
}

/// The tables.md every `--output` writes escapes what would break a
/// Markdown table or become HTML where it is rendered (it escaped only `|`).
#[test]
fn tables_md_escapes_run_names() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = fixtures::six_patterns();
    doc.runs[0].name = "a|b<img src=x>".into();
    let out = volbench::output::file::OutputDir::open(tmp.path()).unwrap();
    volbench::output::export::Exporters::output_dir()
        .write_dir(
            &volbench::output::source::own_source(&doc, tmp.path()),
            &out,
        )
        .unwrap();
    let md = std::fs::read_to_string(tmp.path().join("tables.md")).unwrap();
    assert!(md.contains("| a\\|b&lt;img src=x&gt; |"), "{md}");
    assert!(!md.contains('<'), "{md}");
}

/// A 4 KiB random-read result whose run went through volbench's SMB
/// client over two channels, the second's requests waiting for credits.
fn smb_result() -> ResultDoc {
    let runs = [RunFixture::new("smbread", Pattern::Randread, 100, 4096).perf(5000.0, 400.0)];
    let mut v = serde_json::to_value(fixtures::doc("client-1", &runs)).unwrap();
    let lat = serde_json::json!({"mean": 400.0, "min": 100.0, "max": 900.0, "stddev": 1.0,
        "p50": 380.0, "p90": 500.0, "p99": 800.0, "p99_9": 850.0, "p99_99": 900.0});
    let chan = |k: u32, waits: u64| {
        serde_json::json!({"channel": k, "server": format!("192.0.2.{}:445", k + 1),
            "sessions": 1, "credits_granted": 150_000, "credit_waits": waits,
            "credit_wait_ms": 12.5, "max_in_flight": 8,
            "commands": [{"command": "read", "requests": 150_000, "bytes": 150_000u64 * 4096,
                          "errors": 0, "latency_us": lat}]})
    };
    v["runs"][0]["protocol"] = serde_json::json!({
        "protocol": "smb", "version": "3.1.1", "connections": 2, "reconnects": 0, "ops": [],
        "smb": {"dialect": "3.1.1", "signing": true, "signing_algorithm": "AES-GMAC",
                "encryption": "AES-128-GCM", "channels_per_session": 2, "max_io": 1048576,
                "channels": [chan(0, 0), chan(1, 77)]}});
    serde_json::from_value(v).unwrap()
}

#[test]
fn an_smb_run_s_report_shows_its_channels_and_a_local_run_s_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_result(&tmp.path().join("smb"), &smb_result());
    let o = run(&["report", p(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<section id=\"smb-client\">"), "{html}");
    for want in [
        "SMB channels: smbread",
        "SMB commands: smbread",
        "SMB 3.1.1, signed (AES-GMAC), encrypted (AES-128-GCM), 2 channel(s) per session",
        "192.0.2.2:445",
        "<td class=\"num\">77</td>",
    ] {
        assert!(html.contains(want), "{want}");
    }
    // The same tables in tables.md.
    let md = run(&["report", p(&dir), "--format", "md"]);
    assert!(
        stdout(&md).contains("SMB commands: smbread"),
        "{}",
        stdout(&md)
    );

    let local = write_result(&tmp.path().join("local"), &fixtures::six_patterns());
    let o = run(&["report", p(&local)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(local.join("report.html")).unwrap();
    assert!(!html.contains("id=\"smb-client\"") && !html.contains("SMB channels"));
}

//! End-to-end: volbench's fio JSON read by fio's own ecosystem, not by a
//! reader of ours: the real fio-plot (pinned in test.sh) draws a volbench
//! sweep, fio's `fio_jsonplus_clat2csv` turns its latency bins into CSV and
//! validates them, and the figures those tools read are the result's own.

use std::process::Command;

use volbench::error::exit;

use crate::cli_help::{p, python_with};
use crate::common::*;

/// A three-point iodepth sweep, its result.json and one fio JSON file per
/// run (fio-plot's layout) plus one file with every run.
fn sweep(d: &std::path::Path) -> (serde_json::Value, std::path::PathBuf, std::path::PathBuf) {
    let out = d.join("out");
    // Buffered psync: the temporary directory may be on tmpfs (no O_DIRECT).
    vb([
        "run",
        "--target",
        p(&d.join("t")),
        "--size",
        "16m",
        "--rw",
        "randread",
        "--iodepth",
        "1,2,4",
        "--engine",
        "psync",
        "--buffered",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--interval",
        "200ms",
        "--output",
        p(&out),
    ])
    .expect(exit::OK);
    let per_run = d.join("fio");
    std::fs::create_dir(&per_run).unwrap();
    vb(["report", p(&out), "--format", "fio-json", "-o", p(&per_run)]).expect(exit::OK);
    let all = d.join("all.json");
    vb(["report", p(&out), "--format", "fio-json", "-o", p(&all)]).expect(exit::OK);
    (read_json(&out.join("result.json")), per_run, all)
}

fn mean_sd(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (
        m,
        (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt(),
    )
}

#[test]
fn fio_json_figures_are_the_result_s_own() {
    let d = tempfile::tempdir().unwrap();
    let (doc, per_run, all) = sweep(d.path());
    let files: Vec<_> = std::fs::read_dir(&per_run).unwrap().collect();
    assert_eq!(files.len(), 3, "one file per run");
    let fio = read_json(&all);
    for (run, job) in doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(fio["jobs"].as_array().unwrap())
    {
        let iops: Vec<f64> = run["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["phase"] == "measure")
            .map(|i| i["read"]["iops"].as_f64().unwrap())
            .collect();
        let (m, sd) = mean_sd(&iops);
        let r = &job["read"];
        assert_eq!(r["iops_samples"].as_u64().unwrap() as usize, iops.len());
        assert!((r["iops_mean"].as_f64().unwrap() - m).abs() < 1e-6 * m.max(1.0));
        assert!((r["iops_stddev"].as_f64().unwrap() - sd).abs() < 1e-6 * m.max(1.0));
        // Every I/O lands in one latency bucket, in one bin.
        let pct: f64 = ["latency_ns", "latency_us", "latency_ms"]
            .iter()
            .flat_map(|k| job[*k].as_object().unwrap().values())
            .map(|v| v.as_f64().unwrap())
            .sum();
        assert!((pct - 100.0).abs() < 1e-6, "{pct}");
        let bins: u64 = r["clat_ns"]["bins"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(bins, r["total_ios"].as_u64().unwrap());
        assert_eq!(r["total_ios"], run["totals"]["read"]["ops"]);
    }
}

#[test]
fn fio_plot_draws_a_volbench_sweep() {
    let Some(py) = python_with("fio_plot") else {
        return skip(
            "fio-plot draws a sweep",
            "fio-plot not installed (test.sh: pip install fio-plot)",
        );
    };
    let d = tempfile::tempdir().unwrap();
    let (_, per_run, _) = sweep(d.path());
    for (kind, extra, png) in [
        ("-l", &["-d", "1", "2", "4"][..], "sweep.png"),
        ("-H", &["-d", "1"][..], "histogram.png"),
    ] {
        let png = d.path().join(png);
        let o = Command::new(&py)
            .current_dir(d.path())
            .args([
                "-m",
                "fio_plot",
                "-i",
                p(&per_run),
                "-T",
                "volbench",
                kind,
                "-r",
                "randread",
            ])
            .args(extra)
            .args(["-n", "1", "-o", p(&png)])
            .env("MPLBACKEND", "Agg")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "fio-plot {kind}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let bytes = std::fs::read(&png).unwrap_or_default();
        assert!(
            bytes.starts_with(b"\x89PNG"),
            "{kind}: no PNG at {}",
            png.display()
        );
    }
}

#[test]
fn fio_jsonplus_clat2csv_reads_and_validates_the_bins() {
    let script = std::path::Path::new("/usr/bin/fio_jsonplus_clat2csv");
    if !script.exists() {
        return skip(
            "fio_jsonplus_clat2csv",
            "fio's script is not installed (Debian package fio)",
        );
    }
    // Debian's python3 has the script's `six`; another python3 first on
    // PATH may not.
    let py = if std::path::Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let d = tempfile::tempdir().unwrap();
    let (doc, _, all) = sweep(d.path());
    let csv = d.path().join("clat.csv");
    for extra in [&[][..], &["--validate"][..]] {
        let o = Command::new(py)
            .arg(script)
            .args([p(&all), p(&csv)])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // A CSV per job; its last read_clat_ns cumulative count is the run's reads.
    let text = std::fs::read_to_string(d.path().join("clat_job0.csv")).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(", ").collect();
    let col = header
        .iter()
        .position(|h| *h == "read_clat_ns_cumulative")
        .unwrap();
    let last = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split(", ").nth(col)?.trim().parse::<u64>().ok())
        .last()
        .unwrap();
    assert_eq!(
        last,
        doc["runs"][0]["totals"]["read"]["ops"].as_u64().unwrap()
    );
}

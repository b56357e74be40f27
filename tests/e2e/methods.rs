//! The vendors' methods end to end: suites, sweeps, rate control, steady state.

use crate::common::*;
use volbench::error::exit;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn ok(args: &[&str]) -> std::process::Output {
    let o = run(args);
    assert_eq!(o.status.code(), Some(exit::OK), "{args:?}: {}", stderr(&o));
    o
}

#[test]
fn mix_table_produces_every_point_in_the_papers_layout() {
    let d = tmp();
    let out = d.path().join("out");
    let o = ok(&[
        "suite",
        "run",
        "mix-table",
        "--target",
        d.path().join("t").to_str().unwrap(),
        "--size",
        "16m",
        "--engine",
        "null",
        "--duration",
        "150ms",
        "--warmup",
        "0",
        "--output",
        out.to_str().unwrap(),
    ]);
    let doc = read_json(&out.join("result.json"));
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 21, "a warm-up run and 4 sizes x 5 mixes");
    assert_eq!(runs[0]["workload"]["discard"], true);
    assert_eq!(doc["spec"]["suite"]["table"], "mix");
    let md = std::fs::read_to_string(out.join("tables.md")).unwrap();
    // One table per size: a Read and a Write row, one column per mix.
    for title in [
        "4KiB random",
        "8KiB random",
        "64KiB sequential",
        "256KiB sequential",
    ] {
        assert!(
            md.contains(&format!("### {title}")),
            "missing {title}: {md}"
        );
    }
    assert!(
        md.contains("|  | 100/0 | 75/25 | 50/50 | 25/75 | 0/100 |"),
        "{md}"
    );
    assert!(
        md.contains("| Read IOPS |") && md.contains("| Write MiB/s |"),
        "{md}"
    );
    let text = stdout(&o);
    assert!(text.contains("warm-up run discarded: warmup-run"), "{text}");
    let csvs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("table-") && n.ends_with(".csv"))
        .collect();
    assert_eq!(csvs.len(), 4, "{csvs:?}");
    // The tables' CSVs hold numbers a spreadsheet computes with, not the
    // display strings of the terminal ("4,250", "235 µs").
    let mut figures = 0;
    for n in &csvs {
        let text = std::fs::read_to_string(out.join(n)).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        for row in r.records() {
            for cell in row.unwrap().iter().skip(1) {
                let display = cell.ends_with("µs")
                    || cell.ends_with(" ms")
                    || (cell.contains(',') && cell.replace(',', "").parse::<f64>().is_ok());
                assert!(!display, "{n}: a display string {cell:?} in\n{text}");
                figures += usize::from(cell.parse::<f64>().is_ok());
            }
        }
    }
    assert!(figures > 20, "{figures} figures");
    // 100/0 writes nothing, 0/100 reads nothing.
    let first = &runs[1]["totals"];
    assert_eq!(first["write"]["ops"], 0);
    assert!(first["read"]["ops"].as_u64().unwrap() > 0);
}

#[test]
fn mix_sweep_runs_eleven_mixes_per_pattern() {
    let d = tmp();
    let o = ok(&[
        "suite",
        "run",
        "mix-sweep",
        "--target",
        d.path().join("t").to_str().unwrap(),
        "--size",
        "8m",
        "--engine",
        "null",
        "--duration",
        "100ms",
        "--warmup",
        "0",
        "--no-warmup-run",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let pcts: Vec<u64> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["workload"]["read_pct"].as_u64().unwrap())
        .collect();
    let one: Vec<u64> = (0..=10).rev().map(|i| i * 10).collect();
    assert_eq!(pcts, [one.clone(), one].concat());
}

#[test]
fn a_run_sweep_expands_to_the_cross_product() {
    let d = tmp();
    let o = ok(&[
        "run",
        "--target",
        d.path().join("t").to_str().unwrap(),
        "--size",
        "8m",
        "--engine",
        "null",
        "--threads",
        "1,2",
        "--bs",
        "4k,64k",
        "--rw",
        "randrw",
        "--read-pct",
        "100:0:-50",
        "--duration",
        "100ms",
        "--warmup",
        "0",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * 2 * 3);
    let points: Vec<(u64, u64, u64)> = runs
        .iter()
        .map(|r| {
            let w = &r["workload"];
            (
                w["threads"].as_u64().unwrap(),
                w["bs"][0]["bytes"].as_u64().unwrap(),
                w["read_pct"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(points[0], (1, 4096, 100));
    assert_eq!(points[2], (1, 4096, 0));
    assert_eq!(points[11], (2, 65536, 0));
    // The dry run lists every point and the total time before anything starts.
    let o = ok(&[
        "run",
        "--target",
        d.path().join("u").to_str().unwrap(),
        "--size",
        "8m",
        "--threads",
        "1,2,4,8",
        "--duration",
        "10s",
        "--warmup",
        "0",
        "--dry-run",
    ]);
    let text = stdout(&o);
    assert!(
        text.contains("runs:     4") && text.contains("total:    40s"),
        "{text}"
    );
}

#[test]
fn the_rate_is_held_within_one_percent_below_capacity() {
    let d = tmp();
    for arrivals in ["uniform", "poisson"] {
        let o = ok(&[
            "run",
            "--target",
            d.path().join("t").to_str().unwrap(),
            "--size",
            "8m",
            "--engine",
            "null",
            "--threads",
            "2",
            "--rate",
            "4000",
            "--arrivals",
            arrivals,
            "--duration",
            "2s",
            "--warmup",
            "0",
            "--json",
        ]);
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let rate = &doc["runs"][0]["rate"];
        let achieved = rate["achieved_iops"].as_f64().unwrap();
        let tolerance = if arrivals == "uniform" { 0.01 } else { 0.05 };
        assert!(
            (achieved / 4000.0 - 1.0).abs() < tolerance,
            "{arrivals}: achieved {achieved}"
        );
        assert_eq!(rate["reached"], true);
        let t = &doc["runs"][0]["totals"]["read"];
        assert!(
            t["service_lat_us"]["mean"].as_f64().is_some(),
            "service time reported beside latency"
        );
    }
}

#[test]
fn steady_state_ends_the_warm_up_early() {
    let d = tmp();
    let o = ok(&[
        "run",
        "--target",
        d.path().join("t").to_str().unwrap(),
        "--size",
        "8m",
        "--engine",
        "null",
        "--rate",
        "3000",
        "--steady",
        "--warmup",
        "20s",
        "--interval",
        "100ms",
        "--duration",
        "300ms",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let steady = &doc["runs"][0]["steady"];
    assert_eq!(steady["reached"], true, "{steady}");
    assert!(steady["after_s"].as_f64().unwrap() < 5.0, "{steady}");
}

#[test]
fn suite_show_prints_an_editable_file_that_runs() {
    let d = tmp();
    let o = ok(&["suite", "show", "disk-check"]);
    let text = stdout(&o);
    assert!(text.contains("read_pct = 80"), "{text}");
    let file = d.path().join("mine.toml");
    std::fs::write(&file, text.replace("read_pct = 80", "read_pct = 70")).unwrap();
    let o = ok(&[
        "suite",
        "run",
        file.to_str().unwrap(),
        "--target",
        d.path().join("t").to_str().unwrap(),
        "--size",
        "8m",
        "--engine",
        "null",
        "--duration",
        "100ms",
        "--warmup",
        "0",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["workload"]["read_pct"] == 70)
    );
}

#[test]
fn a_bad_suite_file_names_its_line_and_exits_2() {
    let d = tmp();
    let file = d.path().join("bad.toml");
    std::fs::write(
        &file,
        "name = \"x\"\ntable = \"patterns\"\n\n[[run]]\nname = \"a\"\nbs = \"12Q\"\n",
    )
    .unwrap();
    let o = vb([
        "suite",
        "run",
        file.to_str().unwrap(),
        "--target",
        d.path().to_str().unwrap(),
    ])
    .expect(exit::BAD_INPUT);
    let err = stderr(&o);
    assert!(
        err.contains("bad.toml line 6: bs:") && err.contains("12Q"),
        "{err}"
    );
    let o = vb([
        "suite",
        "run",
        "no-such-suite",
        "--target",
        d.path().to_str().unwrap(),
    ])
    .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("six-patterns"));
}

#[test]
fn plan_answers_littles_law() {
    let o = ok(&["plan", "--latency", "1.3ms", "--iops", "3500"]);
    assert!(stdout(&o).contains("4.55 I/Os in flight"));
    vb(["plan", "--latency", "1ms"]).expect(exit::BAD_INPUT);
}

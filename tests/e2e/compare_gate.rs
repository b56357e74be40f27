//! `compare --fail-below` as a CI pipeline uses it: a volume made slower
//! (the same loop device, once under a kernel IOPS cap) trips the gate with
//! exit 6 and names the figure; a rerun of the same passes. Then the
//! after-the-fact exports a user feeds to a spreadsheet.

use std::path::Path;

use crate::common::volume::{Volume, VolumeSpec, create_or_skip};
use crate::common::*;
use volbench::error::exit;

const MIB: u64 = 1 << 20;

/// 4 KiB random reads at queue depth 1 on the device, into `out`; inside
/// the volume's cap when `capped`, else on the bare loop device.
fn measure(vol: &Volume, capped: bool, out: &Path) {
    let mut cmd = if capped { vol.volbench() } else { volbench() };
    let o = cmd
        .args(["run", "--target", vol.device_str(), "--rw", "randread"])
        .args(["--duration", "2s", "--warmup", "1s", "--output"])
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

fn gate(base: &Path, new: &Path) -> std::process::Output {
    volbench()
        .arg("compare")
        .args([base, new])
        .args([
            "-o",
            "-",
            "--json",
            "--fail-below",
            "0.9",
            "--fail-on",
            "iops,mean_lat",
        ])
        .output()
        .unwrap()
}

#[test]
fn a_capped_volume_trips_the_gate_and_a_rerun_passes() {
    let _one = heavy_io();
    let spec = VolumeSpec::new(64 * MIB).read_iops(500);
    let Some(vol) = create_or_skip("compare_gate", spec) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let (fast, slow, again) = (
        d.path().join("fast"),
        d.path().join("slow"),
        d.path().join("again"),
    );
    measure(&vol, false, &fast);
    measure(&vol, true, &slow);
    measure(&vol, true, &again);

    let o = gate(&fast, &slow);
    assert_eq!(o.status.code(), Some(exit::REGRESSION), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "volbench.compare/v1");
    assert_eq!(v["passed"], false);
    let iops = v["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["metric"] == "iops")
        .unwrap();
    assert_eq!(iops["failed"], true, "{iops:#}");
    assert!(iops["value"].as_f64().unwrap() < 600.0, "{iops:#}");
    let err = stderr(&o);
    assert!(
        err.contains("failed: ") && err.contains("IOPS is") && err.contains("below 0.9"),
        "{err}"
    );
    assert!(!err.contains("0.00x") && !err.contains("inf"), "{err}");

    let o = gate(&slow, &again);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["passed"], true);
}

#[test]
fn the_gate_refuses_a_ratio_it_cannot_use() {
    let d = tempfile::tempdir().unwrap();
    let a = write_result(
        &d.path().join("a"),
        &volbench::report::fixtures::six_patterns(),
    );
    for bad in ["0", "-1", "11", "abc", "NaN"] {
        let o = volbench()
            .arg("compare")
            .args([&a, &a])
            .args(["-o", "-", "--fail-below", bad])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(exit::BAD_INPUT),
            "{bad}: {}",
            stderr(&o)
        );
        assert_eq!(
            stderr(&o).trim().lines().count(),
            1,
            "{bad}: {}",
            stderr(&o)
        );
    }
    let o = volbench()
        .arg("compare")
        .args([&a, &a])
        .args([
            "-o",
            "-",
            "--fail-below",
            "0.9",
            "--fail-on",
            "iops,latency",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(stderr(&o).contains("\"latency\""), "{}", stderr(&o));
}

#[test]
fn identical_results_pass_the_strictest_gate() {
    let d = tempfile::tempdir().unwrap();
    let a = write_result(
        &d.path().join("a"),
        &volbench::report::fixtures::six_patterns(),
    );
    let b = write_result(
        &d.path().join("b"),
        &volbench::report::fixtures::six_patterns(),
    );
    let o = volbench()
        .arg("compare")
        .args([&a, &b])
        .args(["-o", "-", "--fail-below", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(stderr(&o).contains("gate passed"), "{}", stderr(&o));
}

/// `report DIR --format FORMAT`'s CSV rows (the header checked by parsing).
fn report_rows(out: &Path, format: &str) -> Vec<csv::StringRecord> {
    let o = volbench()
        .arg("report")
        .arg(out)
        .args(["--format", format])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let mut r = csv::Reader::from_reader(text.as_bytes());
    r.records().map(|x| x.unwrap()).collect()
}

#[test]
fn interval_and_bucket_exports_agree_with_the_result() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = volbench()
        .args(["run", "--target"])
        .arg(d.path().join("t"))
        .args([
            "--size",
            "4m",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--interval",
            "250ms",
        ])
        .args(["--output"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    let run = &doc["runs"][0];

    let rows = report_rows(&out, "intervals-csv");
    assert_eq!(rows.len(), run["intervals"].as_array().unwrap().len());
    // The intervals' operations add up to the run's: what was counted
    // was exported.
    let counted: u64 = rows.iter().map(|x| x[14].parse::<u64>().unwrap()).sum();
    let ops = run["totals"]["read"]["ops"].as_u64().unwrap();
    let warm = run["warmup"]["read"]["ops"].as_u64().unwrap_or(0);
    assert!(
        counted.abs_diff(ops + warm) <= (ops + warm) / 100 + 8,
        "{counted} vs {ops}"
    );

    let rows = report_rows(&out, "latency-buckets");
    assert_eq!(rows.len(), 20, "20 bands for the one read op");
    let total: u64 = rows.iter().map(|x| x[5].parse::<u64>().unwrap()).sum();
    assert_eq!(total, ops, "every measured read is in a band");
    assert_eq!(&rows[19][7], "100.0000");
}

//! Accuracy against a known answer: volumes capped by the kernel's block
//! throttling (see `crate::common::volume`) must read as their cap, and a
//! saturated run must satisfy Little's law (requests in flight = IOPS x mean
//! latency), which checks the latency figures against the throughput ones.
//! Each test drives the real binary for about 6 seconds (1 s warm-up + 5 s).
//!
//! Why the figures hold on a busy machine: each run keeps at least 50 ms of
//! the cap's work queued at the device (32 reads at 500 IOPS, 16 writes at
//! 300, 16 x 64 KiB at 16 MiB/s). A thread that waits for a CPU to submit
//! its next I/O (CFS stretches its 24 ms period with every runnable task;
//! four CPU-bound processes on two cores make it tens of ms) leaves the
//! queue still full, so the cap alone sets the rate; at 4 in flight (16 ms
//! of work) a loaded run read 15.39 of 16 MiB/s. The tolerance is the
//! throttle's own (`throttle_grain`): it grants its budget per 100 ms
//! slice and keeps one slice of history when it trims, so over any window
//! it may let through up to two slices' budget more than the cap (the
//! kernel's comment: "allowing deviation that is less than two slices"),
//! 4% of the 5-second measured phase; a loaded CI run read 306.1 of 300.

use std::path::Path;

use crate::common::volume::{self, Volume, VolumeSpec, measured_secs, throttle_grain};
use crate::common::*;
use volbench::error::exit;

const MIB: u64 = 1 << 20;
/// The volume, or None after a loud skip when this machine cannot make one.
fn volume(test: &str, spec: VolumeSpec) -> Option<Volume> {
    if let Some(why) = volume::unavailable() {
        skip(test, &why);
        return None;
    }
    match Volume::create(test, &spec) {
        Ok(v) => Some(v),
        Err(e) => panic!("{test}: cannot create the emulated volume: {e}"),
    }
}

/// Requests the block device completed, (reads, writes), from its own
/// counters (`/sys/block/NAME/stat`, fields 1 and 5).
fn device_ios(vol: &Volume) -> (u64, u64) {
    let v = device_stat(vol);
    (v[0], v[4])
}

/// The block device's own counters, `/sys/block/NAME/stat`.
fn device_stat(vol: &Volume) -> Vec<u64> {
    let name = Path::new(vol.device_str())
        .file_name()
        .expect("a device name")
        .to_string_lossy()
        .into_owned();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).expect("device stat");
    stat.split_whitespace()
        .map(|x| x.parse().expect("a count"))
        .collect()
}

/// Sectors (512 bytes) the block device has read, from its own counters
/// (`/sys/block/NAME/stat`, field 3).
fn device_read_sectors(vol: &Volume) -> u64 {
    device_stat(vol)[2]
}

/// The IOPS a capped run must read as: the cap, unless the device itself
/// served fewer in the measured phase (a loop device's worker starved of
/// CPU on a busy machine completes fewer than the throttle lets through).
/// The device's count is its own: what it completed over the whole run,
/// less the warm-up's operations volbench counted; volbench's measured
/// count must be that within twice the I/Os in flight (those straddling
/// the warm-up's end and the run's end), whatever the load.
fn reads_as_the_cap(run: &serde_json::Value, op: &str, served: u64, cap: f64, in_flight: u64) {
    let counted = run["totals"][op]["ops"].as_u64().unwrap();
    let warm = run["warmup"][op]["ops"].as_u64().unwrap_or(0);
    let device = served.saturating_sub(warm);
    assert!(
        counted.abs_diff(device) <= 2 * in_flight,
        "{op}: volbench counted {counted} measured operations, the device completed {device}"
    );
    let measured_s = measured_secs(run);
    let device_rate = device as f64 / measured_s;
    let grain = throttle_grain(measured_s);
    assert_within(
        &format!("{op} IOPS"),
        f(&run["totals"][op]["iops"]),
        cap.min(device_rate),
        grain,
    );
    assert!(
        f(&run["totals"][op]["iops"]) <= cap * (1.0 + grain),
        "{op}: above the cap"
    );
}

/// Runs volbench inside the volume's cap with `--json` and returns the
/// single run's result and the device's completed (reads, writes) over it.
fn run_capped(vol: &Volume, args: &[&str]) -> (serde_json::Value, (u64, u64)) {
    let before = device_ios(vol);
    let o = vol
        .volbench()
        .arg("run")
        .args(args)
        .args(["--duration", "5s", "--warmup", "1s", "--json"])
        .output()
        .expect("the volbench binary runs");
    assert_eq!(
        o.status.code(),
        Some(exit::OK),
        "volbench failed: {}",
        stderr(&o)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stderr(&o)));
    assert_eq!(doc["interrupted"], false);
    let after = device_ios(vol);
    (
        doc["runs"][0].clone(),
        (after.0 - before.0, after.1 - before.1),
    )
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn assert_within(what: &str, got: f64, want: f64, tolerance: f64) {
    let err = (got - want).abs() / want;
    assert!(
        err <= tolerance,
        "{what}: got {got:.2}, want {want} within {:.0}% (off by {:.2}%)",
        tolerance * 100.0,
        err * 100.0
    );
}

/// Little's law on the measured totals: with `concurrency` I/Os always in
/// flight, IOPS x mean latency must equal it. Computed here from the totals,
/// not taken from volbench's own `littles_law` block, which is checked too.
fn assert_littles_law(run: &serde_json::Value, op: &str, concurrency: u64) {
    let t = &run["totals"][op];
    let in_flight = f(&t["iops"]) * f(&t["lat_us"]["mean"]) / 1e6;
    assert_within(
        &format!("{op} IOPS x mean latency (Little's law)"),
        in_flight,
        concurrency as f64,
        0.05,
    );
    assert_eq!(run["littles_law"]["concurrency"], concurrency);
    assert_within(
        "littles_law.iops_x_latency in result.json",
        f(&run["littles_law"]["iops_x_latency"]),
        in_flight,
        0.001,
    );
}

#[test]
fn read_iops_cap_of_500_reads_as_500() {
    let _one = crate::common::heavy_io();
    let test = "read_iops_cap_of_500_reads_as_500";
    let Some(vol) = volume(test, VolumeSpec::new(256 * MIB).read_iops(500)) else {
        return;
    };
    let (run, served) = run_capped(
        &vol,
        &[
            "--target",
            vol.device_str(),
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--threads",
            "4",
            "--iodepth",
            "8",
        ],
    );
    reads_as_the_cap(&run, "read", served.0, 500.0, 32);
    assert_eq!(run["totals"]["write"]["ops"], 0);
    // 32 requests queued against a 500 IOPS cap: the device is saturated.
    assert_littles_law(&run, "read", 32);
    // The intervals tell the same story as the totals, each within the
    // throttle's grain over its own length (budget a starved submitter
    // left unused in one interval is spent in the next; a loaded CI run
    // read 541.9 in one).
    let measured: Vec<(f64, f64)> = run["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .filter(|i| i["phase"] == "measure")
        .map(|i| (f(&i["read"]["iops"]), f(&i["duration_s"])))
        .collect();
    assert!(measured.len() >= 4, "{} measured intervals", measured.len());
    for (iops, secs) in measured {
        assert_within("interval read IOPS", iops, 500.0, throttle_grain(secs));
    }
}

/// The synchronous engine runs threads x iodepth OS threads, each with one
/// pread in flight; its latencies must add up just as io_uring's do.
#[test]
fn littles_law_holds_on_a_saturated_psync_run() {
    let _one = crate::common::heavy_io();
    let test = "littles_law_holds_on_a_saturated_psync_run";
    let Some(vol) = volume(test, VolumeSpec::new(256 * MIB).read_iops(500)) else {
        return;
    };
    let (run, served) = run_capped(
        &vol,
        &[
            "--target",
            vol.device_str(),
            "--engine",
            "psync",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--threads",
            "4",
            "--iodepth",
            "4",
        ],
    );
    assert_eq!(run["engine"], "psync");
    assert_littles_law(&run, "read", 16);
    reads_as_the_cap(&run, "read", served.0, 500.0, 16);
}

#[test]
fn write_iops_cap_of_300_writes_as_300() {
    let _one = crate::common::heavy_io();
    let test = "write_iops_cap_of_300_writes_as_300";
    let Some(vol) = volume(test, VolumeSpec::new(256 * MIB).write_iops(300)) else {
        return;
    };
    let (run, served) = run_capped(
        &vol,
        &[
            "--target",
            vol.device_str(),
            "--allow-overwrite",
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--threads",
            "2",
            "--iodepth",
            "8",
        ],
    );
    reads_as_the_cap(&run, "write", served.1, 300.0, 16);
    assert_eq!(run["totals"]["read"]["ops"], 0);
    assert_littles_law(&run, "write", 16);
}

/// A file-system target on a bandwidth-capped volume: volbench lays out its
/// file set on ext4 (uncapped writes), then 64 KiB direct reads through the
/// file system must run at the byte cap.
#[test]
fn read_bandwidth_cap_through_ext4_reads_as_the_cap() {
    let _one = crate::common::heavy_io();
    let test = "read_bandwidth_cap_through_ext4_reads_as_the_cap";
    let cap_mib = 16;
    let Some(vol) = volume(
        test,
        VolumeSpec::new(256 * MIB).read_bps(cap_mib * MIB).ext4(),
    ) else {
        return;
    };
    let mnt = vol.mountpoint.clone().expect("ext4 volume is mounted");
    let target = mnt.join("set");
    let sectors_before = device_read_sectors(&vol);
    let (run, _) = run_capped(
        &vol,
        &[
            "--target",
            target.to_str().expect("utf-8 path"),
            "--size",
            "32m",
            "--files",
            "2",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--threads",
            "2",
            "--iodepth",
            "8",
        ],
    );
    // As with IOPS: the cap, unless the loop device, starved of CPU on a
    // busy machine, read fewer bytes than the throttle let through (a
    // loaded run read 15.23 of 16). Its own count over the run, less the
    // warm-up's reads (64 KiB each).
    let secs = measured_secs(&run);
    let warm = run["warmup"]["read"]["ops"].as_u64().unwrap_or(0) * 65536;
    let device = ((device_read_sectors(&vol) - sectors_before) * 512).saturating_sub(warm);
    let device_mib_s = device as f64 / secs / MIB as f64;
    let got = f(&run["totals"]["read"]["mib_s"]);
    assert_within(
        "read MiB/s",
        got,
        (cap_mib as f64).min(device_mib_s),
        throttle_grain(secs),
    );
    assert!(
        got <= cap_mib as f64 * (1.0 + throttle_grain(secs)),
        "read MiB/s {got}: above the cap"
    );
    let t = &run["totals"]["read"];
    assert_eq!(
        t["bytes"].as_u64().expect("bytes"),
        t["ops"].as_u64().expect("ops") * 65536
    );
    assert_littles_law(&run, "read", 16);
}

//! End-to-end: the flags that shape a run's I/O (--distribution,
//! --seek-pct, --fsync-every, --think-time, --cooldown, --rate as a
//! bandwidth): refused with their bound before any I/O, shown by
//! --dry-run, and doing what they say on a real run (null engine: fast,
//! and the pacing is volbench's own).

use volbench::error::exit;

use crate::common::*;

fn run_json(dir: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let t = dir.join("t");
    let mut args = vec![
        "run",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "8m",
        "--engine",
        "null",
        "--warmup",
        "0",
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = vb(args).expect(exit::OK);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)))
}

fn ops(doc: &serde_json::Value) -> f64 {
    let t = &doc["runs"][0]["totals"];
    (t["read"]["ops"].as_u64().unwrap() + t["write"]["ops"].as_u64().unwrap()) as f64
}

#[test]
fn bad_shape_values_exit_2_naming_the_bound() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let t = t.to_str().unwrap();
    for (extra, needle) in [
        (
            vec!["--distribution", "zipf:0"],
            "zipf theta 0 is outside 0.01..10",
        ),
        (vec!["--distribution", "hot:90/20,20/10"], "110% of the I/O"),
        (vec!["--distribution", "normal"], "not uniform, zipf:THETA"),
        (
            vec!["--rw", "read", "--distribution", "hot:80/20"],
            "use a random pattern",
        ),
        (vec!["--rw", "read", "--seek-pct", "30"], "random pattern"),
        (
            vec!["--seek-pct", "101"],
            "--seek-pct 101 is outside 0..100",
        ),
        (
            vec!["--random-map", "--distribution", "zipf:1.2"],
            "--random-map visits every block once per pass",
        ),
        (vec!["--random-map", "--seek-pct", "50"], "no --seek-pct"),
        (vec!["--rw", "read", "--random-map"], "random pattern"),
        (vec!["--fsync-every", "4"], "needs writes"),
        (vec!["--rw", "randwrite", "--fdatasync"], "give one of them"),
        (vec!["--think-time", "2h"], "--think-time"),
        (vec!["--rate", "0KiB/s"], "--rate"),
    ] {
        let mut args = vec!["run", "--target", t, "--size", "8m"];
        args.extend(extra.iter().copied());
        let o = run(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{extra:?}: {e}");
        assert!(e.contains(needle), "{extra:?}: expected '{needle}' in {e}");
        assert!(
            !t.is_empty() && !std::path::Path::new(t).exists(),
            "no I/O before the check"
        );
    }
}

#[test]
fn dry_run_shows_the_shape() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let o = vb([
        "run",
        "--target",
        t.to_str().unwrap(),
        "--rw",
        "randwrite",
        "--distribution",
        "hot:80/20",
        "--seek-pct",
        "30",
        "--fsync-every",
        "16",
        "--fdatasync",
        "--think-time",
        "1ms",
        "--cooldown",
        "5s",
        "--dry-run",
    ])
    .expect(exit::OK);
    let out = stdout(&o);
    for want in [
        "[offsets hot:80/20]",
        "[seek 30%, else sequential]",
        "[fdatasync every 16 writes]",
        "[think 1ms]",
        "[cool-down 5s]",
    ] {
        assert!(out.contains(want), "missing {want} in {out}");
    }
    let o = vb([
        "run",
        "--target",
        t.to_str().unwrap(),
        "--rw",
        "randread",
        "--random-map",
        "--dry-run",
    ])
    .expect(exit::OK);
    assert!(
        stdout(&o).contains("[each block once per pass]"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn think_time_paces_each_thread() {
    let d = tempfile::tempdir().unwrap();
    let doc = run_json(d.path(), &["--think-time", "20ms", "--duration", "1s"]);
    let n = ops(&doc);
    // One I/O, then 20 ms of thought: at most 50 a second, and not stalled.
    assert!(
        (25.0..=51.0).contains(&n),
        "{n} I/Os in 1 s with 20 ms think time"
    );
}

#[test]
fn a_bandwidth_rate_holds_bytes_per_second_across_a_size_mix() {
    let d = tempfile::tempdir().unwrap();
    let doc = run_json(
        d.path(),
        &["--rate", "2MiB/s", "--bs", "4k:1,12k:1", "--duration", "2s"],
    );
    let r = &doc["runs"][0];
    let bytes = r["totals"]["read"]["bytes"].as_u64().unwrap() as f64;
    let secs = r["phases"].as_array().unwrap().last().unwrap()["duration_s"]
        .as_f64()
        .unwrap();
    let mib_s = bytes / secs / 1048576.0;
    assert!(
        (mib_s - 2.0).abs() < 0.2,
        "{mib_s} MiB/s against a 2 MiB/s cap"
    );
    assert_eq!(
        r["workload"]["shape"]["rate_bytes"].as_f64(),
        Some(2.0 * 1048576.0)
    );
}

#[test]
fn cooldown_io_is_not_counted() {
    let d = tempfile::tempdir().unwrap();
    let doc = run_json(
        d.path(),
        &["--rate", "200", "--duration", "1s", "--cooldown", "1s"],
    );
    let n = ops(&doc);
    // 200 IOPS for the measured second; the cool-down's second adds nothing.
    assert!((160.0..=240.0).contains(&n), "{n} I/Os counted");
    let measured = doc["runs"][0]["phases"].as_array().unwrap().last().unwrap()["duration_s"]
        .as_f64()
        .unwrap();
    assert!(measured < 1.5, "measured {measured} s");
}

#[test]
fn fsync_every_runs_on_a_real_file_set() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let o = vb([
        "run",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "4m",
        "--buffered",
        "--rw",
        "randwrite",
        "--fsync-every",
        "8",
        "--end-fsync",
        "--distribution",
        "zipf:1.2",
        "--warmup",
        "0",
        "--io-limit",
        "1m",
        "--duration",
        "10s",
        "--json",
    ])
    .expect(exit::OK);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &doc["runs"][0];
    assert_eq!(
        r["totals"]["write"]["ops"].as_u64(),
        Some(256),
        "the io limit is exact"
    );
    assert_eq!(r["workload"]["shape"]["fsync_every"].as_u64(), Some(8));
    assert_eq!(
        r["workload"]["shape"]["distribution"]["kind"].as_str(),
        Some("zipf")
    );
    // The fill is reported as a phase of its own: size, time and rate.
    let fill = &doc["fill"][0];
    assert_eq!(fill["skipped_reused"].as_bool(), Some(false), "{fill}");
    assert!(fill["bytes"].as_u64().unwrap() > 0, "{fill}");
    assert!(fill["seconds"].as_f64().unwrap() > 0.0, "{fill}");
    assert!(fill["mib_s"].as_f64().unwrap() > 0.0, "{fill}");
}

/// `--rate-bw R,W` on a real file (psync, direct): each direction held at
/// its own cap. The byte schedule paces the total exactly (each I/O's gap is
/// its length over the rate); which direction an I/O takes is a draw at the
/// read share, so each direction's count is binomial around its share. The
/// tolerance is five of its standard deviations, plus what the schedule can
/// leave undone when the phase ends (the I/Os in flight, and those due in
/// the last 2% of the run while a busy 2-core machine had the workers off
/// the CPU: open-loop I/Os are issued late, never skipped, until the end).
#[test]
fn bandwidth_caps_per_direction_hold_each_direction_on_a_real_file() {
    let _one = crate::common::heavy_io();
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let (read_cap, write_cap, bs, threads) = (6.0 * 1048576.0, 2.0 * 1048576.0, 4096.0, 2.0);
    let o = vb([
        "run",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "64m",
        "--engine",
        "psync",
        "--rw",
        "randrw",
        "--rate-bw",
        "6MiB/s,2MiB",
        "--threads",
        "2",
        "--duration",
        "3s",
        "--warmup",
        "0",
        "--json",
    ])
    .expect(exit::OK);
    let doc: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    let r = &doc["runs"][0];
    // The mix follows the caps: 6 of 8 MiB/s are reads.
    assert_eq!(r["workload"]["read_pct"], 75, "{}", r["workload"]);
    assert_eq!(
        r["workload"]["shape"]["rate_bytes"].as_f64(),
        Some(read_cap + write_cap)
    );
    let secs = r["phases"].as_array().unwrap().last().unwrap()["duration_s"]
        .as_f64()
        .unwrap();
    let n = (read_cap + write_cap) * secs / bs;
    for (op, cap, share) in [("read", read_cap, 0.75), ("write", write_cap, 0.25)] {
        let bytes = r["totals"][op]["bytes"].as_u64().unwrap() as f64;
        let want = cap * secs;
        let sd = (n * share * (1.0 - share)).sqrt() * bs;
        let slack = 5.0 * sd + threads * bs + 0.02 * want;
        assert!(
            (bytes - want).abs() <= slack,
            "{op}: {:.3} MiB/s against a {:.1} MiB/s cap (allowed +-{:.3})",
            bytes / secs / 1048576.0,
            cap / 1048576.0,
            slack / secs / 1048576.0
        );
    }
}

#[test]
fn bandwidth_caps_per_direction_are_refused_in_one_line() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    for (extra, needle) in [
        (vec!["--rate-bw", "5MiB/s"], "takes read,write bandwidth"),
        (vec!["--rate-bw", "0,0"], "caps neither reads nor writes"),
        (
            vec!["--rate-bw", "100,1MiB"],
            "100 is outside 1KiB/s..1PiB/s",
        ),
        (
            vec!["--rw", "randread", "--rate-bw", ",5MiB/s"],
            "caps writes, which --rw randread",
        ),
        (
            vec!["--rate", "100", "--rate-bw", "5MiB,5MiB"],
            "--rate-bw and --rate both set a rate",
        ),
        (
            vec!["--rate-iops", "5,5", "--rate-bw", "5MiB,5MiB"],
            "--rate-iops and --rate-bw both set a rate",
        ),
        (
            vec!["--read-pct", "30,70", "--rate-bw", "5MiB,5MiB"],
            "sweep --read-pct without it",
        ),
    ] {
        let mut args = vec!["run", "--target", t.to_str().unwrap()];
        if !extra.contains(&"--rw") {
            args.extend(["--rw", "randrw"]);
        }
        args.extend_from_slice(&extra);
        let o = vb(args).expect(exit::BAD_INPUT);
        let e = stderr(&o);
        assert!(e.contains(needle), "{extra:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    }
    assert!(!t.exists(), "refused before any I/O");
}

//! End-to-end behaviour of `volbench run`, driving the real binary.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use volbench::error::exit;

use crate::common::*;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn json_of(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stderr(o)))
}

#[test]
fn a_run_writes_result_json_and_csv_with_the_v1_schema() {
    let d = tmp();
    let target = d.path().join("t");
    let out = d.path().join("out");
    vb([
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "16m",
        "--files",
        "2",
        "--rw",
        "randrw",
        "--read-pct",
        "70",
        "--bs",
        "8k",
        "--threads",
        "2",
        "--iodepth",
        "4",
        "--duration",
        "1s",
        "--warmup",
        "300ms",
        "--interval",
        "250ms",
        "--output",
        out.to_str().unwrap(),
    ])
    .expect(exit::OK);
    let doc = read_json(&out.join("result.json"));
    assert_eq!(doc["schema"], "volbench.result/v1");
    assert_eq!(doc["tool"]["name"], "volbench");
    assert!(doc["host"]["cpus"].as_u64().unwrap() >= 1);
    assert!(doc["host"]["memory_bytes"].as_u64().unwrap() > 0);
    assert_eq!(doc["spec"]["target"]["files"], 2);
    assert_eq!(doc["spec"]["runs"][0]["read_pct"], 70);
    let run = &doc["runs"][0];
    let phases: Vec<&str> = run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["warmup", "measure"]);
    for op in ["read", "write"] {
        let t = &run["totals"][op];
        assert!(t["ops"].as_u64().unwrap() > 0, "{op} did no I/O");
        // Fixed block size: bytes are exactly ops x bs.
        assert_eq!(
            t["bytes"].as_u64().unwrap(),
            t["ops"].as_u64().unwrap() * 8192
        );
        let lat = &t["lat_us"];
        for k in [
            "mean", "min", "max", "stddev", "p50", "p90", "p99", "p99_9", "p99_99",
        ] {
            assert!(lat[k].as_f64().is_some(), "lat_us.{k} missing");
        }
        assert!(lat["min"].as_f64().unwrap() <= lat["p50"].as_f64().unwrap());
        assert!(lat["p50"].as_f64().unwrap() <= lat["p99"].as_f64().unwrap());
        assert!(lat["p99"].as_f64().unwrap() <= lat["max"].as_f64().unwrap());
        // The histogram holds exactly the measured operations.
        let hist_count: u64 = run["histograms"][op]["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[2].as_u64().unwrap())
            .sum();
        assert_eq!(hist_count, t["ops"].as_u64().unwrap());
    }
    assert!(run["totals"]["cpu"]["user_pct"].as_f64().is_some());
    let intervals = run["intervals"].as_array().unwrap();
    assert!(
        intervals.len() >= 4,
        "expected intervals of 250ms over 1.3s, got {}",
        intervals.len()
    );
    assert!(intervals.iter().any(|i| i["phase"] == "warmup"));
    assert!(
        intervals
            .iter()
            .all(|i| i["read"]["iops"].as_f64().is_some() && i["t_s"].as_f64().is_some())
    );
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("run,op,rw,bs,read_pct,threads,iodepth,engine")
    );
    assert_eq!(lines.count(), 2, "one row per op type");
}

#[test]
fn observed_read_share_follows_read_pct() {
    let d = tmp();
    let o = vb([
        "run",
        "--target",
        d.path().join("t").to_str().unwrap(),
        "--size",
        "8m",
        "--rw",
        "randrw",
        "--read-pct",
        "70",
        "--engine",
        "null",
        "--io-limit",
        "200m",
        "--warmup",
        "0",
        "--duration",
        "30s",
        "--json",
    ])
    .expect(exit::OK);
    let doc = json_of(&o);
    let r = doc["runs"][0]["totals"]["read"]["ops"].as_u64().unwrap() as f64;
    let w = doc["runs"][0]["totals"]["write"]["ops"].as_u64().unwrap() as f64;
    assert_eq!(
        r + w,
        (200 << 20) as f64 / 4096.0,
        "the io limit is exact with a fixed block size"
    );
    let share = r * 100.0 / (r + w);
    assert!(
        (share - 70.0).abs() < 2.0,
        "read share {share}% over {} ops",
        r + w
    );
}

#[test]
fn psync_and_io_uring_do_the_same_work_on_a_fixed_size_run() {
    if let Err(why) = volbench::io::engine::probe_io_uring() {
        skip("psync_and_io_uring_do_the_same_work", &why);
        return;
    }
    let d = tmp();
    let target = d.path().join("t");
    let mut seen = Vec::new();
    for engine in ["psync", "io_uring"] {
        let o = run(&[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "32m",
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--threads",
            "2",
            "--iodepth",
            "4",
            "--engine",
            engine,
            "--io-limit",
            "8m",
            "--warmup",
            "0",
            "--duration",
            "60s",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(exit::OK), "{engine}: {}", stderr(&o));
        let doc = json_of(&o);
        let run = &doc["runs"][0];
        assert_eq!(run["engine"], engine);
        let t = &run["totals"];
        let ops = t["read"]["ops"].as_u64().unwrap() + t["write"]["ops"].as_u64().unwrap();
        let bytes = t["read"]["bytes"].as_u64().unwrap() + t["write"]["bytes"].as_u64().unwrap();
        seen.push((ops, bytes));
    }
    assert_eq!(seen[0], (2048, 8 << 20));
    assert_eq!(seen[0], seen[1]);
}

#[test]
fn dry_run_prints_the_plan_and_touches_nothing() {
    let d = tmp();
    let target = d.path().join("never");
    let o = vb([
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "4G",
        "--threads",
        "8",
        "--iodepth",
        "16",
        "--rw",
        "randrw",
        "--bs",
        "4k:30,64k:70",
        "--dry-run",
    ])
    .expect(exit::OK);
    let text = stdout(&o);
    assert!(text.contains("working set 4GiB"), "{text}");
    assert!(text.contains("4KiB:30,64KiB:70"), "{text}");
    assert!(
        text.contains("\"read_pct\": 50"),
        "resolved defaults shown: {text}"
    );
    assert!(!target.exists(), "dry run created the target");
}

#[test]
fn a_filled_file_set_is_reused() {
    let d = tmp();
    let target = d.path().join("t");
    let args = [
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "8m",
        "--duration",
        "200ms",
        "--warmup",
        "0",
    ];
    let first = run(&args);
    assert_eq!(first.status.code(), Some(exit::OK), "{}", stderr(&first));
    assert!(stderr(&first).contains("filling the file set"));
    let second = run(&args);
    assert_eq!(second.status.code(), Some(exit::OK));
    assert!(
        stderr(&second).contains("reusing the filled file set"),
        "{}",
        stderr(&second)
    );
    assert!(!stderr(&second).contains("filling the file set"));
}

fn expect_failure(args: &[&str], code: i32, needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "args {args:?}: {err}");
    assert!(
        err.contains(needle),
        "args {args:?}: expected '{needle}' in: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // A clear message, not a wall of text (clap adds a usage line and a tip).
    assert!(err.trim().lines().count() <= 6, "{err}");
}

#[test]
fn bad_input_gets_a_clear_message_and_exit_2() {
    let d = tmp();
    let t = d.path().join("t");
    let t = t.to_str().unwrap();
    expect_failure(&["run", "--target", t, "--frobnicate"], 2, "--frobnicate");
    expect_failure(&["run", "--target", t, "--size", "12Q"], 2, "12Q");
    expect_failure(
        &["run", "--target", t, "--rw", "randrw", "--read-pct", "120"],
        2,
        "--read-pct 120",
    );
    expect_failure(&["run", "--target", t, "--bs", "1000"], 2, "--bs 1000");
    expect_failure(
        &["run", "--target", t, "--rw", "sideways"],
        2,
        "--rw 'sideways'",
    );
    expect_failure(&["run", "--target", t, "--threads", "0"], 2, "--threads 0");
    expect_failure(
        &["run", "--target", t, "--duration", "soon"],
        2,
        "duration 'soon'",
    );
    expect_failure(
        &["run", "--target", t, "--engine", "aio"],
        2,
        "--engine 'aio'",
    );
    expect_failure(
        &["run", "--target", t, "--rw", "read", "--read-pct", "50"],
        2,
        "conflicts with --rw read",
    );
    expect_failure(
        &["run", "--target", t, "--size", "64k", "--bs", "128k"],
        2,
        "larger than each file",
    );
    expect_failure(&["run"], 2, "--target");
    expect_failure(
        &[
            "run",
            "--target",
            t,
            "--size",
            "1m",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--threads",
            "32",
            "--dry-run",
        ],
        2,
        "32 sequential streams",
    );
}

#[test]
fn a_missing_target_is_named() {
    expect_failure(
        &["run", "--target", "/nonexistent-volbench/a/b"],
        4,
        "does not exist",
    );
}

#[test]
fn existing_files_are_written_only_with_allow_overwrite() {
    let d = tmp();
    let file = d.path().join("precious.db");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let f = file.to_str().unwrap();
    expect_failure(
        &[
            "run",
            "--target",
            f,
            "--rw",
            "randwrite",
            "--duration",
            "200ms",
        ],
        3,
        "--allow-overwrite",
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        vec![7u8; 1 << 20],
        "the file was touched"
    );
    // Reading a file volbench did not create is fine.
    vb([
        "run",
        "--target",
        f,
        "--rw",
        "randread",
        "--duration",
        "200ms",
        "--warmup",
        "0",
    ])
    .expect(exit::OK);
    vb([
        "run",
        "--target",
        f,
        "--rw",
        "randwrite",
        "--duration",
        "200ms",
        "--warmup",
        "0",
        "--allow-overwrite",
    ])
    .expect(exit::OK);
    assert_ne!(std::fs::read(&file).unwrap(), vec![7u8; 1 << 20]);
}

#[test]
fn foreign_files_in_a_target_directory_are_not_overwritten() {
    let d = tmp();
    let name = format!("{}0.dat", volbench::io::target::FILE_PREFIX);
    std::fs::write(d.path().join(&name), b"not yours").unwrap();
    expect_failure(
        &[
            "run",
            "--target",
            d.path().to_str().unwrap(),
            "--size",
            "1m",
            "--duration",
            "200ms",
        ],
        3,
        "volbench did not create it",
    );
    assert_eq!(std::fs::read(d.path().join(&name)).unwrap(), b"not yours");
}

/// A tmpfs mounted for one test, unmounted on drop.
struct Mount(tempfile::TempDir);

impl Mount {
    /// A tmpfs for `test`, or None after saying why it cannot be had.
    fn tmpfs_or_skip(test: &str, opts: &str) -> Option<Mount> {
        if !is_root() {
            skip(test, "needs root to mount a tmpfs");
            return None;
        }
        let m = Mount::tmpfs(opts);
        if m.is_none() {
            skip(test, "cannot mount tmpfs here");
        }
        m
    }

    fn tmpfs(opts: &str) -> Option<Mount> {
        let dir = tmp();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                opts,
                "volbench-test",
                dir.path().to_str()?,
            ])
            .status()
            .ok()?
            .success();
        ok.then_some(Mount(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn an_unwritable_target_is_named_with_exit_4() {
    let Some(m) = Mount::tmpfs_or_skip("an_unwritable_target", "ro,size=1m") else {
        return;
    };
    let t = m.path().join("bench");
    expect_failure(
        &["run", "--target", t.to_str().unwrap(), "--size", "1m"],
        4,
        "Read-only file system",
    );
}

#[test]
fn a_disk_that_fills_up_during_prepare_is_reported_and_cleaned() {
    let Some(m) = Mount::tmpfs_or_skip("a_disk_that_fills_up", "size=8m") else {
        return;
    };
    let t = m.path().join("bench");
    // Too large from the start: refused before any write.
    expect_failure(
        &["run", "--target", t.to_str().unwrap(), "--size", "64m"],
        4,
        "use a smaller --size",
    );
    // Exactly the free space once the lock file takes its page: the fill
    // passes the free-space check and the marker then takes the last page.
    expect_failure(
        &["run", "--target", t.to_str().unwrap(), "--size", "8188k"],
        4,
        "filled up",
    );
    // The partial file set was removed, so the space is free again, and
    // with it the directory this run made (it held only the lock file).
    assert!(!t.exists(), "left behind: {t:?}");
}

#[test]
fn ctrl_c_stops_within_a_second_and_still_writes_the_result() {
    let d = tmp();
    let out = d.path().join("out");
    let mut child = volbench()
        .args([
            "run",
            "--target",
            d.path().join("t").to_str().unwrap(),
            "--size",
            "8m",
            "--duration",
            "60s",
            "--warmup",
            "0",
            "--interval",
            "100ms",
            "--output",
            out.to_str().unwrap(),
        ])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the run to start: the binary announces it on stderr.
    crate::common::wait_for_stderr_line(&mut child, "[1/1]");
    // Then wait until the kernel has seen it read (its syscr count grows), so
    // the interrupted result has something in it.
    let pid = child.id();
    let reads = || -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("syscr:"))
                    .and_then(|l| l[6..].trim().parse().ok())
            })
            .unwrap_or(0)
    };
    let base = reads();
    let deadline = Instant::now() + Duration::from_secs(20);
    while reads() < base + 200 {
        assert!(Instant::now() < deadline, "the run never started reading");
        std::thread::yield_now();
    }
    let sent = Instant::now();
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(
        sent.elapsed() < Duration::from_millis(1500),
        "took {:?} to stop",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(exit::INTERRUPTED));
    let doc = read_json(&out.join("result.json"));
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["runs"][0]["interrupted"], true);
    assert!(doc["runs"][0]["totals"]["read"]["ops"].as_u64().unwrap() > 0);
}

#[test]
fn json_on_stdout_is_the_whole_result() {
    let d = tmp();
    let o = vb([
        "run",
        "--target",
        d.path().join("t").to_str().unwrap(),
        "--size",
        "4m",
        "--duration",
        "200ms",
        "--warmup",
        "0",
        "--json",
    ])
    .expect(exit::OK);
    let doc = json_of(&o);
    assert_eq!(doc["schema"], "volbench.result/v1");
    assert!(
        stderr(&o).contains("IOPS"),
        "the summary goes to stderr with --json"
    );
}

#[test]
fn an_io_failure_mid_run_is_reported_with_exit_1_and_the_result_is_kept() {
    let d = tmp();
    let file = d.path().join("shrinking.dat");
    std::fs::write(&file, vec![1u8; 16 << 20]).unwrap();
    let out = d.path().join("out");
    let child = volbench()
        .args([
            "run",
            "--target",
            file.to_str().unwrap(),
            "--rw",
            "randread",
            "--duration",
            "30s",
        ])
        .args(["--warmup", "0", "--output", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let reads = || -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("syscr:"))
                    .and_then(|l| l[6..].trim().parse().ok())
            })
            .unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while reads() < 200 {
        assert!(Instant::now() < deadline, "the run never started reading");
        std::thread::yield_now();
    }
    // Someone truncates the file under the benchmark: reads come back short.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(0)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::RUN_FAILED), "{err}");
    assert!(err.contains("short read"), "{err}");
    let doc = read_json(&out.join("result.json"));
    assert!(doc["error"].as_str().unwrap().contains("short read"));
    assert!(
        doc["runs"][0]["totals"]["read"]["ops"].as_u64().unwrap() > 0,
        "what was measured is kept"
    );
}

#[test]
fn a_short_io_limit_run_is_timed_to_its_last_io() {
    // The measured phase ends when the last worker finished, not at the
    // collector's next poll: IOPS x mean latency must still equal the one
    // I/O in flight.
    let d = tmp();
    let o = vb([
        "run",
        "--target",
        d.path().join("t").to_str().unwrap(),
        "--size",
        "16m",
        "--io-limit",
        "4m",
        "--warmup",
        "0",
        "--duration",
        "60s",
        "--json",
    ])
    .expect(exit::OK);
    let doc = json_of(&o);
    let t = &doc["runs"][0]["totals"]["read"];
    assert_eq!(t["ops"], 1024);
    let in_flight = t["iops"].as_f64().unwrap() * t["lat_us"]["mean"].as_f64().unwrap() / 1e6;
    // Time between one I/O's end and the next one's start only lowers it
    // (7.5% seen on a loaded 2-core VM); a phase timed to the collector's
    // next poll would put it near 0.1.
    assert!(
        in_flight > 0.85 && in_flight < 1.05,
        "IOPS x latency = {in_flight}"
    );
}

/// The open flags (octal, from fdinfo) of every descriptor any thread of
/// the process holds on a file whose name starts with `prefix` (I/O threads
/// have descriptor tables of their own, so each task is looked at).
fn open_flags_of(pid: u32, prefix: &str) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for task in tasks.filter_map(|e| e.ok()) {
        let Ok(fds) = std::fs::read_dir(task.path().join("fd")) else {
            continue;
        };
        for fd in fds.filter_map(|e| e.ok()) {
            let ours = std::fs::read_link(fd.path()).is_ok_and(|t| {
                t.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            });
            let info = task.path().join("fdinfo").join(fd.file_name());
            if let (true, Ok(info)) = (ours, std::fs::read_to_string(info)) {
                if let Some(flags) = info.lines().find_map(|l| l.strip_prefix("flags:")) {
                    if let Ok(v) = u32::from_str_radix(flags.trim(), 8) {
                        found.push(v);
                    }
                }
            }
        }
    }
    found
}

#[test]
fn write_sync_opens_the_files_for_writes_with_o_dsync_or_o_sync() {
    let d = tmp();
    let target = d.path().join("t");
    let t = target.to_str().unwrap();
    for (mode, flag) in [("dsync", libc::O_DSYNC), ("sync", libc::O_SYNC)] {
        let mut child = volbench()
            .args(["run", "--target", t, "--size", "4m", "--buffered"])
            .args(["--rw", "randwrite", "--duration", "30s", "--warmup", "0"])
            .args(["--write-sync", mode])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        crate::common::wait_for_stderr_line(&mut child, "[1/1]");
        let deadline = Instant::now() + Duration::from_secs(20);
        let flags = loop {
            let f = open_flags_of(child.id(), volbench::io::target::FILE_PREFIX);
            if !f.is_empty() || Instant::now() > deadline {
                break f;
            }
            std::thread::yield_now();
        };
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&child),
            rustix::process::Signal::INT,
        )
        .unwrap();
        let _ = child.wait();
        assert!(!flags.is_empty(), "{mode}: no file of the set was open");
        for f in flags {
            assert_eq!(f & flag as u32, flag as u32, "{mode}: flags {f:o}");
        }
    }
    let o =
        vb(["run", "--target", t, "--write-sync", "maybe", "--dry-run"]).expect(exit::BAD_INPUT);
    assert!(
        stderr(&o).contains("not none, dsync or sync"),
        "{}",
        stderr(&o)
    );
    let o = vb(["run", "--target", t, "--write-sync", "dsync", "--dry-run"]).expect(exit::OK);
    assert!(stdout(&o).contains("O_DSYNC"), "{}", stdout(&o));
}

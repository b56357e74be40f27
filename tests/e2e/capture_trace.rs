//! `volbench capture --trace`: every request fio makes on a loop device is
//! in the trace (counts and bytes as fio's own JSON states them), in issue
//! order, each completed after it was issued; the tracefs instance is gone
//! afterwards, a stop included; bad input is one line, exit 2, and touches
//! neither tracefs nor the output path.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::volume::{self, Volume, VolumeSpec};
use crate::common::*;
use volbench::error::exit;

/// Why tracing cannot run here, if it cannot: tracefs with the block
/// tracepoints, root, and an emulated volume.
fn unavailable() -> Option<String> {
    if !is_root() {
        return Some("capture --trace needs root".into());
    }
    let events = Path::new("/sys/kernel/tracing/events/block/block_rq_issue");
    if !events.exists() {
        // A fresh machine (CI's) may have tracefs in the kernel but not
        // mounted: mounted here once, as a user would before tracing.
        static MOUNT: std::sync::Once = std::sync::Once::new();
        MOUNT.call_once(|| {
            let _ = Command::new("mount")
                .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
                .stderr(Stdio::null())
                .status();
        });
    }
    if !events.exists() {
        return Some("no block tracepoints in /sys/kernel/tracing (tracefs not mounted?)".into());
    }
    volume::unavailable()
}

/// One capture at a time in this file: every capture sweeps the stale
/// volbench instances it finds in tracefs, so one starting beside the
/// killed-capture test would remove the instance that test kills a capture
/// to leave (and it did, on CI: "it still traces" read 0).
fn one_capture() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The instance a capture of `pid` makes: named for its pid namespace
/// (this test's, as the capture is its child) and its pid.
fn instance(pid: u32) -> PathBuf {
    let ns = std::fs::read_link("/proc/self/ns/pid").expect("/proc/self/ns/pid");
    let ns = ns.to_string_lossy();
    let ns = ns
        .strip_prefix("pid:[")
        .and_then(|n| n.strip_suffix(']'))
        .expect("pid:[inode]");
    PathBuf::from(format!("/sys/kernel/tracing/instances/volbench-{ns}-{pid}"))
}

/// The trace's rows: (issue_ns, complete_ns, op, offset, bytes).
fn rows(text: &str) -> Vec<(u64, Option<u64>, String, u64, u64)> {
    let mut lines = text.lines();
    let first = lines.next().expect("a first line");
    assert!(first.starts_with("# volbench.trace/v1 device="), "{first}");
    assert!(first.contains(" sector=512 start_unix_ns="), "{first}");
    assert_eq!(lines.next(), Some("issue_ns,complete_ns,op,offset,bytes"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 5, "{l}");
            let n = |s: &str| s.parse::<u64>().unwrap_or_else(|e| panic!("{l}: {e}"));
            let done = (!f[1].is_empty()).then(|| n(f[1]));
            (n(f[0]), done, f[2].to_string(), n(f[3]), n(f[4]))
        })
        .collect()
}

fn within_1pct(what: &str, got: f64, want: f64) {
    assert!(want > 0.0, "{what}: fio did nothing");
    let err = (got - want).abs() / want;
    assert!(
        err <= 0.01,
        "{what}: trace {got}, fio {want} (off {:.2}%)",
        err * 100.0
    );
}

/// fio: 4 KiB random 70/30, direct, 280 + 120 IOPS for 3 s on `dev`
/// while `capture --trace` records 5 s around it into `dir/t.csv`. Returns
/// the trace's path, fio's job from its JSON, the capture's summary line and
/// the capture's pid (its tracefs instance is named by it).
fn fio_under_capture(dev: &str, dir: &Path) -> (PathBuf, serde_json::Value, String, u32) {
    let (fio_out, out) = (dir.join("fio.json"), dir.join("t.csv"));
    let mut cap = volbench()
        .args([
            "capture",
            "--trace",
            "--device",
            dev,
            "--duration",
            "5s",
            "-o",
        ])
        .arg(&out)
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = cap.id();
    wait_for_stderr_line(&mut cap, "capture: tracing every request");
    assert!(
        instance(pid).is_dir(),
        "the instance is in place while tracing"
    );
    let fio_ok = Command::new("fio")
        .args([
            "--name=trace",
            &format!("--filename={dev}"),
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--direct=1",
            "--ioengine=psync",
            "--rate_iops=280,120",
            "--time_based",
            "--runtime=3",
            "--output-format=json",
            &format!("--output={}", fio_out.display()),
        ])
        .stdout(Stdio::null())
        .status()
        .expect("fio starts");
    assert!(fio_ok.success(), "fio failed");
    let summary = BufReader::new(cap.stdout.take().unwrap())
        .lines()
        .next()
        .expect("a summary line")
        .unwrap();
    assert_eq!(cap.wait().unwrap().code(), Some(exit::OK));
    let job = read_json(&fio_out)["jobs"][0].clone();
    (out, job, summary, pid)
}

/// fio: 4 KiB random 70/30, direct, 280 + 120 IOPS for 3 s on a loop device
/// while `capture --trace` records 5 s around it.
#[test]
fn capture_trace_records_every_request_fio_made() {
    let _one = one_capture();
    let test = "capture_trace_records_every_request_fio_made";
    if let Some(why) = unavailable() {
        return skip(test, &why);
    }
    if Command::new("fio").arg("--version").output().is_err() {
        return skip(test, "fio not installed (test.sh installs it)");
    }
    let _heavy = heavy_io();
    let vol = Volume::create(test, &VolumeSpec::new(128 << 20)).expect("emulated volume");
    let d = tempfile::tempdir().unwrap();
    let (out, job, summary, pid) = fio_under_capture(vol.device_str(), d.path());
    assert!(!instance(pid).exists(), "the instance is removed");
    let job = &job;
    let n = |v: &serde_json::Value| v.as_f64().unwrap();
    let rows = rows(&std::fs::read_to_string(&out).unwrap());
    let of = |op: &str| rows.iter().filter(|r| r.2 == op).collect::<Vec<_>>();
    within_1pct("reads", of("R").len() as f64, n(&job["read"]["total_ios"]));
    within_1pct(
        "writes",
        of("W").len() as f64,
        n(&job["write"]["total_ios"]),
    );
    let bytes = |op: &str| of(op).iter().map(|r| r.4).sum::<u64>() as f64;
    within_1pct("bytes read", bytes("R"), n(&job["read"]["io_bytes"]));
    within_1pct("bytes written", bytes("W"), n(&job["write"]["io_bytes"]));
    for w in rows.windows(2) {
        assert!(w[0].0 <= w[1].0, "issue order: {:?} then {:?}", w[0], w[1]);
    }
    for r in &rows {
        let done =
            r.1.unwrap_or_else(|| panic!("completed within the capture: {r:?}"));
        assert!(done >= r.0, "completion before issue: {r:?}");
        assert!(r.4 == 4096 && r.3 % 4096 == 0, "fio's 4 KiB blocks: {r:?}");
        assert!(r.0 < 6_000_000_000, "inside the 5 s capture: {r:?}");
    }
    let reads = of("R").len();
    assert!(
        summary.contains(&format!("{} requests ({reads} reads", rows.len())),
        "{summary}"
    );
    assert!(summary.contains("mean latency 0."), "{summary}");
}

/// The round trip: what `capture --trace` recorded of fio's job on one
/// device, `run --replay` issues on a second one: the same reads, writes
/// and bytes as fio made (within 1%: the block layer may merge), and, with
/// the trace's timing kept, over the same time as the original.
#[test]
fn a_captured_trace_replays_fio_s_job_on_another_device() {
    let _one = one_capture();
    let test = "a_captured_trace_replays_fio_s_job_on_another_device";
    if let Some(why) = unavailable() {
        return skip(test, &why);
    }
    if Command::new("fio").arg("--version").output().is_err() {
        return skip(test, "fio not installed (test.sh installs it)");
    }
    let _heavy = heavy_io();
    let spec = VolumeSpec::new(128 << 20);
    let d = tempfile::tempdir().unwrap();
    // One emulated volume at a time per test binary: the first is gone
    // (detached) before the second is made.
    let (trace, job) = {
        let a = Volume::create(&format!("{test}-a"), &spec).expect("emulated volume");
        let (trace, job, _, _) = fio_under_capture(a.device_str(), d.path());
        (trace, job)
    };
    let b = Volume::create(&format!("{test}-b"), &spec).expect("emulated volume");
    let rows = rows(&std::fs::read_to_string(&trace).unwrap());
    let out = d.path().join("replayed");
    vb([
        "run",
        "--target",
        b.device_str(),
        "--allow-overwrite",
        "--replay",
    ])
    .arg(&trace)
    .arg("--output")
    .arg(&out)
    .expect(exit::OK);
    let run = &read_json(&out.join("result.json"))["runs"][0];
    let n = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0);
    for (op, fio_op) in [("read", "read"), ("write", "write")] {
        within_1pct(
            &format!("{op}s replayed"),
            n(&run["totals"][op]["ops"]),
            n(&job[fio_op]["total_ios"]),
        );
        within_1pct(
            &format!("{op} bytes replayed"),
            n(&run["totals"][op]["bytes"]),
            n(&job[fio_op]["io_bytes"]),
        );
    }
    assert_eq!(run["replay"]["issued"], run["replay"]["requests"]);
    assert_eq!(run["replay"]["requests"].as_u64(), Some(rows.len() as u64));
    // The original lasted fio's runtime; the trace spans it from its first
    // request to its last, and the replay, pacing by the trace, as long.
    let span = (rows.last().unwrap().0 - rows[0].0) as f64 / 1e9;
    let fio_s = n(&job["job_runtime"]) / 1000.0;
    assert!(
        (span - fio_s).abs() <= 0.05 * fio_s,
        "the trace spans {span} s, fio ran {fio_s} s"
    );
    let (ran, traced) = (n(&run["replay"]["ran_s"]), n(&run["replay"]["trace_s"]));
    eprintln!(
        "round trip: fio {} reads {} writes in {fio_s} s; trace {} requests over {span:.3} s; \
         replay {} reads {} writes, ran {ran:.3} s of {traced:.3} s",
        job["read"]["total_ios"],
        job["write"]["total_ios"],
        rows.len(),
        run["totals"]["read"]["ops"],
        run["totals"]["write"]["ops"],
    );
    assert!(
        (ran - traced).abs() <= 0.05 * traced,
        "the replay ran {ran} s of a {traced} s trace"
    );
}

/// Ctrl-C ends a trace early: what was seen is written, exit 130, and the
/// instance is removed.
#[test]
fn a_stopped_trace_keeps_its_rows_and_removes_the_instance() {
    let _one = one_capture();
    let test = "a_stopped_trace_keeps_its_rows_and_removes_the_instance";
    if let Some(why) = unavailable() {
        return skip(test, &why);
    }
    let vol = Volume::create(test, &VolumeSpec::new(64 << 20)).expect("emulated volume");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("t.csv");
    let mut child = volbench()
        .args(["capture", "--trace", "--device", vol.device_str()])
        .args(["--duration", "1h", "-o"])
        .arg(&out)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_stderr_line(&mut child, "capture: tracing every request");
    assert!(instance(child.id()).is_dir());
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(exit::INTERRUPTED));
    assert!(!instance(child.id()).exists(), "the instance is removed");
    rows(&std::fs::read_to_string(&out).unwrap());
}

/// Each mistake is one line and exit 2, before tracefs is touched and with
/// no file at the output path.
#[test]
fn capture_trace_refuses_bad_input_before_tracing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("t.csv");
    let o = out.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--device", "/dev/vb-no-such-disk"],
            "no such block device",
        ),
        (&["--device", "/dev/null"], "not a block device"),
        (&[], "--device"),
        (&["--device", "/dev/null", "--interval", "1s"], "--interval"),
        (&["--device", "/dev/null", "--mount", "/"], "--mount"),
    ];
    for (args, says) in cases {
        let r = vb(["capture", "--trace", "-o", o])
            .args(args)
            .expect(exit::BAD_INPUT);
        let e = stderr(&r);
        assert!(e.contains(says), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: one line: {e}");
        assert!(!out.exists(), "{args:?} wrote a trace");
    }
    // A device that exists (any, by its kernel name), so that the output
    // path is what is refused.
    let Some(any) = std::fs::read_dir("/sys/class/block")
        .ok()
        .and_then(|mut d| d.next()?.ok())
    else {
        return skip(
            "capture_trace_refuses_bad_input_before_tracing",
            "no block device",
        );
    };
    std::fs::write(&out, "keep me").unwrap();
    let dev = any.file_name().to_string_lossy().into_owned();
    let r = vb(["capture", "--trace", "--device", &dev, "-o", o]).expect(exit::REFUSED);
    assert!(stderr(&r).contains("never replaces"), "{}", stderr(&r));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
}

/// A capture killed with SIGKILL cannot remove its tracefs instance, which
/// then traces the device forever; the next capture finds it (ours by its
/// name, its pid no longer a capture), disables it and removes it, and says
/// so.
#[test]
fn the_next_capture_removes_the_instance_a_killed_one_left_tracing() {
    let _one = one_capture();
    let test = "the_next_capture_removes_the_instance_a_killed_one_left_tracing";
    if let Some(why) = unavailable() {
        return skip(test, &why);
    }
    let vol = Volume::create(test, &VolumeSpec::new(64 << 20)).expect("emulated volume");
    let d = tempfile::tempdir().unwrap();
    let mut child = volbench()
        .args(["capture", "--trace", "--device", vol.device_str()])
        .args(["--duration", "1h", "-o"])
        .arg(d.path().join("t1.csv"))
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_stderr_line(&mut child, "capture: tracing every request");
    let left = instance(child.id());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(left.is_dir(), "a SIGKILL leaves the instance");
    let enabled = std::fs::read_to_string(left.join("events/block/block_rq_issue/enable"));
    assert_eq!(enabled.unwrap().trim(), "1", "and it still traces");
    let o = volbench()
        .args(["capture", "--trace", "--device", vol.device_str()])
        .args(["--duration", "1s", "-o"])
        .arg(d.path().join("t2.csv"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!left.exists(), "the stale instance is removed");
    let e = stderr(&o);
    assert!(
        e.contains("removed the tracefs instance") && e.contains(&left.display().to_string()),
        "{e}"
    );
}

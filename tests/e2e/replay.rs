//! End-to-end: `run --replay FILE`. A trace replays exactly (counts and
//! bytes by op, flushes and discards included), at its recorded pace or a
//! scaled one, from each format volbench reads: its own, fio's iolog as
//! the real fio writes it (compared with fio's own JSON), and a blktrace
//! binary built here from the format's layout. Bad traces are one line and
//! exit 2 before any I/O.

use std::path::Path;
use std::process::Command;

use volbench::error::exit;

use crate::cli_help::p;
use crate::common::*;

const HEAD: &str =
    "# volbench.trace/v1 device=vdb sector=512\nissue_ns,complete_ns,op,offset,bytes\n";

/// Replays `trace` onto a directory (a file set sized to the trace, through
/// the page cache: the temporary directory may be tmpfs) and returns the
/// run of result.json.
fn replay(d: &Path, trace: &Path, extra: &[&str]) -> serde_json::Value {
    let name = trace
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace('.', "_");
    let out = d.join(format!(
        "out-{name}{}",
        extra.join("").replace(['-', '.'], "")
    ));
    vb([
        "run",
        "--target",
        p(&d.join("t")),
        "--replay",
        p(trace),
        "--buffered",
        "--engine",
        "psync",
        "--interval",
        "200ms",
        "--output",
        p(&out),
    ])
    .args(extra)
    .expect(exit::OK);
    read_json(&out.join("result.json"))["runs"][0].clone()
}

fn ops(run: &serde_json::Value, op: &str) -> (u64, u64) {
    let t = &run["totals"][op];
    (
        t["ops"].as_u64().unwrap_or(0),
        t["bytes"].as_u64().unwrap_or(0),
    )
}

#[test]
fn a_volbench_trace_replays_exactly_by_op() {
    let d = tempfile::tempdir().unwrap();
    let mut t = HEAD.to_string();
    for i in 0..40u64 {
        let at = i * 1_000_000;
        let op = ["R", "W", "R", "F", "D"][(i % 5) as usize];
        let bytes = if op == "F" { 0 } else { 4096 * (1 + i % 3) };
        t.push_str(&format!(
            "{at},{},{op},{},{bytes}\n",
            at + 500,
            (i * 7 % 64) * 4096
        ));
    }
    let trace = d.path().join("trace.csv");
    std::fs::write(&trace, &t).unwrap();
    let run = replay(d.path(), &trace, &[]);
    let want = |op: &str| -> (u64, u64) {
        t.lines()
            .skip(2)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|c| c[2] == op)
            .fold((0, 0), |(n, b), c| {
                (n + 1, b + c[4].parse::<u64>().unwrap())
            })
    };
    assert_eq!(ops(&run, "read"), want("R"));
    assert_eq!(ops(&run, "write"), want("W"));
    assert_eq!(ops(&run, "flush").0, want("F").0);
    assert_eq!(ops(&run, "discard"), want("D"));
    let r = &run["replay"];
    assert_eq!(r["format"], "volbench");
    assert_eq!(r["requests"], 40);
    assert_eq!(r["issued"], 40);
}

/// A read every 10 ms for `secs` seconds.
fn paced(d: &Path, secs: u64) -> std::path::PathBuf {
    let mut t = HEAD.to_string();
    for i in 0..=secs * 100 {
        t.push_str(&format!(
            "{},,R,{},4096\n",
            i * 10_000_000,
            (i % 256) * 4096
        ));
    }
    let path = d.join(format!("paced{secs}.csv"));
    std::fs::write(&path, t).unwrap();
    path
}

#[test]
fn timing_is_kept_scaled_or_dropped() {
    let _one = heavy_io();
    let d = tempfile::tempdir().unwrap();
    let trace = paced(d.path(), 3);
    let ran = |run: &serde_json::Value| run["replay"]["ran_s"].as_f64().unwrap();
    let kept = replay(d.path(), &trace, &[]);
    assert!((ran(&kept) - 3.0).abs() <= 0.15, "1x ran {} s", ran(&kept));
    assert_eq!(ops(&kept, "read").0, 301);
    let twice = replay(d.path(), &trace, &["--replay-speed", "2"]);
    assert!(
        (ran(&twice) - 1.5).abs() <= 0.075,
        "2x ran {} s",
        ran(&twice)
    );
    assert_eq!(twice["replay"]["scheduled_s"], 1.5);
    let max = replay(d.path(), &trace, &["--replay-speed", "max"]);
    assert!(ran(&max) < 1.0, "max ran {} s", ran(&max));
    assert_eq!(ops(&max, "read").0, 301);
}

#[test]
fn a_full_depth_makes_requests_late_and_says_how_late() {
    let d = tempfile::tempdir().unwrap();
    // 200 requests due at once at depth 1: all but the first wait.
    let mut t = HEAD.to_string();
    for i in 0..200u64 {
        t.push_str(&format!("0,,R,{},4096\n", i * 4096));
    }
    let trace = d.path().join("burst.csv");
    std::fs::write(&trace, t).unwrap();
    let run = replay(d.path(), &trace, &["--iodepth", "1"]);
    let r = &run["replay"];
    assert!(r["late"].as_u64().unwrap() >= 150, "{r}");
    assert!(r["late_mean_us"].as_f64().unwrap() > 0.0, "{r}");
}

#[test]
fn a_fio_iolog_replays_fio_s_own_reads_and_writes() {
    if Command::new("fio").arg("--version").output().is_err() {
        return skip("fio iolog replay", "fio is not installed");
    }
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("fio.iolog");
    let json = d.path().join("fio.json");
    let o = Command::new("fio")
        .args([
            "--name=rec",
            &format!("--filename={}", d.path().join("fiofile").display()),
            "--size=8m",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--io_size=2m",
            "--ioengine=psync",
            &format!("--write_iolog={}", log.display()),
            "--output-format=json",
            &format!("--output={}", json.display()),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fio = read_json(&json);
    let job = &fio["jobs"][0];
    let fio_ops = |dir: &str| {
        (
            job[dir]["total_ios"].as_u64().unwrap(),
            job[dir]["io_bytes"].as_u64().unwrap(),
        )
    };
    let run = replay(d.path(), &log, &["--replay-speed", "max"]);
    assert_eq!(run["replay"]["format"], "fio_v3");
    assert_eq!(ops(&run, "read"), fio_ops("read"));
    assert_eq!(ops(&run, "write"), fio_ops("write"));
}

/// One blktrace event (struct blk_io_trace, little-endian), as
/// include/uapi/linux/blktrace_api.h lays it out.
fn blk_event(time: u64, sector: u64, bytes: u32, action: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend(0x6561_7407u32.to_le_bytes()); // magic | version 7
    v.extend(0u32.to_le_bytes()); // sequence
    v.extend(time.to_le_bytes());
    v.extend(sector.to_le_bytes());
    v.extend(bytes.to_le_bytes());
    v.extend(action.to_le_bytes());
    v.extend([0u8; 12]); // pid, device, cpu
    v.extend(0u16.to_le_bytes()); // error
    v.extend(0u16.to_le_bytes()); // pdu_len
    v
}

#[test]
fn a_blktrace_binary_replays_the_same_requests_as_its_text_twin() {
    let d = tempfile::tempdir().unwrap();
    // Category << 16 | action: queue = 1 << 4, write = 1 << 1; Q = 1, C = 8.
    let q_read = (1u32 << 4) << 16 | 1;
    let q_write = ((1u32 << 4) | (1 << 1)) << 16 | 1;
    let complete = (1u32 << 7) << 16 | 8;
    let mut bin = Vec::new();
    let mut text = HEAD.to_string();
    for i in 0..30u64 {
        let (action, op) = if i % 3 == 0 {
            (q_write, "W")
        } else {
            (q_read, "R")
        };
        let at = 5_000_000_000 + i * 1_000_000;
        bin.extend(blk_event(at, i * 16, 8192, action));
        bin.extend(blk_event(at + 50_000, i * 16, 8192, complete));
        text.push_str(&format!("{},,{op},{},8192\n", i * 1_000_000, i * 16 * 512));
    }
    let (b, t) = (d.path().join("trace.blk"), d.path().join("trace.csv"));
    std::fs::write(&b, bin).unwrap();
    std::fs::write(&t, text).unwrap();
    let from_blk = replay(d.path(), &b, &[]);
    let from_text = replay(d.path(), &t, &[]);
    assert_eq!(from_blk["replay"]["format"], "blktrace");
    for op in ["read", "write"] {
        assert_eq!(ops(&from_blk, op), ops(&from_text, op), "{op}");
    }
    assert_eq!(ops(&from_blk, "write"), (10, 81920));
}

#[test]
fn offsets_past_the_target_are_refused_unless_wrapped() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("far.csv");
    std::fs::write(&trace, format!("{HEAD}0,,R,0,4096\n1,,R,4194304,4096\n")).unwrap();
    let base = |extra: &[&str]| {
        vb([
            "run",
            "--target",
            p(&d.path().join("t")),
            "--replay",
            p(&trace),
        ])
        .args(["--buffered", "--size", "1m", "--engine", "psync"])
        .args(extra)
    };
    let o = base(&[]).expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("--replay-wrap"), "{}", stderr(&o));
    // An existing file too small for the trace: bad input, before any I/O
    // (nothing is written, no result is left).
    let small = d.path().join("small.img");
    std::fs::write(&small, vec![7u8; 1 << 20]).unwrap();
    let out = d.path().join("refused");
    let o = vb(["run", "--target", p(&small), "--replay", p(&trace)])
        .args(["--buffered", "--engine", "psync", "--output", p(&out)])
        .expect(exit::BAD_INPUT);
    let e = stderr(&o);
    assert!(
        e.contains("holds 1MiB") && e.contains("--replay-wrap"),
        "{e}"
    );
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(!out.exists(), "a refused replay left results");
    let out = d.path().join("wrapped");
    base(&["--replay-wrap", "--output", p(&out)]).expect(exit::OK);
    let run = &read_json(&out.join("result.json"))["runs"][0];
    assert_eq!(run["replay"]["wrapped"], 1);
    assert_eq!(ops(run, "read").0, 2);
}

#[test]
fn bad_traces_and_flags_are_one_line_and_exit_2_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("t");
    let cases: Vec<(&str, String, &[&str], &str)> = vec![
        (
            "truncated",
            format!("{HEAD}0,,R,0,4096\n1,,R,0,40"),
            &[],
            "truncated",
        ),
        ("unknown op", format!("{HEAD}0,,Z,0,4096\n"), &[], "op 'Z'"),
        (
            "decreasing",
            format!("{HEAD}9,,R,0,4096\n3,,R,0,4096\n"),
            &[],
            "issue order",
        ),
        (
            "huge offset",
            format!("{HEAD}0,,R,18446744073709547520,4096\n"),
            &[],
            "beyond any volume",
        ),
        (
            "claim",
            "# volbench.trace/v1 requests=1000000000000\n".into(),
            &[],
            "claims more than",
        ),
        (
            "long line",
            format!("{HEAD}{}\n", "1".repeat(1 << 20)),
            &[],
            "longer than",
        ),
        ("not a trace", "hello\n".into(), &[], "not a trace"),
        (
            "newer schema",
            "# volbench.trace/v2 device=vdb\nissue_ns,complete_ns,op,offset,bytes\n".into(),
            &[],
            "volbench.trace/v2 is a newer trace schema",
        ),
        (
            "negative time",
            format!("{HEAD}-5,,R,0,4096\n"),
            &[],
            "issue_ns '-5'",
        ),
        (
            "negative fio time",
            "fio version 3 iolog\n-5 /dev/x read 0 4096\n".into(),
            &[],
            "timestamp '-5'",
        ),
        (
            "speed",
            format!("{HEAD}0,,R,0,4096\n"),
            &["--replay-speed", "0"],
            "--replay-speed",
        ),
        (
            "with --rw",
            format!("{HEAD}0,,R,0,4096\n"),
            &["--rw", "read"],
            "--rw does not go with --replay",
        ),
        (
            "unaligned direct",
            format!("{HEAD}0,,R,100,4096\n"),
            &["--direct"],
            "--buffered",
        ),
    ];
    for (what, text, extra, want) in cases {
        let trace = d.path().join("bad.csv");
        std::fs::write(&trace, text).unwrap();
        let o = vb(["run", "--target", p(&target), "--replay", p(&trace)])
            .args(extra)
            .expect(exit::BAD_INPUT);
        let e = stderr(&o);
        assert!(e.contains(want), "{what}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{what}: {e}");
        assert!(!target.exists(), "{what}: the target was touched");
    }
    let o = vb(["run", "--target", p(&target), "--replay", p(d.path())]).expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
}

/// Runs the remote command on this machine, as ssh to it would.
const LOCAL_SSH: &str = r#"sh -c 'exec sh -c "$2"' fake"#;

/// A multi-host replay over the stand-in ssh, each host on its own
/// directory; returns result.json.
fn replay_hosts(d: &Path, hosts: &str, trace: &Path, extra: &[&str]) -> serde_json::Value {
    let out = d.join(format!(
        "out-hosts{}",
        extra.join("").replace(['-', '.'], "")
    ));
    vb([
        "run",
        "--hosts",
        hosts,
        "--ssh-command",
        LOCAL_SSH,
        "--remote-volbench",
        env!("CARGO_BIN_EXE_volbench"),
        "--target",
        p(&d.join("{host}-t")),
        "--replay",
        p(trace),
        "--buffered",
        "--engine",
        "psync",
        "--output",
        p(&out),
    ])
    .args(extra)
    .expect(exit::OK);
    read_json(&out.join("result.json"))
}

/// 300 requests spread over 16 MiB: reads, writes and flushes of 4..12 KiB.
fn spread(d: &Path) -> (std::path::PathBuf, String) {
    let mut t = HEAD.to_string();
    for i in 0..300u64 {
        let op = ["R", "W", "R", "R", "F"][(i % 5) as usize];
        let bytes = if op == "F" { 0 } else { 4096 * (1 + i % 3) };
        t.push_str(&format!(
            "{},,{op},{},{bytes}\n",
            i * 100_000,
            (i * 37 % 64) * 262_144
        ));
    }
    let path = d.join("spread.csv");
    std::fs::write(&path, &t).unwrap();
    (path, t)
}

/// The trace's requests and bytes of one op, by the stripe rule when
/// `host` is given (1 MiB stripes modulo `hosts`; a flush with the request
/// before it).
fn counted(t: &str, op: &str, host: Option<(u64, u64)>) -> (u64, u64) {
    let mut last = 0;
    let mut n = (0, 0);
    for l in t.lines().skip(2) {
        let c: Vec<&str> = l.split(',').collect();
        let h = match (c[2], host) {
            ("F", _) => last,
            (_, Some((_, hosts))) => c[3].parse::<u64>().unwrap() / (1 << 20) % hosts,
            _ => 0,
        };
        last = h;
        if c[2] == op && host.is_none_or(|(me, _)| me == h) {
            n = (n.0 + 1, n.1 + c[4].parse::<u64>().unwrap());
        }
    }
    n
}

#[test]
fn across_hosts_each_replays_its_share_and_the_merge_is_the_trace() {
    let d = tempfile::tempdir().unwrap();
    let (trace, t) = spread(d.path());
    let doc = replay_hosts(d.path(), "a,b,c", &trace, &["--replay-speed", "max"]);
    let run = &doc["runs"][0];
    for (op, key) in [("R", "read"), ("W", "write"), ("F", "flush")] {
        let want = counted(&t, op, None);
        let got = ops(run, key);
        assert_eq!(got.0, want.0, "{key} ops");
        if op != "F" {
            assert_eq!(got.1, want.1, "{key} bytes");
        }
        // Each host replayed exactly its stripes.
        for (i, h) in doc["cluster"]["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let mine = counted(&t, op, Some((i as u64, 3)));
            assert_eq!(ops(&h["runs"][0], key).0, mine.0, "host {i} {key}");
        }
    }
    assert_eq!(run["replay"]["requests"], 300);
    assert_eq!(run["replay"]["issued"], 300);
}

#[test]
fn across_hosts_the_whole_trace_runs_on_each_host_offset_in_time() {
    let d = tempfile::tempdir().unwrap();
    let (trace, t) = spread(d.path());
    let extra = [
        "--replay-split",
        "whole",
        "--replay-offset",
        "1500ms",
        "--replay-speed",
        "max",
    ];
    let doc = replay_hosts(d.path(), "a,b", &trace, &extra);
    let run = &doc["runs"][0];
    let reads = counted(&t, "R", None);
    assert_eq!(ops(run, "read"), (2 * reads.0, 2 * reads.1));
    assert_eq!(run["replay"]["issued"], 600);
    let hosts = doc["cluster"]["hosts"].as_array().unwrap();
    let ran = |i: usize| hosts[i]["runs"][0]["replay"]["ran_s"].as_f64().unwrap();
    // The second host waited its offset before its first request.
    // Both hosts do the same work, so b lasts about the offset longer (a
    // loaded machine slows both alike).
    assert!(ran(1) >= 1.5, "host b ran {} s", ran(1));
    assert!(ran(1) >= ran(0) + 0.75, "a {} s, b {} s", ran(0), ran(1));
}

#[test]
fn replay_split_flags_are_checked_before_any_host_is_reached() {
    let d = tempfile::tempdir().unwrap();
    let (trace, _) = spread(d.path());
    let target = d.path().join("t");
    let cases: [(&[&str], &str); 3] = [
        (&["--replay-split", "whole"], "give --hosts too"),
        (
            &[
                "--hosts",
                "a,b",
                "--replay-split",
                "share",
                "--replay-offset",
                "1s",
            ],
            "--replay-split whole",
        ),
        (
            &[
                "--hosts",
                "a,b",
                "--replay-split",
                "whole",
                "--replay-offset",
                "2h",
            ],
            "--replay-offset",
        ),
    ];
    for (extra, want) in cases {
        let o = vb(["run", "--target", p(&target), "--replay", p(&trace)])
            .args(extra)
            .expect(exit::BAD_INPUT);
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
        assert!(!target.exists());
    }
}

/// A FIFO (a pipe nobody writes into), a directory or a device given as the
/// trace is one line and exit 2 at once: opening one must not wait for a
/// writer that never comes.
#[test]
fn a_fifo_or_any_file_that_is_not_regular_is_refused_without_waiting() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("trace.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for trace in [fifo.as_path(), d.path(), Path::new("/dev/null")] {
        let mut child = volbench()
            .args([
                "run",
                "--target",
                p(&d.path().join("t")),
                "--replay",
                p(trace),
            ])
            .args(["--buffered", "--engine", "psync"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut status = None;
        let ended = crate::common::hosts::wait_until(std::time::Duration::from_secs(30), || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        if !ended {
            let _ = child.kill();
            panic!("--replay {} waited", trace.display());
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("--replay"), "{e}");
    }
}

#[test]
fn a_timed_replay_takes_the_depth_its_trace_needs_unless_told() {
    let d = tempfile::tempdir().unwrap();
    // Recorded at depth 4: four requests at once every 5 ms, 50 bursts.
    let mut t = HEAD.to_string();
    for burst in 0..50u64 {
        for i in 0..4u64 {
            t.push_str(&format!(
                "{},,R,{},4096\n",
                burst * 5_000_000,
                (burst * 4 + i) * 4096
            ));
        }
    }
    let trace = d.path().join("depth4.csv");
    std::fs::write(&trace, t).unwrap();
    let auto = replay(d.path(), &trace, &[]);
    let r = &auto["replay"];
    assert_eq!(r["depth"], 4, "{r}");
    assert_eq!(r["depth_from_trace"], true, "{r}");
    // Told depth 1, three of each burst's four must wait for a slot.
    let one = replay(d.path(), &trace, &["--iodepth", "1"]);
    let late_one = one["replay"]["late"].as_u64().unwrap();
    assert!(late_one >= 150, "{}", one["replay"]);
    assert_eq!(one["replay"]["depth_from_trace"], false);
    assert!(
        r["late"].as_u64().unwrap() < late_one,
        "the trace's own depth keeps its bursts on time: {r}"
    );
}

//! Watching a spawned run from outside, as the fault tests do: its
//! `--live` lines read as they grow, waits bounded by a limit and ended
//! early when the run ends, and its Prometheus exporter scraped. Shared by
//! the NFS and SMB fault and live tests (`nfs_faults`, `smb_restart`,
//! `smb_live`).

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The lines of a live file, each parsed (a torn last line is left for
/// the next look).
pub fn live_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Whether a line's interval moved data (reads or writes).
fn busy(l: &Value) -> bool {
    l["read"]["iops"].as_f64().unwrap_or(0.0) + l["write"]["iops"].as_f64().unwrap_or(0.0) > 0.0
}

/// Measured intervals of the run's total that moved data.
pub fn busy_intervals(lines: &[Value]) -> usize {
    lines
        .iter()
        .filter(|l| l["scope"] == "total" && l["phase"] == "measure" && busy(l))
        .count()
}

/// Measured intervals of one target of a list (its `part` lines) that
/// read.
pub fn busy_parts(lines: &[Value], target: &str) -> usize {
    lines
        .iter()
        .filter(|l| l["scope"] == "part" && l["phase"] == "measure" && l["target"] == target)
        .filter(|l| l["read"]["iops"].as_f64().unwrap_or(0.0) > 0.0)
        .count()
}

/// Whether the run's last measured interval moved nothing after `busy`
/// ones that did: the server it waits for went away under it.
pub fn stalled_after(lines: &[Value], busy_before: usize) -> bool {
    busy_intervals(lines) >= busy_before
        && lines
            .iter()
            .rev()
            .find(|l| l["scope"] == "total" && l["phase"] == "measure")
            .is_some_and(|l| !busy(l))
}

/// Ctrl-C to a spawned run: SIGINT.
pub fn interrupt(child: &Child) {
    let pid = rustix::process::Pid::from_child(child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("SIGINT sent");
}

/// What a run stopped by Ctrl-C while its server was away must have left:
/// exit 130 and its own result, not the stop's rescue (written for a
/// worker still blocked on the server, with no protocol figures): the
/// intervals and reads measured before, and the run's `protocol` of
/// `proto`.
pub fn check_stopped_while_away(
    status: std::process::ExitStatus,
    err: &str,
    out: &Path,
    proto: &str,
) {
    assert_eq!(
        status.code(),
        Some(volbench::error::exit::INTERRUPTED),
        "{err}"
    );
    let doc = crate::common::read_json(&out.join("result.json"));
    assert_eq!(doc["interrupted"], true, "{doc}");
    let notes = doc["notes"].to_string();
    assert!(
        !notes.contains("still blocked in I/O"),
        "the stop's rescue wrote the result, not the run: {notes}\n{err}"
    );
    let run = &doc["runs"][0];
    check_kept_before_loss(run);
    assert_eq!(run["protocol"]["protocol"], proto, "{run}");
}

/// A watched run stopped while its server does not answer: once two
/// intervals moved data, `silence` makes the server stop answering (gone,
/// or its answers held); once an interval moved nothing, Ctrl-C. The run
/// must then leave its own result within 30 s
/// (`check_stopped_while_away`, of `proto`). Returns its stderr.
pub fn stop_while_silent(
    mut child: Child,
    live: &Path,
    out: &Path,
    proto: &str,
    silence: impl FnOnce(),
) -> String {
    let limit = Duration::from_secs(120);
    assert!(
        wait_for(&mut child, live, limit, |l| busy_intervals(l) >= 2),
        "the run measured before the server went silent"
    );
    silence();
    assert!(
        wait_for(&mut child, live, limit, |l| stalled_after(l, 2)),
        "an interval without I/O once the server went silent"
    );
    interrupt(&child);
    let status = wait_end(&mut child, Duration::from_secs(30));
    let o = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    check_stopped_while_away(status, &err, out, proto);
    err
}

/// What a run whose server went away must keep of the time before: two
/// measured intervals at least, and the reads it counted.
pub fn check_kept_before_loss(run: &Value) {
    let measured = run["intervals"]
        .as_array()
        .map_or(0, |i| i.iter().filter(|x| x["phase"] == "measure").count());
    assert!(
        measured >= 2,
        "the intervals before the loss are kept: {measured}"
    );
    assert!(
        run["totals"]["read"]["ops"].as_u64().unwrap_or(0) > 0,
        "the I/O before the loss is counted"
    );
}

/// `run` spawned with its live lines in `live` and its results in `out`,
/// its stdout and stderr kept for the test.
pub fn spawn_watched(run: crate::common::Vb, live: &Path, out: &Path) -> Child {
    run.arg("--live")
        .arg(live)
        .arg("--output")
        .arg(out)
        .into_command()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("volbench starts")
}

/// Polls the live file until `done` holds, while `child` runs; false if
/// the child ended first or `limit` passed.
pub fn wait_for(
    child: &mut Child,
    live: &Path,
    limit: Duration,
    done: impl Fn(&[Value]) -> bool,
) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if done(&live_lines(live)) {
            return true;
        }
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Waits for a spawned run to end, within `limit` (killed and failed
/// past it).
pub fn wait_end(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let until = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return s;
        }
        if Instant::now() >= until {
            let _ = child.kill();
            panic!("the run did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A loopback port free now (for `--metrics-listen`).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// GET /metrics from the run's exporter, as text.
pub fn scrape(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    c.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

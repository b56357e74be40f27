//! A run on an `nfs://` target when the server fails under it, against a
//! real server (nfs-ganesha, `common::nfs`), NFSv3 and NFSv4.1: a server
//! restarted mid-run is reconnected to, the calls in flight are sent
//! again, the reconnects are counted in result.json and said in the
//! summary, and the run goes on with every byte it counted where it
//! counted it; a server that stays away ends the run with one line, a
//! non-zero exit and the intervals gathered before the loss on disk.
//! Synchronised on the run's `--live` lines and the server's pid and port,
//! never on sleeps.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use volbench::error::exit;

use crate::common::live_run::{
    busy_intervals, busy_parts, check_kept_before_loss, free_port, live_lines, scrape,
    spawn_watched, stop_while_silent, wait_end, wait_for,
};
use crate::common::nfs::NfsServer;
use crate::common::slow_link::{SlowLink, end_while_slow, from_last, rpc_calls};
use crate::common::{read_json, vb};

const VERSIONS: [&str; 2] = ["3", "4.1"];

/// A counter's value summed over its series (one target, its phases).
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn a_server_restart_mid_run_is_reconnected_counted_and_the_run_goes_on() {
    let test = "a_server_restart_mid_run_is_reconnected_counted_and_the_run_goes_on";
    let Some(mut srv) = NfsServer::start(test) else {
        return;
    };
    for v in VERSIONS {
        let name = format!("restart-v{v}");
        let url = srv.url(&name, v);
        let tmp = tempfile::tempdir().expect("a temporary folder");
        let (live, out) = (tmp.path().join("live.jsonl"), tmp.path().join("out"));
        let port = free_port();
        let mut child = vb(["run", "--target", &url])
            .args([
                "--size", "8m", "--files", "2", "--rw", "randrw", "--bs", "4k",
            ])
            .args(["--iodepth", "8", "--nfs-connections", "2", "--verify"])
            .args(["--metrics-listen", &port.to_string()])
            .args(["--warmup", "0", "--duration", "12s", "--interval", "500ms"])
            .arg("--live")
            .arg(&live)
            .arg("--output")
            .arg(&out)
            .into_command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("volbench starts");
        assert!(
            wait_for(
                &mut child,
                &live,
                Duration::from_secs(120),
                |l| busy_intervals(l) >= 2
            ),
            "v{v}: the run measured before the restart"
        );
        srv.kill();
        srv.restart();
        let before = busy_intervals(&live_lines(&live));
        assert!(
            wait_for(
                &mut child,
                &live,
                Duration::from_secs(60),
                |l| busy_intervals(l) > before
            ),
            "v{v}: the run moved data again after the restart"
        );
        // The exporter's counters say the reconnect while the run goes.
        let until = Instant::now() + Duration::from_secs(60);
        let mut seen = String::new();
        while Instant::now() < until && metric(&seen, "volbench_protocol_reconnects_total") < 1.0 {
            std::thread::sleep(Duration::from_millis(100));
            seen = scrape(port).unwrap_or_default();
        }
        assert!(
            metric(&seen, "volbench_protocol_reconnects_total") >= 1.0
                && metric(&seen, "volbench_protocol_calls_total") > 0.0,
            "v{v}: /metrics: {seen}"
        );
        let status = wait_end(&mut child, Duration::from_secs(120));
        let o = child.wait_with_output().expect("output");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(status.code(), Some(exit::OK), "v{v}: {err}");
        let doc = read_json(&out.join("result.json"));
        let run = &doc["runs"][0];
        let p = &run["protocol"];
        let reconnects = p["reconnects"].as_u64().unwrap_or(0);
        assert!(reconnects >= 1, "v{v}: {p}");
        let per: u64 = p["per_connection"].as_array().map_or(0, |c| {
            c.iter()
                .map(|c| c["reconnects"].as_u64().unwrap_or(0))
                .sum()
        });
        assert_eq!(per, reconnects, "v{v}: counted per connection: {p}");
        let summary = String::from_utf8_lossy(&o.stdout);
        assert!(
            summary.contains("after the server was lost"),
            "v{v}: the summary says the reconnects: {summary}"
        );
        assert_eq!(run["data_errors"], 0, "v{v}: every read saw the last write");
        // The live lines said it in the interval it happened: the parts'
        // protocol figures add up to the result's.
        let lines = live_lines(&live);
        let parts = || {
            lines
                .iter()
                .filter(|l| l["scope"] == "part" && l["phase"] == "measure")
        };
        let live_reconnects: u64 = parts()
            .map(|l| l["protocol"]["reconnects"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(
            live_reconnects, reconnects,
            "v{v}: --live says the reconnects"
        );
        let live_calls: u64 = parts()
            .map(|l| l["protocol"]["calls"].as_u64().unwrap_or(0))
            .sum();
        assert!(live_calls > 0, "v{v}: --live carries the calls");
        // And per connection: each line lists both of the client's, and
        // their calls add up to the client's on every line (one
        // publication after every batch, read as one).
        let conns = |l: &serde_json::Value| {
            l["protocol"]["connections"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        // (A line from before the worker's first publish, on a loaded
        // machine, knows none yet and carries no calls either.)
        assert!(
            parts().all(|l| conns(l).len() == 2 || l["protocol"]["calls"].as_u64() == Some(0))
                && parts().any(|l| conns(l).len() == 2),
            "v{v}: two connections on each line with calls"
        );
        for l in parts() {
            let calls: u64 = conns(l)
                .iter()
                .map(|c| c["calls"].as_u64().unwrap_or(0))
                .sum();
            assert_eq!(
                calls,
                l["protocol"]["calls"].as_u64().unwrap_or(0),
                "v{v}: the connections' calls: {l}"
            );
        }
        assert!(
            seen.contains("volbench_protocol_connection_calls_total{")
                && seen.contains(r#"connection="1""#),
            "v{v}: /metrics per connection: {seen}"
        );
        // Each I/O counted is one READ or WRITE answered (4 KiB calls),
        // none twice for being sent again.
        for (dir, op) in [("read", "READ"), ("write", "WRITE")] {
            let ops = run["totals"][dir]["ops"].as_u64().unwrap_or(0);
            let calls = p["ops"]
                .as_array()
                .and_then(|o| o.iter().find(|x| x["op"] == op))
                .and_then(|x| x["calls"].as_u64())
                .unwrap_or(0);
            assert!(ops > 0, "v{v}: {dir}");
            assert_eq!(ops, calls, "v{v}: {dir} I/Os and {op} calls: {p}");
            let bytes = run["totals"][dir]["bytes"].as_u64().unwrap_or(0);
            assert_eq!(bytes, ops * 4096, "v{v}: {dir} bytes");
        }
        // What landed in the export: the set whole, at its sizes, and
        // every read (before and after the restart) found there what the
        // run's last write to that block put, the fill's before it
        // (--verify's per-sector offset, counter and checksum).
        let dir = srv.export.join(&name);
        for f in ["volbench.0.dat", "volbench.1.dat"] {
            let len = std::fs::metadata(dir.join(f)).map(|m| m.len()).unwrap_or(0);
            assert_eq!(len, 4 << 20, "v{v}: {f} on the server");
        }
    }
}

/// 4 KiB random reads of an 8 MiB file at depth 4 on `url` for up to 120 s,
/// watched through `live`: a run for the server to fail under.
fn spawn_reads(url: &str, live: &std::path::Path, out: &std::path::Path) -> Child {
    let run = vb(["run", "--target", url])
        .args(["--size", "8m", "--rw", "randread", "--bs", "4k"])
        .args(["--iodepth", "4", "--warmup", "0", "--duration", "120s"])
        .args(["--interval", "500ms"]);
    spawn_watched(run, live, out)
}

#[test]
fn a_server_that_stays_away_ends_the_run_with_one_line_and_the_intervals_before() {
    let test = "a_server_that_stays_away_ends_the_run_with_one_line_and_the_intervals_before";
    let Some(mut srv) = NfsServer::start(test) else {
        return;
    };
    for v in VERSIONS {
        if v == "4.1" {
            srv.restart();
        }
        let name = format!("gone-v{v}");
        // Dialled again for 3 s, then given up.
        let url = format!("{}&reconnect=3", srv.url(&name, v));
        let tmp = tempfile::tempdir().expect("a temporary folder");
        let (live, out) = (tmp.path().join("live.jsonl"), tmp.path().join("out"));
        let mut child = spawn_reads(&url, &live, &out);
        assert!(
            wait_for(
                &mut child,
                &live,
                Duration::from_secs(120),
                |l| busy_intervals(l) >= 2
            ),
            "v{v}: the run measured before the loss"
        );
        srv.stop();
        let lost = Instant::now();
        let status = wait_end(&mut child, Duration::from_secs(60));
        let o = child.wait_with_output().expect("output");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        eprintln!(
            "v{v}: ended {:?} after the loss: {status:?}\n{err}",
            lost.elapsed()
        );
        assert_eq!(status.code(), Some(exit::RUN_FAILED), "v{v}: {err}");
        let errors: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("volbench: error:"))
            .collect();
        assert_eq!(errors.len(), 1, "v{v}: one line: {err}");
        assert!(
            errors[0].contains("did not come back within 3 s"),
            "v{v}: it says the server is gone and for how long it was waited for: {}",
            errors[0]
        );
        let doc = read_json(&out.join("result.json"));
        check_kept_before_loss(&doc["runs"][0]);
        srv.restart();
    }
}

/// A Ctrl-C while the server is away, the run waiting for it to come
/// back (up to `reconnect=`, 60 s here), ends within the stop's grace with
/// the run's own result (`check_stopped_while_away`): the calls in flight
/// are given up, not waited for.
#[test]
fn a_stop_while_the_server_is_away_ends_with_the_run_s_own_result() {
    let test = "a_stop_while_the_server_is_away_ends_with_the_run_s_own_result";
    let Some(mut srv) = NfsServer::start(test) else {
        return;
    };
    for v in VERSIONS {
        if v == "4.1" {
            srv.restart();
        }
        let url = format!("{}&reconnect=60", srv.url(&format!("away-v{v}"), v));
        let tmp = tempfile::tempdir().expect("a temporary folder");
        let (live, out) = (tmp.path().join("live.jsonl"), tmp.path().join("out"));
        let child = spawn_reads(&url, &live, &out);
        stop_while_silent(child, &live, &out, "nfs", || srv.stop());
        srv.restart();
    }
}

/// A server that is only slow when the run's time is up (its connection
/// up, its answers seconds late: a deep queue on a throttled volume) is
/// waited for, as a kernel client's close waits: the writes in flight come
/// back and the client commits them (COMMIT) before it goes. Only a stop
/// (above) or a server away gives them up. The answers are held by a relay
/// (`SlowLink`) until 1.5 s past the run's end, three times the wait after
/// which a stop gives up.
#[test]
fn a_slow_server_at_the_run_s_end_is_waited_for_and_its_writes_committed() {
    let test = "a_slow_server_at_the_run_s_end_is_waited_for_and_its_writes_committed";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let link = SlowLink::start(srv.port);
    let url = through(&srv, &link, "slow-end");
    let run = vb(["run", "--target", &url])
        .args(["--size", "1m", "--rw", "write", "--bs", "64k"])
        .args(["--iodepth", "4", "--warmup", "0", "--duration", "4s"])
        .args(["--interval", "500ms"]);
    end_while_slow(run, &link);
    const NFS: u32 = 100_003;
    let after = from_last(&link, rpc_calls, (NFS, 7));
    assert!(
        after.contains(&(NFS, 21)),
        "the WRITEs in flight at the end were waited for and committed (COMMIT): {after:?}"
    );
}

/// The NFSv3 URL of `dir` on `srv` with its NFS calls through `link`.
fn through(srv: &NfsServer, link: &SlowLink, dir: &str) -> String {
    srv.url(dir, "3").replace(
        &format!("nfsport={}", srv.port),
        &format!("nfsport={}", link.port),
    )
}

/// A stop while the server is slow (its connections up, its answers held
/// for a minute) ends as a stop while it is away does: the calls in flight
/// are given up half a second into the wait, and the run writes its own
/// result within the stop's grace (`check_stopped_while_away`). Waiting
/// for a slow server (above) is for a run's own end only.
#[test]
fn a_stop_while_the_server_is_slow_ends_with_the_run_s_own_result() {
    let test = "a_stop_while_the_server_is_slow_ends_with_the_run_s_own_result";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let link = SlowLink::start(srv.port);
    let url = through(&srv, &link, "slow-stop");
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let (live, out) = (tmp.path().join("live.jsonl"), tmp.path().join("out"));
    let child = spawn_reads(&url, &live, &out);
    stop_while_silent(child, &live, &out, "nfs", || {
        link.hold_until(Instant::now() + Duration::from_secs(60))
    });
}

#[test]
fn a_fill_larger_than_the_exports_free_space_is_refused_before_any_io() {
    let test = "a_fill_larger_than_the_exports_free_space_is_refused_before_any_io";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let st = rustix::fs::statvfs(&srv.export).expect("statvfs of the export");
    let free = st.f_bavail * st.f_frsize;
    for v in VERSIONS {
        let name = format!("full-v{v}");
        let url = srv.url(&name, v);
        // Twice what is free, and at least 1 GiB more.
        let size = format!("{}", free * 2 + (1 << 30));
        let o = vb(["run", "--target", &url])
            .args(["--size", &size, "--rw", "write", "--bs", "1m"])
            .args(["--warmup", "0", "--duration", "1s", "--json"])
            .expect(exit::TARGET);
        let err = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "v{v}: one line: {err}");
        assert!(
            lines[0].contains("is free") && lines[0].contains("--size"),
            "v{v}: {}",
            lines[0]
        );
        let written: Vec<String> = std::fs::read_dir(srv.export.join(&name))
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".dat"))
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            written.is_empty(),
            "v{v}: no file of the set was made: {written:?}"
        );
    }
}

/// A run over a list of two NFS servers that loses one of them mid-run.
fn two_servers_run(
    a: &NfsServer,
    b: &NfsServer,
    v: &str,
    tag: &str,
    extra: &[&str],
) -> (Child, tempfile::TempDir, String) {
    let url_a = format!("{}&reconnect=3", a.url(&format!("{tag}-a"), v));
    let url_b = format!("{}&reconnect=3", b.url(&format!("{tag}-b"), v));
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let child = vb(["run", "--target", &format!("{{{url_a},{url_b}}}")])
        .args([
            "--size",
            "8m",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "4",
        ])
        .args(["--warmup", "0", "--interval", "500ms"])
        .args(extra)
        .arg("--live")
        .arg(tmp.path().join("live.jsonl"))
        .arg("--output")
        .arg(tmp.path().join("out"))
        .into_command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("volbench starts");
    (child, tmp, url_a)
}

/// `--on-host-loss` over a list of NFS targets, each its own server
/// (nfs-ganesha twice): `continue` leaves the lost server's target out and
/// the run goes on to its end on the other (exit 0, the totals the
/// survivor's, the lost one named with why and when, the live totals going
/// on); `fail`, the default, ends the run for both within the reconnect
/// deadline, keeping what each measured (exit 1, one line).
#[test]
fn a_lost_server_of_a_list_is_left_out_with_continue_and_ends_the_run_with_fail() {
    let test = "a_lost_server_of_a_list_is_left_out_with_continue_and_ends_the_run_with_fail";
    let Some(mut a) = NfsServer::start(test) else {
        return;
    };
    let Some(b) = NfsServer::start(test) else {
        return;
    };
    // continue, over NFSv3: 10 s measured on the survivor.
    let (mut child, tmp, url_a) = two_servers_run(
        &a,
        &b,
        "3",
        "go-on",
        &["--duration", "10s", "--on-host-loss", "continue"],
    );
    let live = tmp.path().join("live.jsonl");
    assert!(
        wait_for(&mut child, &live, Duration::from_secs(120), |l| {
            busy_parts(l, &url_a) >= 2
        }),
        "the run measured on both before the loss"
    );
    a.stop();
    let status = wait_end(&mut child, Duration::from_secs(120));
    let o = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(status.code(), Some(exit::OK), "continue: {err}");
    let doc = read_json(&tmp.path().join("out/result.json"));
    assert!(doc["error"].is_null(), "{}", doc["error"]);
    let run = &doc["runs"][0];
    let gone = run["left_out"].as_array().expect("left_out");
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0]["path"], url_a.as_str());
    assert!(
        gone[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("did not come back within 3 s")),
        "why: {}",
        gone[0]
    );
    let ran = gone[0]["measured_s"].as_f64().unwrap_or(0.0);
    assert!(ran > 0.5 && ran < 10.0, "when: {ran}");
    // The totals are the survivor's own, and it ran its whole time.
    let rows = run["targets"].as_array().expect("targets");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_ne!(rows[0]["path"], url_a.as_str());
    assert_eq!(run["totals"]["read"]["ops"], rows[0]["read"]["ops"]);
    assert!(
        rows[0]["duration_s"].as_f64().unwrap_or(0.0) >= 9.5,
        "the survivor ran its time: {}",
        rows[0]
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("left out") && notes.contains("--on-host-loss continue"),
        "{notes}"
    );
    // The live totals went on after the loss (each from the survivor).
    let lines = live_lines(&live);
    let after = lines
        .iter()
        .filter(|l| l["scope"] == "total" && l["phase"] == "measure")
        .filter(|l| l["t_s"].as_f64().unwrap_or(0.0) > ran + 4.0)
        .count();
    assert!(after >= 2, "total lines after the loss: {after}");
    a.restart();

    // fail (the default), over NFSv4.1: both stopped within the deadline.
    let (mut child, tmp, url_a) = two_servers_run(&a, &b, "4.1", "stop", &["--duration", "120s"]);
    let live = tmp.path().join("live.jsonl");
    assert!(
        wait_for(&mut child, &live, Duration::from_secs(120), |l| {
            busy_parts(l, &url_a) >= 2
        }),
        "the run measured on both before the loss"
    );
    a.stop();
    let status = wait_end(&mut child, Duration::from_secs(60));
    let o = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(status.code(), Some(exit::RUN_FAILED), "fail: {err}");
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("volbench: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "one line: {err}");
    assert!(
        errors[0].contains(&url_a) && errors[0].contains("did not come back within 3 s"),
        "{}",
        errors[0]
    );
    let doc = read_json(&tmp.path().join("out/result.json"));
    let rows = doc["runs"][0]["targets"].as_array().expect("targets");
    assert_eq!(rows.len(), 2, "what both measured is kept: {rows:?}");
    for r in rows {
        assert!(r["read"]["ops"].as_u64().unwrap_or(0) > 0, "{r}");
        // Stopped with the loss, not run out to 120 s.
        assert!(r["duration_s"].as_f64().unwrap_or(0.0) < 60.0, "{r}");
    }
}

/// `--on-host-loss continue` where nothing could go on without a lost
/// target: one line before any I/O, naming why.
#[test]
fn on_host_loss_continue_without_a_list_of_nfs_targets_is_refused_before_io() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path().join("set");
    let list = format!("{}/{{a,b}}", tmp.path().display());
    for (target, says) in [
        (
            "nfs://127.0.0.1/export/dir?version=3",
            "this run has one target",
        ),
        (
            dir.to_str().unwrap_or(""),
            "no target here has a server to lose",
        ),
        (list.as_str(), "no target here has a server to lose"),
    ] {
        let o = vb(["run", "--target", target, "--on-host-loss", "continue"])
            .args(["--size", "1m", "--duration", "1s"])
            .expect(exit::BAD_INPUT);
        let err = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{target}: one line: {err}");
        assert!(lines[0].contains(says), "{target}: {}", lines[0]);
    }
    assert!(!dir.exists(), "nothing was made");
}

//! A run on an `smb://` target when the server goes under it, against a
//! real Samba (`common::smb`): smbd killed mid-run and started again on
//! the same port and share is reconnected to (a new session, its two
//! channels bound again, each file reopened and proven the set's), the
//! READs and WRITEs in flight are sent again, the reconnects are counted
//! per channel in result.json and said in the summary, and the run goes
//! on to exit 0 with every byte it counted where it counted it; a server
//! that stays away past `reconnect=2` ends the run with one line, a
//! non-zero exit and what was measured before the loss kept, and over a
//! list of targets `--on-host-loss` leaves it out or ends the run.
//! Synchronised on the run's `--live` lines and the server's port, never
//! on sleeps.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;
use volbench::error::exit;

use crate::common::live_run::{
    busy_intervals, busy_parts, check_kept_before_loss, live_lines, spawn_watched,
    stop_while_silent, wait_end, wait_for,
};
use crate::common::read_json;
use crate::common::slow_link::{SlowLink, end_while_slow, from_last, smb_commands};
use crate::common::smb::{PASSWORD, Samba, SambaConfig, USER};
use crate::common::vb;

const PW: &str = "VOLBENCH_SMB_PASSWORD";

fn url(s: &Samba, dir: &str, query: &str) -> String {
    format!("smb://{USER}@127.0.0.1:{}/bench/{dir}?{query}", s.port)
}

/// A random read-write run of `secs` on `target`, watched through `live`.
fn start(target: &str, live: &Path, out: &Path, secs: u32) -> Child {
    let run = vb(["run", "--target", target])
        .env(PW, PASSWORD)
        .args([
            "--size", "8m", "--files", "2", "--rw", "randrw", "--bs", "4k",
        ])
        .args(["--iodepth", "8", "--smb-channels", "2"])
        .args(["--warmup", "0", "--interval", "500ms"])
        .args(["--duration", &format!("{secs}s")]);
    spawn_watched(run, live, out)
}

/// (ops, bytes) of a direction in the run's totals.
fn totals(run: &Value, dir: &str) -> (u64, u64) {
    let t = &run["totals"][dir];
    (
        t["ops"].as_u64().unwrap_or(0),
        t["bytes"].as_u64().unwrap_or(0),
    )
}

/// (calls, bytes, resent) of an operation type in `runs[].protocol`.
fn calls(run: &Value, op: &str) -> (u64, u64, u64) {
    run["protocol"]["ops"]
        .as_array()
        .and_then(|o| o.iter().find(|x| x["op"] == op))
        .map_or((0, 0, 0), |x| {
            (
                x["calls"].as_u64().unwrap_or(0),
                x["bytes"].as_u64().unwrap_or(0),
                x["retrans"].as_u64().unwrap_or(0),
            )
        })
}

#[test]
fn smb_a_server_restart_mid_run_is_reconnected_counted_and_the_run_goes_on() {
    let test = "smb_a_server_restart_mid_run_is_reconnected_counted_and_the_run_goes_on";
    let Some(mut srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let (live, out) = (tmp.path().join("live.jsonl"), tmp.path().join("out"));
    let mut child = start(&url(&srv, "restart", ""), &live, &out, 10);
    assert!(
        wait_for(&mut child, &live, Duration::from_secs(120), |l| {
            busy_intervals(l) >= 2
        }),
        "the run measured before the restart"
    );
    // Killed with every per-connection smbd, then started again on the
    // same port and share (`start` returns once the port accepts).
    srv.stop();
    srv.start();
    let before = busy_intervals(&live_lines(&live));
    assert!(
        wait_for(&mut child, &live, Duration::from_secs(60), |l| {
            busy_intervals(l) > before
        }),
        "the run moved data again after the restart\n{}",
        srv.log()
    );
    let status = wait_end(&mut child, Duration::from_secs(120));
    let o = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(status.code(), Some(exit::OK), "{err}");
    assert!(!err.contains(PASSWORD), "a password shown: {err}");
    let doc = read_json(&out.join("result.json"));
    let run = &doc["runs"][0];
    let p = &run["protocol"];
    let reconnects = p["reconnects"].as_u64().unwrap_or(0);
    assert!(reconnects >= 1, "{p}");
    let chans = p["smb"]["channels"].as_array().expect("channels");
    assert_eq!(chans.len(), 2, "{p}");
    assert!(
        chans
            .iter()
            .all(|c| c["reconnects"].as_u64().unwrap_or(0) >= 1),
        "both channels were made again: {p}"
    );
    let per: u64 = chans
        .iter()
        .map(|c| c["reconnects"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(per, reconnects, "counted per channel: {p}");
    let summary = String::from_utf8_lossy(&o.stdout);
    eprintln!("{summary}");
    assert!(
        summary.contains("after the server was lost") && summary.contains("sent again"),
        "the summary says the reconnects: {summary}"
    );
    // Every byte counted is a whole 4 KiB I/O, each answered by the
    // server at least once (a request lost in flight and sent again is
    // answered once).
    for (dir, op) in [("read", "READ"), ("write", "WRITE")] {
        let (ops, bytes) = totals(run, dir);
        assert!(ops > 0, "{dir}s before and after the restart");
        assert_eq!(bytes, ops * 4096, "{dir}");
        let (n, b, _) = calls(run, op);
        assert!(
            n >= ops && b == n * 4096,
            "{op}: {n} calls {b} bytes for {ops} I/Os"
        );
    }
    let resent: u64 = ["READ", "WRITE"].iter().map(|op| calls(run, op).2).sum();
    eprintln!("{reconnects} reconnects, {resent} I/Os sent again");
    // The set on the server is the set: its two files, their sizes as
    // made, nothing left behind.
    let dir = srv.share().join("restart");
    let mut files: Vec<(String, u64)> = std::fs::read_dir(&dir)
        .expect("the set's directory")
        .flatten()
        .map(|e| {
            let len = e.metadata().map(|m| m.len()).unwrap_or(0);
            (e.file_name().to_string_lossy().into_owned(), len)
        })
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            (".volbench-fileset.json".to_string(), files[0].1),
            ("volbench.0.dat".to_string(), 4 << 20),
            ("volbench.1.dat".to_string(), 4 << 20)
        ],
        "the set on the server after the restart"
    );
}

#[test]
fn smb_a_server_that_stays_away_past_reconnect_ends_the_run_with_one_line() {
    let test = "smb_a_server_that_stays_away_past_reconnect_ends_the_run_with_one_line";
    let Some(mut srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let (live, out) = (tmp.path().join("live.jsonl"), tmp.path().join("out"));
    let mut child = start(&url(&srv, "gone", "reconnect=2"), &live, &out, 120);
    assert!(
        wait_for(&mut child, &live, Duration::from_secs(120), |l| {
            busy_intervals(l) >= 2
        }),
        "the run measured before the loss"
    );
    srv.stop();
    let status = wait_end(&mut child, Duration::from_secs(60));
    let o = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(status.code(), Some(exit::RUN_FAILED), "{err}");
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("volbench: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "one line: {err}");
    eprintln!("{}", errors[0]);
    assert!(
        errors[0].contains("did not come back within 2 s")
            && errors[0].contains(&format!("127.0.0.1:{}", srv.port)),
        "it names the server and how long it was waited for: {}",
        errors[0]
    );
    assert!(!err.contains(PASSWORD), "a password shown: {err}");
    let doc = read_json(&out.join("result.json"));
    let run = &doc["runs"][0];
    check_kept_before_loss(run);
    assert_eq!(run["protocol"]["protocol"], "smb", "{run}");
}

/// A Ctrl-C while the server is away, the run waiting for it to come
/// back (up to `reconnect=`, 60 s here), ends within the stop's grace with
/// the run's own result (`check_stopped_while_away`): the reconnect ends
/// at the stop and the requests in flight are given up.
#[test]
fn smb_a_stop_while_the_server_is_away_ends_with_the_run_s_own_result() {
    let test = "smb_a_stop_while_the_server_is_away_ends_with_the_run_s_own_result";
    let Some(mut srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let (live, out) = (tmp.path().join("live.jsonl"), tmp.path().join("out"));
    let child = start(&url(&srv, "away", "reconnect=60"), &live, &out, 120);
    let err = stop_while_silent(child, &live, &out, "smb", || srv.stop());
    assert!(!err.contains(PASSWORD), "a password shown: {err}");
}

/// A server that is only slow when the run's time is up (its channel up,
/// its answers seconds late) is waited for: the WRITEs in flight come
/// back, and the client closes its files and logs off before it goes.
/// Only a stop (above) or a server away gives them up. The answers are
/// held by a relay (`SlowLink`, one channel: the others would bypass it)
/// until 1.5 s past the run's end, three times the wait after which a
/// stop gives up.
#[test]
fn smb_a_slow_server_at_the_run_s_end_is_waited_for_and_its_files_closed() {
    let test = "smb_a_slow_server_at_the_run_s_end_is_waited_for_and_its_files_closed";
    let Some(srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let link = SlowLink::start(srv.port);
    let target = format!("smb://{USER}@127.0.0.1:{}/bench/slow-end", link.port);
    let run = vb(["run", "--target", &target])
        .env(PW, PASSWORD)
        .args(["--size", "1m", "--rw", "write", "--bs", "64k"])
        .args(["--iodepth", "4", "--smb-channels", "1"])
        .args(["--warmup", "0", "--duration", "4s", "--interval", "500ms"]);
    end_while_slow(run, &link);
    // WRITE 9, then CLOSE 6 and LOGOFF 2.
    let after = from_last(&link, smb_commands, 9);
    assert!(
        after.contains(&6) && after.contains(&2),
        "the WRITEs in flight at the end were waited for, the file closed (CLOSE) and the session logged off (LOGOFF): {after:?}"
    );
}

#[test]
fn smb_a_file_replaced_while_the_server_was_away_is_refused_never_written() {
    let test = "smb_a_file_replaced_while_the_server_was_away_is_refused_never_written";
    let Some(mut srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let (live, out) = (tmp.path().join("live.jsonl"), tmp.path().join("out"));
    let mut child = start(&url(&srv, "swap", ""), &live, &out, 120);
    assert!(
        wait_for(&mut child, &live, Duration::from_secs(120), |l| {
            busy_intervals(l) >= 2
        }),
        "the run measured before the restart"
    );
    srv.stop();
    // While the server is away, someone else's file takes the name.
    let victim = srv.share().join("swap/volbench.1.dat");
    // Made before the old one goes, so it cannot be given its inode
    // (Samba's file id): the id no longer proves it the set's.
    let foreign = srv.share().join("swap/foreign");
    std::fs::write(&foreign, b"someone else's").expect("a foreign file");
    std::fs::rename(&foreign, &victim).expect("it takes the name");
    srv.start();
    let status = wait_end(&mut child, Duration::from_secs(120));
    let o = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(status.code(), Some(exit::RUN_FAILED), "{err}");
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("volbench: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "one line: {err}");
    eprintln!("{}", errors[0]);
    assert!(
        errors[0].contains("volbench.1.dat") && errors[0].contains("replaced"),
        "it names the file and why: {}",
        errors[0]
    );
    assert_eq!(
        std::fs::read(&victim).expect("the foreign file"),
        b"someone else's",
        "never written"
    );
    let doc = read_json(&out.join("result.json"));
    assert!(
        totals(&doc["runs"][0], "read").0 > 0,
        "what was measured is kept"
    );
}

/// A run over a list of two SMB servers (smbd twice) that loses one.
fn two_servers_run(
    a: &Samba,
    b: &Samba,
    tag: &str,
    extra: &[&str],
) -> (Child, tempfile::TempDir, String) {
    let url_a = url(a, &format!("{tag}-a"), "reconnect=2");
    let url_b = url(b, &format!("{tag}-b"), "reconnect=2");
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let child = vb(["run", "--target", &format!("{{{url_a},{url_b}}}")])
        .env(PW, PASSWORD)
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

/// `--on-host-loss` over a list of SMB targets, each its own smbd:
/// `continue` leaves the target whose server stayed away past
/// `reconnect=2` out and the other runs its time (exit 0, the lost one
/// named with why); `fail`, the default, ends the run for both, keeping
/// what each measured (exit 1, one line).
#[test]
fn smb_a_lost_server_of_a_list_is_left_out_with_continue_and_ends_the_run_with_fail() {
    let test = "smb_a_lost_server_of_a_list_is_left_out_with_continue_and_ends_the_run_with_fail";
    let Some(mut a) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let Some(b) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let (mut child, tmp, url_a) = two_servers_run(
        &a,
        &b,
        "go-on",
        &["--duration", "8s", "--on-host-loss", "continue"],
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
            .is_some_and(|e| e.contains("did not come back within 2 s")),
        "why: {}",
        gone[0]
    );
    let rows = run["targets"].as_array().expect("targets");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_ne!(rows[0]["path"], url_a.as_str());
    assert_eq!(run["totals"]["read"]["ops"], rows[0]["read"]["ops"]);
    assert!(
        rows[0]["duration_s"].as_f64().unwrap_or(0.0) >= 7.5,
        "the survivor ran its time: {}",
        rows[0]
    );
    a.start();

    let (mut child, tmp, url_a) = two_servers_run(&a, &b, "stop", &["--duration", "120s"]);
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
        errors[0].contains("did not come back within 2 s"),
        "{}",
        errors[0]
    );
    let doc = read_json(&tmp.path().join("out/result.json"));
    let rows = doc["runs"][0]["targets"].as_array().expect("targets");
    assert_eq!(rows.len(), 2, "what both measured is kept: {rows:?}");
    for r in rows {
        assert!(r["read"]["ops"].as_u64().unwrap_or(0) > 0, "{r}");
        assert!(r["duration_s"].as_f64().unwrap_or(0.0) < 60.0, "{r}");
    }
}

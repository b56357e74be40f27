//! Every ending leaves a result.json holding what was measured: a reader of
//! stdout that goes away (`| head`, `less` quit early, `--live -` into a
//! closed pipe), a stdout that fails (`> /dev/full`), one host cut off,
//! every host lost (`scancel`, a Slurm time limit). Each test waits on the
//! binary's own output or exit, never on a sleep.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use volbench::error::exit;

use crate::common::hosts::{TestHosts, io_running, processes_with, wait_until};
use crate::common::slurm::Slurm;
use crate::common::{read_json, stderr, volbench};

const BIN: &str = env!("CARGO_BIN_EXE_volbench");

/// A short run of the null engine into `dir/out`.
fn short_run(dir: &Path, extra: &[&str]) -> Command {
    let mut c = volbench();
    c.args(["run", "--engine", "null", "--size", "4m", "--buffered"])
        .args(["--warmup", "0", "--interval", "250ms"])
        .arg("--target")
        .arg(dir.join("t"))
        .arg("--output")
        .arg(dir.join("out"))
        .args(extra);
    c
}

fn no_panic(err: &str) {
    assert!(!err.contains("panicked"), "a panic: {err}");
}

fn ops(run: &Value) -> u64 {
    ["read", "write"]
        .iter()
        .map(|op| run["totals"][op]["ops"].as_u64().unwrap_or(0))
        .sum()
}

/// The child's exit, or a failed test after `limit` (the child killed).
fn exits_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let mut status = None;
    let ended = wait_until(limit, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    if !ended {
        let _ = child.kill();
        let _ = child.wait();
        panic!("still running after {limit:?}");
    }
    status.unwrap()
}

#[test]
fn a_reader_gone_before_the_table_leaves_the_files_and_a_normal_exit() {
    let d = tempfile::tempdir().unwrap();
    let mut child = short_run(d.path(), &["--duration", "1s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -0`: the reader is gone before a byte is printed.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    no_panic(&err);
    assert_eq!(o.status.code(), Some(exit::OK), "{err}");
    let doc = read_json(&d.path().join("out/result.json"));
    assert!(ops(&doc["runs"][0]) > 0, "{doc}");
    assert!(
        !err.contains("cannot write to stdout"),
        "a closed pipe is no error: {err}"
    );
}

#[test]
fn live_lines_into_a_closed_pipe_stop_the_run_with_its_results() {
    let d = tempfile::tempdir().unwrap();
    let mut child = short_run(d.path(), &["--duration", "10m", "--live", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `--live - | head -1`: one line read, then the reader goes away.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("volbench.live/v1"), "{first}");
    drop(lines);
    let err_pipe = child.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut { err_pipe }, &mut s).unwrap();
        s
    });
    let status = exits_within(&mut child, Duration::from_secs(60));
    let err = log.join().unwrap();
    no_panic(&err);
    assert_eq!(status.code(), Some(exit::INTERRUPTED), "{err}");
    assert!(err.contains("stdout closed"), "{err}");
    let doc = read_json(&d.path().join("out/result.json"));
    assert_eq!(doc["interrupted"], true);
    assert!(ops(&doc["runs"][0]) > 0, "what was measured is kept: {doc}");
}

/// stdout on /dev/full: the write fails with ENOSPC.
fn full() -> Stdio {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full")
        .into()
}

#[test]
fn a_failing_stdout_is_one_line_and_the_results_are_on_disk() {
    let d = tempfile::tempdir().unwrap();
    let o = short_run(d.path(), &["--duration", "500ms"])
        .stdout(full())
        .output()
        .unwrap();
    let err = stderr(&o);
    no_panic(&err);
    assert_eq!(o.status.code(), Some(exit::RUN_FAILED), "{err}");
    assert!(
        err.contains("volbench: error: cannot write to stdout: No space left on device"),
        "{err}"
    );
    let doc = read_json(&d.path().join("out/result.json"));
    assert!(ops(&doc["runs"][0]) > 0);
    // The plan alone, and a comparison, fail the same way: one line, exit 1.
    let o = short_run(d.path(), &["--dry-run"])
        .stdout(full())
        .output()
        .unwrap();
    no_panic(&stderr(&o));
    assert_eq!(o.status.code(), Some(exit::RUN_FAILED), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    let out = d.path().join("out");
    // compare writes volbench-compare.html where it runs: here, not in
    // the source tree.
    let o = volbench()
        .current_dir(d.path())
        .arg("compare")
        .args([&out, &out])
        .stdout(full())
        .output()
        .unwrap();
    no_panic(&stderr(&o));
    assert_eq!(o.status.code(), Some(exit::RUN_FAILED), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot write to stdout"),
        "{}",
        stderr(&o)
    );
    // A command whose reader left early ends quietly, as `| head` expects.
    let mut child = volbench()
        .args(["suite", "list"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

/// Waits until `n` agents of session `tag` have their I/O threads up.
fn agents_running(tag: &str, n: usize) -> Vec<u32> {
    let mut pids = Vec::new();
    let ok = wait_until(Duration::from_secs(60), || {
        pids = processes_with(tag, None)
            .into_iter()
            .filter(|(pid, cmd)| cmd.contains(" agent ") && io_running(*pid))
            .map(|(pid, _)| pid)
            .collect();
        pids.len() == n
    });
    assert!(ok, "the agents never ran: {:?}", processes_with(tag, None));
    pids
}

/// The rows of `report --format intervals-csv` for `host`.
fn interval_rows(out: &Path, host: &str) -> usize {
    let o = volbench()
        .args(["report", "--format", "intervals-csv", "-o", "-"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.split(',').nth(2) == Some(host))
        .count()
}

#[test]
fn a_host_cut_off_mid_run_keeps_its_intervals_marked_as_lost() {
    let Some(h) = TestHosts::up(
        "a_host_cut_off_mid_run_keeps_its_intervals_marked_as_lost",
        2,
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let tag = format!("vbtest-cut2-{}", std::process::id());
    let mut coord = volbench()
        .args([
            "run",
            "--hosts",
            &h.list(),
            "--ssh-command",
            &h.ssh_command(),
        ])
        .arg("--target")
        .arg(tmp.path().join("{host}"))
        .arg("--output")
        .arg(&out)
        .args(["--size", "4m", "--buffered", "--interval", "250ms"])
        .args([
            "--engine",
            "null",
            "--remote-volbench",
            BIN,
            "--session",
            &tag,
        ])
        .args(["--duration", "10m", "--warmup", "0", "--host-timeout", "4s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    agents_running(&tag, 2);
    // A few intervals from both hosts first, then h2's link goes quiet.
    let log = coord.stderr.take().unwrap();
    let mut lines = BufReader::new(log).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("2.") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    h.cut(2);
    let status = exits_within(&mut coord, Duration::from_secs(60));
    assert_eq!(status.code(), Some(exit::RUN_FAILED));
    let doc = read_json(&out.join("result.json"));
    let hosts = doc["cluster"]["hosts"].as_array().unwrap();
    assert_eq!(hosts[1]["status"], "failed", "{}", hosts[1]);
    let kept = hosts[1]["unfinished"]["intervals"].as_array().unwrap();
    assert!(!kept.is_empty(), "h2's intervals before the cut are kept");
    assert!(ops(&doc["runs"][0]) > 0, "h1's run is the total");
    let notes = doc["notes"].to_string();
    assert!(notes.contains("h2") && notes.contains("(lost)"), "{notes}");
    assert_eq!(interval_rows(&out, "h2 (lost)"), kept.len());
}

/// A run of one host through `--launcher slurm` inside a Slurm job: the
/// coordinator is `argv`'s command, run by `salloc` or in an `sbatch` script.
fn slurm_run(dir: &Path, duration: &str) -> Vec<String> {
    let mut argv: Vec<String> = [BIN, "run", "--launcher", "slurm", "--hosts", "vb1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    argv.extend(
        [
            "--size",
            "4m",
            "--buffered",
            "--engine",
            "null",
            "--interval",
            "250ms",
            "--warmup",
            "0",
            "--duration",
            duration,
            "--remote-volbench",
            BIN,
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    argv.push("--target".into());
    argv.push(dir.join("t").display().to_string());
    argv.push("--output".into());
    argv.push(dir.join("out").display().to_string());
    argv.push("--live".into());
    argv.push(dir.join("live.jsonl").display().to_string());
    argv
}

/// Whether the run's live file holds at least `n` interval totals (the
/// host's intervals reached the coordinator).
fn intervals_arrived(dir: &Path, n: usize) -> bool {
    std::fs::read_to_string(dir.join("live.jsonl")).is_ok_and(|t| {
        t.lines()
            .filter(|l| l.contains("\"scope\":\"total\""))
            .count()
            >= n
    })
}

/// The one host's agents of a Slurm step (found by their task flag).
fn step_agent_running() -> bool {
    processes_with("--task-env SLURM_PROCID", None)
        .iter()
        .any(|(pid, cmd)| cmd.starts_with(BIN) && io_running(*pid))
}

fn assert_measured_from_intervals(out: &Path) {
    let doc = read_json(&out.join("result.json"));
    let run = &doc["runs"][0];
    assert!(
        ops(run) > 0,
        "the run the only host measured is kept: {doc}"
    );
    assert_eq!(run["interrupted"], true);
    assert_eq!(run["from_intervals"], true, "{run}");
    assert!(
        doc["notes"].to_string().contains("intervals that arrived"),
        "{}",
        doc["notes"]
    );
    // The result reads back: `report` takes it.
    let o = volbench()
        .args(["report", "--format", "csv", "-o", "-"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn scancel_of_the_only_host_keeps_what_it_measured() {
    let test = "scancel_of_the_only_host_keeps_what_it_measured";
    let Some(slurm) = Slurm::up(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let name = format!("vbcancel{}", std::process::id());
    let mut coord = Command::new("salloc")
        .args(["-N1", "-w", "vb1", "--time=10", "-J", &name])
        .args(slurm_run(tmp.path(), "10m"))
        .env("SLURM_CONF", slurm.conf())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = coord.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut { err }, &mut s).unwrap();
        s
    });
    assert!(
        wait_until(Duration::from_secs(60), step_agent_running),
        "the agent never ran"
    );
    assert!(
        wait_until(Duration::from_secs(60), || intervals_arrived(tmp.path(), 3)),
        "no interval arrived"
    );
    let cancelled = Command::new("scancel")
        .args(["-n", &name])
        .env("SLURM_CONF", slurm.conf())
        .status()
        .unwrap();
    assert!(cancelled.success());
    let status = exits_within(&mut coord, Duration::from_secs(90));
    let log = log.join().unwrap();
    no_panic(&log);
    assert!(!status.success(), "{log}");
    assert_measured_from_intervals(&tmp.path().join("out"));
}

#[test]
fn a_slurm_time_limit_keeps_what_the_job_measured() {
    let test = "a_slurm_time_limit_keeps_what_the_job_measured";
    let Some(slurm) = Slurm::up(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // A batch job whose run would outlast its one-minute limit.
    let script = tmp.path().join("job.sh");
    let argv: Vec<String> = slurm_run(tmp.path(), "10m")
        .into_iter()
        .map(|a| format!("'{a}'"))
        .collect();
    std::fs::write(&script, format!("#!/bin/sh\nexec {}\n", argv.join(" "))).unwrap();
    let o = Command::new("sbatch")
        .args(["--wait", "-N1", "-w", "vb1", "--time=1"])
        .arg("-o")
        .arg(tmp.path().join("job.log"))
        .arg(&script)
        .env("SLURM_CONF", slurm.conf())
        .output()
        .unwrap();
    let log = std::fs::read_to_string(tmp.path().join("job.log")).unwrap_or_default();
    no_panic(&log);
    assert!(!o.status.success(), "the job ended at its limit: {log}");
    assert!(log.contains("DUE TO TIME LIMIT"), "{log}");
    assert_measured_from_intervals(&tmp.path().join("out"));
}

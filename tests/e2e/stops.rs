//! Stops always leave results: a signal at any stage (warm-up, fill, the
//! first run, right after another signal, on storage that barely answers)
//! ends with exit 130, a line saying where the job stood and a result.json
//! marked interrupted; `quick` removes its scratch directory however it ends;
//! the coordinator of a multi-host run does the same, and gives up on agents
//! by its own --host-timeout. Every test synchronises on the binary's own
//! output, never on a sleep.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use volbench::error::exit;

use crate::common::{read_json, skip, volbench};

const BIN: &str = env!("CARGO_BIN_EXE_volbench");

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A running volbench whose stderr is read line by line as it comes.
struct Watched {
    child: Child,
    lines: Receiver<String>,
    all: Arc<Mutex<String>>,
}

impl Watched {
    fn spawn(c: &mut Command) -> Self {
        let mut child = c
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("volbench runs");
        let err = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        let all = Arc::new(Mutex::new(String::new()));
        let keep = all.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                keep.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = tx.send(line);
            }
        });
        Watched { child, lines, all }
    }

    /// Waits for a stderr line containing `mark`.
    fn wait_for(&self, mark: &str) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if line.contains(mark) {
                return;
            }
        }
        panic!("no line with '{mark}'; stderr:\n{}", self.stderr());
    }

    /// Whether a stderr line containing `mark` comes within `limit`.
    fn saw(&self, mark: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if line.contains(mark) {
                return true;
            }
        }
        false
    }

    fn signal(&self, sig: Signal) {
        kill_process(Pid::from_child(&self.child), sig).unwrap();
    }

    /// Its exit status, waited for up to `limit` (killed past it).
    fn end(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("still running after {limit:?}; stderr:\n{}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything it printed on stderr, once it has ended.
    fn stderr(&self) -> String {
        // The reader thread drains the pipe to its end after the exit.
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline
            && self.lines.recv_timeout(Duration::from_millis(50)).is_ok()
        {}
        self.all.lock().unwrap().clone()
    }
}

fn a_run(dir: &Path, extra: &[&str]) -> Command {
    let mut c = volbench();
    c.args([
        "run",
        "--target",
        p(&dir.join("t")),
        "--size",
        "4m",
        "--buffered",
    ])
    .args(["--interval", "100ms", "--output", p(&dir.join("out"))])
    .args(extra);
    c
}

/// Exit 130, a line saying the job stopped, result.json marked interrupted.
fn assert_stopped_with_result(w: &mut Watched, out: &Path) -> serde_json::Value {
    let status = w.end(Duration::from_secs(30));
    let err = w.stderr();
    assert_eq!(status.code(), Some(exit::INTERRUPTED), "{err}");
    assert!(err.contains("volbench: stopped"), "no line says so: {err}");
    let doc = read_json(&out.join("result.json"));
    assert_eq!(doc["interrupted"], true, "{err}");
    doc
}

#[test]
fn sigterm_in_the_warm_up_says_so_and_writes_an_interrupted_result() {
    let d = tempfile::tempdir().unwrap();
    let mut w = Watched::spawn(&mut a_run(
        d.path(),
        &["--warmup", "60s", "--duration", "60s"],
    ));
    w.wait_for("[1/1]");
    w.signal(Signal::TERM);
    let doc = assert_stopped_with_result(&mut w, &d.path().join("out"));
    let err = w.stderr();
    // "[1/1]" comes as the run starts: the signal may land before its
    // workers are released (starting) or after (warming up), never in the
    // fill, and in neither case is anything measured.
    assert!(
        err.contains("while warming up run 'randread")
            || err.contains("while starting run 'randread"),
        "{err}"
    );
    assert_eq!(doc["runs"].as_array().unwrap().len(), 0, "nothing measured");
}

#[test]
fn sigint_in_the_first_measured_run_prints_and_writes_every_time() {
    for i in 0..10 {
        let d = tempfile::tempdir().unwrap();
        let mut w = Watched::spawn(&mut a_run(
            d.path(),
            &["--warmup", "0", "--duration", "60s"],
        ));
        w.wait_for("[1/1]");
        w.signal(Signal::INT);
        let doc = assert_stopped_with_result(&mut w, &d.path().join("out"));
        assert!(doc["runs"].as_array().unwrap().len() <= 1, "attempt {i}");
    }
}

#[test]
fn a_second_signal_right_after_the_first_still_leaves_the_result() {
    let d = tempfile::tempdir().unwrap();
    let mut w = Watched::spawn(&mut a_run(
        d.path(),
        &["--warmup", "0", "--duration", "60s"],
    ));
    w.wait_for("[1/1]");
    w.signal(Signal::TERM);
    w.signal(Signal::TERM);
    assert_stopped_with_result(&mut w, &d.path().join("out"));
}

#[test]
fn sigquit_stops_a_run_with_its_result() {
    let d = tempfile::tempdir().unwrap();
    let mut w = Watched::spawn(&mut a_run(
        d.path(),
        &["--warmup", "0", "--duration", "60s"],
    ));
    w.wait_for("[1/1]");
    w.signal(Signal::QUIT);
    assert_stopped_with_result(&mut w, &d.path().join("out"));
}

/// quick's scratch directory is gone however quick is stopped: in its
/// fill, in its first run, by a signal and then a second one.
#[test]
fn quick_stopped_at_any_point_leaves_no_scratch_directory() {
    for (mark, signals) in [("filling", 1), ("[1/6]", 1), ("[2/6]", 1), ("[1/6]", 2)] {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let mut c = volbench();
        c.args([
            "quick",
            "--duration",
            "30s",
            "--size",
            "64m",
            "--output",
            p(&out),
        ])
        .current_dir(d.path());
        let mut w = Watched::spawn(&mut c);
        w.wait_for(mark);
        for _ in 0..signals {
            w.signal(Signal::INT);
        }
        let status = w.end(Duration::from_secs(60));
        let err = w.stderr();
        assert_eq!(status.code(), Some(exit::INTERRUPTED), "{mark}: {err}");
        assert_eq!(read_json(&out.join("result.json"))["interrupted"], true);
        let left: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["out"], "{mark} x{signals}: {err}");
    }
}

/// Storage at 10 IOPS with 128 I/Os in flight: each I/O takes about 13 s,
/// so the threads cannot return in time; the result is written anyway,
/// within the grace, from what the collector recorded.
#[test]
fn a_stop_on_storage_that_barely_answers_writes_the_result_within_the_grace() {
    let test = "a_stop_on_storage_that_barely_answers";
    if let Some(why) = crate::common::volume::unavailable() {
        skip(test, &why);
        return;
    }
    let _one = crate::common::heavy_io();
    let spec = crate::common::volume::VolumeSpec::new(64 << 20).read_iops(10);
    let vol = crate::common::volume::Volume::create(test, &spec)
        .unwrap_or_else(|e| panic!("{test}: cannot create the emulated volume: {e}"));
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let mut c = vol.volbench();
    c.args(["run", "--target", vol.device_str(), "--rw", "randread"])
        .args(["--threads", "1", "--iodepth", "128", "--engine", "psync"])
        .args(["--warmup", "0", "--duration", "60s", "--interval", "500ms"])
        .args(["--output", p(&out)]);
    let mut w = Watched::spawn(&mut c);
    w.wait_for("[1/1]");
    // The reads are queued behind the cap once an I/O thread sleeps in
    // the kernel uninterruptibly (state D).
    let pid = w.child.id();
    let blocked = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|t| {
                let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
                let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
                comm.starts_with("vb-io-")
                    && stat
                        .rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('D'))
            })
    };
    assert!(
        crate::common::hosts::wait_until(Duration::from_secs(30), blocked),
        "no I/O thread blocked in I/O: {}",
        w.stderr()
    );
    let t = Instant::now();
    w.signal(Signal::TERM);
    // The result is on disk within the grace; the process itself can end
    // only once the kernel lets its blocked threads go (about 13 s here).
    let written = crate::common::hosts::wait_until(Duration::from_secs(30), || {
        out.join("result.json").exists()
    });
    let took = t.elapsed();
    let status = w.end(Duration::from_secs(60));
    let err = w.stderr();
    assert!(written, "no result.json: {err}");
    assert_eq!(status.code(), Some(exit::INTERRUPTED), "{err}");
    assert!(
        took < Duration::from_secs(6),
        "result.json came {took:?} after the stop, well past the 3 s grace: {err}"
    );
    let doc = read_json(&out.join("result.json"));
    let notes = doc["notes"].to_string();
    // Stopped after its first interval, the run is rebuilt from the
    // collector's record; stopped before it, the result says it was not
    // measured. Either way the result is on disk and says which.
    assert!(
        notes.contains("interval record") || notes.contains("it was not measured"),
        "written from the collector's record: {notes}"
    );
    assert_eq!(doc["interrupted"], true);
}

/// A launcher that is an argument vector (`env`), the agents on this host:
/// the path srun and kubectl take too.
fn hosts_run(dir: &Path, launcher: &str, extra: &[&str]) -> Command {
    let mut c = volbench();
    c.args(["run", "--hosts", "a,b", "--launcher", launcher])
        .args(["--remote-volbench", BIN])
        .args([
            "--target",
            p(&dir.join("{host}")),
            "--size",
            "4m",
            "--buffered",
        ])
        .args(["--interval", "250ms", "--output", p(&dir.join("out"))])
        .args(extra);
    c
}

#[test]
fn sigterm_to_the_coordinator_of_an_exec_launcher_keeps_the_results() {
    let d = tempfile::tempdir().unwrap();
    let mut w = Watched::spawn(&mut hosts_run(
        d.path(),
        "env VB_HOST={host}",
        &["--warmup", "0", "--duration", "60s"],
    ));
    w.wait_for("[1/1]");
    w.signal(Signal::TERM);
    let doc = assert_stopped_with_result(&mut w, &d.path().join("out"));
    assert!(doc["runs"].as_array().unwrap().len() <= 1);
}

#[test]
fn sigterm_while_the_agents_start_is_a_stop_not_a_failure() {
    // The slurm finding: srun takes its time to start the agents, and a
    // stop then was exit 1 with nothing written.
    let d = tempfile::tempdir().unwrap();
    let mut w = Watched::spawn(&mut hosts_run(
        d.path(),
        "sh -c 'exec sleep 60' {host}",
        &["--host-timeout", "60s", "--duration", "1s"],
    ));
    w.wait_for("2 hosts");
    w.signal(Signal::TERM);
    let doc = assert_stopped_with_result(&mut w, &d.path().join("out"));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 0);
}

#[test]
fn an_agent_that_never_says_hello_is_given_up_after_the_host_timeout() {
    let d = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let mut w = Watched::spawn(&mut hosts_run(
        d.path(),
        "sh -c 'exec sleep 120' {host}",
        &["--host-timeout", "2s", "--duration", "1s"],
    ));
    let status = w.end(Duration::from_secs(30));
    let err = w.stderr();
    assert_ne!(status.code(), Some(exit::OK), "{err}");
    assert!(err.contains("--host-timeout"), "{err}");
    // It was 40 s whatever --host-timeout said.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn an_agent_sending_an_oversized_line_is_named_for_it() {
    let d = tempfile::tempdir().unwrap();
    let mut w = Watched::spawn(&mut hosts_run(
        d.path(),
        "sh -c 'head -c 40000000 /dev/zero | tr \"\\000\" x; sleep 60' {host}",
        &["--host-timeout", "30s", "--duration", "1s"],
    ));
    let status = w.end(Duration::from_secs(60));
    let err = w.stderr();
    assert_ne!(status.code(), Some(exit::OK), "{err}");
    assert!(err.contains("sent a line over"), "{err}");
    assert!(!err.contains("no word from it"), "{err}");
}

/// A process stopped for 3 s (SIGSTOP) would show as a 3 s I/O latency
/// with no word: the result and the terminal say the process stood still.
#[test]
fn a_stopped_process_is_noted_not_passed_off_as_io_latency() {
    let d = tempfile::tempdir().unwrap();
    let mut w = Watched::spawn(&mut a_run(
        d.path(),
        &["--warmup", "0", "--duration", "60s"],
    ));
    w.wait_for("[1/1]");
    // The I/O threads exist once the run is under way (its clock starts
    // as they are released): a stall before that is no I/O's latency.
    let pid = w.child.id();
    let io_thread = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.starts_with("vb-io-"))
            })
    };
    assert!(crate::common::hosts::wait_until(
        Duration::from_secs(30),
        io_thread
    ));
    // A stop that lands before the run's clock starts (the threads are
    // still being set up) is rightly not noted: then it is tried again.
    let mut noted = false;
    for _ in 0..3 {
        w.signal(Signal::STOP);
        // The stall itself is what is measured here, not a synchronisation.
        std::thread::sleep(Duration::from_secs(3));
        w.signal(Signal::CONT);
        if w.saw("stood still", Duration::from_secs(5)) {
            noted = true;
            break;
        }
    }
    assert!(noted, "no stall noted: {}", w.stderr());
    w.signal(Signal::INT);
    let doc = assert_stopped_with_result(&mut w, &d.path().join("out"));
    let stalls = doc["runs"][0]["stalls"]
        .as_array()
        .expect("stalls recorded");
    assert!(!stalls.is_empty(), "{stalls:?}");
    let secs = stalls[stalls.len() - 1]["secs"].as_f64().unwrap();
    assert!((2.5..10.0).contains(&secs), "{secs}");
}

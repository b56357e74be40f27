//! A short command run to its end with a deadline: its input written, its
//! output read with a cap. `--hosts-from` and every launcher command
//! (`volbench install`, the binary push, the clock probe, kubectl) run
//! through here.
//!
//! The deadline holds whatever the child leaves behind: a child spawned as
//! the leader of its own process group (the launchers, kubectl) has the
//! whole group killed at the deadline, not only itself (an ssh
//! ProxyCommand, a kubectl credential plugin); and a pipe still held open by
//! a process outside the group (an ssh ControlPersist master keeps stderr)
//! is read for at most `PIPE_GRACE` more, what came by then kept.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::{Read, Write};
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the output pipes are read after the child has ended (or was
/// killed): what a descendant still holding them writes after that is not
/// waited for.
const PIPE_GRACE: Duration = Duration::from_secs(2);
/// The input is written in pieces this large, each one progress.
const PIECE: usize = 64 * 1024;

/// What a finished (or killed) child left.
pub(crate) struct Finished {
    /// None when it was killed at the deadline.
    pub(crate) status: Option<ExitStatus>,
    /// At most the cap given for each.
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

/// Waits up to `limit` for a child to exit.
pub(crate) fn wait_briefly(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Some(st),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => return None,
        }
    }
}

/// Writes `input` to the child's stdin (when it was piped), reads at most
/// `out_cap` / `err_cap` bytes of its stdout / stderr (when piped), and
/// kills it (its process group, when it leads one) at `timeout`.
pub(crate) fn finish(
    child: Child,
    input: &[u8],
    out_cap: u64,
    err_cap: u64,
    timeout: Duration,
) -> Finished {
    run(child, input, out_cap, err_cap, timeout, false)
}

/// `finish` for a child fed a large input (a binary pushed through a
/// launcher): killed when `silence` passes without a piece of the input
/// taken, rather than at a total time, so a slow but moving copy is not
/// cut and a stalled one is not waited for.
pub(crate) fn finish_feeding(
    child: Child,
    input: &[u8],
    out_cap: u64,
    err_cap: u64,
    silence: Duration,
) -> Finished {
    run(child, input, out_cap, err_cap, silence, true)
}

fn run(
    mut child: Child,
    input: &[u8],
    out_cap: u64,
    err_cap: u64,
    limit: Duration,
    moving: bool,
) -> Finished {
    let start = Instant::now();
    // Milliseconds after `start` when the child last took a piece of input.
    let fed = Arc::new(AtomicU64::new(0));
    // Each pipe on its own thread: a child that reads nothing (it failed)
    // or fills one pipe must not block us on another.
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    let fed_w = fed.clone();
    std::thread::spawn(move || {
        if let Some(w) = stdin.as_mut() {
            for piece in input.chunks(PIECE) {
                if w.write_all(piece).is_err() {
                    break;
                }
                let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                fed_w.store(ms, Ordering::Relaxed);
            }
        }
        drop(stdin);
    });
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        out_cap,
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        err_cap,
    );
    let deadline = || {
        let from = if moving {
            Duration::from_millis(fed.load(Ordering::Relaxed))
        } else {
            Duration::ZERO
        };
        start + from + limit
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if Instant::now() < deadline() => {
                std::thread::sleep(Duration::from_millis(10))
            }
            _ => break None,
        }
    };
    if status.is_none() {
        kill_group(&child);
        let _ = child.kill();
        let _ = child.wait();
    }
    let until = Instant::now() + PIPE_GRACE;
    Finished {
        status,
        stdout: out.take(until),
        stderr: err.take(until),
    }
}

/// Kills the process group `child` leads, if it leads one (it was spawned
/// with `process_group(0)`): everything it started goes with it.
#[cfg(unix)]
fn kill_group(child: &Child) {
    let Some(pid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    if rustix::process::getpgid(Some(pid)).ok() == Some(pid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// A Windows launcher lives in the coordinator's job object instead.
#[cfg(not(unix))]
fn kill_group(_child: &Child) {}

/// A pipe read on a thread of its own into a buffer that can be taken
/// while the thread is still reading.
struct Drain {
    buf: Arc<Mutex<Vec<u8>>>,
    done: std::sync::mpsc::Receiver<()>,
}

fn drain(pipe: Option<Box<dyn Read + Send>>, cap: u64) -> Drain {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let (tx, done) = std::sync::mpsc::channel();
    let b = buf.clone();
    std::thread::spawn(move || {
        if let Some(r) = pipe {
            let mut r = r.take(cap);
            let mut piece = [0u8; 8192];
            while let Ok(n) = r.read(&mut piece) {
                if n == 0 {
                    break;
                }
                if let Ok(mut b) = b.lock() {
                    b.extend_from_slice(piece.get(..n).unwrap_or_default());
                }
            }
        }
        let _ = tx.send(());
    });
    Drain { buf, done }
}

impl Drain {
    /// What was read, once the pipe ended or at `until`, whichever is first.
    fn take(self, until: Instant) -> Vec<u8> {
        let _ = self
            .done
            .recv_timeout(until.saturating_duration_since(Instant::now()));
        self.buf
            .lock()
            .map(|mut b| std::mem::take(&mut *b))
            .unwrap_or_default()
    }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn sh(script: &str, group: bool) -> Child {
        let mut c = Command::new("sh");
        c.args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if group {
            std::os::unix::process::CommandExt::process_group(&mut c, 0);
        }
        c.spawn().unwrap()
    }

    /// Whether process `pid` has ended (gone, or a zombie not yet reaped).
    fn ended(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
            s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z'))
        })
    }

    #[test]
    fn a_grandchild_holding_the_pipes_does_not_hold_the_caller() {
        // kubectl's credential plugin, ssh's ProxyCommand: a descendant
        // that never ends, holding stdout and stderr. Its whole group goes
        // at the deadline.
        let done = finish(
            sh("sleep 600 & echo $!; wait", true),
            b"",
            1 << 10,
            1 << 10,
            Duration::from_secs(3),
        );
        assert!(done.status.is_none());
        let pid = String::from_utf8_lossy(&done.stdout).trim().to_string();
        assert!(!pid.is_empty(), "the grandchild said its pid in 3 s");
        let t = Instant::now();
        while !ended(&pid) && t.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            ended(&pid),
            "the grandchild {pid} outlived its group's kill"
        );
        // Outside the group: a daemon that keeps stderr after its parent
        // ended normally (ssh's ControlPersist master) is not waited for.
        let t = Instant::now();
        let done = finish(
            sh("(setsid sleep 20 &) ; echo ok", false),
            b"",
            1 << 10,
            1 << 10,
            Duration::from_secs(60),
        );
        assert!(done.status.is_some_and(|s| s.success()));
        assert_eq!(done.stdout, b"ok\n");
        assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    }

    #[test]
    fn a_fed_child_is_judged_by_its_progress_not_its_total_time() {
        // 4 MiB into `cat` at its own pace: done, however long it took.
        let input = vec![7u8; 4 << 20];
        let done = finish_feeding(
            sh("cat >/dev/null; echo took", true),
            &input,
            64,
            64,
            Duration::from_secs(20),
        );
        assert_eq!(done.stdout, b"took\n");
        // A child that takes nothing: given up one silence after the start.
        let t = Instant::now();
        let done = finish_feeding(
            sh("exec sleep 600", true),
            &input,
            64,
            64,
            Duration::from_millis(300),
        );
        assert!(done.status.is_none());
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    }
}

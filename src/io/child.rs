//! A short command run to its end with a deadline: its input written, its
//! output read with a cap. `--hosts-from` and every launcher command
//! (`volbench install`, the binary push, the clock probe) run through here.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::{Read, Write};
use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
/// kills it at `timeout`. The whole call ends by `timeout` (and a moment to
/// collect what was read): a child that leaves a process behind holding
/// its pipes (`sh -c 'sleep 1000 & echo a'`) is given up at the deadline,
/// its status then None as for a child that never exited.
pub(crate) fn finish(
    mut child: Child,
    input: &[u8],
    out_cap: u64,
    err_cap: u64,
    timeout: Duration,
) -> Finished {
    let deadline = Instant::now() + timeout;
    // Each pipe on its own thread: a child that reads nothing (it failed)
    // or fills one pipe must not block us on another.
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(w) = stdin.as_mut() {
            let _ = w.write_all(&input);
        }
        drop(stdin);
    });
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>)>();
    let read = |pipe: Option<Box<dyn Read + Send>>, cap: u64, is_out: bool| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(r) = pipe {
                let _ = r.take(cap).read_to_end(&mut s);
            }
            let _ = tx.send((is_out, s));
        })
    };
    let out = child
        .stdout
        .take()
        .map(|p| Box::new(p) as Box<dyn Read + Send>);
    let err = child
        .stderr
        .take()
        .map(|p| Box::new(p) as Box<dyn Read + Send>);
    drop(read(out, out_cap, true));
    drop(read(err, err_cap, false));
    drop(tx);
    let mut status = wait_briefly(&mut child, timeout);
    if status.is_none() {
        kill(&mut child);
    }
    // The pipes close when every process holding them has gone: the child
    // and anything it left running. Read until then, or the deadline (the
    // readers are left to end with those processes).
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let left = deadline.saturating_duration_since(Instant::now()) + COLLECT;
        match rx.recv_timeout(left) {
            Ok((true, s)) => stdout = s,
            Ok((false, s)) => stderr = s,
            Err(_) => {
                status = None;
                break;
            }
        }
    }
    if writer.is_finished() {
        let _ = writer.join();
    }
    Finished {
        status,
        stdout,
        stderr,
    }
}

/// What a killed child's pipes get to deliver what it wrote before the
/// kill, past the deadline.
const COLLECT: Duration = Duration::from_millis(200);

/// Kills the child and, when it leads a process group of its own (a
/// launcher's), the rest of that group.
fn kill(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals that process group,
        // if one with that id exists; nothing is dereferenced. A group's
        // id is its leader's pid, which is not reused while the group
        // lives, so no other group is reached.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn sh(script: &str) -> Child {
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_child_that_leaves_its_pipes_held_is_given_up_at_the_deadline() {
        // The shell ends at once; the sleep it leaves holds stdout open.
        let t0 = Instant::now();
        let done = finish(
            sh("sleep 30 & echo a"),
            &[],
            1024,
            1024,
            Duration::from_secs(1),
        );
        assert!(done.status.is_none(), "not a clean end");
        assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
        // A child that outlives the deadline itself, its own child holding
        // the pipe after the kill.
        let t0 = Instant::now();
        let done = finish(
            sh("sleep 30; echo a"),
            &[],
            1024,
            1024,
            Duration::from_secs(1),
        );
        assert!(done.status.is_none());
        assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    }

    #[test]
    fn a_quick_child_gives_its_output_and_status() {
        let done = finish(
            sh("echo out; echo err >&2; exit 3"),
            &[],
            1024,
            1024,
            Duration::from_secs(30),
        );
        assert_eq!(done.status.and_then(|s| s.code()), Some(3));
        assert_eq!(done.stdout, b"out\n");
        assert_eq!(done.stderr, b"err\n");
    }
}

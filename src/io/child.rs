//! A short command run to its end with a deadline: its input written, its
//! output read with a cap. `--hosts-from` and every launcher command
//! (`volbench install`, the binary push, the clock probe) run through here.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::{Read, Write};
use std::process::{Child, ExitStatus};
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
/// kills it at `timeout`.
pub(crate) fn finish(
    mut child: Child,
    input: &[u8],
    out_cap: u64,
    err_cap: u64,
    timeout: Duration,
) -> Finished {
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
    let read = |pipe: Option<Box<dyn Read + Send>>, cap: u64| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(r) = pipe {
                let _ = r.take(cap).read_to_end(&mut s);
            }
            s
        })
    };
    let out = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        out_cap,
    );
    let err = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        err_cap,
    );
    let status = wait_briefly(&mut child, timeout);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = writer.join();
    Finished {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

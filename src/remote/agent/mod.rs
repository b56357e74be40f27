//! `volbench agent`: the far end of a multi-host run. Started by the
//! coordinator through ssh, it reads protocol messages on stdin and answers
//! on stdout, running the same executor code as a local run (prepare, then
//! each run through `executor::targets`, started at the coordinator's time).
//!
//! It never outlives its coordinator: when stdin closes, or nothing at all
//! (not even a heartbeat) arrives for the agreed timeout, it stops its I/O
//! and exits, forcibly if the I/O does not stop within a grace period.
//!
//! One file per job: `link` (the threads that read stdin, write stdout and
//! watch for a silent coordinator), `session` (the conversation), `job`
//! (planning and preparing the targets, and one run on all of them).

mod job;
mod link;
mod session;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::protocol::{FromAgent, ToAgent, encode};
use crate::error::{Result, VbError};
use link::{read_loop, watchdog, write_loop};
use session::session;

/// Heartbeat period and silence timeout until the coordinator's hello says
/// otherwise.
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(1);
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// After a stop for a lost coordinator, the I/O has this long to wind down
/// before the process exits regardless (a hung device must not keep it).
const GRACE: Duration = Duration::from_secs(3);

/// Exit codes of the agent (seen only in the coordinator's messages).
pub(crate) const EXIT_LOST: i32 = 75;

/// `task_env`: the variable that holds this agent's task number when one
/// process carries many agents (`--task-env SLURM_PROCID`, `remote/launch/slurm.rs`):
/// its stdin is then framed, and it keeps only the lines for its task.
pub(crate) fn main(task_env: Option<&str>) -> Result<i32> {
    let task = task_env.map(task_number).transpose()?;
    // Every thread that allocates gets a glibc arena of its own, and a
    // thousand agents on one machine pay for every arena's touched pages;
    // the agent's few threads allocate little, so two arenas are plenty.
    // A latency histogram is 35 KiB (every bucket up to 18 minutes) and a
    // worker holds twelve, of which a null-engine run touches a page or
    // two each: from the heap, calloc clears (so touches) all of them;
    // mapped on their own from 32 KiB up, their untouched pages stay the
    // kernel's zero page (0.9 to 0.65 MB private per agent, measured).
    // Set before any thread starts.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc tuning calls, made while this is the only thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 * 1024);
    }
    let shared = Arc::new(Shared::new());
    let (out_tx, out_rx) = mpsc::channel::<String>();
    let writer = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("vb-agent-out".into())
            .spawn(move || write_loop(out_rx, &shared))
            .map_err(|e| VbError::run(format!("cannot start a thread: {e}")))?
    };
    let link = Link { tx: out_tx };
    let (ctl_tx, ctl_rx) = mpsc::channel::<Control>();
    {
        let shared = shared.clone();
        let link = link.clone();
        std::thread::Builder::new()
            .name("vb-agent-in".into())
            .spawn(move || read_loop(&shared, &link, ctl_tx, task))
            .map_err(|e| VbError::run(format!("cannot start a thread: {e}")))?;
    }
    {
        let shared = shared.clone();
        let link = link.clone();
        std::thread::Builder::new()
            .name("vb-agent-watch".into())
            .spawn(move || watchdog(&shared, &link))
            .map_err(|e| VbError::run(format!("cannot start a thread: {e}")))?;
    }
    let code = session(&shared, &link, ctl_rx);
    // Let the last messages out, but never wait on a stuck stdout.
    drop(link);
    let deadline = Instant::now() + Duration::from_secs(2);
    while !writer.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    // Exit from here: threads blocked on stdin or a hung stdout must not
    // keep the process alive.
    std::process::exit(code);
}

/// State the agent's threads share.
struct Shared {
    t0: Instant,
    /// Milliseconds since t0 when the coordinator was last heard.
    last_heard_ms: AtomicU64,
    /// Milliseconds since t0 when a line last went to the coordinator.
    last_said_ms: AtomicU64,
    heartbeat_ms: AtomicU64,
    timeout_ms: AtomicU64,
    /// Stops a fill or a run in progress.
    stop: Arc<AtomicBool>,
    /// The coordinator is gone (stdin closed, unreadable, or silent).
    lost: AtomicBool,
    fill_done: AtomicU64,
    fill_total: AtomicU64,
}

impl Shared {
    fn new() -> Self {
        Self {
            t0: Instant::now(),
            last_heard_ms: AtomicU64::new(0),
            last_said_ms: AtomicU64::new(0),
            heartbeat_ms: AtomicU64::new(DEFAULT_HEARTBEAT.as_millis() as u64),
            timeout_ms: AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64),
            stop: Arc::new(AtomicBool::new(false)),
            lost: AtomicBool::new(false),
            fill_done: AtomicU64::new(0),
            fill_total: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }

    fn lose(&self, why: &str) {
        if !self.lost.swap(true, Ordering::SeqCst) {
            crate::console::errln!("volbench agent: {why}; stopping");
        }
        self.stop.store(true, Ordering::SeqCst);
    }
}

#[derive(Clone)]
struct Link {
    tx: Sender<String>,
}

impl Link {
    fn send(&self, msg: &FromAgent) {
        // The writer is gone only when stdout is: the watchdog handles that.
        let _ = self.tx.send(encode(msg));
    }
}

/// What the reader passes on to the session (heartbeats and pings are
/// answered by the reader itself).
enum Control {
    Msg(ToAgent),
    Closed,
}

/// The task number in variable `var`: a launcher that does not set it is a
/// clear error, never a silent task 0 reading another agent's lines.
fn task_number(var: &str) -> Result<u32> {
    let value = std::env::var(var).map_err(|_| {
        VbError::input(format!(
            "--task-env {var}: the variable is not set (the launcher sets it for each task)"
        ))
    })?;
    value.trim().parse().map_err(|_| {
        VbError::input(format!(
            "--task-env {var}: '{}' is not a task number",
            value.chars().take(40).collect::<String>()
        ))
    })
}

fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

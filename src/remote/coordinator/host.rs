//! What the coordinator knows about one host, grouped by what it is for:
//! the link to its agent, who the agent is, its clock, the preparation,
//! the run in progress, and what is kept for the result.

#[cfg(unix)]
use std::cell::RefCell;
use std::process::Child;
use std::sync::mpsc::Sender;
use std::time::Instant;

use super::super::protocol::{PlannedTarget, TargetResult, ToAgent, encode};
use crate::error::Kind;
use crate::input::hosts::Assignment;
use crate::result::merge::{HostStatus, Unfinished};
use crate::result::{HostInfo, Interval, RunResult, TargetInfo};
use crate::spec::JobSpec;

/// What a host's reader thread hands the coordinator.
pub(super) enum Event {
    Line(Vec<u8>),
    Closed { why: String, stderr: String },
}

/// The ssh connection that carries the agent's protocol.
pub(super) struct Link {
    pub(crate) child: Option<Child>,
    /// Lines to the agent's stdin through a writer thread (where there is
    /// no `Direct`, and in tests); dropping it ends the agent's input.
    pub(crate) tx: Option<Sender<String>>,
    /// The agent's stdin written from the coordinator's loop itself.
    #[cfg(unix)]
    pub(crate) out: RefCell<Option<Direct>>,
    /// Its task's way into the one srun step that carries every agent
    /// (`step.rs`), where there is no process of its own.
    pub(crate) step: Option<crate::remote::launch::slurm::Tap>,
    pub(crate) last_heard: Instant,
}

impl Link {
    /// Ends the agent's input (it stops and exits).
    pub(super) fn close(&mut self) {
        self.tx = None;
        self.step = None;
        #[cfg(unix)]
        {
            *self.out.get_mut() = None;
        }
    }

    /// Writes out what a full pipe held back; closes a link that broke.
    #[cfg(unix)]
    pub(super) fn flush(&self) {
        let mut out = self.out.borrow_mut();
        if out.as_mut().is_some_and(|d| !d.flush()) {
            *out = None;
        }
    }
}

/// How lines reach an agent's stdin.
pub(super) enum ToAgentPipe {
    /// A writer thread per host: a stuck link blocks only that thread.
    #[cfg_attr(unix, allow(dead_code))]
    Thread(Sender<String>),
    /// Written from the coordinator's loop, non-blocking (`Direct`).
    #[cfg(unix)]
    Direct(Direct),
}

impl ToAgentPipe {
    /// Sends one encoded line; false when the link is gone (its reader
    /// reports the close).
    pub(super) fn send(&mut self, line: &str) -> bool {
        match self {
            ToAgentPipe::Thread(tx) => tx.send(line.to_owned()).is_ok(),
            #[cfg(unix)]
            ToAgentPipe::Direct(d) => d.write(line.as_bytes()),
        }
    }
}

/// The agent's stdin, non-blocking, written by the coordinator's own loop:
/// a writer thread per host woke a thousand times a second for the
/// heartbeats alone at a thousand hosts, and each wake-up cost the loop a
/// futex call. A line the pipe cannot take now waits in `pending` and goes
/// out on a later tick, so a stuck link never blocks the loop.
#[cfg(unix)]
pub(super) struct Direct {
    stdin: std::process::ChildStdin,
    pending: Vec<u8>,
}

#[cfg(unix)]
impl Direct {
    pub(super) fn new(stdin: std::process::ChildStdin) -> std::io::Result<Self> {
        use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
        fcntl_setfl(&stdin, fcntl_getfl(&stdin)? | OFlags::NONBLOCK)?;
        Ok(Direct {
            stdin,
            pending: Vec::new(),
        })
    }

    /// Queues `line` and writes what the pipe takes now. False when the
    /// pipe is broken, or so far behind that the agent is not reading.
    fn write(&mut self, line: &[u8]) -> bool {
        if self.pending.len() + line.len() > super::super::protocol::MAX_LINE {
            return false;
        }
        self.pending.extend_from_slice(line);
        self.flush()
    }

    /// False when the pipe is broken. SIGPIPE is ignored (`console`), so a
    /// gone agent is an EPIPE here.
    fn flush(&mut self) -> bool {
        use std::io::{ErrorKind, Write};
        while !self.pending.is_empty() {
            match self.stdin.write(&self.pending) {
                Ok(0) => return false,
                Ok(n) => {
                    self.pending.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }
}

/// The agent's clock against ours, from the fastest of several pings.
#[derive(Default)]
pub(super) struct Clock {
    /// (round trip, offset) in ns, one per answered ping.
    pub(crate) pings: Vec<(u64, i128)>,
    pub(crate) offset_ns: i128,
    /// 0 until the pings are done.
    pub(crate) rtt_ns: u64,
}

/// The fill the host reported last.
#[derive(Default)]
pub(super) struct Fill {
    pub(crate) done: u64,
    pub(crate) total: u64,
    /// It has said how much it has to fill.
    pub(crate) known: bool,
}

/// Planning and preparing the host's targets, before any run.
#[derive(Default)]
pub(super) struct Setup {
    pub(crate) planned: Option<Vec<PlannedTarget>>,
    pub(crate) prepare_sent: bool,
    pub(crate) prepared: Option<Vec<TargetInfo>>,
    pub(crate) fill: Fill,
    /// What each of its file sets' fills did, named after the host.
    pub(crate) fills: Vec<crate::result::fill::FillResult>,
}

/// The run in progress on this host.
#[derive(Default)]
pub(super) struct RunState {
    /// Not in this run (a host-count sweep's point on fewer hosts): still
    /// connected, sent nothing but heartbeats until the next run.
    pub(crate) idle: bool,
    pub(crate) ready: bool,
    /// We told it to stop this run (so an error it reports is ours, not its).
    pub(crate) stopped: bool,
    /// Per target: when its I/O began, in our clock.
    pub(crate) started: Vec<Option<i128>>,
    pub(crate) intervals: Vec<Vec<Interval>>,
    /// Its results and the error it reported with them, if any.
    pub(crate) done: Option<(Vec<TargetResult>, Option<String>)>,
}

impl RunState {
    pub(super) fn new(targets: usize) -> Self {
        RunState {
            started: vec![None; targets],
            intervals: vec![Vec::new(); targets],
            ..RunState::default()
        }
    }
}

pub(super) struct Host {
    pub(crate) a: Assignment,
    pub(crate) job: JobSpec,
    pub(crate) link: Link,
    /// Why it failed; a failed host is out of the invocation.
    pub(crate) failed: Option<String>,
    /// Failed before any I/O and left out by `--on-host-loss continue`:
    /// already told, no longer an error of the phases after.
    pub(crate) dropped: bool,
    /// Exit code kind an agent's own error asked for.
    pub(crate) error_kind: Option<Kind>,
    /// Its volbench version, once it said hello.
    pub(crate) version: Option<String>,
    pub(crate) info: Option<HostInfo>,
    pub(crate) clock: Clock,
    pub(crate) setup: Setup,
    pub(crate) run: RunState,
    /// Gathered for the result: its own merged runs, and the intervals of
    /// a run it failed in.
    pub(crate) runs: Vec<RunResult>,
    pub(crate) unfinished: Option<Unfinished>,
}

impl Host {
    pub(super) fn new(a: Assignment, job: JobSpec) -> Self {
        Host {
            a,
            job,
            link: Link {
                child: None,
                tx: None,
                #[cfg(unix)]
                out: RefCell::new(None),
                step: None,
                last_heard: Instant::now(),
            },
            failed: None,
            dropped: false,
            error_kind: None,
            version: None,
            info: None,
            clock: Clock::default(),
            setup: Setup::default(),
            run: RunState::default(),
            runs: Vec::new(),
            unfinished: None,
        }
    }

    pub(super) fn live(&self) -> bool {
        self.failed.is_none()
    }

    /// Live and taking part in the run in progress.
    pub(super) fn in_run(&self) -> bool {
        self.live() && !self.run.idle
    }

    pub(super) fn status(&self) -> HostStatus {
        if self.live() {
            HostStatus::Ok
        } else {
            HostStatus::Failed
        }
    }

    pub(super) fn send(&self, msg: &ToAgent) {
        self.send_line(&encode(msg));
    }

    /// A line already encoded (the same one for many hosts).
    pub(super) fn send_line(&self, line: &str) {
        if let Some(tx) = &self.link.tx {
            let _ = tx.send(line.to_owned());
        }
        if let Some(tap) = &self.link.step {
            tap.send(line);
        }
        #[cfg(unix)]
        {
            // A broken pipe closes the link; its reader reports the close.
            let mut out = self.link.out.borrow_mut();
            if out.as_mut().is_some_and(|d| !d.write(line.as_bytes())) {
                *out = None;
            }
        }
    }

    pub(super) fn name(&self) -> &str {
        &self.a.host.name
    }
}

pub(super) fn all_live(hosts: &[Host], f: impl Fn(&Host) -> bool) -> bool {
    hosts.iter().filter(|h| h.live()).all(f)
}

/// Every live host taking part in the run in progress.
pub(super) fn all_in_run(hosts: &[Host], f: impl Fn(&Host) -> bool) -> bool {
    hosts.iter().filter(|h| h.in_run()).all(f)
}

/// A host failed, or finished its run with an error.
pub(super) fn trouble(hosts: &[Host]) -> bool {
    hosts
        .iter()
        .any(|h| !h.live() || h.run.done.as_ref().is_some_and(|d| d.1.is_some()))
}

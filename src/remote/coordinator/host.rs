//! What the coordinator knows about one host, grouped by what it is for:
//! the link to its agent, who the agent is, its clock, the preparation,
//! the run in progress, and what is kept for the result.

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
    pub child: Option<Child>,
    /// Lines to the agent's stdin; dropping it ends the agent's input.
    pub tx: Option<Sender<String>>,
    pub last_heard: Instant,
}

/// The agent's clock against ours, from the fastest of several pings.
#[derive(Default)]
pub(super) struct Clock {
    /// (round trip, offset) in ns, one per answered ping.
    pub pings: Vec<(u64, i128)>,
    pub offset_ns: i128,
    /// 0 until the pings are done.
    pub rtt_ns: u64,
}

/// The fill the host reported last.
#[derive(Default)]
pub(super) struct Fill {
    pub done: u64,
    pub total: u64,
    /// It has said how much it has to fill.
    pub known: bool,
}

/// Planning and preparing the host's targets, before any run.
#[derive(Default)]
pub(super) struct Setup {
    pub planned: Option<Vec<PlannedTarget>>,
    pub prepare_sent: bool,
    pub prepared: Option<Vec<TargetInfo>>,
    pub fill: Fill,
    /// What each of its file sets' fills did, named after the host.
    pub fills: Vec<crate::result::fill::FillResult>,
}

/// The run in progress on this host.
#[derive(Default)]
pub(super) struct RunState {
    /// Not in this run (a host-count sweep's point on fewer hosts): still
    /// connected, sent nothing but heartbeats until the next run.
    pub idle: bool,
    pub ready: bool,
    /// We told it to stop this run (so an error it reports is ours, not its).
    pub stopped: bool,
    /// Per target: when its I/O began, in our clock.
    pub started: Vec<Option<i128>>,
    pub intervals: Vec<Vec<Interval>>,
    /// Its results and the error it reported with them, if any.
    pub done: Option<(Vec<TargetResult>, Option<String>)>,
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
    pub a: Assignment,
    pub job: JobSpec,
    pub link: Link,
    /// Why it failed; a failed host is out of the invocation.
    pub failed: Option<String>,
    /// Failed before any I/O and left out by `--on-host-loss continue`:
    /// already told, no longer an error of the phases after.
    pub dropped: bool,
    /// Exit code kind an agent's own error asked for.
    pub error_kind: Option<Kind>,
    /// Its volbench version, once it said hello.
    pub version: Option<String>,
    pub info: Option<HostInfo>,
    pub clock: Clock,
    pub setup: Setup,
    pub run: RunState,
    /// Gathered for the result: its own merged runs, and the intervals of
    /// a run it failed in.
    pub runs: Vec<RunResult>,
    pub unfinished: Option<Unfinished>,
}

impl Host {
    pub(super) fn new(a: Assignment, job: JobSpec) -> Self {
        Host {
            a,
            job,
            link: Link {
                child: None,
                tx: None,
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
        if let Some(tx) = &self.link.tx {
            let _ = tx.send(encode(msg));
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

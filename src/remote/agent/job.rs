//! The job on this host: one plan per target, every target prepared, and
//! each run on all of them, through the executor's `OnHost` as a local run
//! (so its targets are recorded alike: `OnHost::target_info`), each run
//! started at the time the coordinator decides.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant, SystemTime};

use super::{Control, Link, Shared, unix_ns};
use crate::error::Result;
use crate::events::Event;
use crate::executor::{Fill, Observer, OnHost, Start, StepFn};
use crate::plan::targets::at_target;
use crate::plan::{Plan, PlannedRun};
use crate::remote::protocol::{
    AgentJob, FromAgent, PlannedRunInfo, PlannedTarget, StepRun, TargetResult, ToAgent,
};

/// One plan per target: the job with the target's path, each target sized
/// as a local one is (`plan::size`).
pub(super) fn plan_job(j: &AgentJob) -> Result<Vec<Plan>> {
    crate::plan::targets::plan_each(&j.job, &j.targets, j.size_given)
}

pub(super) fn planned_target(p: &Plan) -> PlannedTarget {
    PlannedTarget {
        path: p.job.target.path.display().to_string(),
        runs: p
            .runs
            .iter()
            .map(|r| PlannedRunInfo {
                engine: r.engine.name().into(),
                io_threads: r.io_threads,
                depth: r.depth,
                size: r.spec.size,
            })
            .collect(),
    }
}

/// Prepares every target at once (they are usually separate volumes),
/// through the executor as a local run prepares them; None when the
/// coordinator stopped it first.
pub(super) fn prepare_all(
    plans: Vec<Plan>,
    shared: &Shared,
    link: &Link,
) -> Result<Option<OnHost>> {
    let obs = PrepareObserver { shared, link };
    OnHost::prepare(plans, &obs, &shared.stop, Fill::AllAtOnce)
}

struct PrepareObserver<'a> {
    shared: &'a Shared,
    link: &'a Link,
}

impl Observer for PrepareObserver<'_> {
    fn on(&self, ev: &Event<'_>) {
        match ev {
            Event::FillStarted { total_bytes, .. } => {
                let total = self
                    .shared
                    .fill_total
                    .fetch_add(*total_bytes, Ordering::Relaxed)
                    + total_bytes;
                // Say how much there is to fill at once, so the coordinator's
                // bar knows its length; the watchdog reports progress from
                // here on.
                self.link.send(&FromAgent::Progress {
                    done: self.shared.fill_done.load(Ordering::Relaxed),
                    total,
                });
            }
            Event::FillAdvanced { bytes } => {
                self.shared.fill_done.fetch_add(*bytes, Ordering::Relaxed);
            }
            Event::Note(message) => self.link.send(&FromAgent::Note {
                message: message.to_string(),
            }),
            // Preparing raises none of these; the runs have their own
            // observers (`RunObserver`).
            Event::FillFinished
            | Event::RunStarted { .. }
            | Event::IoStarted { .. }
            | Event::Interval(_)
            | Event::RunFinished(_)
            | Event::HostState { .. } => {}
        }
    }
}

/// Runs run `index` on every target at once, released at the time the
/// coordinator sends once this host is ready.
pub(super) fn run_targets(
    host: &mut OnHost,
    (index, step): (u32, Option<&StepRun>),
    shared: &Shared,
    link: &Link,
    ctl: &Mutex<Receiver<Control>>,
) -> FromAgent {
    // A search step: every target at the step's rate, under its name.
    let as_step = |_: usize, r: &PlannedRun| {
        let mut run = r.clone();
        if let Some(st) = step {
            run.spec.latency_target = None;
            run.spec.rate_iops = st.rate_iops;
            run.spec.name = st.name.clone();
        }
        run
    };
    let decide = || -> Option<Instant> {
        link.send(&FromAgent::Ready { index });
        let rx = ctl.lock().ok()?;
        loop {
            match rx.recv() {
                Ok(Control::Msg(ToAgent::Start { index: i, at_ns })) if i == index => {
                    return Some(instant_at(at_ns));
                }
                Ok(Control::Msg(ToAgent::Start { .. })) => continue,
                _ => return None,
            }
        }
    };
    let each: Vec<RunObserver<'_>> = (0..host.plans.len())
        .map(|t| RunObserver {
            link,
            index,
            target: t as u32,
            seq: AtomicU32::new(0),
        })
        .collect();
    let observers: Vec<&dyn Observer> = each.iter().map(|o| o as &dyn Observer).collect();
    let outcomes = host.run(
        index as usize,
        step.map(|_| &as_step as &StepFn<'_>),
        &mut |_| {},
        // An agent's targets never go on without one (its coordinator
        // decides about its host): none ends early.
        (&observers, &|_| {}),
        Start::Decided(&decide),
        &shared.stop,
    );
    let outcomes = match outcomes {
        Ok(o) => o,
        // Never ready: the coordinator calls the run off for every host.
        Err(e) => {
            return FromAgent::RunDone {
                index,
                results: Vec::new(),
                error: Some(e.to_string()),
            };
        }
    };
    let mut results = Vec::new();
    let mut error = None;
    for (t, o) in outcomes {
        let r = match o {
            Ok(r) => r,
            Err(failed) => {
                let (e, partial) = *failed;
                if error.is_none() {
                    let path = host.plans.get(t).map(|p| p.job.target.path.as_path());
                    error = Some(match path {
                        Some(p) => at_target(p, e).to_string(),
                        None => e.to_string(),
                    });
                }
                match partial {
                    Some(r) => *r,
                    None => continue,
                }
            }
        };
        results.push(TargetResult {
            target: t as u32,
            result: r,
        });
    }
    FromAgent::RunDone {
        index,
        results,
        error,
    }
}

/// Converts a start time in this host's wall clock to a monotonic instant.
fn instant_at(at_ns: u64) -> Instant {
    let now_i = Instant::now();
    let now_ns = unix_ns(SystemTime::now());
    now_i + Duration::from_nanos(at_ns.saturating_sub(now_ns))
}

/// One target's run as protocol messages: when its I/O began, and its
/// intervals, numbered.
struct RunObserver<'a> {
    link: &'a Link,
    index: u32,
    target: u32,
    seq: AtomicU32,
}

impl Observer for RunObserver<'_> {
    fn on(&self, ev: &Event<'_>) {
        match ev {
            Event::Note(message) => self.link.send(&FromAgent::Note {
                message: message.to_string(),
            }),
            Event::IoStarted { at, .. } => self.link.send(&FromAgent::Started {
                index: self.index,
                target: self.target,
                at_ns: unix_ns(*at),
            }),
            // The coordinator labels it with the host and target it knows.
            Event::Interval(ev) => self.link.send(&FromAgent::Interval {
                index: self.index,
                target: self.target,
                seq: self.seq.fetch_add(1, Ordering::Relaxed),
                interval: ev.iv.clone(),
            }),
            // The run's start and result go in the protocol's own
            // messages (`Ready`, `RunDone`); a run fills nothing.
            Event::FillStarted { .. }
            | Event::FillAdvanced { .. }
            | Event::FillFinished
            | Event::RunStarted { .. }
            | Event::RunFinished(_)
            | Event::HostState { .. } => {}
        }
    }
}

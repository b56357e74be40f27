//! One run on every target of this host at once, behind one start gate.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant, SystemTime};

use super::gate::Gate;
use super::job::{Sets, at_target};
use super::{Control, Link, Shared, unix_ns};
use crate::error::VbError;
use crate::executor::{self, Observer};
use crate::io::target::Progress;
use crate::plan::{Plan, PlannedRun};
use crate::remote::protocol::{FromAgent, TargetResult, ToAgent};
use crate::result::{Interval, RunResult};

/// Runs run `index` on every target at once behind one start gate.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_targets(
    plans: &[Plan],
    prepared: &[Sets],
    done_runs: &mut [Vec<RunResult>],
    index: u32,
    shared: &Shared,
    link: &Link,
    ctl: &Mutex<Receiver<Control>>,
) -> FromAgent {
    let gate = Gate::new(plans.len());
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
    // Boxed: a failed run carries a whole partial result.
    let outcomes: Vec<std::result::Result<RunResult, Box<executor::RunError>>> =
        std::thread::scope(|s| {
            let handles: Vec<_> = plans
                .iter()
                .zip(prepared)
                .zip(done_runs.iter())
                .enumerate()
                .map(|(t, ((plan, sets), done))| {
                    let gate = &gate;
                    let decide = &decide;
                    s.spawn(move || {
                        let called_off = |e: VbError| {
                            // Never reaches the gate: the run is off for all targets.
                            gate.abandon();
                            Err(Box::new((e, None)))
                        };
                        // As the local executor does: the rate as a share of
                        // an earlier run, and the file set of the run's count.
                        let run = match executor::resolve_rate(&plan.runs[index as usize], done) {
                            Ok(r) => r,
                            Err(e) => return called_off(e),
                        };
                        let prep = match executor::meta::find_set(sets, &run, &plan.job) {
                            Ok(p) => p,
                            Err(e) => return called_off(e),
                        };
                        let obs = RunObserver {
                            link,
                            index,
                            target: t as u32,
                            seq: AtomicU32::new(0),
                        };
                        let arrived = AtomicBool::new(false);
                        let start = || {
                            arrived.store(true, Ordering::SeqCst);
                            gate.arrive(decide)
                        };
                        let r = executor::run_one(plan, &run, prep, &obs, &shared.stop, &start);
                        if !arrived.load(Ordering::SeqCst) {
                            gate.abandon();
                        }
                        r.map_err(Box::new)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Box::new((VbError::run("a run thread panicked"), None)))
                    })
                })
                .collect()
        });
    let mut results = Vec::new();
    let mut error = None;
    for (t, o) in outcomes.into_iter().enumerate() {
        match o {
            Ok(r) => {
                done_runs[t].push(r.clone());
                results.push(TargetResult {
                    target: t as u32,
                    result: r,
                });
            }
            Err(failed) => {
                let (e, partial) = *failed;
                if let Some(r) = partial {
                    results.push(TargetResult {
                        target: t as u32,
                        result: *r,
                    });
                }
                if error.is_none() {
                    error = Some(at_target(&plans[t].job.target.path, e).to_string());
                }
            }
        }
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

struct RunObserver<'a> {
    link: &'a Link,
    index: u32,
    target: u32,
    seq: AtomicU32,
}

impl Progress for RunObserver<'_> {
    fn start(&self, _: u64, _: &str) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

impl Observer for RunObserver<'_> {
    fn note(&self, message: &str) {
        self.link.send(&FromAgent::Note {
            message: message.into(),
        });
    }
    fn run_started(&self, _: usize, _: usize, _: &PlannedRun) {}
    fn io_started(&self, _: &PlannedRun, at: SystemTime) {
        self.link.send(&FromAgent::Started {
            index: self.index,
            target: self.target,
            at_ns: unix_ns(at),
        });
    }
    fn interval(&self, _: &PlannedRun, _: f64, _: f64, iv: &Interval) {
        self.link.send(&FromAgent::Interval {
            index: self.index,
            target: self.target,
            seq: self.seq.fetch_add(1, Ordering::Relaxed),
            interval: iv.clone(),
        });
    }
    fn run_finished(&self, _: &RunResult) {}
}

//! One run on every target of this host at once: each target's run made
//! ready (its rate, its file set), then its workers set up, and all of them
//! released together behind one start line (`startgate`), at once for a
//! local job or at the coordinator's time for an agent. One target that
//! fails before it is ready calls the run off for all: no target measures
//! alone what was meant to be shared. The local job (`execute`) and the
//! agent both run their runs through here.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::startgate::{Start, ThreadGate};
use super::{Observer, RunError, run_one};
use crate::error::{Result, VbError};
use crate::io::target::Prepared;
use crate::plan::targets::at_target;
use crate::plan::{Plan, PlannedRun};
use crate::result::RunResult;

/// One target's prepared file sets (one per file count its runs use).
pub(crate) type Sets = Vec<(super::meta::SetKey, Prepared)>;

/// What one target's run ended with; boxed, as a failed run carries a
/// whole partial result.
pub(crate) type Outcome = std::result::Result<RunResult, Box<RunError>>;

/// Run `i` made ready on each target: the rate of a run given as a share
/// of an earlier one resolved against that target's own runs, the file set
/// of the run's file count found, a metadata run's caches dropped. An
/// error names its target when there are several.
pub(crate) fn ready<'p>(
    plans: &[Plan],
    prepared: &'p [Sets],
    done: &[Vec<RunResult>],
    i: usize,
) -> Result<Vec<(PlannedRun, &'p Prepared)>> {
    let name = |plan: &Plan, e: VbError| {
        if plans.len() > 1 {
            at_target(&plan.job.target.path, e)
        } else {
            e
        }
    };
    let mut out = Vec::with_capacity(plans.len());
    for (t, (plan, sets)) in plans.iter().zip(prepared).enumerate() {
        let planned = plan
            .runs
            .get(i)
            .ok_or_else(|| VbError::input(format!("run {i} is not planned")))?;
        let mine = done.get(t).map_or(&[][..], Vec::as_slice);
        let run = crate::plan::sequence::resolve_rate(planned, mine).map_err(|e| name(plan, e))?;
        let prep = super::meta::find_set(sets, &run, &plan.job).map_err(|e| name(plan, e))?;
        super::meta::before_run(plan, &run).map_err(|e| name(plan, e))?;
        out.push((run, prep));
    }
    Ok(out)
}

/// Runs `runs` (one per target, from `ready`) together: each target's
/// workers get ready on their own thread, and all are released at `start`'s
/// time once every one is; `observers` has one observer per target.
pub(crate) fn run_together(
    plans: &[Plan],
    runs: &[(PlannedRun, &Prepared)],
    observers: &[&dyn Observer],
    start: Start<'_>,
    stop: &Arc<AtomicBool>,
) -> Vec<Outcome> {
    let gate = ThreadGate::new();
    let failed = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter()
            .zip(runs)
            .zip(observers)
            .map(|((plan, (run, prep)), obs)| {
                let (gate, failed) = (&gate, &failed);
                s.spawn(move || -> Outcome {
                    let arrived = AtomicBool::new(false);
                    let outcome = run_one(plan, run, prep, *obs, stop, &|| {
                        arrived.store(true, Ordering::SeqCst);
                        gate.arrive();
                        gate.wait_start_at()
                    });
                    if !arrived.load(Ordering::SeqCst) {
                        // Never reached the line: the run is off for all.
                        failed.fetch_add(1, Ordering::SeqCst);
                        gate.arrive();
                    }
                    outcome.map_err(Box::new)
                })
            })
            .collect();
        let all_ready = gate.wait_ready(plans.len(), stop, || failed.load(Ordering::SeqCst) > 0);
        // Asked only when every target is ready: an agent tells its
        // coordinator it is ready only then.
        let at = if all_ready && failed.load(Ordering::SeqCst) == 0 {
            start.decide()
        } else {
            None
        };
        gate.release_at(at);
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Box::new((VbError::run("a run thread panicked"), None)))
                })
            })
            .collect()
    })
}

/// The run as the user asked for it, for the terminal's run line: the
/// job's run, and the I/O threads of every target together.
pub(crate) fn whole_run(
    spec: &crate::spec::RunSpec,
    runs: &[(PlannedRun, &Prepared)],
) -> PlannedRun {
    let mut each = runs.iter().map(|(r, _)| r);
    let Some(first) = each.next() else {
        return PlannedRun {
            spec: spec.clone(),
            engine: crate::io::engine::EngineKind::Psync,
            engine_note: None,
            io_threads: 0,
            depth: 1,
        };
    };
    let mut whole = PlannedRun {
        spec: spec.clone(),
        ..first.clone()
    };
    for r in each {
        whole.io_threads = whole.io_threads.saturating_add(r.io_threads);
    }
    whole
}

//! A job's targets on this host (`OnHost`): every target prepared, its
//! result line (`target_info`), and each run on all of them at once: each
//! target's run made ready (its rate, its file set), then its workers set
//! up, and all of them released together behind one start line
//! (`startgate`), at once for a local job or at the coordinator's time for
//! an agent. One target that fails before it is ready calls the run off for
//! all: no target measures alone what was meant to be shared. The local job
//! (`execute`) and the agent both hold an `OnHost` and drive it alike, so a
//! job's targets are prepared, recorded and run the same way wherever it
//! runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::startgate::{Start, ThreadGate};
use super::{Observer, RunError, run_one};
use crate::error::{Result, VbError};
use crate::io::target::{Prepared, TargetKind};
use crate::plan::targets::at_target;
use crate::plan::{Plan, PlannedRun};
use crate::result::{RunResult, TargetInfo};

/// One target's prepared file sets (one per file count its runs use).
pub(crate) type Sets = Vec<(super::meta::SetKey, Prepared)>;

/// What one target's run ended with; boxed, as a failed run carries a
/// whole partial result.
pub(crate) type Outcome = std::result::Result<RunResult, Box<RunError>>;

/// Makes target `t`'s run something else than planned: a latency-search
/// step (its rate and name).
pub(crate) type StepFn<'a> = dyn Fn(usize, &PlannedRun) -> PlannedRun + 'a;

/// Told a run's targets' runs once they are ready, before any worker
/// starts (the local job's run line).
pub(crate) type OnReady<'a> = dyn FnMut(&[(PlannedRun, &Prepared)]) + 'a;

/// How a host's targets are prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// One after another: one fill bar at a time, and a refused target
    /// stops the job before any other is filled (a local job).
    InTurn,
    /// All at once, each error naming its target (an agent: its targets
    /// are usually separate volumes, and its coordinator shows the hosts'
    /// errors side by side).
    AllAtOnce,
}

/// A job's targets on this host, prepared: each target's plan, its file
/// sets (one per file count its runs use), and its runs so far (a rate
/// given as a share of an earlier run is resolved against the target's
/// own).
pub(crate) struct OnHost {
    pub(crate) plans: Vec<Plan>,
    pub(crate) sets: Vec<Sets>,
    done: Vec<Vec<RunResult>>,
    /// `--on-host-loss continue` (a local list of targets): a target whose
    /// server is lost is left out and the others go on.
    pub(crate) keep_going: bool,
    /// Targets left out so far, each with why (its lost server); the runs
    /// after go on without them.
    pub(crate) left_out: Vec<Option<String>>,
}

impl OnHost {
    /// Prepares every target as `fill` says; None when a stop came first.
    pub(crate) fn prepare(
        plans: Vec<Plan>,
        obs: &dyn Observer,
        stop: &Arc<AtomicBool>,
        fill: Fill,
    ) -> Result<Option<Self>> {
        let many = plans.len() > 1;
        let named = |p: &Plan, e: VbError| {
            if many || fill == Fill::AllAtOnce {
                at_target(&p.job.target.path, e)
            } else {
                e
            }
        };
        let results: Vec<Result<Sets>> = match fill {
            Fill::InTurn => {
                let mut out = Vec::with_capacity(plans.len());
                for p in &plans {
                    let r = super::prepare(p, obs, stop);
                    let failed = r.is_err();
                    out.push(r);
                    if failed {
                        break;
                    }
                }
                out
            }
            Fill::AllAtOnce => std::thread::scope(|s| {
                let handles: Vec<_> = plans
                    .iter()
                    .map(|plan| s.spawn(move || super::prepare(plan, obs, stop)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(VbError::run("preparing a target panicked")))
                    })
                    .collect()
            }),
        };
        let mut sets = Vec::with_capacity(plans.len());
        for (r, p) in results.into_iter().zip(&plans) {
            match r {
                Ok(s) => sets.push(s),
                Err(_) if stop.load(Ordering::Relaxed) => return Ok(None),
                Err(e) => return Err(named(p, e)),
            }
        }
        let done = vec![Vec::new(); plans.len()];
        let left_out = vec![None; plans.len()];
        Ok(Some(OnHost {
            plans,
            sets,
            done,
            keep_going: false,
            left_out,
        }))
    }

    /// The notes and fills the preparing made, target by target.
    pub(crate) fn notes(&self) -> impl Iterator<Item = &String> {
        self.sets.iter().flatten().flat_map(|(_, s)| s.notes.iter())
    }

    pub(crate) fn fills(&self) -> impl Iterator<Item = &crate::result::fill::FillResult> {
        self.sets
            .iter()
            .flatten()
            .filter_map(|(_, s)| s.fill.as_ref())
    }

    /// Target `t`'s line in the result (`target`, or a host's `targets[]`):
    /// its kind, path and mount as prepared, its first file set's files,
    /// size and alignment. The one definition, for a local run and an
    /// agent's alike.
    pub(crate) fn target_info(&self, t: usize) -> Option<TargetInfo> {
        let (p, sets) = (self.plans.get(t)?, self.sets.get(t)?);
        let first = sets.first().map(|(_, s)| s);
        let kind = first.map_or(p.target.kind, |s| s.kind);
        let path = &p.job.target.path;
        // A URL names no mount, memory or block sizes of this host.
        let here = !crate::io::backend::is_url(path);
        Some(TargetInfo {
            kind,
            path: path.display().to_string(),
            files: first.map_or(0, |s| s.layout.nfiles),
            file_size: first.map_or(0, |s| s.layout.file_size),
            align: first.map_or(1, |s| s.align),
            mount: match kind {
                TargetKind::BlockDevice => None,
                _ if !here => None,
                _ => crate::io::mounts::for_path(path),
            },
            memory: here.then(|| super::memory_of(kind, path)).flatten(),
            blocks: if here {
                crate::io::mounts::block_sizes(path, kind)
            } else {
                Default::default()
            },
        })
    }

    /// Run `i` on every target at once (but those left out): each made
    /// ready (then made a step by `step`, if given), `on_ready` told the
    /// runs before any worker starts, all released at `start`'s time; each
    /// target's result kept for the runs after it, by its index. A target
    /// that lost its server while the others go on (`keep_going`) is told
    /// to `ended` when its run ends. An error when a target could not be
    /// made ready (the run is off for all).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &mut self,
        i: usize,
        step: Option<&StepFn<'_>>,
        on_ready: &mut OnReady<'_>,
        (observers, ended): (&[&dyn Observer], &(dyn Fn(usize) + Sync)),
        start: Start<'_>,
        stop: &Arc<AtomicBool>,
    ) -> Result<Vec<(usize, Outcome)>> {
        let live: Vec<usize> = (0..self.plans.len())
            .filter(|&t| self.left_out.get(t).is_none_or(Option::is_none))
            .collect();
        let plans: Vec<&Plan> = live.iter().filter_map(|&t| self.plans.get(t)).collect();
        let mut runs = ready(&self.plans, &self.sets, &self.done, i, &live)?;
        if let Some(f) = step {
            for ((r, _), &t) in runs.iter_mut().zip(&live) {
                *r = f(t, r);
            }
        }
        on_ready(&runs);
        let watching: Vec<&dyn Observer> = live
            .iter()
            .filter_map(|&t| observers.get(t).copied())
            .collect();
        let together = super::run::Together {
            keep_going: self.keep_going,
            ..Default::default()
        };
        let ended_at = |k: usize| {
            if let Some(&t) = live.get(k) {
                ended(t);
            }
        };
        let outcomes: Vec<(usize, Outcome)> = live
            .iter()
            .copied()
            .zip(run_together(
                &plans, &runs, &watching, start, stop, &together, &ended_at,
            ))
            .collect();
        for (t, o) in &outcomes {
            let t = *t;
            let r = match o {
                Ok(r) => r,
                Err(f) => match &f.1 {
                    Some(r) => r,
                    None => continue,
                },
            };
            if let Some(d) = self.done.get_mut(t) {
                d.push(r.clone());
            }
        }
        Ok(outcomes)
    }

    /// Targets prepared as nothing (no file set): what a test of the
    /// runs' bookkeeping needs.
    #[cfg(test)]
    pub(crate) fn for_tests(plans: Vec<Plan>) -> Self {
        let n = plans.len();
        OnHost {
            plans,
            sets: (0..n).map(|_| Vec::new()).collect(),
            done: vec![Vec::new(); n],
            keep_going: false,
            left_out: vec![None; n],
        }
    }

    /// Target `t` is out of the runs after this one (its server was lost).
    pub(crate) fn leave_out(&mut self, t: usize, why: String) {
        if let Some(l) = self.left_out.get_mut(t) {
            *l = Some(why);
        }
    }
}

/// Run `i` made ready on each target: the rate of a run given as a share
/// of an earlier one resolved against that target's own runs, the file set
/// of the run's file count found, a metadata run's caches dropped. An
/// error names its target when there are several.
fn ready<'p>(
    plans: &[Plan],
    prepared: &'p [Sets],
    done: &[Vec<RunResult>],
    i: usize,
    live: &[usize],
) -> Result<Vec<(PlannedRun, &'p Prepared)>> {
    let name = |plan: &Plan, e: VbError| {
        if plans.len() > 1 {
            at_target(&plan.job.target.path, e)
        } else {
            e
        }
    };
    let mut out = Vec::with_capacity(live.len());
    for &t in live {
        let (Some(plan), Some(sets)) = (plans.get(t), prepared.get(t)) else {
            continue;
        };
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
fn run_together(
    plans: &[&Plan],
    runs: &[(PlannedRun, &Prepared)],
    observers: &[&dyn Observer],
    start: Start<'_>,
    stop: &Arc<AtomicBool>,
    together: &super::run::Together,
    ended: &(dyn Fn(usize) + Sync),
) -> Vec<Outcome> {
    let gate = ThreadGate::new();
    let failed = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter()
            .zip(runs)
            .zip(observers)
            .enumerate()
            .map(|(k, ((plan, (run, prep)), obs))| {
                let (gate, failed) = (&gate, &failed);
                s.spawn(move || -> Outcome {
                    let arrived = AtomicBool::new(false);
                    let at = || {
                        arrived.store(true, Ordering::SeqCst);
                        gate.arrive();
                        gate.wait_start_at()
                    };
                    let outcome = run_one(plan, run, prep, *obs, stop, (&at, together));
                    if !arrived.load(Ordering::SeqCst) {
                        // Never reached the line: the run is off for all.
                        failed.fetch_add(1, Ordering::SeqCst);
                        gate.arrive();
                    }
                    if let Err((e, _)) = &outcome {
                        if together.keep_going && e.kind == crate::error::Kind::Lost {
                            ended(k);
                        }
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
            open_files: None,
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

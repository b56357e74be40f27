//! Runs a plan on this host: prepares the target once, then for each run
//! starts the workers together, collects interval deltas on this thread,
//! switches warm-up to measurement, and merges the workers' statistics.
//!
//! `prepare` sets the target up, `run` starts one run's workers (released
//! together through `startgate`) and stops them, `collect` watches them
//! interval by interval (and switches warm-up to measurement, early when
//! `steady` says so), `intervals` keeps the interval record bounded, and
//! `record` turns it all into the run's result.

mod collect;
mod data;
mod intervals;
mod lost;
pub(crate) mod meta;
mod prepare;
pub(crate) mod record;
mod replay;
pub(crate) mod rescue;
mod run;
pub(crate) mod runner;
pub(crate) mod search;
mod set_files;
mod shaped;
pub(crate) mod startgate;
pub(crate) mod steady;
pub(crate) mod targets;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Result, VbError};
pub(crate) use crate::events::Observer;
use crate::events::Raise as _;
use crate::io::host;
use crate::io::target;
use crate::plan::targets::at_target;
use crate::plan::{Plan, PlannedRun};
use crate::result::targets::TargetRun;
use crate::result::{ResultDoc, RunResult};
use crate::spec::JobSpec;

pub(crate) use prepare::prepare;
pub(crate) use run::{RunError, run_one};
pub(crate) use startgate::Start;
pub(crate) use targets::{Fill, OnHost, StepFn};

/// The result's `memory` for a prepared target: the host's memory it is,
/// if it is (`io::mounts::memory_of`).
pub(crate) fn memory_of(kind: target::TargetKind, path: &std::path::Path) -> Option<String> {
    crate::io::mounts::memory_of(path, kind == target::TargetKind::BlockDevice).map(str::to_string)
}

/// This machine as a result records it, with the VM size the user named
/// (else the one its platform names).
fn this_host(job: &crate::spec::JobSpec) -> crate::result::HostInfo {
    let h = host::this_host();
    crate::result::HostInfo {
        vm_size: job.reading.vm_size.clone().or(h.vm_size.clone()),
        ..h
    }
}

/// Runs a job on this host over its 1..n targets (one plan each; `job` is
/// the job as the user gave it, recorded in the result): every target
/// prepared, one after another, then each run on all of them at once
/// (`targets::run_together`). With several targets a run's figures are
/// merged exactly from theirs (`result::merge`), each target's own kept in
/// `runs[].targets`.
pub(crate) fn execute(
    job: &JobSpec,
    plans: &[Plan],
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<ResultDoc> {
    let many = plans.len() > 1;
    let mut doc = ResultDoc::begin(this_host(job), crate::result::now_rfc3339(), job.clone());
    for p in plans {
        for n in &p.notes {
            if !many || !doc.notes.contains(n) {
                doc.notes.push(n.clone());
            }
        }
    }
    rescue::keep(&doc, many);
    rescue::doing(if many {
        "preparing the targets"
    } else {
        "preparing the target"
    });
    let Some(mut host) = OnHost::prepare(plans.to_vec(), obs, stop, Fill::InTurn)? else {
        doc.interrupted = true;
        doc.notes
            .push("stopped while preparing the target: nothing was measured".into());
        return Ok(doc);
    };
    host.keep_going = job.targets.as_ref().is_some_and(|t| t.keep_going);
    doc.notes.extend(host.notes().cloned());
    doc.fill.extend(host.fills().cloned());
    rescue::keep(&doc, many);
    doc.target = host.target_info(0);
    for (i, spec) in job.runs.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            doc.interrupted = true;
            break;
        }
        if let Some(why) = spec
            .stop_rule
            .as_ref()
            .and_then(|rule| crate::plan::sequence::stop_reason(rule, &doc.runs))
        {
            let note = format!("skipped {}: {why}", spec.name);
            obs.note(&note);
            doc.notes.push(note);
            continue;
        }
        let go_on = match &spec.latency_target {
            Some(t) => search::run(&mut host, i, t, &mut doc, obs, stop),
            None => run_on_all(&mut host, i, None, &mut doc, obs, stop),
        };
        if !go_on {
            break;
        }
    }
    Ok(doc)
}

/// Run `i` on every target, its result added to `doc`; false when the job
/// ends here (a stop, an error).
/// `step` makes each target's run (by its index) a step of a latency
/// search (its rate and name) instead of the run as planned.
fn run_on_all(
    host: &mut OnHost,
    i: usize,
    step: Option<&StepFn<'_>>,
    doc: &mut ResultDoc,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> bool {
    let Some(mut spec) = doc.spec.runs.get(i).cloned() else {
        return false;
    };
    let count = doc.spec.runs.len();
    let n = host.plans.len();
    // Each target's intervals pass through labelled, then each period's
    // total once every target has reported it (one target: its own).
    let totals = crate::events::Totals::new(obs, n);
    let each: Vec<crate::events::PartObserver<'_>> = host
        .plans
        .iter()
        .enumerate()
        .map(|(t, p)| crate::events::PartObserver {
            totals: &totals,
            part: t,
            prefix: (n > 1).then(|| p.job.target.path.display().to_string()),
        })
        .collect();
    let observers: Vec<&dyn Observer> = each.iter().map(|o| o as &dyn Observer).collect();
    let mut on_ready = |runs: &[(PlannedRun, &target::Prepared)]| {
        if step.is_some() {
            if let Some((r, _)) = runs.first() {
                spec = r.spec.clone();
            }
        }
        // One target: its run as planned and resolved; several: the job's
        // run with every target's threads.
        let whole = match runs {
            [(one, _)] => one.clone(),
            _ => targets::whole_run(&spec, runs),
        };
        // Until its workers are released the run is starting, not yet in
        // its warm-up: a stop in between must not read as one in the fill.
        rescue::doing(format!("starting run '{}'", spec.name));
        obs.run_started(i, count, &whole);
    };
    // A target left out, now or before, reports no more intervals: the
    // totals go on without it.
    let ended = |t: usize| totals.part_ended(t);
    for (t, why) in host.left_out.iter().enumerate() {
        if why.is_some() {
            ended(t);
        }
    }
    let outcomes = host.run(
        i,
        step,
        &mut on_ready,
        (&observers, &ended),
        Start::Now,
        stop,
    );
    match outcomes {
        Ok(o) => settle(host, &spec, o, doc, obs, stop),
        Err(e) => {
            doc.fail(&e);
            false
        }
    }
}

/// The targets' outcomes of one run into the result: the run (merged over
/// several targets), an error, or the stop that ended it; false when the
/// job ends here.
fn settle(
    host: &mut OnHost,
    spec: &crate::spec::RunSpec,
    outcomes: Vec<(usize, targets::Outcome)>,
    doc: &mut ResultDoc,
    obs: &dyn Observer,
    stop: &AtomicBool,
) -> bool {
    let (outcomes, gone) = lost::leave_out(host, &spec.name, outcomes, doc, obs);
    let (plans, prepared) = (&host.plans, &host.sets);
    let many = plans.len() > 1;
    let stopped = || stop.load(Ordering::Relaxed);
    let mut parts = Vec::new();
    let mut rows = Vec::new();
    let mut failed = false;
    for (t, o) in outcomes {
        let (Some(plan), Some(sets)) = (plans.get(t), prepared.get(t)) else {
            continue;
        };
        let mut r = match o {
            Ok(r) => r,
            Err(f) => {
                let (e, partial) = *f;
                // Stopped while starting: not an error, nothing measured.
                if !(partial.is_none() && stopped()) {
                    failed = true;
                    if doc.error.is_none() {
                        let e = if many {
                            at_target(&plan.job.target.path, e)
                        } else {
                            e
                        };
                        doc.fail(&e);
                    }
                }
                match partial {
                    Some(r) => *r,
                    None => continue,
                }
            }
        };
        let kind = sets.first().map_or(plan.target.kind, |(_, s)| s.kind);
        if many {
            crate::result::threads::label(&mut r.threads, None, Some(t as u32));
        }
        rows.push(TargetRun::of(
            &r,
            t as u32,
            &plan.job.target.path.display().to_string(),
            Some(kind),
        ));
        parts.push(r);
    }
    if parts.is_empty() {
        if doc.error.is_none() && stopped() {
            doc.notes.push(format!(
                "stopped while run '{}' was starting: it was not measured",
                spec.name
            ));
        }
        doc.interrupted |= stopped();
        return false;
    }
    let mut result = if many {
        match merged(spec, &parts, rows) {
            Ok(r) => r,
            Err(e) => {
                doc.error.get_or_insert(e.to_string());
                return false;
            }
        }
    } else {
        parts.remove(0)
    };
    result.left_out = gone;
    if !failed && result.interrupted && !measured(&result) {
        // Stopped in its warm-up: nothing of it counts, and a row of zeros
        // would read as a measurement.
        doc.notes.push(format!(
            "stopped during the warm-up of run '{}': it was not measured",
            result.name
        ));
        doc.interrupted = true;
        return false;
    }
    if !failed {
        obs.run_finished(&result);
    }
    let interrupted = result.interrupted;
    doc.runs.push(result);
    rescue::keep(doc, many);
    if failed || interrupted || stopped() {
        doc.interrupted |= interrupted || (!failed && stopped());
        return false;
    }
    true
}

/// One run's figures over several targets, merged exactly, each target's
/// own kept beside them.
fn merged(
    spec: &crate::spec::RunSpec,
    parts: &[RunResult],
    rows: Vec<TargetRun>,
) -> Result<RunResult> {
    let refs: Vec<&RunResult> = parts.iter().collect();
    let mut merged = crate::result::merge::merge_runs(&refs).map_err(VbError::run)?;
    merged.workload = spec.clone();
    if refs.iter().any(|r| r.workload.rate_iops.is_some()) {
        merged.workload.rate_iops = Some(refs.iter().filter_map(|r| r.workload.rate_iops).sum());
    }
    merged.targets = rows;
    Ok(merged)
}

/// Whether a run has a measured phase (a run stopped in its warm-up has not).
fn measured(r: &RunResult) -> bool {
    r.phases
        .iter()
        .any(|p| p.name == crate::result::PhaseName::Measure && p.duration_s > 0.0)
}

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
pub(crate) mod meta;
mod prepare;
pub(crate) mod record;
mod replay;
pub(crate) mod rescue;
mod run;
pub(crate) mod search;
mod shaped;
pub(crate) mod startgate;
pub(crate) mod steady;
pub(crate) mod targets;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Result, VbError};
pub(crate) use crate::events::Observer;
use crate::io::host;
use crate::io::target;
use crate::plan::targets::at_target;
use crate::plan::{Plan, PlannedRun};
use crate::result::targets::TargetRun;
use crate::result::{ResultDoc, RunResult, TargetInfo};
use crate::spec::JobSpec;

pub(crate) use prepare::prepare;
pub(crate) use run::{RunError, run_one};
pub(crate) use startgate::Start;
pub(crate) use targets::Sets;

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
    let Some(prepared) = prepare_all(plans, &mut doc, obs, stop)? else {
        doc.interrupted = true;
        doc.notes
            .push("stopped while preparing the target: nothing was measured".into());
        return Ok(doc);
    };
    rescue::keep(&doc, many);
    doc.target = plans
        .first()
        .zip(prepared.first())
        .map(|(p, sets)| target_info(p, sets));
    let mut done: Vec<Vec<RunResult>> = vec![Vec::new(); plans.len()];
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
        let all = (plans, prepared.as_slice());
        let go_on = match &spec.latency_target {
            Some(t) => search::run(all, &mut done, i, t, &mut doc, obs, stop),
            None => run_on_all(all, &mut done, i, None, &mut doc, obs, stop),
        };
        if !go_on {
            break;
        }
    }
    Ok(doc)
}

/// Prepares every target, one after another: the terminal shows one fill
/// bar at a time, and a refused target stops the job before any other is
/// filled. None when a stop came first.
fn prepare_all(
    plans: &[Plan],
    doc: &mut ResultDoc,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<Option<Vec<Sets>>> {
    rescue::doing(if plans.len() > 1 {
        "preparing the targets"
    } else {
        "preparing the target"
    });
    let mut prepared: Vec<Sets> = Vec::with_capacity(plans.len());
    for p in plans {
        match prepare(p, obs, stop) {
            Ok(sets) => {
                doc.notes
                    .extend(sets.iter().flat_map(|(_, s)| s.notes.clone()));
                doc.fill
                    .extend(sets.iter().flat_map(|(_, s)| s.fill.clone()));
                prepared.push(sets);
            }
            Err(_) if stop.load(Ordering::Relaxed) => return Ok(None),
            Err(e) if plans.len() > 1 => return Err(at_target(&p.job.target.path, e)),
            Err(e) => return Err(e),
        }
    }
    Ok(Some(prepared))
}

/// The result's line for the (first) target: its first file set.
fn target_info(p: &Plan, sets: &Sets) -> TargetInfo {
    let first = sets.first().map(|(_, s)| s);
    let kind = first.map_or(p.target.kind, |s| s.kind);
    let path = &p.job.target.path;
    TargetInfo {
        kind,
        path: path.display().to_string(),
        files: first.map_or(0, |s| s.layout.nfiles),
        file_size: first.map_or(0, |s| s.layout.file_size),
        align: first.map_or(1, |s| s.align),
        mount: match kind {
            target::TargetKind::BlockDevice => None,
            _ => crate::io::mounts::for_path(path),
        },
        memory: memory_of(kind, path),
        blocks: crate::io::mounts::block_sizes(path, kind),
    }
}

/// Makes target `t`'s run a latency-search step (`search.rs`).
type StepFn<'a> = dyn Fn(usize, &PlannedRun) -> PlannedRun + 'a;

/// Run `i` on every target, its result added to `doc`; false when the job
/// ends here (a stop, an error).
/// `step` makes each target's run (by its index) a step of a latency
/// search (its rate and name) instead of the run as planned.
fn run_on_all(
    (plans, prepared): (&[Plan], &[Sets]),
    done: &mut [Vec<RunResult>],
    i: usize,
    step: Option<&StepFn<'_>>,
    doc: &mut ResultDoc,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> bool {
    let Some(mut spec) = doc.spec.runs.get(i).cloned() else {
        return false;
    };
    let mut runs = match targets::ready(plans, prepared, done, i) {
        Ok(r) => r,
        Err(e) => {
            doc.error = Some(e.to_string());
            return false;
        }
    };
    if let Some(f) = step {
        for (t, (r, _)) in runs.iter_mut().enumerate() {
            *r = f(t, r);
        }
        if let Some((r, _)) = runs.first() {
            spec = r.spec.clone();
        }
    }
    // One target: its run as planned and resolved; several: the job's run
    // with every target's threads.
    let whole = match runs.as_slice() {
        [(one, _)] => one.clone(),
        _ => targets::whole_run(&spec, &runs),
    };
    // Until its workers are released the run is starting, not yet in its
    // warm-up: a stop in between must not read as one in the fill.
    rescue::doing(format!("starting run '{}'", spec.name));
    obs.run_started(i, doc.spec.runs.len(), &whole);
    // Each target's intervals pass through labelled, then each period's
    // total once every target has reported it (one target: its own).
    let totals = crate::events::Totals::new(obs, plans.len());
    let each: Vec<crate::events::PartObserver<'_>> = plans
        .iter()
        .enumerate()
        .map(|(t, p)| crate::events::PartObserver {
            totals: &totals,
            part: t,
            prefix: (plans.len() > 1).then(|| p.job.target.path.display().to_string()),
        })
        .collect();
    let observers: Vec<&dyn Observer> = each.iter().map(|o| o as &dyn Observer).collect();
    let outcomes = targets::run_together(plans, &runs, &observers, Start::Now, stop);
    settle(plans, prepared, done, &spec, outcomes, doc, obs, stop)
}

/// The targets' outcomes of one run into the result: the run (merged over
/// several targets), an error, or the stop that ended it; false when the
/// job ends here.
#[allow(clippy::too_many_arguments)]
fn settle(
    plans: &[Plan],
    prepared: &[Sets],
    done: &mut [Vec<RunResult>],
    spec: &crate::spec::RunSpec,
    outcomes: Vec<targets::Outcome>,
    doc: &mut ResultDoc,
    obs: &dyn Observer,
    stop: &AtomicBool,
) -> bool {
    let many = plans.len() > 1;
    let stopped = || stop.load(Ordering::Relaxed);
    let mut parts = Vec::new();
    let mut rows = Vec::new();
    let mut failed = false;
    for (t, o) in outcomes.into_iter().enumerate() {
        let (Some(plan), Some(sets)) = (plans.get(t), prepared.get(t)) else {
            continue;
        };
        let r = match o {
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
                        doc.error = Some(e.to_string());
                    }
                }
                match partial {
                    Some(r) => *r,
                    None => continue,
                }
            }
        };
        let kind = sets.first().map_or(plan.target.kind, |(_, s)| s.kind);
        rows.push(TargetRun::of(
            &r,
            t as u32,
            &plan.job.target.path.display().to_string(),
            Some(kind),
        ));
        if let Some(d) = done.get_mut(t) {
            d.push(r.clone());
        }
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
    let result = if many {
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

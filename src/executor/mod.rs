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
mod record;
pub mod rescue;
mod run;
mod search;
mod shaped;
pub(crate) mod startgate;
pub(crate) mod steady;
mod targets;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime};

use crate::error::{Result, VbError};
use crate::io::host;
use crate::io::target::{self, Progress};
use crate::plan::{Plan, PlannedRun};
use crate::result::{Interval, ResultDoc, RunResult, TargetInfo};
use crate::spec::StopRule;

pub use prepare::prepare;
pub use run::{RunError, run_one};
pub use targets::execute_targets;

/// What the executor tells whoever is watching (the terminal, or nothing).
pub trait Observer: Progress {
    fn note(&self, message: &str);
    fn run_started(&self, index: usize, count: usize, run: &PlannedRun);
    /// The workers were released at `at` (wall clock): the run's I/O begins.
    /// A multi-host agent reports it so the coordinator can measure start skew.
    fn io_started(&self, _run: &PlannedRun, _at: SystemTime) {}
    /// Called once per interval with the time so far and the run's total.
    fn interval(&self, run: &PlannedRun, elapsed_s: f64, total_s: f64, iv: &Interval);
    fn run_finished(&self, run: &RunResult);
}

/// The result's `memory` for a prepared target: the host's memory it is,
/// if it is (`io::mounts::memory_of`).
pub fn memory_of(kind: target::TargetKind, path: &std::path::Path) -> Option<String> {
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

pub fn execute(plan: &Plan, obs: &dyn Observer, stop: &Arc<AtomicBool>) -> Result<ResultDoc> {
    let job = &plan.job;
    let started = crate::result::now_rfc3339();
    let mut doc = ResultDoc {
        notes: plan.notes.clone(),
        ..ResultDoc::begin(this_host(job), started, job.clone())
    };
    rescue::keep(&doc, false);
    rescue::doing("preparing the target");
    let mut sets = match prepare(plan, obs, stop) {
        Ok(p) => p,
        Err(_) if stop.load(Ordering::Relaxed) => {
            doc.interrupted = true;
            doc.notes
                .push("stopped while preparing the target: nothing was measured".into());
            return Ok(doc);
        }
        Err(e) => return Err(e),
    };
    rescue::keep(&doc, false);
    for (_, p) in &sets {
        doc.notes.extend(p.notes.iter().cloned());
        doc.fill.extend(p.fill.clone());
    }
    let (key, prepared) = sets.remove(0);
    doc.target = Some(TargetInfo {
        kind: prepared.kind,
        path: job.target.path.display().to_string(),
        files: prepared.layout.nfiles,
        file_size: prepared.layout.file_size,
        align: prepared.align,
        mount: match prepared.kind {
            target::TargetKind::BlockDevice => None,
            _ => crate::io::mounts::for_path(&job.target.path),
        },
        memory: memory_of(prepared.kind, &job.target.path),
        blocks: crate::io::mounts::block_sizes(&job.target.path, prepared.kind),
    });
    sets.insert(0, (key, prepared));
    for (i, run) in plan.runs.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            doc.interrupted = true;
            break;
        }
        if let Some(why) = run
            .spec
            .stop_rule
            .as_ref()
            .and_then(|rule| stop_reason(rule, &doc.runs))
        {
            let note = format!("skipped {}: {why}", run.spec.name);
            obs.note(&note);
            doc.notes.push(note);
            continue;
        }
        if let Some(t) = &run.spec.latency_target {
            if !search::run(plan, run, t, &sets, (i, obs), stop, &mut doc) {
                break;
            }
            continue;
        }
        let run = match resolve_rate(run, &doc.runs) {
            Ok(r) => r,
            Err(e) => {
                doc.error = Some(e.to_string());
                break;
            }
        };
        if !one_run(plan, &run, &sets, (i, obs), stop, &mut doc) {
            break;
        }
    }
    Ok(doc)
}

/// Runs one planned run on its prepared set and records it in `doc`; false
/// when the job must end here (a stop, an error: `doc` says which).
fn one_run(
    plan: &Plan,
    run: &PlannedRun,
    sets: &[(meta::SetKey, target::Prepared)],
    (i, obs): (usize, &dyn Observer),
    stop: &Arc<AtomicBool>,
    doc: &mut ResultDoc,
) -> bool {
    let job = &plan.job;
    let prepared = match meta::find_set(sets, run, job) {
        Ok(p) => p,
        Err(e) => {
            doc.error = Some(e.to_string());
            return false;
        }
    };
    if let Err(e) = meta::before_run(plan, run) {
        doc.error = Some(e.to_string());
        return false;
    }
    // Until its workers are released the run is starting, not yet in
    // its warm-up: a stop in between must not read as one in the fill.
    rescue::doing(format!("starting run '{}'", run.spec.name));
    obs.run_started(i, plan.runs.len(), run);
    match run_one(plan, run, prepared, obs, stop, &|| Some(Instant::now())) {
        Ok(result) if result.interrupted && !measured(&result) => {
            // Stopped in its warm-up: nothing of it counts, and a row
            // of zeros would read as a measurement.
            doc.notes.push(format!(
                "stopped during the warm-up of run '{}': it was not measured",
                result.name
            ));
            doc.interrupted = true;
            false
        }
        Ok(result) => {
            obs.run_finished(&result);
            let interrupted = result.interrupted;
            doc.runs.push(result);
            rescue::keep(doc, false);
            if interrupted {
                doc.interrupted = true;
            }
            !interrupted
        }
        Err((_, None)) if stop.load(Ordering::Relaxed) => {
            // Stopped while the run was starting: nothing was measured.
            doc.notes.push(format!(
                "stopped while run '{}' was starting: it was not measured",
                run.spec.name
            ));
            doc.interrupted = true;
            false
        }
        Err((e, partial)) => {
            if let Some(r) = partial {
                doc.runs.push(*r);
            }
            doc.error = Some(e.to_string());
            false
        }
    }
}

/// Whether a run has a measured phase (a run stopped in its warm-up has not).
fn measured(r: &RunResult) -> bool {
    r.phases
        .iter()
        .any(|p| p.name == crate::result::PhaseName::Measure && p.duration_s > 0.0)
}

/// Why a run with this stop rule should be skipped, judging the runs of its
/// group already done; None to go ahead.
pub fn stop_reason(rule: &StopRule, done: &[RunResult]) -> Option<String> {
    let group: Vec<&RunResult> = done
        .iter()
        .filter(|r| {
            r.workload
                .stop_rule
                .as_ref()
                .is_some_and(|s| s.group == rule.group)
        })
        .collect();
    if let (Some(pct), [.., prev, last]) = (rule.gain_below_pct, group.as_slice()) {
        let (a, b) = (prev.total_iops(), last.total_iops());
        if b < a * (1.0 + pct / 100.0) {
            return Some(format!(
                "IOPS grew {:.1}% from {} to {} (less than {pct}%): the knee is passed",
                (b / a - 1.0) * 100.0,
                prev.name,
                last.name
            ));
        }
    }
    if let (Some(limit), Some(last)) = (rule.latency_above_us, group.last()) {
        let lat = last.mean_latency_us();
        if lat > limit {
            return Some(format!(
                "{} reached a mean latency of {lat:.0}us, above the {limit:.0}us limit",
                last.name
            ));
        }
    }
    if let Some(last) = group.last() {
        let broken = crate::result::search::check(last, &rule.percentile_above);
        if let Some(b) = broken.iter().find(|c| !c.pass) {
            return Some(format!(
                "{} measured {} against {}",
                last.name,
                b.measured_us
                    .map_or("no I/O".into(), |us| format!("{us:.0}us")),
                b.limit.label()
            ));
        }
    }
    None
}

/// Turns a rate given as a percentage of an earlier run into IOPS.
pub fn resolve_rate(run: &PlannedRun, done: &[RunResult]) -> Result<PlannedRun> {
    let mut run = run.clone();
    if let Some(p) = &run.spec.rate_pct {
        let base = done.iter().find(|r| r.name == p.of).ok_or_else(|| {
            VbError::input(format!(
                "run '{}' sets its rate as {}% of run '{}', which has not run",
                run.spec.name, p.percent, p.of
            ))
        })?;
        let iops = base.total_iops() * p.percent / 100.0;
        if iops <= 0.0 {
            return Err(VbError::run(format!(
                "run '{}': run '{}' measured no IOPS to take {}% of",
                run.spec.name, p.of, p.percent
            )));
        }
        run.spec.rate_iops = Some(iops);
    }
    Ok(run)
}

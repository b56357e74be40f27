//! The job on this host: one plan per target, and every target prepared.

use super::{Link, Shared};
use crate::error::{Result, VbError};
use crate::executor::{self, Observer};
use crate::io::target::{Prepared, Progress, TargetKind};
use crate::plan::{self, Plan, PlannedRun};
use crate::remote::protocol::{AgentJob, FromAgent, PlannedRunInfo, PlannedTarget};
use crate::result::{Interval, RunResult};
use std::sync::atomic::Ordering;

/// One plan per target: the job with the target's path, and with the whole
/// file or device when no --size was given (as a local run does).
pub(super) fn plan_job(j: &AgentJob) -> Result<Vec<Plan>> {
    if j.targets.is_empty() {
        return Err(VbError::input("no target"));
    }
    let mut plans = Vec::with_capacity(j.targets.len());
    for (i, path) in j.targets.iter().enumerate() {
        let mut spec = j.job.clone();
        spec.target.path = path.clone();
        crate::io::verify::journal_per_target(&mut spec.target.data, i, j.targets.len());
        if !j.size_given {
            let insp = crate::plan::meta::inspect(&spec)?;
            if let (TargetKind::File | TargetKind::BlockDevice, Some(n)) =
                (insp.kind, insp.existing_size)
            {
                spec.target.size = n;
            }
        }
        let plan = plan::plan(spec).map_err(|e| at_target(path, e))?;
        plans.push(plan);
    }
    Ok(plans)
}

pub(super) fn at_target(path: &std::path::Path, e: VbError) -> VbError {
    let msg = if e.message.contains(&path.display().to_string()) {
        e.message
    } else {
        format!("{}: {}", path.display(), e.message)
    };
    VbError {
        kind: e.kind,
        message: msg,
    }
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

/// The result file's line for a target: its first (usually only) file set.
pub(super) fn target_info(
    plan: &Plan,
    sets: &[(crate::executor::meta::SetKey, Prepared)],
) -> crate::result::TargetInfo {
    let first = sets.first().map(|(_, p)| p);
    crate::result::TargetInfo {
        kind: first.map_or(plan.target.kind, |p| p.kind),
        path: plan.job.target.path.display().to_string(),
        files: sets.iter().map(|(_, p)| p.layout.nfiles).sum(),
        file_size: first.map(|p| p.layout.file_size).unwrap_or(0),
        align: sets.iter().map(|(_, p)| p.align).max().unwrap_or(1),
        mount: match first.map(|p| p.kind) {
            Some(crate::io::target::TargetKind::BlockDevice) | None => None,
            _ => crate::io::mounts::for_path(&plan.job.target.path),
        },
        memory: executor::memory_of(
            first.map_or(plan.target.kind, |p| p.kind),
            &plan.job.target.path,
        ),
        blocks: crate::io::mounts::block_sizes(
            &plan.job.target.path,
            first.map_or(plan.target.kind, |p| p.kind),
        ),
    }
}

pub(super) type Sets = Vec<(crate::executor::meta::SetKey, Prepared)>;

/// Prepares every target at once (they are usually separate volumes).
pub(super) fn prepare_all(plans: &[Plan], shared: &Shared, link: &Link) -> Result<Vec<Sets>> {
    let obs = PrepareObserver { shared, link };
    let results: Vec<Result<Sets>> = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter()
            .map(|plan| {
                let obs = &obs;
                s.spawn(move || executor::prepare(plan, obs, &shared.stop))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(VbError::run("preparing a target panicked")))
            })
            .collect()
    });
    results
        .into_iter()
        .zip(plans)
        .map(|(r, p)| r.map_err(|e| at_target(&p.job.target.path, e)))
        .collect()
}

struct PrepareObserver<'a> {
    shared: &'a Shared,
    link: &'a Link,
}

impl Progress for PrepareObserver<'_> {
    fn start(&self, total_bytes: u64, _what: &str) {
        let total = self
            .shared
            .fill_total
            .fetch_add(total_bytes, Ordering::Relaxed)
            + total_bytes;
        // Say how much there is to fill at once, so the coordinator's bar
        // knows its length; the watchdog reports progress from here on.
        self.link.send(&FromAgent::Progress {
            done: self.shared.fill_done.load(Ordering::Relaxed),
            total,
        });
    }
    fn advance(&self, bytes: u64) {
        self.shared.fill_done.fetch_add(bytes, Ordering::Relaxed);
    }
    fn finish(&self) {}
}

impl Observer for PrepareObserver<'_> {
    fn note(&self, message: &str) {
        self.link.send(&FromAgent::Note {
            message: message.into(),
        });
    }
    fn run_started(&self, _: usize, _: usize, _: &PlannedRun) {}
    fn interval(&self, _: &PlannedRun, _: f64, _: f64, _: &Interval) {}
    fn run_finished(&self, _: &RunResult) {}
}

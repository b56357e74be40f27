//! A job over several local targets, planned as one plan per target: the
//! same runs, each target with its own path, size (the whole file or device
//! when no --size was given, as for one target) and share of the threads and
//! rates. Each plan is an ordinary single-target plan, so every target gets
//! the same checks, file-set rules and lock as a run on it alone.

use std::fmt::Write as _;

use super::{Plan, plan};
use crate::error::{Result, VbError};
use crate::spec::JobSpec;
use crate::spec::targets::TargetList;
use crate::units::bounds;

/// One plan per target of `job.targets`; `size_given` says whether the
/// job's size came from the user (else a file or device is used whole).
pub(crate) fn plan_targets(job: &JobSpec, size_given: bool) -> Result<Vec<Plan>> {
    job.validate()?;
    let list = job
        .targets
        .as_ref()
        .ok_or_else(|| VbError::input("no target list to plan"))?;
    if job.runs.iter().any(|r| r.meta.is_some()) {
        return Err(VbError::input(
            "metadata runs (--ops) use one tree on one target; a list of targets is for block I/O",
        ));
    }
    #[cfg(windows)]
    if let Some(why) = crate::io::target::one_file_twice(&list.paths) {
        return Err(VbError::input(why));
    }
    let n = list.paths.len();
    let mut plans = Vec::with_capacity(n);
    for (i, path) in list.paths.iter().enumerate() {
        let mut spec = for_target(job, path, i, n, size_given)?;
        spec.targets = None;
        for r in &mut spec.runs {
            share_run(list, r, i);
        }
        let p = plan(spec).map_err(|e| at_target(path, e))?;
        plans.push(p);
    }
    check_host_totals(&plans)?;
    Ok(plans)
}

/// One plan per path for an agent's targets: each runs the whole job as
/// sent (the coordinator already gave each host its threads).
pub(crate) fn plan_each(
    job: &JobSpec,
    paths: &[std::path::PathBuf],
    size_given: bool,
) -> Result<Vec<Plan>> {
    if paths.is_empty() {
        return Err(VbError::input("no target"));
    }
    #[cfg(windows)]
    if let Some(why) = crate::io::target::one_file_twice(paths) {
        return Err(VbError::input(why));
    }
    let mut plans = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        let spec = for_target(job, path, i, paths.len(), size_given)?;
        plans.push(plan(spec).map_err(|e| at_target(path, e))?);
    }
    Ok(plans)
}

/// Target `i` of `n`: the job at its path, with its own journal file and
/// its own size (`plan::size`).
fn for_target(
    job: &JobSpec,
    path: &std::path::Path,
    i: usize,
    n: usize,
    size_given: bool,
) -> Result<JobSpec> {
    let mut spec = job.clone();
    spec.target.path = path.to_path_buf();
    crate::io::verify::journal_per_target(&mut spec.target.data, i, n);
    super::size::decide(&mut spec, size_given).map_err(|e| at_target(path, e))?;
    Ok(spec)
}

/// The host-wide bounds hold for all targets together, not only for each:
/// 256 targets of 4096 threads would be a million threads.
fn check_host_totals(plans: &[Plan]) -> Result<()> {
    let runs = plans.first().map_or(0, |p| p.runs.len());
    for i in 0..runs {
        let (mut threads, mut in_flight, mut buffers) = (0u64, 0u64, 0u64);
        let mut name = "";
        for r in plans.iter().filter_map(|p| p.runs.get(i)) {
            let n = u64::from(r.io_threads) * u64::from(r.depth);
            threads += u64::from(r.io_threads);
            in_flight += n;
            buffers += n.saturating_mul(r.spec.max_bs());
            name = &r.spec.name;
        }
        let over = |what: &str, v: u64, max: u64| {
            VbError::input(format!(
                "run '{name}': {what} over all {} targets is {v}; at most {max} per host \
                 (fewer targets, --threads or --iodepth, or --threads-total)",
                plans.len()
            ))
        };
        if threads > bounds::MAX_IO_THREADS {
            return Err(over("I/O threads", threads, bounds::MAX_IO_THREADS));
        }
        if in_flight > bounds::MAX_IN_FLIGHT {
            return Err(over("I/Os in flight", in_flight, bounds::MAX_IN_FLIGHT));
        }
        if buffers > bounds::MAX_BUFFER_BYTES {
            return Err(over("I/O buffer bytes", buffers, bounds::MAX_BUFFER_BYTES));
        }
    }
    Ok(())
}

/// Target `i`'s part of a run: its threads, and of the rates and the I/O
/// limit (the job's totals) the same share as of the threads.
fn share_run(list: &TargetList, r: &mut crate::spec::RunSpec, i: usize) {
    let mine = list.threads_of(r.threads, i);
    let all = list.threads_in_all(r.threads).max(1);
    let part = f64::from(mine) / f64::from(all);
    r.threads = mine;
    if let Some(rate) = &mut r.rate_iops {
        *rate *= part;
    }
    if let Some(b) = &mut r.shape.rate_bytes {
        *b *= part;
    }
    let unit = r.min_bs().max(1);
    if let Some(limit) = &mut r.io_limit {
        *limit = (((*limit as f64 * part) as u64) / unit).max(1) * unit;
    }
}

pub(crate) fn at_target(path: &std::path::Path, e: VbError) -> VbError {
    let shown = path.display().to_string();
    if e.message.contains(&shown) {
        return e;
    }
    VbError {
        kind: e.kind,
        message: format!("{shown}: {}", e.message),
    }
}

/// What `--dry-run` prints: every target with its kind and threads, then
/// the first target's plan (the others differ only as listed).
pub(crate) fn describe(plans: &[Plan], list: &TargetList) -> String {
    let mut out = String::new();
    let how = if list.threads_total {
        "--threads over all of them (--threads-total)"
    } else {
        "--threads each"
    };
    let _ = writeln!(out, "targets:  {} run together, {how}", plans.len());
    for p in plans {
        let threads: Vec<String> = p.runs.iter().map(|r| r.spec.threads.to_string()).collect();
        let mut t = threads.clone();
        t.dedup();
        let _ = writeln!(
            out,
            "  {} ({}, {}, threads {})",
            p.job.target.path.display(),
            p.target.kind,
            crate::units::format_size(p.job.target.size),
            t.join("/")
        );
    }
    if let Some(first) = plans.first() {
        let _ = writeln!(out, "first target's plan:");
        out.push_str(&first.describe());
    }
    out
}

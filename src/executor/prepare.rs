//! Preparing the target before the runs: one file set per distinct file
//! count, the direct-I/O alignment check, and enough file descriptors.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::Observer;
use crate::error::{Result, VbError};
use crate::io::target::{self, PrepareOptions, Prepared};
use crate::plan::Plan;

/// Prepares the plan's target as `execute` does (one file set per distinct
/// file count the runs use), checks alignment and passes the notes to the
/// observer. A multi-host agent calls it once per target it was given.
pub fn prepare(
    plan: &Plan,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<(u32, Prepared)>> {
    raise_fd_limit();
    let job = &plan.job;
    let opts = PrepareOptions {
        size: job.target.size,
        files: job.target.files,
        direct: job.target.direct,
        allow_overwrite: job.target.allow_overwrite,
        needs_write: plan.needs_write(),
        progress: obs,
        stop,
        data: &job.target.data,
        fill_bs: job.target.fill.bs,
    };
    let mut sets = prepare_sets(plan, &opts)?;
    for (key, p) in &mut sets {
        if *key != super::meta::TREE_KEY {
            super::data::attach(plan, p)?;
        }
    }
    for (_, p) in &sets {
        check_alignment(plan, p)?;
        for n in &p.notes {
            obs.note(n);
        }
        if let Some(f) = &p.fill {
            obs.note(&f.line());
        }
    }
    Ok(sets)
}

/// Prepares one file set per distinct file count the runs use: the target
/// itself when all runs agree, else `files-N/` subdirectories of it.
fn prepare_sets(plan: &Plan, opts: &PrepareOptions) -> Result<Vec<(u32, Prepared)>> {
    let job = &plan.job;
    let tree = super::meta::prepare_tree(plan)?.map(|t| (super::meta::TREE_KEY, t));
    let mut counts: Vec<u32> = Vec::new();
    for r in plan.runs.iter().filter(|r| r.spec.meta.is_none()) {
        let f = r.spec.files.unwrap_or(job.target.files);
        if !counts.contains(&f) {
            counts.push(f);
        }
    }
    if counts.is_empty()
        && let Some(t) = tree
    {
        return Ok(vec![t]);
    }
    if counts.len() <= 1 {
        let files = counts.first().copied().unwrap_or(job.target.files);
        let p = target::prepare(&plan.target, &PrepareOptions { files, ..*opts })?;
        return Ok(vec![(files, p)].into_iter().chain(tree).collect());
    }
    if plan.target.kind != target::TargetKind::Directory {
        return Err(VbError::input(format!(
            "runs use different file counts ({counts:?}); that needs a directory target, and {} is not one",
            job.target.path.display()
        )));
    }
    let mut sets = Vec::new();
    for files in counts {
        // Reached without following links: a planted files-N link is refused.
        let p = target::prepare_subset(
            &job.target.path,
            &format!("files-{files}"),
            &PrepareOptions { files, ..*opts },
        )?;
        sets.push((files, p));
    }
    sets.extend(tree);
    Ok(sets)
}

fn check_alignment(plan: &Plan, prepared: &Prepared) -> Result<()> {
    if !plan.job.target.direct {
        return Ok(());
    }
    for r in &plan.runs {
        for b in &r.spec.bs {
            if b.bytes % prepared.align != 0 {
                return Err(VbError::input(format!(
                    "--bs {} is not a multiple of {} bytes, the direct-I/O alignment of {}; \
                     use a multiple of it, or --buffered",
                    b.bytes,
                    prepared.align,
                    plan.job.target.path.display()
                )));
            }
        }
    }
    Ok(())
}

fn raise_fd_limit() {
    let lim = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    if lim.current < lim.maximum {
        let _ = rustix::process::setrlimit(
            rustix::process::Resource::Nofile,
            rustix::process::Rlimit {
                current: lim.maximum,
                maximum: lim.maximum,
            },
        );
    }
}

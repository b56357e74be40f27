//! Preparing the target before the runs: one file set per distinct layout
//! (file count and working set), the direct-I/O alignment check, and
//! enough file descriptors.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::Observer;
use crate::error::{Result, VbError};
use crate::events::Raise as _;
use crate::io::backend::Storage;
use crate::io::target::{self, PrepareOptions, Prepared};
use crate::plan::Plan;
use crate::spec::layout::SetLayout;

use super::meta::SetKey;

/// An observer seen as the fill's progress: by hand, since trait upcasting
/// (`&dyn Observer` as `&dyn Progress`) needs Rust 1.86, past rust-version.
struct Upcast<'a>(&'a dyn Observer);

impl target::Progress for Upcast<'_> {
    fn start(&self, total_bytes: u64, what: &str) {
        self.0.start(total_bytes, what);
    }
    fn advance(&self, bytes: u64) {
        self.0.advance(bytes);
    }
    fn finish(&self) {
        self.0.finish();
    }
}

/// Prepares the plan's target as `execute` does (one file set per distinct
/// layout the runs use), checks alignment and passes the notes to the
/// observer. A multi-host agent calls it once per target it was given.
pub(crate) fn prepare(
    plan: &Plan,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<(SetKey, Prepared)>> {
    prepare_on(plan, storage(plan), obs, stop)
}

/// `prepare` on the back end `storage`.
pub(crate) fn prepare_on(
    plan: &Plan,
    storage: Storage,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<(SetKey, Prepared)>> {
    crate::io::fd_limit::raise(plan.open_files_wanted());
    check_storage(plan, storage)?;
    let job = &plan.job;
    let opts = PrepareOptions {
        size: job.target.size,
        files: job.target.files,
        direct: job.target.direct,
        allow_overwrite: job.target.allow_overwrite,
        needs_write: plan.needs_write(),
        progress: &Upcast(obs),
        stop,
        data: &job.target.data,
        fill_bs: job.target.fill.bs,
        fill_threads: job.target.fill.threads_for(job.target.files),
    };
    let mut sets = prepare_sets(plan, storage, &opts)?;
    for (key, p) in &mut sets {
        if key.is_some() {
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

/// Prepares one file set per distinct layout the runs use: the target
/// itself when all runs agree, else a subdirectory of it per layout
/// (`JobSpec::subset_name`), after checking the file system has room for
/// every set still to fill, so a shortage never shows after a long fill.
fn prepare_sets(
    plan: &Plan,
    storage: Storage,
    opts: &PrepareOptions,
) -> Result<Vec<(SetKey, Prepared)>> {
    let job = &plan.job;
    let tree = super::meta::prepare_tree(plan, storage)?.map(|t| (super::meta::TREE_KEY, t));
    let layouts = job.layouts();
    let with = |l: &SetLayout| PrepareOptions {
        files: l.files,
        size: l.size,
        ..*opts
    };
    if layouts.is_empty() {
        if let Some(t) = tree {
            return Ok(vec![t]);
        }
    }
    if !plan.needs_file_set() {
        // A null run's offsets still span the working set, but no file
        // holds it: nothing is created, filled or locked.
        let sets = layouts.iter().map(|l| {
            let layout = crate::io::workload::Layout {
                nfiles: l.files,
                file_size: l.file_size(),
            };
            (Some(*l), Prepared::diskless(layout))
        });
        return Ok(sets.chain(tree).collect());
    }
    if layouts.len() <= 1 {
        let l = layouts.first().copied().unwrap_or(SetLayout {
            files: job.target.files,
            size: job.target.size,
        });
        let p = target::prepare(&plan.target, storage, &with(&l))?;
        return Ok(vec![(Some(l), p)].into_iter().chain(tree).collect());
    }
    if plan.target.kind != target::TargetKind::Directory {
        let shown: Vec<String> = layouts.iter().map(SetLayout::label).collect();
        return Err(VbError::input(format!(
            "runs use different file sets ({}); that needs a directory target, and {} is not one",
            shown.join(", "),
            job.target.path.display()
        )));
    }
    let named: Vec<(String, SetLayout)> =
        layouts.iter().map(|l| (job.subset_name(l), *l)).collect();
    // Room is looked at locally (lstat, statvfs); a back end that is not
    // local says what is free per set as it fills (`Dir::free_bytes`).
    if storage == Storage::Local {
        target::check_room_for_sets(
            &job.target.path,
            &named
                .iter()
                .map(|(n, l)| (n.as_str(), l.files, l.file_size()))
                .collect::<Vec<_>>(),
        )?;
    }
    let mut sets = Vec::new();
    for (name, l) in named {
        // Reached without following links: a planted files-N link is refused.
        let p = target::prepare_subset(&job.target.path, storage, &name, &with(&l))?;
        sets.push((Some(l), p));
    }
    sets.extend(tree);
    Ok(sets)
}

/// The back end the plan's target is reached through: what the target and
/// its runs' engine rows say (`io::backend::storage_for`).
pub(crate) fn storage(plan: &Plan) -> Storage {
    let row = plan
        .runs
        .iter()
        .find(|r| !r.engine.caps().diskless)
        .map_or(crate::spec::EngineKind::for_metadata().row(), |r| {
            r.engine.row()
        });
    crate::io::backend::storage_for(&plan.job.target.path, row)
}

/// What the plan asks of its target's storage that it may not offer,
/// refused before anything is opened (`io::backend::refusals`).
fn check_storage(plan: &Plan, storage: Storage) -> Result<()> {
    let ask = crate::io::backend::Ask {
        named_target: plan.target.kind != target::TargetKind::Directory,
        flush: plan
            .runs
            .iter()
            .any(|r| r.spec.shape.fsync_every.is_some() || r.spec.shape.end_fsync),
        trace_barriers: plan.runs.iter().any(|r| {
            r.spec
                .replay
                .as_ref()
                .is_some_and(|t| t.summary.flushes + t.summary.discards > 0)
        }),
        drop_caches: plan
            .runs
            .iter()
            .any(|r| r.spec.meta.as_ref().is_some_and(|m| m.drop_caches)),
        tree: plan.runs.iter().any(|r| r.spec.meta.is_some()),
    };
    crate::io::backend::refusals(crate::io::backend::caps(storage), &ask)
}

fn check_alignment(plan: &Plan, prepared: &Prepared) -> Result<()> {
    if !plan.job.target.direct {
        return Ok(());
    }
    for r in &plan.runs {
        for b in r.spec.all_bs() {
            if b % prepared.align != 0 {
                return Err(VbError::input(format!(
                    "--bs {} is not a multiple of {} bytes, the direct-I/O alignment of {}; \
                     use a multiple of it, or --buffered",
                    b,
                    prepared.align,
                    plan.job.target.path.display()
                )));
            }
        }
    }
    Ok(())
}

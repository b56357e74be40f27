//! What the executor does differently for metadata runs, kept here so the
//! run loop itself stays one: prepare the tree (a `Prepared` like a file
//! set's), drop caches before a run that asks, and gather the workers'
//! per-operation statistics into the run's result.

use crate::error::Result;
use crate::io::backend::Storage;
use crate::io::meta::{self, MetaOpStats};
use crate::io::target::Prepared;
use crate::io::workload::Layout;
use crate::plan::{Plan, PlannedRun};
use crate::result::meta::MetaOpResult;
use crate::result::{PhaseName, RunResult};
use crate::spec::JobSpec;
use crate::spec::layout::SetLayout;
use crate::spec::meta::MetaOp;

/// What a prepared set is found under: a file set by its layout, the
/// metadata runs' tree by `TREE_KEY`.
pub(crate) type SetKey = Option<SetLayout>;
pub(crate) const TREE_KEY: SetKey = None;

/// The set key a run uses: its file set's layout, or the tree's key.
pub(crate) fn set_key(run: &PlannedRun, job: &JobSpec) -> SetKey {
    if run.spec.meta.is_some() {
        TREE_KEY
    } else {
        Some(job.layout_of(&run.spec))
    }
}

/// The prepared set `run` works on.
pub(crate) fn find_set<'s>(
    sets: &'s [(SetKey, Prepared)],
    run: &PlannedRun,
    job: &JobSpec,
) -> Result<&'s Prepared> {
    let key = set_key(run, job);
    sets.iter()
        .find(|(k, _)| *k == key)
        .map(|(_, p)| p)
        .ok_or_else(|| {
            crate::error::VbError::run(format!(
                "run '{}': no {} was prepared",
                run.spec.name,
                key.map_or("tree".to_string(), |l| format!("file set of {}", l.label()))
            ))
        })
}

/// Prepares the tree the plan's metadata runs work on, if it has any.
pub(crate) fn prepare_tree(plan: &Plan, storage: Storage) -> Result<Option<Prepared>> {
    let Some(first) = plan.runs.iter().find_map(|r| r.spec.meta.as_ref()) else {
        return Ok(None);
    };
    // A tree whose leaves a phase creates with mkdir starts without them.
    let first_op = first.ops.first().map(|o| o.op);
    let make_leaves = !(first.whole_tree && first_op == Some(MetaOp::Mkdir));
    // Checked when planning; the file system may have changed since.
    if storage == Storage::Local {
        crate::io::target::refuse_kernel_fs(&plan.job.target.path)?;
    }
    let ready = meta::prepare_on(storage, &plan.job.target.path, first, make_leaves)?;
    Ok(Some(Prepared::tree(
        Layout {
            nfiles: u32::try_from(first.total_files()).unwrap_or(u32::MAX),
            file_size: first.mean_file_size().round() as u64,
        },
        ready.notes,
        ready.lock,
        ready.root,
    )))
}

/// Before a metadata run: drop the client's caches if it asks.
pub(crate) fn before_run(plan: &Plan, run: &PlannedRun) -> Result<()> {
    match &run.spec.meta {
        Some(m) if m.drop_caches => meta::drop_caches(&plan.job.target.path),
        _ => Ok(()),
    }
}

/// The worker for `w` of `n` on a metadata run, or None for block I/O;
/// it opens the tree where the prepared tree says.
pub(crate) fn worker(
    plan: &Plan,
    run: &PlannedRun,
    prepared: &Prepared,
    w: u32,
    n: u32,
) -> Option<meta::MetaWorker> {
    let m = run.spec.meta.as_ref()?;
    let tree = prepared.tree.clone()?;
    let root = crate::io::backend::shown(&plan.job.target.path);
    Some(meta::MetaWorker::new(root, tree, m, plan.job.seed, w, n))
}

/// Adds one worker's per-operation statistics to the run's.
pub(crate) fn merge(acc: &mut Vec<MetaOpStats>, more: Vec<MetaOpStats>) {
    for s in more {
        match acc.iter_mut().find(|a| a.op == s.op) {
            Some(a) => {
                a.warmup.merge(&s.warmup);
                a.measure.merge(&s.measure);
                a.kept += s.kept;
            }
            None => acc.push(s),
        }
    }
}

/// The run's per-operation results, over the same phase times as its totals.
pub(crate) fn results(mut acc: Vec<MetaOpStats>, run: &RunResult) -> Vec<MetaOpResult> {
    let secs = |name: PhaseName| {
        run.phases
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.duration_s)
    };
    let measured = secs(PhaseName::Measure).unwrap_or(0.0);
    let warm = secs(PhaseName::Warmup);
    acc.sort_by_key(|s| s.op.index());
    acc.iter()
        .map(|s| {
            let mut r = MetaOpResult::new(s.op, &s.measure, measured, warm.map(|w| (&s.warmup, w)));
            r.kept = s.kept;
            r
        })
        .collect()
}

/// A metadata run's per-operation figures for one interval's deltas; none
/// for block I/O.
pub(crate) fn interval_ops(
    run: &PlannedRun,
    d: &crate::stats::CounterSnapshot,
    secs: f64,
) -> Vec<crate::result::meta::IntervalMetaOp> {
    let Some(m) = &run.spec.meta else {
        return Vec::new();
    };
    let which: Vec<MetaOp> = m.ops.iter().map(|o| o.op).collect();
    crate::result::meta::interval_ops(&which, &d.meta_ops, &d.meta_lat_ns, secs)
}

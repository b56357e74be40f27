//! The executor's part of --compress, --dedup and --verify: one data plan
//! (and, with --verify, one block map and journal) per prepared file set,
//! shared by every run on it; and each run's mismatches in its result.

use std::sync::Arc;

use crate::error::Result;
use crate::io::target::{Prepared, SetIdentity, TargetKind};
use crate::io::verify::{self, DataPlan, DataReport, map};
use crate::plan::Plan;

/// Gives a prepared set its data plan: every write takes its body from the
/// plan's pool at a position of its own, so even default data does not
/// repeat from block to block (a reused buffer would: 4 KiB writes from one
/// buffer compress 2:1 in 64 KiB chunks).
pub(super) fn attach(plan: &Plan, p: &mut Prepared) -> Result<()> {
    let spec = &plan.job.target.data;
    let map = if spec.verify {
        let init = if p.filled_now {
            0
        } else if p.kind == TargetKind::Directory {
            map::FORMED
        } else {
            map::UNKNOWN
        };
        let mut notes = Vec::new();
        // Every prepared target has one; a blank one matches no journal.
        let now = p.identity.clone().unwrap_or(SetIdentity {
            id: String::new(),
            ino: 0,
            dev: 0,
        });
        let owner = verify::journal::Owner {
            now: &now,
            before: p.identity_before.as_ref(),
            refilled: p.filled_now,
        };
        let m = verify::open_map(
            spec,
            p.layout,
            block_unit(plan),
            init,
            owner,
            p.paths.clone(),
            &mut notes,
        )?;
        p.notes.extend(notes);
        Some(m)
    } else {
        None
    };
    p.data = Some(Arc::new(DataPlan::sized(
        spec,
        p.layout,
        map,
        plan.needs_write(),
    )));
    Ok(())
}

/// The map's block: what divides every block size of every run.
pub(super) fn block_unit(plan: &Plan) -> u64 {
    verify::job_block_unit(&plan.job)
}

/// The run's error when its reads found wrong data: the count and the
/// first mismatches, one a line.
pub(super) fn failure(report: &DataReport, max: u64) -> Option<String> {
    if report.errors == 0 {
        return None;
    }
    let stopped = if report.errors >= max {
        format!(" (stopped at --max-data-errors {max})")
    } else {
        String::new()
    };
    Some(format!(
        "{} data error(s): reads returned what was not written{stopped}:\n  {}",
        report.errors,
        report.samples.join("\n  ")
    ))
}

/// Has a failing journal (truncated, deleted, an I/O error on its file)
/// end the run at once, as a failing worker does: `control.failed`.
pub(super) fn watch_journal(
    p: &Prepared,
    control: &Arc<crate::io::worker::Control>,
) -> Option<Arc<verify::journal::Journal>> {
    let j = p.data.as_ref()?.journal()?;
    let c = control.clone();
    j.on_failure(Some(Box::new(move || {
        c.failed.store(true, std::sync::atomic::Ordering::Relaxed)
    })));
    Some(j)
}

/// After a run's workers stopped: its journal synced, or why it cannot be
/// (then the run fails, its results kept).
pub(super) fn journal_after_run(j: Option<Arc<verify::journal::Journal>>) -> Option<String> {
    let j = j?;
    j.on_failure(None);
    j.flush().err().map(|e| e.message)
}

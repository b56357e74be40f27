//! The result so far, kept where a stop can reach it when the job itself
//! cannot wind down in time (I/O threads blocked on slow or frozen storage,
//! a fill stuck in a write): whoever runs the job keeps it up to date, and
//! `take` hands it over, marked interrupted, to be written instead.
//!
//! One slot per process: signals are per process too, and one job runs at
//! a time in it.

use std::sync::{Mutex, MutexGuard};

use crate::result::{ResultDoc, RunResult};

struct Slot {
    /// The job's result with its finished runs.
    doc: Option<ResultDoc>,
    /// The run in progress as the collector saw it, once it was stopped.
    current: Option<RunResult>,
    /// Runs side by side (several targets): a single run's partial figures
    /// are not the job's, so only finished runs are kept.
    whole_runs_only: bool,
    /// What the job was doing, for the line that says what a stop kept.
    doing: String,
}

static SLOT: Mutex<Slot> = Mutex::new(Slot {
    doc: None,
    current: None,
    whole_runs_only: false,
    doing: String::new(),
});

fn slot() -> MutexGuard<'static, Slot> {
    // A panic elsewhere while holding it leaves a usable value: the last
    // one kept.
    SLOT.lock().unwrap_or_else(|p| p.into_inner())
}

/// Keeps `doc` (its finished runs) as the result so far; the run in
/// progress starts afresh.
pub(crate) fn keep(doc: &ResultDoc, whole_runs_only: bool) {
    let mut s = slot();
    s.doc = Some(doc.clone());
    s.current = None;
    s.whole_runs_only = whole_runs_only;
}

/// Keeps the run in progress as far as its collector saw it.
pub(crate) fn keep_run(run: RunResult) {
    let mut s = slot();
    if !s.whole_runs_only {
        s.current = Some(run);
    }
}

/// Says what the job is doing now ("filling the file set", "warming up
/// run 'x'"), for the line printed when a stop keeps the result.
pub(crate) fn doing(what: impl Into<String>) {
    slot().doing = what.into();
}

/// What the job was doing when last told, if anything.
pub(crate) fn what_it_was_doing() -> String {
    slot().doing.clone()
}

/// The result so far, marked interrupted, with the run in progress (if its
/// collector saw it stop) and a note saying where the job stood. None
/// before the job began.
pub(crate) fn take() -> Option<ResultDoc> {
    let mut s = slot();
    let mut doc = s.doc.take()?;
    if let Some(run) = s.current.take() {
        doc.notes.push(format!(
            "run '{}': its I/O threads were still blocked in I/O when the result had to be \
             written; its figures come from its interval record (percentiles from the \
             per-interval histograms)",
            run.name
        ));
        doc.runs.push(run);
    } else if !s.doing.is_empty() {
        doc.notes.push(format!(
            "stopped while {}; nothing more was measured",
            s.doing
        ));
    }
    doc.interrupted = true;
    Some(doc)
}

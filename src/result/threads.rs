//! Each I/O thread's own figures (`runs[].threads[]`), as diskspd's `-L`
//! prints them per thread and target: operations, bytes, rates and latency
//! from the thread's own histogram, taken before the workers' statistics
//! are merged. The run's totals are their exact sum (ops and bytes add);
//! past `MAX_KEPT_THREADS` a run keeps the first ones and counts the rest,
//! so a result of thousands of hosts stays within its readers' bound.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};

use super::{OpTotals, RunResult};
use crate::stats::OpStats;
pub(crate) use crate::units::bounds::MAX_KEPT_THREADS;

/// One I/O thread's measured phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadRun {
    /// The host that ran it; absent in a local run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Index of its target in the run's (or its host's) target list; absent
    /// when the run had one target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<u32>,
    /// The thread's number among its target's I/O threads, from 0.
    pub thread: u32,
    pub read: OpTotals,
    pub write: OpTotals,
}

impl ThreadRun {
    /// Thread `thread`'s figures over a measured phase of `seconds`.
    pub(crate) fn of(thread: u32, read: &OpStats, write: &OpStats, seconds: f64) -> Self {
        Self {
            host: None,
            target: None,
            thread,
            read: OpTotals::from_stats(read, seconds),
            write: OpTotals::from_stats(write, seconds),
        }
    }
}

/// The threads of several parts of one run (targets, hosts) in order, the
/// first `MAX_KEPT_THREADS` kept, with how many were left out.
pub(crate) fn concat(parts: &[&RunResult]) -> (Vec<ThreadRun>, u32) {
    let mut kept = Vec::new();
    let mut left_out = 0u32;
    for p in parts {
        left_out = left_out.saturating_add(p.threads_left_out);
        for t in &p.threads {
            if kept.len() < MAX_KEPT_THREADS {
                kept.push(t.clone());
            } else {
                left_out = left_out.saturating_add(1);
            }
        }
    }
    (kept, left_out)
}

/// Reads' and writes' operations and bytes summed over the threads, as
/// `[(read ops, read bytes), (write ops, write bytes)]`; None on overflow
/// (a hostile file).
pub(crate) fn sums(threads: &[ThreadRun]) -> Option<[(u64, u64); 2]> {
    let mut s = [(0u64, 0u64); 2];
    for t in threads {
        for (acc, op) in s.iter_mut().zip([&t.read, &t.write]) {
            acc.0 = acc.0.checked_add(op.ops)?;
            acc.1 = acc.1.checked_add(op.bytes)?;
        }
    }
    Some(s)
}

/// Labels a part's threads with the host and target that ran them.
pub(crate) fn label(threads: &mut [ThreadRun], host: Option<&str>, target: Option<u32>) {
    for t in threads {
        if let Some(h) = host {
            t.host = Some(h.to_string());
        }
        if target.is_some() {
            t.target = target;
        }
    }
}

/// The per-thread rows of a result read back: within their bound, each
/// sound by `each` (the check of any totals: rates, latency, bytes per
/// operation), and adding up to the totals exactly when none was left out
/// (at most them otherwise).
pub(crate) fn check(
    r: &RunResult,
    each: impl Fn(&str, &OpTotals) -> Result<(), String>,
) -> Result<(), String> {
    if r.threads.len() > MAX_KEPT_THREADS {
        return Err(format!("{} per-thread rows", r.threads.len()));
    }
    for t in &r.threads {
        each(&format!("thread {} read", t.thread), &t.read)?;
        each(&format!("thread {} write", t.thread), &t.write)?;
    }
    let Some([rd, wr]) = sums(&r.threads) else {
        return Err("per-thread figures overflow".into());
    };
    let whole = r.threads_left_out == 0 && !r.threads.is_empty();
    for (name, (ops, bytes), t) in [("read", rd, &r.totals.read), ("write", wr, &r.totals.write)] {
        if (whole && (ops, bytes) != (t.ops, t.bytes)) || ops > t.ops || bytes > t.bytes {
            return Err(format!(
                "the threads' {name}s ({ops} ops, {bytes} bytes) are not the run's ({}, {})",
                t.ops, t.bytes
            ));
        }
    }
    Ok(())
}

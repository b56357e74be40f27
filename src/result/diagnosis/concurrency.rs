//! Single-thread latency and the concurrency Little's law needs: the
//! papers' thread-count reasoning ("at 0.5 ms per I/O one thread does
//! 2,000 IOPS; 20,000 IOPS need at least 10 in flight").

use super::{Confidence, Finding, Kind, measured, num, paced};
use crate::result::{ResultDoc, RunResult};

const MIB: f64 = 1024.0 * 1024.0;
/// A run of the same shape counts as the observed maximum only when it did
/// clearly more than the single-thread run; otherwise concurrency did not
/// help and there is nothing to size.
const BETTER: f64 = 1.5;

/// The workload without its name and concurrency: runs with the same key
/// differ only in threads and iodepth.
pub(super) fn shape_without_concurrency(r: &RunResult) -> String {
    let mut w = r.workload.clone();
    w.name.clear();
    w.discard = false;
    w.threads = 0;
    w.iodepth = 0;
    serde_json::to_string(&w).unwrap_or_default()
}

fn mean_bs(r: &RunResult) -> f64 {
    let ops = (r.totals.read.ops + r.totals.write.ops) as f64;
    let bytes = (r.totals.read.bytes + r.totals.write.bytes) as f64;
    if ops > 0.0 { bytes / ops } else { 0.0 }
}

/// For each closed-loop run with one I/O in flight: what concurrency the
/// target needs at its latency. The target is the --expect limit when one
/// was given, else the best run of the same workload at any concurrency.
pub(super) fn single_thread_concurrency(doc: &ResultDoc) -> Vec<Finding> {
    let runs: Vec<&RunResult> = measured(doc)
        .filter(|r| !paced(r) && r.meta_ops.is_empty())
        .collect();
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in runs.iter().copied() {
        if r.workload.threads.saturating_mul(r.workload.iodepth) != 1 {
            continue;
        }
        let key = shape_without_concurrency(r);
        if !seen.insert(key.clone()) {
            continue;
        }
        let lat = r.mean_latency_us();
        let iops = r.total_iops();
        if lat <= 0.0 || iops <= 0.0 {
            continue;
        }
        let expected = doc.expect.as_ref().and_then(|e| {
            if let Some(i) = e.iops.filter(|i| *i > 0.0) {
                return Some((i, format!("the expected {} IOPS", num(i))));
            }
            let bs = mean_bs(r);
            e.mib_s.filter(|m| *m > 0.0 && bs > 0.0).map(|m| {
                let i = m * MIB / bs;
                (
                    i,
                    format!(
                        "the expected {} MiB/s ({} IOPS at this size)",
                        num(m),
                        num(i)
                    ),
                )
            })
        });
        let best = runs
            .iter()
            .copied()
            .filter(|o| shape_without_concurrency(o) == key)
            .max_by(|a, b| a.total_iops().total_cmp(&b.total_iops()))
            .filter(|b| b.total_iops() > BETTER * iops);
        let (sure, target, what) = match (expected, best) {
            (Some((t, what)), _) => (Confidence::Medium, t, what),
            (None, Some(b)) => (
                Confidence::Low,
                b.total_iops(),
                format!(
                    "the best run's {} IOPS ({}, {} in flight)",
                    num(b.total_iops()),
                    b.name,
                    b.littles_law.concurrency
                ),
            ),
            (None, None) => continue,
        };
        // Latency is measured, not exact: a need a hair above a whole
        // number of I/Os (10.004) is that number.
        let needed = (target * lat / 1e6 - 0.05).ceil().max(1.0);
        let message = format!(
            "single-thread latency: run {} kept one I/O in flight at a mean {} µs, so {} IOPS; \
             by Little's law {what} need at least {} I/Os in flight (threads x iodepth, over \
             every client). Latency grows under load, so take this as the least.",
            r.name,
            num(lat),
            num(iops),
            num(needed)
        );
        out.push(
            Finding::new(Kind::SingleThreadLatency, sure, message)
                .figure("latency_us", lat)
                .figure("single_iops", iops)
                .figure("target_iops", target)
                .figure("concurrency_needed", needed)
                .runs([r]),
        );
    }
    out
}

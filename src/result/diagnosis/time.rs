//! Where time goes besides the storage: Little's law on each run, and the
//! first of identical runs against its repeat.

use super::{Confidence, Finding, Kind, measured, num, paced, shape_key, usable};
use crate::result::ResultDoc;

/// IOPS x mean latency below this share of the I/Os kept in flight means
/// the I/Os were not in flight all the time.
const GAP: f64 = 0.75;
/// A metadata operation faster than this was served by the client's caches
/// (a stat from the dentry cache takes about 1 µs): the walk between
/// operations (choosing, naming, building the path) then takes as long as
/// the operation itself, and Little's law on the operation's latency falls
/// short by design (seen: 8 threads, 912,000 stats/s, IOPS x latency 1.4).
const META_CACHED_US: f64 = 100.0;
/// A first run getting slower by more than this over its time was not
/// warming up: something else got in the way (another load on the client).
const SLOWING: f64 = 1.10;
/// A first run this much slower than its repeat is a warm-up effect.
const SLOWER: f64 = 0.80;

/// A run that pauses between I/Os (--think-time) or stops them for syncs
/// (--fsync-every) keeps fewer than its concurrency in flight because it
/// was asked to: the gap Little's law shows is the workload, not the client.
pub(super) fn pauses(r: &crate::result::RunResult) -> bool {
    r.workload.shape.think_time_s.is_some_and(|t| t > 0.0) || r.workload.shape.fsync_every.is_some()
}

/// Little's law: a closed-loop run keeping N I/Os in flight must show
/// IOPS x latency = N. Less means time spent outside the I/O (the client's
/// CPU, scheduling, the engine), which the measured latency does not show.
pub(super) fn littles_law_gap(doc: &ResultDoc) -> Vec<Finding> {
    let gaps: Vec<(&crate::result::RunResult, f64)> = measured(doc)
        .filter(|r| !paced(r) && !pauses(r) && r.littles_law.concurrency > 0)
        .filter(|r| r.meta_ops.is_empty() || r.mean_latency_us() >= META_CACHED_US)
        .map(|r| {
            let ratio = r.littles_law.iops_x_latency / r.littles_law.concurrency as f64;
            (r, ratio)
        })
        .filter(|(_, ratio)| *ratio < GAP)
        .collect();
    let Some(&(worst, ratio)) = gaps.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return Vec::new();
    };
    let message = format!(
        "Little's-law gap: run {} kept {} I/Os in flight but IOPS x latency = {} ({:.0}%){}. \
         The rest of the time went outside the I/O (the client's CPU, scheduling, the \
         engine): the client, not only the storage, is part of these figures. Check the CPU \
         column; try fewer threads with more iodepth, or more clients.",
        worst.name,
        worst.littles_law.concurrency,
        num(worst.littles_law.iops_x_latency),
        ratio * 100.0,
        match gaps.len() {
            1 => String::new(),
            n => format!(" (and {} more runs below {:.0}%)", n - 1, GAP * 100.0),
        }
    );
    let sure = if ratio < 0.5 {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    vec![
        Finding::new(Kind::LittlesLawGap, sure, message)
            .figure("concurrency", worst.littles_law.concurrency as f64)
            .figure("iops_x_latency", worst.littles_law.iops_x_latency)
            .figure("percent", ratio * 100.0)
            .runs(gaps.iter().map(|(r, _)| *r)),
    ]
}

/// The papers' advice: the first test is a warm-up; discard it and repeat.
/// Two runs of the same workload where the first is clearly slower show
/// why (caches, tiering, thin provisioning being allocated).
pub(super) fn warm_up(doc: &ResultDoc) -> Vec<Finding> {
    let runs: Vec<_> = doc.runs.iter().filter(|r| usable(r) && !paced(r)).collect();
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, first) in runs.iter().enumerate() {
        let key = shape_key(first, false);
        if !seen.insert(key.clone()) {
            continue;
        }
        let Some(repeat) = runs[i + 1..].iter().find(|r| shape_key(r, false) == key) else {
            continue;
        };
        let (a, b) = (first.total_iops(), repeat.total_iops());
        if b <= 0.0 || a >= SLOWER * b {
            continue;
        }
        if slowing(first) {
            continue;
        }
        let slower = (1.0 - a / b) * 100.0;
        let cache = if first.workload.buffered && first.workload.read_pct > 0 {
            " The runs go through the page cache: the repeat read from memory what the first \
             brought in, so it measures the client, not the storage; use direct I/O (the \
             default) or a working set larger than the client's memory."
        } else {
            ""
        };
        let handled = if first.workload.discard {
            " It was discarded, as the papers advise."
        } else {
            " Discard the first run (suites do with their warm-up run) or lengthen --warmup."
        };
        let message = format!(
            "warm-up effect: the first run ({}, {} IOPS) was {slower:.0}% slower than its repeat \
             ({}, {} IOPS): caches, tiering or blocks allocated on first write.{handled}{cache}",
            first.name,
            num(a),
            repeat.name,
            num(b)
        );
        let sure = if slower >= 40.0 {
            Confidence::High
        } else {
            Confidence::Medium
        };
        out.push(
            Finding::new(Kind::WarmUp, sure, message)
                .figure("first_iops", a)
                .figure("repeat_iops", b)
                .figure("slower_pct", slower)
                .runs([*first, *repeat]),
        );
    }
    out
}

/// Whether a run's IOPS fell over its time (warm-up intervals included):
/// its first half faster than its second by more than SLOWING. A warm-up
/// starts slow; a run that starts fast and falls met something else.
fn slowing(r: &crate::result::RunResult) -> bool {
    let iops: Vec<f64> = r
        .intervals
        .iter()
        .map(|i| i.read.iops + i.write.iops)
        .collect();
    if iops.len() < 2 {
        return false;
    }
    let half = iops.len() / 2;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    mean(&iops[..half]) > SLOWING * mean(&iops[iops.len() - half..])
}

//! Whether a run's level is a ceiling: evidence from the other runs of the
//! result (or the expectation) that more would not come. A busy device by
//! itself is not that evidence: a device serving requests in parallel (a
//! loop device, virtio, NVMe, a cloud disk below its cap) is "100% busy"
//! with the whole queue in it whenever a benchmark drives it, healthy or
//! not (iostat's own manual says %util means nothing for such devices).

use super::concurrency::shape_without_concurrency;
use super::series::{FLAT, block_size_series};
use super::{measured, num, paced};
use crate::result::{ResultDoc, RunResult};
use crate::stats::mean_spread;

/// Twice (or more) the I/Os in flight gave less than this factor more
/// IOPS: the run sits at a ceiling. Not 1.0: a saturated device still
/// gains a little from a fuller queue (a throttle lets ~5% wander).
const GAINED: f64 = 1.20;
/// Near an expected limit, as `limits::expected` counts it.
const NEAR: (f64, f64) = (0.90, 1.10);

/// Why `r`'s IOPS are a ceiling, as a clause ("8 in flight gave 2% more
/// than 4 (run x)"), or None when nothing in the result says so.
pub(super) fn ceiling(doc: &ResultDoc, r: &RunResult) -> Option<String> {
    let runs: Vec<&RunResult> = measured(doc).filter(|o| !paced(o)).collect();
    let conc = r.littles_law.concurrency;
    let key = shape_without_concurrency(r);
    let fewer = runs
        .iter()
        .copied()
        .filter(|o| o.littles_law.concurrency > 0 && 2 * o.littles_law.concurrency <= conc)
        .filter(|o| shape_without_concurrency(o) == key)
        .max_by(|a, b| a.total_iops().total_cmp(&b.total_iops()));
    if let Some(o) = fewer.filter(|o| r.total_iops() < GAINED * o.total_iops()) {
        return Some(format!(
            "{} in flight gave {:+.0}% IOPS over {} (run {}, {} IOPS)",
            conc,
            (r.total_iops() / o.total_iops() - 1.0) * 100.0,
            o.littles_law.concurrency,
            o.name,
            num(o.total_iops())
        ));
    }
    for g in block_size_series(doc) {
        if !g.iter().any(|o| std::ptr::eq(*o, r)) {
            continue;
        }
        for (what, vals) in [
            ("IOPS", g.iter().map(|o| o.total_iops()).collect::<Vec<_>>()),
            ("MiB/s", g.iter().map(|o| o.total_mib_s()).collect()),
        ] {
            if mean_spread(&vals).is_some_and(|(_, spread)| spread <= FLAT) {
                return Some(format!("{what} flat across block sizes"));
            }
        }
    }
    let e = doc.expect.as_ref()?;
    for (limit, v, unit) in [
        (e.iops, r.total_iops(), "IOPS"),
        (e.mib_s, r.total_mib_s(), "MiB/s"),
    ] {
        if let Some(l) = limit.filter(|l| *l > 0.0) {
            if (NEAR.0..=NEAR.1).contains(&(v / l)) {
                return Some(format!(
                    "at {:.0}% of the expected {} {unit}",
                    v / l * 100.0,
                    num(l)
                ));
            }
        }
    }
    None
}

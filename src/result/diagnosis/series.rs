//! The runs that say where the storage stops: closed-loop runs not served
//! by the client's memory, and those of them that differ only in block
//! size, grouped into series. What the limit finders, the ceiling test and
//! the network finder read; a leaf.

use std::collections::BTreeMap;

use super::{measured, paced, shape_key};
use crate::result::{ResultDoc, RunResult};

/// Runs whose IOPS (or MiB/s) spread at most this much around their mean
/// are "flat". Not tighter: a kernel throttle measured over a few seconds
/// wanders about 5% (seen at 5.1% on a 4 MiB/s cgroup cap, 2 s runs), while
/// an uncapped device moves its IOPS or MiB/s by the block-size ratio
/// (at least 4x, see MIN_BS_SPAN), far outside 10%.
pub(super) const FLAT: f64 = 0.10;
/// Block sizes must span at least this factor for flatness to mean a cap:
/// between 4 and 8 KiB a latency-bound device gives nearly equal IOPS too.
pub(super) const MIN_BS_SPAN: f64 = 4.0;

/// Open-loop runs are held below capacity on purpose; they say nothing
/// about where the storage stops.
pub(super) fn closed_loop(doc: &ResultDoc) -> Vec<&RunResult> {
    // A memory target's level is RAM's; memory_target says so, once.
    if super::memory::is_memory(doc) {
        return Vec::new();
    }
    measured(doc)
        .filter(|r| !paced(r) && !from_memory(doc, r))
        .collect()
}

/// A buffered run whose devices and network interfaces moved less than
/// half its MiB/s (or that has neither below it: tmpfs) was served by the
/// page cache: its level
/// is the client's memory and CPU, not a cap of the storage (seen: page
/// cache on tmpfs beside a compiler, 1,661 / 1,554 / 1,622 MiB/s at 4, 8 and
/// 64 KiB). Without counters nothing is known and the run is kept. A run is
/// buffered by its own `direct = false` or by the whole job's (`--buffered`:
/// the target's `direct`), which the run's workload does not repeat.
fn from_memory(doc: &ResultDoc, r: &RunResult) -> bool {
    let Some(s) = r.counters.as_ref().and_then(|c| c.summary.as_ref()) else {
        return false;
    };
    // What crossed a network interface came from beyond the client too
    // (sshfs, NFS, SMB: no block device, the data on the wire).
    let device = s.devices.iter().map(|d| d.mib_s()).fold(0.0, f64::max);
    let wire = s
        .net
        .iter()
        .map(|n| n.rx_mib_s + n.tx_mib_s)
        .fold(0.0, f64::max);
    (r.workload.buffered || !doc.spec.target.direct) && device.max(wire) < 0.5 * r.total_mib_s()
}

/// Runs of one shape but for a single block size each, grouped, with the
/// block sizes spanning enough to tell a cap from a latency-bound device.
pub(super) fn block_size_series(doc: &ResultDoc) -> Vec<Vec<&RunResult>> {
    let mut groups: BTreeMap<String, Vec<&RunResult>> = BTreeMap::new();
    for r in closed_loop(doc) {
        if r.workload.single_bs().is_some() {
            groups.entry(shape_key(r, true)).or_default().push(r);
        }
    }
    groups
        .into_values()
        .filter_map(|mut g| {
            g.sort_by_key(|r| r.workload.bs[0].bytes);
            g.dedup_by_key(|r| r.workload.bs[0].bytes);
            let (lo, hi) = (
                g.first()?.workload.bs[0].bytes,
                g.last()?.workload.bs[0].bytes,
            );
            (g.len() >= 2 && hi as f64 >= MIN_BS_SPAN * lo as f64).then_some(g)
        })
        .collect()
}

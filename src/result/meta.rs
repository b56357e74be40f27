//! Per-operation figures of a metadata run (create, stat, read...): an
//! optional part of a run, absent from block I/O runs, so results written
//! before it existed still load.

use serde::{Deserialize, Serialize};

use crate::result::{OpTotals, RunResult};
use crate::spec::meta::MetaOp;
use crate::stats::{BucketedHistogram, OpStats};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetaOpResult {
    pub(crate) op: MetaOp,
    /// The measured phase; `iops` is operations per second, `bytes` the
    /// data the operation moved (create, read, write, append).
    pub(crate) totals: OpTotals,
    /// The warm-up, apart, when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) warmup: Option<OpTotals>,
    pub(crate) histogram: BucketedHistogram,
    /// Files a create phase found complete and kept (`--keep-complete`,
    /// vdbench's format=restart); its `totals` count the files it made.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) kept: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl MetaOpResult {
    pub(crate) fn new(
        op: MetaOp,
        meas: &OpStats,
        meas_s: f64,
        warm: Option<(&OpStats, f64)>,
    ) -> Self {
        Self {
            op,
            totals: OpTotals::from_stats(meas, meas_s),
            warmup: warm.map(|(s, secs)| OpTotals::from_stats(s, secs)),
            histogram: BucketedHistogram::from_histogram(&meas.hist),
            kept: 0,
        }
    }
}

impl RunResult {
    /// The rows a run is shown with, named as summary.csv's `op` column: a
    /// metadata run's operations, else its read and write totals.
    pub(crate) fn op_rows(&self) -> Vec<(&'static str, &OpTotals)> {
        if !self.meta_ops.is_empty() {
            return self
                .meta_ops
                .iter()
                .map(|o| (o.op.name(), &o.totals))
                .collect();
        }
        self.ops()
            .into_iter()
            .map(|(op, t)| (op.name(), t))
            .collect()
    }
}

/// One operation's figures over one interval of a metadata run, so a mix
/// shows each operation's rate over time, not only the look/change classes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IntervalMetaOp {
    pub(crate) op: MetaOp,
    /// Operations per second over the interval.
    pub(crate) iops: f64,
    pub(crate) lat_us_mean: f64,
}

/// From one interval's deltas (cumulative counters indexed by
/// `MetaOp::index`), one entry per operation the run does.
pub(crate) fn interval_ops(
    which: &[MetaOp],
    ops: &[u64; crate::stats::META_OPS],
    lat_ns: &[u64; crate::stats::META_OPS],
    secs: f64,
) -> Vec<IntervalMetaOp> {
    if secs <= 0.0 {
        return Vec::new();
    }
    which
        .iter()
        .filter_map(|&op| {
            let (n, l) = (*ops.get(op.index())?, *lat_ns.get(op.index())?);
            Some(IntervalMetaOp {
                op,
                iops: n as f64 / secs,
                lat_us_mean: if n > 0 {
                    l as f64 / n as f64 / 1000.0
                } else {
                    0.0
                },
            })
        })
        .collect()
}

/// Adds per-operation entries of parts, each `(entries, seconds, rate
/// weight)`: operations counted are rate x seconds; the merged rate is
/// the operations over `secs` (one span of time) or the parts' rates
/// added (`secs` None: the same interval on several hosts); mean latency
/// is weighted by operations.
pub(crate) fn merge_interval_ops<'a>(
    parts: impl Iterator<Item = (&'a [IntervalMetaOp], f64)>,
    secs: Option<f64>,
) -> Vec<IntervalMetaOp> {
    let mut out: Vec<(IntervalMetaOp, f64)> = Vec::new();
    for (entries, dur) in parts {
        for e in entries {
            let n = e.iops * dur;
            let i = match out.iter().position(|(o, _)| o.op == e.op) {
                Some(i) => i,
                None => {
                    out.push((
                        IntervalMetaOp {
                            op: e.op,
                            iops: 0.0,
                            lat_us_mean: 0.0,
                        },
                        0.0,
                    ));
                    out.len() - 1
                }
            };
            if let Some((o, ops)) = out.get_mut(i) {
                o.iops += if secs.is_some() { n } else { e.iops };
                o.lat_us_mean += e.lat_us_mean * n;
                *ops += n;
            }
        }
    }
    out.into_iter()
        .map(|(mut o, ops)| {
            if let Some(s) = secs {
                o.iops = if s > 0.0 { o.iops / s } else { 0.0 };
            }
            o.lat_us_mean = if ops > 0.0 { o.lat_us_mean / ops } else { 0.0 };
            o
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(op: MetaOp, iops: f64, lat: f64) -> IntervalMetaOp {
        IntervalMetaOp {
            op,
            iops,
            lat_us_mean: lat,
        }
    }

    #[test]
    fn interval_entries_follow_the_counters() {
        let mut ops = [0u64; crate::stats::META_OPS];
        let mut lat = [0u64; crate::stats::META_OPS];
        ops[MetaOp::Stat.index()] = 400;
        lat[MetaOp::Stat.index()] = 400 * 5_000;
        let v = interval_ops(&[MetaOp::Stat, MetaOp::Create], &ops, &lat, 0.5);
        assert_eq!(
            v,
            [e(MetaOp::Stat, 800.0, 5.0), e(MetaOp::Create, 0.0, 0.0)]
        );
    }

    #[test]
    fn merges_in_time_average_and_across_hosts_add() {
        let a = [e(MetaOp::Stat, 100.0, 10.0)];
        let b = [e(MetaOp::Stat, 300.0, 20.0), e(MetaOp::Read, 50.0, 40.0)];
        // 1 s then 1 s: 400 stats in 2 s; latency weighted 100:300.
        let t = merge_interval_ops([(&a[..], 1.0), (&b[..], 1.0)].into_iter(), Some(2.0));
        assert_eq!(t[0], e(MetaOp::Stat, 200.0, 17.5));
        assert_eq!(t[1], e(MetaOp::Read, 25.0, 40.0));
        // Two hosts in the same second: rates add.
        let h = merge_interval_ops([(&a[..], 1.0), (&b[..], 1.0)].into_iter(), None);
        assert_eq!(h[0], e(MetaOp::Stat, 400.0, 17.5));
        assert_eq!(h[1], e(MetaOp::Read, 50.0, 40.0));
    }
}

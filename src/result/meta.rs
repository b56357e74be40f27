//! Per-operation figures of a metadata run (create, stat, read...): an
//! optional part of a run, absent from block I/O runs, so results written
//! before it existed still load.

use serde::{Deserialize, Serialize};

use crate::result::{OpTotals, RunResult};
use crate::spec::meta::MetaOp;
use crate::stats::{BucketedHistogram, OpStats};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetaOpResult {
    pub op: MetaOp,
    /// The measured phase; `iops` is operations per second, `bytes` the
    /// data the operation moved (create, read, write, append).
    pub totals: OpTotals,
    /// The warm-up, apart, when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<OpTotals>,
    pub histogram: BucketedHistogram,
}

impl MetaOpResult {
    pub fn new(op: MetaOp, meas: &OpStats, meas_s: f64, warm: Option<(&OpStats, f64)>) -> Self {
        Self {
            op,
            totals: OpTotals::from_stats(meas, meas_s),
            warmup: warm.map(|(s, secs)| OpTotals::from_stats(s, secs)),
            histogram: BucketedHistogram::from_histogram(&meas.hist),
        }
    }
}

impl RunResult {
    /// The rows a run is shown with, named as summary.csv's `op` column: a
    /// metadata run's operations, else its read and write totals.
    pub fn op_rows(&self) -> Vec<(&'static str, &OpTotals)> {
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

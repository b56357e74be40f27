//! Each target's own figures in a run over several targets
//! (`runs[].targets[]`): the run's totals are the exact merge of these
//! targets' results; these keep what each one did, so a slow volume among
//! fast ones is seen rather than averaged away.

use serde::{Deserialize, Serialize};

use crate::result::{OpTotals, RunResult};
use crate::spec::TargetKind;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetRun {
    pub path: String,
    pub kind: TargetKind,
    /// I/O threads this target ran.
    pub io_threads: u32,
    pub read: TargetOp,
    pub write: TargetOp,
}

/// One operation type on one target over the measured phase; latencies
/// from that target's own merged histogram.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TargetOp {
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mib_s: f64,
    pub lat_us_mean: f64,
    pub lat_us_p99: f64,
}

impl TargetOp {
    fn of(t: &OpTotals) -> Self {
        Self {
            ops: t.ops,
            bytes: t.bytes,
            iops: t.iops,
            mib_s: t.mib_s,
            lat_us_mean: t.lat_us.mean,
            lat_us_p99: t.lat_us.p99,
        }
    }
}

impl TargetRun {
    pub fn of(path: &str, kind: TargetKind, r: &RunResult) -> Self {
        Self {
            path: path.to_string(),
            kind,
            io_threads: r.io_threads,
            read: TargetOp::of(&r.totals.read),
            write: TargetOp::of(&r.totals.write),
        }
    }

    pub fn iops(&self) -> f64 {
        self.read.iops + self.write.iops
    }
}

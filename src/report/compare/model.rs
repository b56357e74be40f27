//! What a comparison is made of: the matched runs, the figures compared
//! and their ratio. A leaf both `compare` and its metadata part use.

use super::super::Metric;
use crate::output::fmt::{micros, number};
use crate::result::{Op, RunResult};

/// One run of the first result and its counterpart in each result
/// (indices into `items(sources)`; `None` where missing).
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub name: String,
    pub items: Vec<Option<usize>>,
}

#[derive(Debug, Clone, Default)]
pub struct Comparison {
    pub matches: Vec<Match>,
    pub warnings: Vec<String>,
}

/// A figure compared for each run and operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compared {
    Iops,
    MibS,
    MeanLatency,
    P99Latency,
}

impl Compared {
    pub const ALL: [Compared; 4] = [
        Compared::Iops,
        Compared::MibS,
        Compared::MeanLatency,
        Compared::P99Latency,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Compared::Iops => "IOPS",
            Compared::MibS => "MiB/s",
            Compared::MeanLatency => "mean latency",
            Compared::P99Latency => "p99 latency",
        }
    }

    /// The headline figure the papers quote for a workload.
    pub(super) fn headline(m: Metric) -> Self {
        match m {
            Metric::Iops => Compared::Iops,
            Metric::MibS => Compared::MibS,
        }
    }

    /// The figure of one operation type of a run; None when the run does
    /// not do that operation.
    pub fn of(self, run: &RunResult, op: Op) -> Option<f64> {
        let t = run.does(op).then(|| run.totals.op(op))?;
        Some(match self {
            Compared::Iops => t.iops,
            Compared::MibS => t.mib_s,
            Compared::MeanLatency => t.lat_us.mean,
            Compared::P99Latency => t.lat_us.p99,
        })
    }

    pub(super) fn show(self, v: f64) -> String {
        match self {
            Compared::Iops | Compared::MibS => number(v),
            Compared::MeanLatency | Compared::P99Latency => micros(v),
        }
    }
}

/// "2.30x", or "-" without a base to divide by.
pub fn ratio(v: Option<f64>, base: Option<f64>) -> String {
    match (v, base) {
        (Some(v), Some(b)) if b > 0.0 => format!("{:.2}x", v / b),
        _ => "-".into(),
    }
}

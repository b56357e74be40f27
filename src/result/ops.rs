//! The operation types of a run and the one definition of every figure
//! shown over them. Every view (terminal, tables.md, summary.csv, the HTML
//! report, its charts) asks here, so a "p99" means the same number wherever
//! it is printed: for a mixed run, the percentile of the merged read+write
//! histogram, never an average or maximum of the per-op percentiles.

use super::{Histograms, IntervalOp, LatSummary, OpTotals, RunResult, Totals};
use crate::stats::{BucketedHistogram, percentile_ns};

/// An operation type. The JSON keeps its own field names (`read`, `write`);
/// this is how code names one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Read,
    Write,
}

impl Op {
    pub(crate) const ALL: [Op; 2] = [Op::Read, Op::Write];

    /// As in summary.csv's `op` column and the result's field names.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
        }
    }

    /// As a row heading in the papers' mix tables.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Op::Read => "Read",
            Op::Write => "Write",
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Totals {
    pub(crate) fn op(&self, op: Op) -> &OpTotals {
        match op {
            Op::Read => &self.read,
            Op::Write => &self.write,
        }
    }
}

impl Histograms {
    pub(crate) fn op(&self, op: Op) -> &BucketedHistogram {
        match op {
            Op::Read => &self.read,
            Op::Write => &self.write,
        }
    }
}

impl super::Interval {
    pub(crate) fn op(&self, op: Op) -> &IntervalOp {
        match op {
            Op::Read => &self.read,
            Op::Write => &self.write,
        }
    }
}

impl RunResult {
    /// Whether the workload does this operation (a 100% read run does no
    /// writes, whatever its write totals hold).
    pub(crate) fn does(&self, op: Op) -> bool {
        match op {
            Op::Read => self.workload.read_pct > 0,
            Op::Write => self.workload.read_pct < 100,
        }
    }

    /// The operation types the run did, with their totals, reads first.
    pub fn ops(&self) -> Vec<(Op, &OpTotals)> {
        Op::ALL
            .into_iter()
            .filter(|&op| self.does(op))
            .map(|op| (op, self.totals.op(op)))
            .collect()
    }

    /// Latency over reads and writes together, in µs: the exact mean, min,
    /// max and standard deviation, and percentiles of the merged histogram.
    /// A run of one operation type gets that type's own figures, so a
    /// combined column and a per-op column never disagree.
    pub fn latency(&self) -> LatSummary {
        let (r, w) = (&self.totals.read, &self.totals.write);
        match (r.ops, w.ops) {
            (0, 0) => return LatSummary::default(),
            (_, 0) => return r.lat_us.clone(),
            (0, _) => return w.lat_us.clone(),
            _ => {}
        }
        let n = (r.ops + w.ops) as f64;
        let (nr, nw) = (r.ops as f64, w.ops as f64);
        let mean = (r.lat_us.mean * nr + w.lat_us.mean * nw) / n;
        // Pooled variance: each part's spread plus its mean's distance from
        // the overall mean (sample variance, as OpStats reports it).
        let part = |s: &LatSummary, k: f64| {
            let var = if k > 1.0 {
                s.stddev * s.stddev * (k - 1.0) / k
            } else {
                0.0
            };
            k * (var + (s.mean - mean) * (s.mean - mean))
        };
        let var_pop = (part(&r.lat_us, nr) + part(&w.lat_us, nw)) / n;
        let stddev = (var_pop * n / (n - 1.0)).max(0.0).sqrt();
        let (min, max) = (
            r.lat_us.min.min(w.lat_us.min),
            r.lat_us.max.max(w.lat_us.max),
        );
        let merged = self.histograms.read.to_histogram().and_then(|mut h| {
            let wh = self.histograms.write.to_histogram()?;
            h.checked_add_assign(&wh).map_err(|e| e.to_string())?;
            Ok(h)
        });
        let (lo, hi) = ((min * 1000.0).floor() as u64, (max * 1000.0).ceil() as u64);
        let pct = |p: f64, of: fn(&LatSummary) -> f64| match &merged {
            Ok(h) => percentile_ns(h, p, lo, hi) / 1000.0,
            // A histogram that does not load (a damaged or foreign file):
            // the larger per-op percentile is an upper bound, never an average.
            Err(_) => of(&r.lat_us).max(of(&w.lat_us)),
        };
        LatSummary {
            mean,
            min,
            max,
            stddev,
            p50: pct(50.0, |s| s.p50),
            p90: pct(90.0, |s| s.p90),
            p99: pct(99.0, |s| s.p99),
            p99_9: pct(99.9, |s| s.p99_9),
            p99_99: pct(99.99, |s| s.p99_99),
        }
    }

    /// Mean service time (submission to completion) over reads and writes,
    /// for rate-limited runs, whose latency counts from each I/O's intended
    /// start; None for runs that did not record it.
    pub(crate) fn service_mean_us(&self) -> Option<f64> {
        let (r, w) = (&self.totals.read, &self.totals.write);
        let (rs, ws) = (r.service_lat_us.as_ref(), w.service_lat_us.as_ref());
        if rs.is_none() && ws.is_none() {
            return None;
        }
        let n = (r.ops + w.ops) as f64;
        if n == 0.0 {
            return None;
        }
        let part = |s: Option<&LatSummary>, k: u64| s.map_or(0.0, |s| s.mean * k as f64);
        Some((part(rs, r.ops) + part(ws, w.ops)) / n)
    }
}

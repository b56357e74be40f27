//! A latency search in result.json (`latency_search`): each step's rate,
//! the percentiles it measured against the limits, pass or fail, and the
//! rate found. The percentiles come from the run's merged histograms, so a
//! multi-host or multi-target step is judged on every I/O it made.

use serde::{Deserialize, Serialize};

use super::RunResult;
use super::ops::Op;
use crate::spec::latency::{LatencyLimit, LatencyOp};
use crate::stats::percentile_ns;

/// What a step of the search was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StepKind {
    /// Closed loop, as fast as it goes: the ceiling of the search.
    Max,
    /// Open loop at a rate the bisection chose.
    Probe,
    /// Open loop again at the rate found, to see that it holds.
    Confirm,
}

impl StepKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Max => "max",
            Self::Probe => "probe",
            Self::Confirm => "confirm",
        }
    }
}

/// One limit held against one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LimitCheck {
    pub(crate) limit: LatencyLimit,
    /// The percentile measured, µs; None when the step completed no I/O
    /// of the kind the limit is about (which fails it).
    pub(crate) measured_us: Option<f64>,
    pub(crate) pass: bool,
}

/// One run of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SearchStep {
    /// 1 for the closed-loop run, then in order.
    pub(crate) step: u32,
    /// The run's name in `runs`.
    pub(crate) run: String,
    pub(crate) kind: StepKind,
    /// The open-loop rate tried, IOPS across all threads (and hosts);
    /// None for the closed-loop step.
    pub(crate) rate_iops: Option<f64>,
    /// IOPS achieved.
    pub(crate) iops: f64,
    pub(crate) measured: Vec<LimitCheck>,
    /// Every limit held, and an open-loop step carried its rate.
    pub(crate) pass: bool,
}

/// A whole search: what was asked, each step, what was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LatencySearchResult {
    /// The searched run's name (its steps are `NAME-s1-max`, `NAME-s2-...`).
    pub(crate) run: String,
    pub(crate) limits: Vec<LatencyLimit>,
    /// The closed-loop step's IOPS, when it ran.
    pub(crate) max_iops: Option<f64>,
    /// The highest rate that kept every limit: the confirmed one, else the
    /// highest that passed below any that failed.
    pub(crate) found_iops: Option<f64>,
    /// Whether `found_iops` passed its confirming run.
    pub(crate) confirmed: bool,
    pub(crate) steps: Vec<SearchStep>,
}

impl LatencySearchResult {
    /// The one line every view prints for the search.
    pub(crate) fn line(&self) -> String {
        let what = self
            .limits
            .iter()
            .map(LatencyLimit::label)
            .collect::<Vec<_>>()
            .join(" and ");
        let max = self
            .max_iops
            .map(|m| format!(" (closed-loop maximum {} IOPS)", crate::units::thousands(m)))
            .unwrap_or_default();
        match self.found_iops {
            Some(r) => format!(
                "{}: highest rate keeping {what}: {} IOPS{}{max}, in {} runs",
                self.run,
                crate::units::thousands(r),
                if self.confirmed {
                    ""
                } else {
                    " (not confirmed)"
                },
                self.steps.len()
            ),
            None => format!(
                "{}: no rate tried kept {what}{max}, in {} runs",
                self.run,
                self.steps.len()
            ),
        }
    }
}

/// The limit's percentile in this run, µs, from its merged histograms (reads
/// and writes added together for a limit on both); None when it completed
/// no such I/O or a histogram does not load.
pub(crate) fn measured_us(run: &RunResult, l: &LatencyLimit) -> Option<f64> {
    let ops: &[Op] = match l.op {
        LatencyOp::All => &Op::ALL,
        LatencyOp::Read => &[Op::Read],
        LatencyOp::Write => &[Op::Write],
    };
    let mut hist: Option<histogram::Histogram> = None;
    let (mut lo, mut hi) = (f64::MAX, 0.0f64);
    for &op in ops {
        let t = run.totals.op(op);
        if t.ops == 0 {
            continue;
        }
        lo = lo.min(t.lat_us.min);
        hi = hi.max(t.lat_us.max);
        let h = run.histograms.op(op).to_histogram().ok()?;
        hist = Some(match hist {
            None => h,
            Some(mut acc) => {
                acc.checked_add_assign(&h).ok()?;
                acc
            }
        });
    }
    let h = hist?;
    let (lo, hi) = ((lo * 1000.0).floor() as u64, (hi * 1000.0).ceil() as u64);
    Some(percentile_ns(&h, l.percentile, lo, hi) / 1000.0)
}

/// Every limit held against a run.
pub(crate) fn check(run: &RunResult, limits: &[LatencyLimit]) -> Vec<LimitCheck> {
    limits
        .iter()
        .map(|l| {
            let m = measured_us(run, l);
            LimitCheck {
                limit: *l,
                measured_us: m,
                pass: m.is_some_and(|us| us <= l.limit_us),
            }
        })
        .collect()
}

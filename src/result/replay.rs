//! A replayed trace in result.json (`replay`): which trace, at what pace,
//! and how closely the run kept its times.

use serde::{Deserialize, Serialize};

use crate::spec::replay::TraceFormat;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    pub trace: String,
    pub format: TraceFormat,
    /// The pace: times divided by this; null: as fast as the depth allowed.
    pub speed: Option<f64>,
    /// Offsets beyond the target wrapped around it.
    pub wrap: bool,
    /// Requests in the trace, and how many the run issued (fewer only when
    /// it was stopped or failed).
    pub requests: u64,
    pub issued: u64,
    /// Requests whose offset wrapped (`wrap`).
    pub wrapped: u64,
    /// The trace's last request's time, and that time at this pace.
    pub trace_s: f64,
    pub scheduled_s: Option<f64>,
    /// How long the replay took.
    pub ran_s: f64,
    /// Requests due while every slot (--iodepth) was busy, and how late
    /// those went on average; the latest any request went, for any reason.
    pub late: u64,
    pub late_mean_us: f64,
    pub behind_max_us: f64,
}

impl ReplayResult {
    /// The replay of several parts (hosts, targets), each replaying its
    /// part of the trace: counts add, the worst lateness and the longest
    /// time are kept, the mean lateness is weighted by the late requests.
    pub fn merge(parts: &[&ReplayResult]) -> Option<ReplayResult> {
        let first = parts.first()?;
        let mut m = (*first).clone();
        m.requests = parts.iter().map(|p| p.requests).sum();
        m.issued = parts.iter().map(|p| p.issued).sum();
        m.wrapped = parts.iter().map(|p| p.wrapped).sum();
        m.late = parts.iter().map(|p| p.late).sum();
        let late_sum: f64 = parts.iter().map(|p| p.late_mean_us * p.late as f64).sum();
        m.late_mean_us = if m.late > 0 {
            late_sum / m.late as f64
        } else {
            0.0
        };
        let max = |f: fn(&ReplayResult) -> f64| parts.iter().map(|p| f(p)).fold(0.0, f64::max);
        m.behind_max_us = max(|p| p.behind_max_us);
        m.trace_s = max(|p| p.trace_s);
        m.ran_s = max(|p| p.ran_s);
        m.scheduled_s = first
            .scheduled_s
            .map(|_| max(|p| p.scheduled_s.unwrap_or(0.0)));
        Some(m)
    }
}

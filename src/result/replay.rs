//! A replayed trace in result.json (`replay`): which trace, at what pace,
//! and how closely the run kept its times.

use serde::{Deserialize, Serialize};

use crate::spec::replay::TraceFormat;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ReplayResult {
    pub(crate) trace: String,
    pub(crate) format: TraceFormat,
    /// The pace: times divided by this; null: as fast as the depth allowed.
    pub(crate) speed: Option<f64>,
    /// Offsets beyond the target wrapped around it.
    pub(crate) wrap: bool,
    /// Requests in the trace, and how many the run issued (fewer only when
    /// it was stopped or failed).
    pub(crate) requests: u64,
    pub(crate) issued: u64,
    /// Requests whose offset wrapped (`wrap`).
    pub(crate) wrapped: u64,
    /// The trace's last request's time, and that time at this pace.
    pub(crate) trace_s: f64,
    pub(crate) scheduled_s: Option<f64>,
    /// How long the replay took.
    pub(crate) ran_s: f64,
    /// Requests due while every slot (--iodepth) was busy, and how late
    /// those went on average; the latest any request went, for any reason.
    pub(crate) late: u64,
    pub(crate) late_mean_us: f64,
    pub(crate) behind_max_us: f64,
    /// Requests the replay kept in flight at most, and whether that depth
    /// came from the trace's timing (its most requests within 1 ms) rather
    /// than --iodepth.
    #[serde(default)]
    pub(crate) depth: u32,
    #[serde(default)]
    pub(crate) depth_from_trace: bool,
}

impl ReplayResult {
    /// The replay of several parts (hosts, targets), each replaying its
    /// part of the trace: counts add, the worst lateness and the longest
    /// time are kept, the mean lateness is weighted by the late requests.
    pub(crate) fn merge(parts: &[&ReplayResult]) -> Option<ReplayResult> {
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

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

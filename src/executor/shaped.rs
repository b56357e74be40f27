//! The executor's side of a run's shape (`spec::shape`): the bandwidth
//! schedule and the cool-down after measuring.

use std::time::Duration;

use crate::io::worker::Schedule;
use crate::spec::{Arrivals, RunSpec};

/// Worker `w` of `n`'s share of a bandwidth cap, as a schedule whose gaps
/// grow with each I/O's length; None when the run has no bandwidth cap.
pub(super) fn rate(spec: &RunSpec, w: u32, n: u32) -> Option<Schedule> {
    let bytes = spec.shape.rate_bytes?;
    let ns_per_byte = n as f64 * 1e9 / bytes;
    // The first I/Os stagger by a mean-sized block's share, as with IOPS.
    let mean_bs = spec.mean_bs();
    let gap = Duration::from_secs_f64((ns_per_byte * mean_bs / 1e9).min(3600.0));
    Some(Schedule {
        gap,
        poisson: spec.arrivals == Arrivals::Poisson,
        offset: gap.mul_f64(w as f64 / n as f64),
        ns_per_byte,
    })
}

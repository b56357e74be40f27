//! The executor's part of a replay (`run --replay`): the trace's span held
//! against the prepared target before any I/O, each worker's share, and
//! the flushes, discards and lateness the workers report, put into the
//! run's result.

use std::sync::{Arc, Mutex};

use crate::error::VbError;
use crate::io::replay::worker::{ReplayReport, ReplayWorker};
use crate::io::target::Prepared;
use crate::plan::PlannedRun;
use crate::result::replay::ReplayResult;
use crate::result::{LatSummary, OpTotals, RunResult};

/// A run refused before any I/O (the executor's run error, named here so
/// this file does not reach back into `run.rs`).
type Refused = (VbError, Option<Box<RunResult>>);

/// A worker's replay (one of `n`), or None for a run that replays nothing;
/// refuses a trace that reaches past the target (unless it wraps).
pub(super) fn worker(
    run: &PlannedRun,
    prepared: &Prepared,
    n: u32,
    report: &Arc<Mutex<ReplayReport>>,
) -> Result<Option<ReplayWorker>, Refused> {
    let Some(spec) = &run.spec.replay else {
        return Ok(None);
    };
    let total = prepared.layout.total();
    let s = &spec.summary;
    let too_far = s.span_bytes > total && !spec.wrap;
    if too_far || s.max_bytes > total {
        return Err((
            VbError::input(format!(
                "--replay {}: the trace reaches {} but the target holds {}{}",
                spec.path.display(),
                crate::units::format_size(s.span_bytes),
                crate::units::format_size(total),
                if too_far {
                    "; --replay-wrap wraps offsets around it, or give a larger target"
                } else {
                    "; a request is larger than the whole target"
                }
            )),
            None,
        ));
    }
    Ok(Some(ReplayWorker {
        spec: spec.clone(),
        target_bytes: total,
        workers: n.max(1),
        report: report.clone(),
    }))
}

/// The replay's flushes, discards and pace, into the run's result.
pub(super) fn finish(result: &mut RunResult, run: &PlannedRun, report: &Mutex<ReplayReport>) {
    let Some(spec) = &run.spec.replay else {
        return;
    };
    let Ok(r) = report.lock() else {
        return;
    };
    let secs = result.phases.iter().map(|p| p.duration_s).sum::<f64>();
    let s = &spec.summary;
    let totals = |st: &crate::stats::OpStats| OpTotals {
        lat_us: LatSummary::from_stats(st),
        ..OpTotals::from_stats(st, secs)
    };
    if s.flushes > 0 {
        result.totals.flush = Some(totals(&r.flush));
    }
    if s.discards > 0 {
        result.totals.discard = Some(totals(&r.discard));
    }
    let trace_s = s.last_ns as f64 / 1e9;
    // The one line that says how closely the replay kept the trace's times.
    let pace = match spec.speed {
        Some(v) => format!("scheduled {:.3} s at {v}x", trace_s / v),
        None => "as fast as the depth allowed".to_string(),
    };
    // Requests in flight at most: a synchronous engine runs one thread per.
    let in_flight = run.io_threads.saturating_mul(run.depth);
    let depth = if spec.depth_from_trace && s.recorded_in_flight > 0 {
        format!(
            "depth {in_flight} from the trace (the most it recorded in flight; --iodepth sets it)"
        )
    } else if spec.depth_from_trace {
        format!(
            "depth {in_flight} from the trace (its most requests within 1 ms: {}; --iodepth sets it)",
            s.peak_1ms
        )
    } else {
        format!("depth {in_flight}")
    };
    crate::console::errln!(
        "replay: {} of {} requests in {secs:.3} s ({pace}, {depth}); {} late (every slot busy), \
         latest {:.3} ms behind{}",
        r.issued,
        s.requests,
        r.late,
        r.behind_max_ns as f64 / 1e6,
        if r.wrapped > 0 {
            format!("; {} wrapped around the target", r.wrapped)
        } else {
            String::new()
        }
    );
    result.replay = Some(ReplayResult {
        trace: spec.path.display().to_string(),
        format: spec.format,
        speed: spec.speed,
        wrap: spec.wrap,
        requests: s.requests,
        issued: r.issued,
        wrapped: r.wrapped,
        trace_s,
        scheduled_s: spec.speed.map(|v| trace_s / v),
        ran_s: secs,
        late: r.late,
        depth: in_flight,
        depth_from_trace: spec.depth_from_trace,
        late_mean_us: if r.late > 0 {
            r.late_sum_ns as f64 / r.late as f64 / 1000.0
        } else {
            0.0
        },
        behind_max_us: r.behind_max_ns as f64 / 1000.0,
    });
}

//! A run's result from what the workers and the collector measured: phases,
//! totals, service times, the rate reached, Little's law.

use std::time::SystemTime;

use super::collect::Timeline;
use crate::io::worker::PhaseStats;
use crate::plan::PlannedRun;
use crate::result::{
    Histograms, LatSummary, LittlesLaw, OpPair, OpTotals, Phase, PhaseName, RateResult, RunResult,
    Totals,
};
use crate::spec::Arrivals;
use crate::stats::BucketedHistogram;

pub(super) fn build_result(
    run: &PlannedRun,
    t: Timeline,
    warm: &PhaseStats,
    meas: &PhaseStats,
) -> RunResult {
    let mut phases = Vec::new();
    let rfc = |st: SystemTime| humantime::format_rfc3339_millis(st).to_string();
    if let Some((start, secs)) = t.warmup {
        phases.push(Phase {
            name: PhaseName::Warmup,
            start: rfc(start),
            duration_s: secs,
        });
    }
    if t.measure.1 > 0.0 {
        phases.push(Phase {
            name: PhaseName::Measure,
            start: rfc(t.measure.0),
            duration_s: t.measure.1,
        });
    }
    let rated = run.spec.rate_iops.is_some() || run.spec.shape.rate_bytes.is_some();
    let mut read = OpTotals::from_stats(&meas.read, t.measure.1);
    let mut write = OpTotals::from_stats(&meas.write, t.measure.1);
    if rated {
        read.service_lat_us = Some(LatSummary::from_stats(&meas.read_service));
        write.service_lat_us = Some(LatSummary::from_stats(&meas.write_service));
    }
    let rate = run.spec.rate_iops.map(|target| {
        let achieved = read.iops + write.iops;
        RateResult {
            target_iops: target,
            achieved_iops: achieved,
            reached: rate_reached(target, achieved, t.measure.1, run.spec.arrivals),
            arrivals: run.spec.arrivals,
        }
    });
    let in_flight = (read.iops * read.lat_us.mean + write.iops * write.lat_us.mean) / 1e6;
    let warmup = t.warmup.map(|(_, secs)| OpPair {
        read: OpTotals::from_stats(&warm.read, secs),
        write: OpTotals::from_stats(&warm.write, secs),
    });
    RunResult {
        name: run.spec.name.clone(),
        workload: run.spec.clone(),
        engine: vec![run.engine],
        io_threads: run.io_threads,
        depth_per_thread: run.depth,
        phases,
        totals: Totals {
            read,
            write,
            cpu: t.cpu,
            flush: None,
            discard: None,
        },
        warmup,
        intervals: t.intervals,
        histograms: Histograms {
            read: BucketedHistogram::from_histogram(&meas.read.hist),
            write: BucketedHistogram::from_histogram(&meas.write.hist),
        },
        littles_law: LittlesLaw {
            concurrency: run.io_threads * run.depth,
            iops_x_latency: in_flight,
        },
        rate,
        steady: t.steady,
        interrupted: t.interrupted,
        meta_ops: Vec::new(),
        counters: t.counters,
        data_errors: None,
        targets: Vec::new(),
        stalls: t.stalls.clone(),
        replay: None,
        from_intervals: false,
        histograms_left_out: false,
        threads: Vec::new(),
        threads_left_out: 0,
        protocol: None,
        left_out: Vec::new(),
    }
}

/// A stopped run whose I/O threads are still blocked in I/O: its figures
/// from what the collector recorded, interval by interval (operations and
/// bytes exactly, the mean latency weighted by operations, percentiles
/// from the per-interval histograms; no min, max or spread), since the
/// threads' own statistics come only when they return.
pub(super) fn from_intervals(run: &PlannedRun, t: &Timeline) -> RunResult {
    let none = PhaseStats::default();
    let mut r = build_result(run, t.clone(), &none, &none);
    let measured = t.measure.1;
    let ivs = || t.intervals.iter().filter(|i| i.phase == PhaseName::Measure);
    let (min_bs, max_bs) = (run.spec.min_bs(), run.spec.max_bs());
    let total = |pick: fn(&crate::result::Interval) -> &crate::result::IntervalOp| {
        let (mut ops, mut bytes, mut lat, mut hist) = (0u64, 0u64, 0.0, Vec::new());
        for iv in ivs() {
            let op = pick(iv);
            // Each interval's rate is its whole count over its length.
            let n = (op.iops * iv.duration_s).round().max(0.0) as u64;
            ops = ops.saturating_add(n);
            let b = (op.mib_s * 1048576.0 * iv.duration_s).round().max(0.0) as u64;
            bytes = bytes.saturating_add(b);
            lat += op.lat_us_mean * n as f64;
            hist = crate::stats::live_hist::sparse_add(&hist, &op.lat_hist);
        }
        // The rates went through floating point: the bytes are brought back
        // within what that many operations of these sizes can move.
        if run.spec.replay.is_none() && run.spec.meta.is_none() {
            bytes = bytes.clamp(
                ops.saturating_mul(min_bs),
                ops.saturating_mul(max_bs.max(min_bs)),
            );
        }
        let pct =
            |p: f64| crate::stats::live_hist::sparse_percentile(&hist, p).unwrap_or(0.0) / 1000.0;
        let secs = if measured > 0.0 {
            measured
        } else {
            f64::INFINITY
        };
        OpTotals {
            ops,
            bytes,
            iops: ops as f64 / secs,
            mib_s: bytes as f64 / 1048576.0 / secs,
            lat_us: LatSummary {
                mean: if ops > 0 { lat / ops as f64 } else { 0.0 },
                p50: pct(50.0),
                p90: pct(90.0),
                p99: pct(99.0),
                p99_9: pct(99.9),
                p99_99: pct(99.99),
                ..LatSummary::default()
            },
            service_lat_us: None,
        }
    };
    r.totals.read = total(|i| &i.read);
    r.totals.write = total(|i| &i.write);
    r.littles_law.iops_x_latency = (r.totals.read.iops * r.totals.read.lat_us.mean
        + r.totals.write.iops * r.totals.write.lat_us.mean)
        / 1e6;
    if let Some(rate) = &mut r.rate {
        rate.achieved_iops = r.totals.read.iops + r.totals.write.iops;
    }
    r.interrupted = true;
    r.from_intervals = true;
    r
}

/// A run known only by the intervals that arrived (hosts lost before their
/// results came): the same figures as `from_intervals`, its phases as long
/// as the intervals of each, ending now.
pub(crate) fn from_interval_record(
    run: &PlannedRun,
    intervals: Vec<crate::result::Interval>,
) -> RunResult {
    let secs = |p: PhaseName| -> f64 {
        intervals
            .iter()
            .filter(|i| i.phase == p)
            .map(|i| i.duration_s)
            .sum()
    };
    let (warm, measure) = (secs(PhaseName::Warmup), secs(PhaseName::Measure));
    let now = SystemTime::now();
    let ago = |s: f64| {
        now.checked_sub(std::time::Duration::from_secs_f64(s.clamp(0.0, 1e9)))
            .unwrap_or(now)
    };
    let t = Timeline {
        intervals,
        warmup: (warm > 0.0).then(|| (ago(warm + measure), warm)),
        measure: (ago(measure), measure),
        cpu: Default::default(),
        steady: None,
        interrupted: true,
        counters: None,
        stalls: Vec::new(),
    };
    from_intervals(run, &t)
}

/// Whether a rate-limited run kept up with its target. Evenly spaced I/Os
/// give an exact count, so 1% short means the storage fell behind. Poisson
/// arrivals give a count that varies by itself (standard deviation
/// sqrt(expected)), so only a shortfall beyond three of those says so;
/// anything less is sampling noise, not saturation.
pub(super) fn rate_reached(target: f64, achieved: f64, seconds: f64, arrivals: Arrivals) -> bool {
    let expected = target * seconds;
    let got = achieved * seconds;
    let slack = match arrivals {
        Arrivals::Uniform => 0.01 * expected,
        Arrivals::Poisson => (3.0 * expected.sqrt()).max(0.01 * expected),
    };
    got >= expected - slack
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_noise_is_not_saturation() {
        // 47 of an expected 50 per second over 4 s: 188 of 200, well within
        // three standard deviations (42) of a Poisson count.
        assert!(rate_reached(50.0, 47.0, 4.0, Arrivals::Poisson));
        assert!(!rate_reached(50.0, 47.0, 4.0, Arrivals::Uniform));
        // Far below: the storage did not keep up, whatever the arrivals.
        assert!(!rate_reached(800.0, 500.0, 4.0, Arrivals::Poisson));
        assert!(rate_reached(4000.0, 3970.0, 2.0, Arrivals::Uniform));
    }
}

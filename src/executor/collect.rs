//! The collector: while the workers run, it samples their counters once
//! per interval, reports each interval, feeds the steady-state detector,
//! switches warm-up to measurement, and notices Ctrl-C, failures and the
//! end of an --io-limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use super::Observer;
use super::intervals::IntervalLog;
use crate::io::counters::{self, Sample, Sampler};
use crate::io::host::cpu_seconds;
use crate::io::worker::{Control, PHASE_COOLDOWN, PHASE_MEASURE, PHASE_STOP, PHASE_WARMUP};
use crate::plan::PlannedRun;
use crate::result::counters::RunCounters;
use crate::result::{Cpu, Interval, IntervalOp, PhaseName, Stall, SteadyResult};
use crate::stats::live_hist::{BUCKETS, sparse_delta};
use crate::stats::{CounterSnapshot, LiveCounters};

/// Longest time the collector sleeps before looking at Ctrl-C and failures.
const POLL: Duration = Duration::from_millis(50);
/// A gap between two of the collector's wake-ups this much longer than its
/// poll: the whole process stood still (SIGSTOP, a paused VM), not the I/O.
const STALL: Duration = Duration::from_secs(1);

/// What the collector saw: intervals, phase boundaries, CPU and whether it
/// was cut short.
#[derive(Clone)]
pub(super) struct Timeline {
    pub intervals: Vec<Interval>,
    pub warmup: Option<(SystemTime, f64)>,
    pub measure: (SystemTime, f64),
    pub cpu: Cpu,
    pub steady: Option<SteadyResult>,
    pub interrupted: bool,
    pub counters: Option<RunCounters>,
    pub stalls: Vec<Stall>,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn collect(
    run: &PlannedRun,
    t0: Instant,
    control: &Control,
    counters: &[Arc<LiveCounters>],
    warmup: Duration,
    duration: Duration,
    interval: Duration,
    obs: &dyn Observer,
    stop: &AtomicBool,
    sampler: Option<&Sampler>,
) -> Timeline {
    let wall0 = SystemTime::now();
    // Client counters: read here, between intervals, never by the workers.
    let mut host: Option<(&Sampler, RunCounters, Sample)> =
        sampler.map(|s| (s, s.header(), s.sample()));
    let mut host_at_measure: Option<Sample> = host
        .as_ref()
        .filter(|_| control.phase.load(Ordering::Relaxed) == PHASE_MEASURE)
        .map(|(_, _, first)| first.clone());
    let total_s = (warmup + duration).as_secs_f64();
    let mut phase = control.phase.load(Ordering::Relaxed);
    let mut phase_start = t0;
    let mut phase_end = if phase == PHASE_WARMUP {
        t0 + warmup
    } else {
        t0 + duration
    };
    let mut k = 1u32;
    let mut prev = CounterSnapshot::default();
    // Latency buckets summed over workers, now and at the last interval.
    let mut hist_prev = [vec![0u64; BUCKETS], vec![0u64; BUCKETS]];
    let mut prev_t = t0;
    let mut log = IntervalLog::default();
    let mut cpu0 = cpu_seconds();
    let mut measure_wall = wall0;
    let mut measure_start = t0;
    let mut warmup_done: Option<(SystemTime, f64)> = None;
    let mut interrupted = false;
    let rated = run.spec.rate_iops.is_some() || run.spec.shape.rate_bytes.is_some();
    let mut warm_iops: Vec<f64> = Vec::new();
    let mut steady: Option<SteadyResult> = None;
    let mut stalls: Vec<Stall> = Vec::new();
    let mut woke = t0;
    loop {
        let tick = (phase_start + interval * k).min(phase_end);
        // Sleep in short steps so Ctrl-C and failures are seen quickly.
        loop {
            let now = Instant::now();
            if now.duration_since(woke) > STALL + POLL {
                let s = Stall {
                    at_s: woke.saturating_duration_since(t0).as_secs_f64(),
                    secs: now.duration_since(woke).as_secs_f64(),
                };
                obs.note(&s.line(&run.spec.name));
                stalls.push(s);
            }
            woke = now;
            if now >= tick || stop.load(Ordering::Relaxed) || ended(control, counters.len()) {
                break;
            }
            std::thread::sleep((tick - now).min(POLL));
        }
        // An --io-limit run ends when its last worker finished.
        let now = control
            .all_finished_at(counters.len())
            .unwrap_or_else(Instant::now);
        let mut snap = CounterSnapshot::default();
        for c in counters {
            snap.add(&c.snapshot());
        }
        let d = snap.since(&prev);
        let secs = (now - prev_t).as_secs_f64();
        let mut hist_now = [vec![0u64; BUCKETS], vec![0u64; BUCKETS]];
        for c in counters {
            c.read_hist.add_to(&mut hist_now[0]);
            c.write_hist.add_to(&mut hist_now[1]);
        }
        let iv = Interval {
            t_s: (now - t0).as_secs_f64(),
            duration_s: secs,
            phase: if phase == PHASE_WARMUP {
                PhaseName::Warmup
            } else {
                PhaseName::Measure
            },
            read: IntervalOp::from_delta(
                d.read_ops,
                d.read_bytes,
                d.read_lat_ns,
                rated.then_some(d.read_svc_ns),
                secs,
            ),
            write: IntervalOp::from_delta(
                d.write_ops,
                d.write_bytes,
                d.write_lat_ns,
                rated.then_some(d.write_svc_ns),
                secs,
            ),
            meta_ops: super::meta::interval_ops(run, &d, secs),
        };
        let mut iv = iv;
        if secs > 0.0 {
            iv.read.lat_hist = sparse_delta(&hist_now[0], &hist_prev[0]);
            iv.write.lat_hist = sparse_delta(&hist_now[1], &hist_prev[1]);
        }
        hist_prev = hist_now;
        // A full warm-up interval feeds the steady-state detector.
        let steady_now =
            if phase == PHASE_WARMUP && run.spec.steady && secs >= interval.as_secs_f64() * 0.99 {
                warm_iops.push(iv.read.iops + iv.write.iops);
                if warm_iops.len() > crate::executor::steady::WINDOW {
                    warm_iops.remove(0);
                }
                crate::executor::steady::is_steady(&warm_iops)
            } else {
                false
            };
        if let Some((s, rc, last)) = host.as_mut() {
            let now_s = s.sample();
            if secs > 0.0 {
                rc.push_interval(counters::between(last, &now_s, iv.t_s, iv.phase));
            }
            *last = now_s;
        }
        if secs > 0.0 {
            obs.interval(run, iv.t_s, total_s, &iv);
            log.push(iv);
        }
        prev = snap;
        prev_t = now;
        if stop.load(Ordering::Relaxed) || ended(control, counters.len()) {
            interrupted = stop.load(Ordering::Relaxed);
            break;
        }
        if now < phase_end && !steady_now {
            k += 1;
            continue;
        }
        if phase == PHASE_WARMUP {
            if run.spec.steady {
                steady = Some(SteadyResult {
                    reached: steady_now,
                    after_s: (now - t0).as_secs_f64(),
                });
            }
            // Start measuring: the workers count completions from here on
            // into their measured statistics.
            control.phase.store(PHASE_MEASURE, Ordering::Relaxed);
            super::rescue::doing(format!("running '{}'", run.spec.name));
            warmup_done = Some((wall0, (now - t0).as_secs_f64()));
            phase = PHASE_MEASURE;
            phase_start = now;
            phase_end = now + duration;
            measure_start = now;
            measure_wall = SystemTime::now();
            cpu0 = cpu_seconds();
            host_at_measure = host.as_ref().map(|(_, _, last)| last.clone());
            k = 1;
        } else {
            break;
        }
    }
    let cooldown = (phase == PHASE_MEASURE && !interrupted && !ended(control, counters.len()))
        .then_some(run.spec.shape.cooldown_s)
        .flatten();
    let after = if cooldown.is_some() {
        PHASE_COOLDOWN
    } else {
        PHASE_STOP
    };
    control.phase.store(after, Ordering::Relaxed);
    let end = control
        .all_finished_at(counters.len())
        .unwrap_or_else(Instant::now)
        .max(measure_start);
    let cpu1 = cpu_seconds();
    if let Some(c) = cooldown {
        // I/O goes on, counted nowhere, then stops (diskspd -C).
        let until = Instant::now() + Duration::from_secs_f64(c);
        while Instant::now() < until
            && !stop.load(Ordering::Relaxed)
            && !ended(control, counters.len())
        {
            std::thread::sleep((until - Instant::now()).min(POLL));
        }
        control.phase.store(PHASE_STOP, Ordering::Relaxed);
    }
    let measured = if phase == PHASE_MEASURE {
        (end - measure_start).as_secs_f64()
    } else {
        0.0
    };
    let cpu = if measured > 0.0 {
        Cpu {
            user_pct: (cpu1.0 - cpu0.0) / measured * 100.0,
            sys_pct: (cpu1.1 - cpu0.1) / measured * 100.0,
        }
    } else {
        Cpu::default()
    };
    if phase == PHASE_WARMUP {
        warmup_done = Some((wall0, (end - t0).as_secs_f64()));
    }
    // The measured phase as a whole, from the counters at its two ends.
    let counters = host.map(|(_, mut rc, last)| {
        if let Some(first) = host_at_measure.filter(|_| measured > 0.0) {
            rc.summary = Some(counters::between(
                &first,
                &last,
                (end - t0).as_secs_f64(),
                PhaseName::Measure,
            ));
        }
        rc
    });
    if run.spec.steady && steady.is_none() {
        steady = Some(SteadyResult {
            reached: false,
            after_s: (end - t0).as_secs_f64(),
        });
    }
    Timeline {
        steady,
        intervals: log.into_vec(),
        warmup: warmup_done,
        measure: (measure_wall, measured),
        cpu,
        interrupted,
        counters,
        stalls,
    }
}

/// True when the workers are done by themselves: one failed, or all have
/// finished their --io-limit share.
fn ended(control: &Control, workers: usize) -> bool {
    control.failed.load(Ordering::Relaxed)
        || control.finished.load(Ordering::Relaxed) as usize >= workers
}

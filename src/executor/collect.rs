//! The collector: while the workers run, it samples their counters once
//! per interval, reports each interval, feeds the steady-state detector,
//! switches warm-up to measurement, and notices Ctrl-C, failures and the
//! end of an --io-limit.

use crate::result::protocol::ProtocolInterval;
use crate::stats::live_links::LinkSum;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use super::Observer;
use super::intervals::IntervalLog;
use crate::events::Raise as _;
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
    pub(crate) intervals: Vec<Interval>,
    pub(crate) warmup: Option<(SystemTime, f64)>,
    pub(crate) measure: (SystemTime, f64),
    pub(crate) cpu: Cpu,
    pub(crate) steady: Option<SteadyResult>,
    pub(crate) interrupted: bool,
    pub(crate) counters: Option<RunCounters>,
    pub(crate) stalls: Vec<Stall>,
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
    // Whoever watches, and the target its interval events are labelled with.
    (obs, target): (&dyn Observer, &str),
    stop: &AtomicBool,
    sampler: Option<&Sampler>,
) -> Timeline {
    let wall0 = SystemTime::now();
    // Client counters: read here, between intervals, never by the workers.
    let host: Option<(&Sampler, RunCounters, Sample)> =
        sampler.map(|s| (s, s.header(), s.sample()));
    let host_at_measure: Option<Sample> = host
        .as_ref()
        .filter(|_| control.phase.load(Ordering::Relaxed) == PHASE_MEASURE)
        .map(|(_, _, first)| first.clone());
    let total_s = (warmup + duration).as_secs_f64();
    let phase = control.phase.load(Ordering::Relaxed);
    let mut phase_start = t0;
    let mut phase_end = if phase == PHASE_WARMUP {
        t0 + warmup
    } else {
        t0 + duration
    };
    let mut k = 1u32;
    let mut reader = Reader {
        prev: CounterSnapshot::default(),
        hist_prev: [vec![0u64; BUCKETS], vec![0u64; BUCKETS]],
        prev_t: t0,
        rated: run.spec.rate_iops.is_some() || run.spec.shape.rate_bytes.is_some(),
        proto: None,
        links: LinkSum::default(),
    };
    let mut st = Seen {
        wall0,
        t0,
        phase,
        interrupted: false,
        measure_start: t0,
        measure_wall: wall0,
        cpu0: cpu_seconds(),
        host,
        host_at_measure,
        warmup_done: None,
        steady: None,
        log: IntervalLog::default(),
        stalls: Vec::new(),
    };
    let mut warm_iops: Vec<f64> = Vec::new();
    let mut woke = t0;
    loop {
        let tick = (phase_start + interval * k).min(phase_end);
        wait_for(
            tick,
            &mut woke,
            &mut st,
            run,
            control,
            counters.len(),
            obs,
            stop,
        );
        // The measured phase's last reading comes after the phase moved on:
        // every operation a worker counted as measured before the change is
        // in it, and only the one batch each worker had in hand at the change
        // comes after. (Read first, the operations done while this thread
        // sampled the host and printed the line fell between the intervals.)
        let over = stop.load(Ordering::Relaxed) || ended(control, counters.len());
        // An --io-limit run ends when its last worker finished.
        let now = control
            .all_finished_at(counters.len())
            .unwrap_or_else(Instant::now);
        let closing = st.phase == PHASE_MEASURE && (over || now >= phase_end);
        if closing {
            control
                .phase
                .store(after_measure(run, over), Ordering::Relaxed);
        }
        let iv = reader.next(run, counters, (t0, now), st.phase);
        // A full warm-up interval feeds the steady-state detector.
        let steady_now = if st.phase == PHASE_WARMUP
            && run.spec.steady
            && iv.duration_s >= interval.as_secs_f64() * 0.99
        {
            warm_iops.push(iv.read.iops + iv.write.iops);
            if warm_iops.len() > crate::executor::steady::WINDOW {
                warm_iops.remove(0);
            }
            crate::executor::steady::is_steady(&warm_iops)
        } else {
            false
        };
        // Start measuring at once, the reading just taken: the workers count
        // completions from here on into their measured statistics.
        let to_measure = st.phase == PHASE_WARMUP && !over && (now >= phase_end || steady_now);
        if to_measure {
            control.phase.store(PHASE_MEASURE, Ordering::Relaxed);
        }
        if let Some((s, rc, last)) = st.host.as_mut() {
            let now_s = s.sample();
            if iv.duration_s > 0.0 {
                rc.push_interval(counters::between(last, &now_s, iv.t_s, iv.phase));
            }
            *last = now_s;
        }
        if iv.duration_s > 0.0 {
            obs.interval(&crate::events::IntervalEvent {
                run,
                elapsed_s: iv.t_s,
                total_s,
                iv: &iv,
                scope: crate::events::Scope::Part {
                    host: crate::events::this_host(),
                    target,
                },
                proto: reader.proto.as_ref(),
            });
            st.log.push(iv);
        }
        if closing {
            st.interrupted = stop.load(Ordering::Relaxed);
            break;
        }
        if to_measure {
            st.begin_measuring(run, steady_now, now);
            (phase_start, phase_end, k) = (now, now + duration, 1);
        } else {
            k += 1;
        }
        if stop.load(Ordering::Relaxed) || ended(control, counters.len()) {
            st.interrupted = stop.load(Ordering::Relaxed);
            break;
        }
    }
    wind_down(st, run, control, counters.len(), stop)
}

impl Seen<'_> {
    /// The warm-up is over at `now` (the collector has told the workers).
    fn begin_measuring(&mut self, run: &PlannedRun, steady_now: bool, now: Instant) {
        if run.spec.steady {
            self.steady = Some(SteadyResult {
                reached: steady_now,
                after_s: (now - self.t0).as_secs_f64(),
            });
        }
        super::rescue::doing(format!("running '{}'", run.spec.name));
        self.warmup_done = Some((self.wall0, (now - self.t0).as_secs_f64()));
        self.phase = PHASE_MEASURE;
        self.measure_start = now;
        self.measure_wall = SystemTime::now();
        self.cpu0 = cpu_seconds();
        self.host_at_measure = self.host.as_ref().map(|(_, _, last)| last.clone());
    }
}

/// What the collector has seen so far, and where the measured phase began.
struct Seen<'a> {
    wall0: SystemTime,
    t0: Instant,
    phase: u8,
    interrupted: bool,
    measure_start: Instant,
    measure_wall: SystemTime,
    cpu0: (f64, f64),
    host: Option<(&'a Sampler, RunCounters, Sample)>,
    host_at_measure: Option<Sample>,
    warmup_done: Option<(SystemTime, f64)>,
    steady: Option<SteadyResult>,
    log: IntervalLog,
    stalls: Vec<Stall>,
}

/// Sleeps until `tick` in short steps, so Ctrl-C and failures are seen
/// quickly; a wake-up far later than asked is a stall of the whole process,
/// noted.
#[allow(clippy::too_many_arguments)]
fn wait_for(
    tick: Instant,
    woke: &mut Instant,
    st: &mut Seen<'_>,
    run: &PlannedRun,
    control: &Control,
    workers: usize,
    obs: &dyn Observer,
    stop: &AtomicBool,
) {
    loop {
        let now = Instant::now();
        if now.duration_since(*woke) > STALL + POLL {
            let s = Stall {
                at_s: woke.saturating_duration_since(st.t0).as_secs_f64(),
                secs: now.duration_since(*woke).as_secs_f64(),
            };
            obs.note(&s.line(&run.spec.name));
            st.stalls.push(s);
        }
        *woke = now;
        if now >= tick || stop.load(Ordering::Relaxed) || ended(control, workers) {
            break;
        }
        std::thread::sleep((tick - now).min(POLL));
    }
}

/// Reads the workers' counters into one interval: the deltas since the
/// last reading, and the latency histograms' too.
struct Reader {
    prev: CounterSnapshot,
    /// Latency buckets summed over workers at the last interval.
    hist_prev: [Vec<u64>; 2],
    prev_t: Instant,
    rated: bool,
    /// The last interval's protocol figures (a protocol client's run).
    proto: Option<ProtocolInterval>,
    /// Its connections' totals at the last reading.
    links: LinkSum,
}

impl Reader {
    /// The interval since the last reading, ending `now`.
    fn next(
        &mut self,
        run: &PlannedRun,
        counters: &[Arc<LiveCounters>],
        (t0, now): (Instant, Instant),
        phase: u8,
    ) -> Interval {
        // A protocol client's engine publishes totals and its connections'
        // (as one); the others neither.
        let links_prev = std::mem::take(&mut self.links);
        self.links = links_prev.clone();
        self.links.clear();
        let mut snap = CounterSnapshot::default();
        for c in counters {
            snap.add(&c.snapshot(&mut self.links));
        }
        let d = snap.since(&self.prev);
        let secs = (now - self.prev_t).as_secs_f64();
        let mut hist_now = [vec![0u64; BUCKETS], vec![0u64; BUCKETS]];
        for c in counters {
            c.read_hist.add_to(&mut hist_now[0]);
            c.write_hist.add_to(&mut hist_now[1]);
        }
        let rated = self.rated;
        self.proto =
            snap.proto.iter().any(|&v| v > 0).then(|| {
                ProtocolInterval::from_delta(&d.proto).with_links(&self.links, &links_prev)
            });
        let mut iv = Interval {
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
        if secs > 0.0 {
            iv.read.lat_hist = sparse_delta(&hist_now[0], &self.hist_prev[0]);
            iv.write.lat_hist = sparse_delta(&hist_now[1], &self.hist_prev[1]);
        }
        self.hist_prev = hist_now;
        self.prev = snap;
        self.prev_t = now;
        iv
    }
}

/// The end of the run as the collector sees it: the cool-down, if any, the
/// measured phase's length and CPU, its client counters, and the timeline.
fn wind_down(
    st: Seen<'_>,
    run: &PlannedRun,
    control: &Control,
    workers: usize,
    stop: &AtomicBool,
) -> Timeline {
    let Seen {
        wall0,
        t0,
        phase,
        interrupted,
        measure_start,
        measure_wall,
        cpu0,
        host,
        host_at_measure,
        mut warmup_done,
        mut steady,
        log,
        stalls,
    } = st;
    let after = if phase == PHASE_MEASURE {
        after_measure(run, interrupted || ended(control, workers))
    } else {
        PHASE_STOP
    };
    let cooldown = run
        .spec
        .shape
        .cooldown_s
        .filter(|_| after == PHASE_COOLDOWN);
    control.phase.store(after, Ordering::Relaxed);
    let end = control
        .all_finished_at(workers)
        .unwrap_or_else(Instant::now)
        .max(measure_start);
    let cpu1 = cpu_seconds();
    if let Some(c) = cooldown {
        // I/O goes on, counted nowhere, then stops (diskspd -C).
        let until = Instant::now() + Duration::from_secs_f64(c);
        while Instant::now() < until && !stop.load(Ordering::Relaxed) && !ended(control, workers) {
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

/// The phase after measuring: the cool-down, if the run has one and was
/// not cut short (`over`), else the stop.
fn after_measure(run: &PlannedRun, over: bool) -> u8 {
    if !over && run.spec.shape.cooldown_s.is_some() {
        PHASE_COOLDOWN
    } else {
        PHASE_STOP
    }
}

/// True when the workers are done by themselves: one failed (or one of
/// another target of the run: `Control::halt`), or all have finished their
/// --io-limit share.
fn ended(control: &Control, workers: usize) -> bool {
    control.failed.load(Ordering::Relaxed)
        || control.halt.load(Ordering::Relaxed)
        || control.finished.load(Ordering::Relaxed) as usize >= workers
}

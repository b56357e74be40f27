//! Runs a plan on this host: prepares the target once, then for each run
//! starts the workers together, collects interval deltas on this thread,
//! switches warm-up to measurement, and merges the workers' statistics.

pub mod startgate;
pub mod steady;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crate::error::{Result, VbError};
use crate::io::host::{self, cpu_seconds};
use crate::io::target::{self, PrepareOptions, Prepared, Progress};
use crate::io::worker::{
    self, Control, PHASE_MEASURE, PHASE_STOP, PHASE_WARMUP, PhaseStats, WorkerSetup,
};
use crate::io::workload::IoGen;
use crate::plan::{Plan, PlannedRun};
use crate::result::{
    Cpu, Histograms, Interval, IntervalOp, LatSummary, LittlesLaw, MAX_INTERVALS, OpPair, OpTotals,
    Phase, PhaseName, RateResult, ResultDoc, RunResult, SCHEMA, SteadyResult, TargetInfo, Tool,
    Totals,
};
use crate::spec::{Arrivals, StopRule};
use crate::stats::{BucketedHistogram, CounterSnapshot, LiveCounters};
use startgate::ThreadGate;

/// What the executor tells whoever is watching (the terminal, or nothing).
pub trait Observer: Progress {
    fn note(&self, message: &str);
    fn run_started(&self, index: usize, count: usize, run: &PlannedRun);
    /// The workers were released at `at` (wall clock): the run's I/O begins.
    /// A multi-host agent reports it so the coordinator can measure start skew.
    fn io_started(&self, _run: &PlannedRun, _at: SystemTime) {}
    /// Called once per interval with the time so far and the run's total.
    fn interval(&self, run: &PlannedRun, elapsed_s: f64, total_s: f64, iv: &Interval);
    fn run_finished(&self, run: &RunResult);
}

/// Longest time the collector sleeps before looking at Ctrl-C and failures.
const POLL: Duration = Duration::from_millis(50);

pub fn execute(plan: &Plan, obs: &dyn Observer, stop: &Arc<AtomicBool>) -> Result<ResultDoc> {
    let job = &plan.job;
    let started = crate::result::now_rfc3339();
    let mut doc = ResultDoc {
        schema: SCHEMA.into(),
        tool: Tool::this(),
        host: host::this_host(),
        started,
        spec: job.clone(),
        target: None,
        runs: Vec::new(),
        interrupted: false,
        error: None,
        notes: plan.notes.clone(),
        cluster: None,
    };
    let mut sets = match prepare(plan, obs, stop) {
        Ok(p) => p,
        Err(_) if stop.load(Ordering::Relaxed) => {
            doc.interrupted = true;
            return Ok(doc);
        }
        Err(e) => return Err(e),
    };
    for (_, p) in &sets {
        doc.notes.extend(p.notes.iter().cloned());
    }
    let prepared = sets.remove(0).1;
    doc.target = Some(TargetInfo {
        kind: prepared.kind,
        path: job.target.path.display().to_string(),
        files: prepared.layout.nfiles,
        file_size: prepared.layout.file_size,
        align: prepared.align,
        mount: match prepared.kind {
            target::TargetKind::BlockDevice => None,
            _ => crate::io::mounts::for_path(&job.target.path),
        },
    });
    sets.insert(0, (prepared.layout.nfiles, prepared));
    for (i, run) in plan.runs.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            doc.interrupted = true;
            break;
        }
        if let Some(why) = run
            .spec
            .stop_rule
            .as_ref()
            .and_then(|rule| stop_reason(rule, &doc.runs))
        {
            let note = format!("skipped {}: {why}", run.spec.name);
            obs.note(&note);
            doc.notes.push(note);
            continue;
        }
        let run = match resolve_rate(run, &doc.runs) {
            Ok(r) => r,
            Err(e) => {
                doc.error = Some(e.to_string());
                break;
            }
        };
        let run = &run;
        let files = run.spec.files.unwrap_or(job.target.files);
        let Some((_, prepared)) = sets.iter().find(|(f, _)| *f == files) else {
            doc.error = Some(format!(
                "run '{}': no file set of {files} files was prepared",
                run.spec.name
            ));
            break;
        };
        obs.run_started(i, plan.runs.len(), run);
        match run_one(plan, run, prepared, obs, stop, &|| Some(Instant::now())) {
            Ok(result) => {
                obs.run_finished(&result);
                let interrupted = result.interrupted;
                doc.runs.push(result);
                if interrupted {
                    doc.interrupted = true;
                    break;
                }
            }
            Err((_, None)) if stop.load(Ordering::Relaxed) => {
                // Stopped while the run was starting: nothing was measured.
                doc.interrupted = true;
                break;
            }
            Err((e, partial)) => {
                if let Some(r) = partial {
                    doc.runs.push(*r);
                }
                doc.error = Some(e.to_string());
                break;
            }
        }
    }
    Ok(doc)
}

/// Prepares the plan's target as `execute` does (one file set per distinct
/// file count the runs use), checks alignment and passes the notes to the
/// observer. A multi-host agent calls it once per target it was given.
pub fn prepare(
    plan: &Plan,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<(u32, Prepared)>> {
    raise_fd_limit();
    let job = &plan.job;
    let opts = PrepareOptions {
        size: job.target.size,
        files: job.target.files,
        direct: job.target.direct,
        allow_overwrite: job.target.allow_overwrite,
        needs_write: plan.needs_write(),
        progress: obs,
        stop,
    };
    let sets = prepare_sets(plan, &opts)?;
    for (_, p) in &sets {
        check_alignment(plan, p)?;
        for n in &p.notes {
            obs.note(n);
        }
    }
    Ok(sets)
}

/// Prepares one file set per distinct file count the runs use: the target
/// itself when all runs agree, else `files-N/` subdirectories of it.
fn prepare_sets(plan: &Plan, opts: &PrepareOptions) -> Result<Vec<(u32, Prepared)>> {
    let job = &plan.job;
    let mut counts: Vec<u32> = Vec::new();
    for r in &plan.runs {
        let f = r.spec.files.unwrap_or(job.target.files);
        if !counts.contains(&f) {
            counts.push(f);
        }
    }
    if counts.len() <= 1 {
        let files = counts.first().copied().unwrap_or(job.target.files);
        let p = target::prepare(&plan.target, &PrepareOptions { files, ..*opts })?;
        return Ok(vec![(files, p)]);
    }
    if plan.target.kind != target::TargetKind::Directory {
        return Err(VbError::input(format!(
            "runs use different file counts ({counts:?}); that needs a directory target, and {} is not one",
            job.target.path.display()
        )));
    }
    let mut sets = Vec::new();
    for files in counts {
        // Reached without following links: a planted files-N link is refused.
        let p = target::prepare_subset(
            &job.target.path,
            &format!("files-{files}"),
            &PrepareOptions { files, ..*opts },
        )?;
        sets.push((files, p));
    }
    Ok(sets)
}

/// Why a run with this stop rule should be skipped, judging the runs of its
/// group already done; None to go ahead.
pub fn stop_reason(rule: &StopRule, done: &[RunResult]) -> Option<String> {
    let group: Vec<&RunResult> = done
        .iter()
        .filter(|r| {
            r.workload
                .stop_rule
                .as_ref()
                .is_some_and(|s| s.group == rule.group)
        })
        .collect();
    if let (Some(pct), [.., prev, last]) = (rule.gain_below_pct, group.as_slice()) {
        let (a, b) = (prev.total_iops(), last.total_iops());
        if b < a * (1.0 + pct / 100.0) {
            return Some(format!(
                "IOPS grew {:.1}% from {} to {} (less than {pct}%): the knee is passed",
                (b / a - 1.0) * 100.0,
                prev.name,
                last.name
            ));
        }
    }
    if let (Some(limit), Some(last)) = (rule.latency_above_us, group.last()) {
        let lat = last.mean_latency_us();
        if lat > limit {
            return Some(format!(
                "{} reached a mean latency of {lat:.0}us, above the {limit:.0}us limit",
                last.name
            ));
        }
    }
    None
}

/// Turns a rate given as a percentage of an earlier run into IOPS.
pub fn resolve_rate(run: &PlannedRun, done: &[RunResult]) -> Result<PlannedRun> {
    let mut run = run.clone();
    if let Some(p) = &run.spec.rate_pct {
        let base = done.iter().find(|r| r.name == p.of).ok_or_else(|| {
            VbError::input(format!(
                "run '{}' sets its rate as {}% of run '{}', which has not run",
                run.spec.name, p.percent, p.of
            ))
        })?;
        let iops = base.total_iops() * p.percent / 100.0;
        if iops <= 0.0 {
            return Err(VbError::run(format!(
                "run '{}': run '{}' measured no IOPS to take {}% of",
                run.spec.name, p.of, p.percent
            )));
        }
        run.spec.rate_iops = Some(iops);
    }
    Ok(run)
}

fn check_alignment(plan: &Plan, prepared: &Prepared) -> Result<()> {
    if !plan.job.target.direct {
        return Ok(());
    }
    for r in &plan.runs {
        for b in &r.spec.bs {
            if b.bytes % prepared.align != 0 {
                return Err(VbError::input(format!(
                    "--bs {} is not a multiple of {} bytes, the direct-I/O alignment of {}; \
                     use a multiple of it, or --buffered",
                    b.bytes,
                    prepared.align,
                    plan.job.target.path.display()
                )));
            }
        }
    }
    Ok(())
}

fn raise_fd_limit() {
    let lim = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    if lim.current < lim.maximum {
        let _ = rustix::process::setrlimit(
            rustix::process::Resource::Nofile,
            rustix::process::Rlimit {
                current: lim.maximum,
                maximum: lim.maximum,
            },
        );
    }
}

/// A failed run: why, and what it measured before failing.
pub type RunError = (VbError, Option<Box<RunResult>>);

/// Decides when a run's I/O starts, once every worker is set up: `Some(now)`
/// on a single host; on a multi-host agent, after the coordinator's barrier,
/// the common absolute start time. `None` abandons the run before any I/O.
pub type StartGate<'a> = &'a (dyn Fn() -> Option<Instant> + Sync);

/// Runs one planned run on a prepared target: sets the workers up, waits for
/// `gate`'s start time, collects intervals (reported to `obs`) and merges the
/// workers' statistics.
pub fn run_one(
    plan: &Plan,
    run: &PlannedRun,
    prepared: &Prepared,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
    gate: StartGate,
) -> std::result::Result<RunResult, RunError> {
    let job = &plan.job;
    let spec = &run.spec;
    let n = run.io_threads;
    let control = Arc::new(Control::default());
    let counters: Vec<Arc<LiveCounters>> =
        (0..n).map(|_| Arc::new(LiveCounters::default())).collect();
    let mut setups = Vec::with_capacity(n as usize);
    for w in 0..n {
        let io_gen = IoGen::new(
            spec.rw,
            spec.read_pct,
            &spec.bs,
            prepared.layout,
            job.seed,
            w,
            n,
        );
        if !spec.rw.is_random() && io_gen.region_too_small() {
            return Err((
                VbError::input(format!(
                    "run '{}': {} sequential streams over {} leave less than one block each; \
                     use fewer threads or a larger --size",
                    spec.name,
                    n,
                    crate::units::format_size(prepared.layout.total())
                )),
                None,
            ));
        }
        let files = if run.engine == crate::io::engine::EngineKind::Null {
            Vec::new()
        } else {
            target::open_files(prepared, job.target.direct).map_err(|e| (e, None))?
        };
        setups.push(WorkerSetup {
            index: w,
            engine: run.engine,
            depth: run.depth,
            files,
            io_gen,
            max_bs: spec.max_bs() as usize,
            buf_align: 4096,
            seed: job.seed,
            budget: spec
                .io_limit
                .map(|limit| io_share(limit, spec.min_bs(), w, n)),
            rate: spec.rate_iops.map(|iops| {
                // Each worker carries an equal share of the rate, its first
                // I/O staggered so the workers interleave evenly.
                let gap = Duration::from_secs_f64(n as f64 / iops);
                worker::Schedule {
                    gap,
                    poisson: spec.arrivals == Arrivals::Poisson,
                    offset: gap.mul_f64(w as f64 / n as f64),
                }
            }),
            control: control.clone(),
            counters: counters[w as usize].clone(),
        });
    }

    // Workers report ready once set up, then wait to be released together;
    // the gate can be called off, so a start-up failure never strands them.
    let start_gate = Arc::new(ThreadGate::new());
    let warmup = Duration::from_secs_f64(spec.warmup_s);
    let duration = Duration::from_secs_f64(spec.duration_s);
    let interval = Duration::from_secs_f64(job.interval_s);
    control.phase.store(
        if warmup.is_zero() {
            PHASE_MEASURE
        } else {
            PHASE_WARMUP
        },
        Ordering::Relaxed,
    );

    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(setups.len());
        let mut spawn_error = None;
        for setup in setups {
            let gate = start_gate.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("vb-io-{}", setup.index))
                .spawn_scoped(s, move || {
                    // The files opened above proved the target opens;
                    // the thread reopens them in its own descriptor
                    // table, which makes every psync I/O cheaper.
                    let mut setup = setup;
                    let reopen = || {
                        target::open_files(prepared, job.target.direct).map_err(|e| e.to_string())
                    };
                    if let Err(e) = worker::own_fd_table(&mut setup.files, reopen) {
                        return worker::not_started(&setup.control, e, || gate.arrive());
                    }
                    worker::run(setup, || {
                        gate.arrive();
                        // Called off: the phase is already STOP, so the
                        // worker ends without issuing any I/O.
                        gate.wait_start();
                    })
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error = Some(e);
                    break;
                }
            }
        }
        // Ends a run before any I/O: the workers see STOP once released.
        let call_off = |handles: Vec<std::thread::ScopedJoinHandle<'_, worker::WorkerResult>>| {
            control.phase.store(PHASE_STOP, Ordering::Relaxed);
            start_gate.release(false);
            let mut first_error = None;
            for h in handles {
                match h.join() {
                    Ok(r) => first_error = first_error.or(r.error),
                    Err(_) => first_error = first_error.or(Some("an I/O thread panicked".into())),
                }
            }
            first_error
        };
        if let Some(e) = spawn_error {
            let started = handles.len();
            call_off(handles);
            return Err((
                VbError::run(format!(
                    "run '{}': cannot start I/O thread {} of {n}: {e} (a limit on processes \
                     or memory; fewer --threads or a lower --iodepth need fewer threads)",
                    spec.name,
                    started + 1
                )),
                None,
            ));
        }
        if !start_gate.wait_ready(n as usize, stop, || control.failed.load(Ordering::Relaxed)) {
            let error = call_off(handles);
            let msg = match error {
                Some(e) if !stop.load(Ordering::Relaxed) => format!("run '{}': {e}", spec.name),
                _ => format!("run '{}' was interrupted while starting", spec.name),
            };
            return Err((VbError::run(msg), None));
        }
        let Some(start) = gate() else {
            call_off(handles);
            return Err((
                VbError::run(format!(
                    "run '{}' was called off before it started",
                    spec.name
                )),
                None,
            ));
        };
        let wait = start.saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        start_gate.release(true);
        obs.io_started(run, SystemTime::now());
        let timeline = collect(
            run, &control, &counters, warmup, duration, interval, obs, stop,
        );
        control.phase.store(PHASE_STOP, Ordering::Relaxed);
        let mut warm = PhaseStats::default();
        let mut meas = PhaseStats::default();
        let mut error = None;
        for h in handles {
            match h.join() {
                Ok(r) => {
                    warm.merge(&r.warmup);
                    meas.merge(&r.measure);
                    if error.is_none() {
                        error = r.error;
                    }
                }
                Err(_) => error = Some("an I/O thread panicked".to_string()),
            }
        }
        let result = build_result(run, timeline, &warm, &meas);
        match error {
            Some(e) => Err((
                VbError::run(format!("run '{}': {e}", spec.name)),
                Some(Box::new(result)),
            )),
            None => Ok(result),
        }
    })
}

/// What the collector saw: intervals, phase boundaries, CPU and whether it
/// was cut short.
struct Timeline {
    intervals: Vec<Interval>,
    warmup: Option<(SystemTime, f64)>,
    measure: (SystemTime, f64),
    cpu: Cpu,
    steady: Option<SteadyResult>,
    interrupted: bool,
}

#[allow(clippy::too_many_arguments)]
fn collect(
    run: &PlannedRun,
    control: &Control,
    counters: &[Arc<LiveCounters>],
    warmup: Duration,
    duration: Duration,
    interval: Duration,
    obs: &dyn Observer,
    stop: &AtomicBool,
) -> Timeline {
    let t0 = Instant::now();
    let wall0 = SystemTime::now();
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
    let mut prev_t = t0;
    let mut log = IntervalLog::default();
    let mut cpu0 = cpu_seconds();
    let mut measure_wall = wall0;
    let mut measure_start = t0;
    let mut warmup_done: Option<(SystemTime, f64)> = None;
    let mut interrupted = false;
    let rated = run.spec.rate_iops.is_some();
    let mut warm_iops: Vec<f64> = Vec::new();
    let mut steady: Option<SteadyResult> = None;
    loop {
        let tick = (phase_start + interval * k).min(phase_end);
        // Sleep in short steps so Ctrl-C and failures are seen quickly.
        loop {
            let now = Instant::now();
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
        };
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
            warmup_done = Some((wall0, (now - t0).as_secs_f64()));
            phase = PHASE_MEASURE;
            phase_start = now;
            phase_end = now + duration;
            measure_start = now;
            measure_wall = SystemTime::now();
            cpu0 = cpu_seconds();
            k = 1;
        } else {
            break;
        }
    }
    control.phase.store(PHASE_STOP, Ordering::Relaxed);
    let end = control
        .all_finished_at(counters.len())
        .unwrap_or_else(Instant::now)
        .max(measure_start);
    let cpu1 = cpu_seconds();
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
    }
}

/// True when the workers are done by themselves: one failed, or all have
/// finished their --io-limit share.
fn ended(control: &Control, workers: usize) -> bool {
    control.failed.load(Ordering::Relaxed)
        || control.finished.load(Ordering::Relaxed) as usize >= workers
}

/// Worker `w`'s share of an --io-limit of `limit` bytes over `n` workers, in
/// whole units of the smallest block size so a fixed block size splits exactly.
pub fn io_share(limit: u64, unit: u64, w: u32, n: u32) -> u64 {
    let units = limit / unit.max(1);
    let (base, extra) = (units / n as u64, units % n as u64);
    (base + u64::from((w as u64) < extra)) * unit
}

fn build_result(run: &PlannedRun, t: Timeline, warm: &PhaseStats, meas: &PhaseStats) -> RunResult {
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
    let rated = run.spec.rate_iops.is_some();
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
    }
}

/// Whether a rate-limited run kept up with its target. Evenly spaced I/Os
/// give an exact count, so 1% short means the storage fell behind. Poisson
/// arrivals give a count that varies by itself (standard deviation
/// sqrt(expected)), so only a shortfall beyond three of those says so;
/// anything less is sampling noise, not saturation.
pub fn rate_reached(target: f64, achieved: f64, seconds: f64, arrivals: Arrivals) -> bool {
    let expected = target * seconds;
    let got = achieved * seconds;
    let slack = match arrivals {
        Arrivals::Uniform => 0.01 * expected,
        Arrivals::Poisson => (3.0 * expected.sqrt()).max(0.01 * expected),
    };
    got >= expected - slack
}

/// Interval records with a bounded length: past `MAX_INTERVALS`, adjacent
/// pairs in the same phase are merged (time-weighted), halving the count.
#[derive(Default)]
pub struct IntervalLog {
    items: Vec<Interval>,
}

impl IntervalLog {
    pub fn push(&mut self, iv: Interval) {
        self.items.push(iv);
        if self.items.len() >= MAX_INTERVALS {
            self.compact();
        }
    }

    fn compact(&mut self) {
        let old = std::mem::take(&mut self.items);
        let mut it = old.into_iter().peekable();
        while let Some(a) = it.next() {
            match it.peek() {
                Some(b) if b.phase == a.phase => {
                    let b = it.next().unwrap_or_else(|| unreachable!("peeked"));
                    self.items.push(merge_intervals(&a, &b));
                }
                _ => self.items.push(a),
            }
        }
    }

    pub fn into_vec(self) -> Vec<Interval> {
        self.items
    }
}

fn merge_intervals(a: &Interval, b: &Interval) -> Interval {
    let secs = a.duration_s + b.duration_s;
    let op = |x: &IntervalOp, y: &IntervalOp| {
        let (ox, oy) = (x.iops * a.duration_s, y.iops * b.duration_s);
        let ops = ox + oy;
        IntervalOp {
            iops: ops / secs,
            mib_s: (x.mib_s * a.duration_s + y.mib_s * b.duration_s) / secs,
            lat_us_mean: if ops > 0.0 {
                (x.lat_us_mean * ox + y.lat_us_mean * oy) / ops
            } else {
                0.0
            },
            service_us_mean: match (x.service_us_mean, y.service_us_mean) {
                (Some(sx), Some(sy)) if ops > 0.0 => Some((sx * ox + sy * oy) / ops),
                (a, b) => a.or(b),
            },
        }
    };
    Interval {
        t_s: b.t_s,
        duration_s: secs,
        phase: a.phase,
        read: op(&a.read, &b.read),
        write: op(&a.write, &b.write),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(t: f64, phase: PhaseName, iops: f64, lat: f64) -> Interval {
        Interval {
            t_s: t,
            duration_s: 1.0,
            phase,
            read: IntervalOp {
                iops,
                mib_s: iops / 256.0,
                lat_us_mean: lat,
                service_us_mean: None,
            },
            write: IntervalOp::default(),
        }
    }

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

    #[test]
    fn io_limit_shares_add_up_to_the_limit() {
        for (limit, unit, n) in [
            (64 << 20, 4096, 3),
            (4096 * 10, 4096, 4),
            (1 << 20, 8192, 128),
        ] {
            let total: u64 = (0..n).map(|w| io_share(limit, unit, w, n)).sum();
            assert_eq!(total, limit / unit * unit);
        }
    }

    #[test]
    fn interval_log_stays_bounded_and_keeps_the_totals() {
        let mut log = IntervalLog::default();
        let n = 3 * MAX_INTERVALS + 17;
        for i in 0..n {
            log.push(iv(
                i as f64 + 1.0,
                PhaseName::Measure,
                1000.0 + (i % 7) as f64,
                100.0 + (i % 3) as f64,
            ));
        }
        let v = log.into_vec();
        assert!(v.len() < MAX_INTERVALS);
        let secs: f64 = v.iter().map(|i| i.duration_s).sum();
        assert!((secs - n as f64).abs() < 1e-6);
        let ops: f64 = v.iter().map(|i| i.read.iops * i.duration_s).sum();
        let exact: f64 = (0..n).map(|i| 1000.0 + (i % 7) as f64).sum();
        assert!((ops - exact).abs() < 1e-6 * exact);
        assert_eq!(v.last().unwrap().t_s, n as f64);
    }

    #[test]
    fn intervals_of_different_phases_are_never_merged() {
        let mut log = IntervalLog::default();
        log.push(iv(1.0, PhaseName::Warmup, 10.0, 1.0));
        for i in 0..MAX_INTERVALS {
            log.push(iv(i as f64 + 2.0, PhaseName::Measure, 20.0, 1.0));
        }
        let v = log.into_vec();
        assert_eq!(v[0].phase, PhaseName::Warmup);
        assert_eq!(v[0].duration_s, 1.0);
        assert!(v[1..].iter().all(|i| i.phase == PhaseName::Measure));
    }
}

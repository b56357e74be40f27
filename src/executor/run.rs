//! One run on a prepared target: set the workers up, release them at the
//! start time, let the collector watch them, stop them and merge what they
//! measured.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::Observer;
use super::collect::collect;
use super::record::build_result;
use super::set_files::{advise, open_set, prove_set_opens, readvise};
use super::startgate::ThreadGate;
use crate::error::VbError;
use crate::events::Raise as _;
use crate::io::target::Prepared;
use crate::io::worker::{
    self, Control, PHASE_MEASURE, PHASE_STOP, PHASE_WARMUP, PhaseStats, WorkerSetup,
};
use crate::io::workload::IoGen;
use crate::plan::{Plan, PlannedRun};
use crate::result::RunResult;
use crate::spec::Arrivals;
use crate::stats::LiveCounters;

/// A failed run: why, and what it measured before failing.
pub(crate) type RunError = (VbError, Option<Box<RunResult>>);

/// Decides when a run's I/O starts, once every worker is set up: `Some(now)`
/// on a single host; on a multi-host agent, after the coordinator's barrier,
/// the common absolute start time. `None` abandons the run before any I/O.
pub(super) type StartGate<'a> = &'a (dyn Fn() -> Option<Instant> + Sync);

/// What the targets of one run share: the first to fail ends the others'
/// runs at once, what they measured kept (`--on-host-loss fail`), unless
/// it lost its server and the job goes on without it (`keep_going`:
/// `--on-host-loss continue`, a list of targets only).
#[derive(Default)]
pub(crate) struct Together {
    pub(crate) halt: Arc<AtomicBool>,
    pub(crate) keep_going: bool,
}

/// Runs one planned run on a prepared target: sets the workers up, waits for
/// `gate`'s start time, collects intervals (reported to `obs`) and merges the
/// workers' statistics. It ends early, as if its time were up, when another
/// target of the run failed (`together`).
pub(crate) fn run_one(
    plan: &Plan,
    run: &PlannedRun,
    prepared: &Prepared,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
    (gate, together): (StartGate, &Together),
) -> std::result::Result<RunResult, RunError> {
    let job = &plan.job;
    let spec = &run.spec;
    let n = run.io_threads;
    let control = Arc::new(Control {
        halt: together.halt.clone(),
        stop: stop.clone(),
        ..Control::default()
    });
    let counters: Vec<Arc<LiveCounters>> =
        (0..n).map(|_| Arc::new(LiveCounters::default())).collect();
    let report = Arc::new(std::sync::Mutex::new(Default::default()));
    let (setups, own_tables) = set_up(plan, run, prepared, &control, &counters, &report)?;
    let buffered = !job.target.direct || spec.buffered;

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

    let drop_per_pass = crate::plan::drops_cache_per_pass(job, run);
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(setups.len());
        let mut spawn_error = None;
        for (setup, meta, replay) in setups {
            let gate = start_gate.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("vb-io-{}", setup.index))
                .spawn_scoped(s, move || {
                    // The set opened in set_up proved the target opens;
                    // a local set's thread opens its own in a descriptor
                    // table of its own, which makes every psync I/O cheaper
                    // and keeps one set per table.
                    let mut setup = setup;
                    let reopen = || open_set(plan, run, prepared).map_err(|e| e.to_string());
                    if own_tables {
                        if let Err(e) = worker::own_fd_table(&mut setup.files, reopen) {
                            return worker::not_started(&setup.control, e, || gate.arrive());
                        }
                    }
                    if let Err(e) = readvise(
                        &mut setup,
                        (buffered, spec.rw.is_random()),
                        drop_per_pass,
                        prepared,
                    ) {
                        return worker::not_started(&setup.control, e, || gate.arrive());
                    }
                    let ready = || {
                        gate.arrive();
                        // Called off: the phase is already STOP, so the
                        // worker ends without issuing any I/O.
                        gate.wait_start();
                    };
                    match (meta, replay) {
                        (Some(m), _) => crate::io::meta::worker::run(m, setup, ready),
                        (None, Some(r)) => crate::io::replay::worker::run(r, setup, ready),
                        (None, None) => worker::run(setup, ready),
                    }
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
        // Worked out before the start: it walks sysfs, which takes a moment.
        let sampler = (crate::io::counters::enabled() && !job.reading.no_counters)
            .then(|| crate::io::counters::Sampler::for_target(&job.target.path));
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
        // The run's clock starts before the workers are released: on a busy
        // machine this thread may be scheduled well after they start, and
        // their first operations must not fall outside the measured time.
        let (t0, started_at) = super::startgate::sleep_until(start);
        let journal = super::data::watch_journal(prepared, &control);
        super::rescue::doing(if warmup.is_zero() {
            format!("running '{}'", spec.name)
        } else {
            format!("warming up run '{}'", spec.name)
        });
        start_gate.release(true);
        obs.io_started(run, started_at);
        let timeline = collect(
            run,
            t0,
            &control,
            &counters,
            warmup,
            duration,
            interval,
            (obs, &plan.job.target.path.display().to_string()),
            stop,
            sampler.as_ref(),
        );
        control.phase.store(PHASE_STOP, Ordering::Relaxed);
        let lost = control.lost.load(Ordering::Relaxed);
        if control.failed.load(Ordering::Acquire) && !(together.keep_going && lost) {
            together.halt.store(true, Ordering::Relaxed);
        }
        // Kept before the threads are joined: on slow or frozen storage
        // they may not return for a long time, and a stop must still be
        // able to write what was measured.
        if timeline.interrupted && timeline.measure.1 > 0.0 {
            super::rescue::keep_run(super::record::from_intervals(run, &timeline));
        }
        let mut result = gather(handles, run, timeline, prepared, journal, lost);
        match &mut result {
            Ok(r) => super::replay::finish(r, run, &report),
            Err((_, Some(r))) => super::replay::finish(r, run, &report),
            Err(_) => {}
        }
        result
    })
}

/// Each worker's setup: its I/O decisions, its own descriptors of the
/// target's files (with the kernel's read-ahead advice for buffered I/O),
/// its share of the rate and the limit; a metadata run's workers each get
/// their share of the tree beside it. A buffered run first drops the
/// cached pages of the set (fio's invalidate).
fn set_up(
    plan: &Plan,
    run: &PlannedRun,
    prepared: &Prepared,
    control: &Arc<Control>,
    counters: &[Arc<LiveCounters>],
    report: &Arc<std::sync::Mutex<crate::io::replay::worker::ReplayReport>>,
) -> std::result::Result<(Vec<Setup>, bool), RunError> {
    let job = &plan.job;
    let spec = &run.spec;
    let n = run.io_threads;
    let buffered = !job.target.direct || spec.buffered;
    // Local descriptors only: a back end with its own client has no cache
    // of this host's to drop.
    let local = run.engine.caps().storage == crate::spec::Storage::Local;
    if buffered
        && job.target.fill.invalidate
        && !run.engine.caps().diskless
        && local
        && spec.meta.is_none()
    {
        super::set_files::drop_cached(run, prepared, job.target.write_sync)
            .map_err(|e| (e, None))?;
    }
    // A local set's descriptors are each thread's own, opened in its table.
    let own_tables = local && !run.engine.caps().diskless && spec.meta.is_none();
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
        )
        .sized_writes(&spec.write_bs)
        .shaped(&spec.shape);
        let io_gen = if spec.shape.random_map {
            io_gen.visit_once(job.seed, w)
        } else {
            io_gen
        };
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
        let files = if run.engine.caps().diskless || spec.meta.is_some() {
            crate::io::backend::Files::none()
        } else if own_tables {
            // Each thread opens its set in its own table (`own_fd_table`):
            // opened here, every table would copy every worker's set. The
            // first worker's set is opened and closed here all the same, as
            // the proof that the set opens before any thread starts.
            if w == 0 {
                prove_set_opens(plan, run, prepared).map_err(|e| (e, None))?;
            }
            crate::io::backend::Files::none()
        } else {
            open_set(plan, run, prepared).map_err(|e| (e, None))?
        };
        if buffered {
            advise(files.fds(), spec.rw.is_random());
        }
        let setup = WorkerSetup {
            index: w,
            engine: run.engine,
            depth: run.depth,
            files,
            io_gen,
            max_bs: spec.max_bs() as usize,
            buf_align: 4096,
            ring: if spec.has_writes() && spec.replay.is_none() {
                crate::io::ring::ring_bytes(n, run.depth, spec.max_bs() as usize, 4096)
            } else {
                0
            },
            seed: job.seed,
            budget: spec
                .io_limit
                .map(|limit| io_share(limit, spec.min_bs(), w, n)),
            rate: super::shaped::rate(spec, w, n).or_else(|| {
                spec.rate_iops.map(|iops| {
                    // Each worker carries an equal share of the rate, its first
                    // I/O staggered so the workers interleave evenly.
                    let gap = Duration::from_secs_f64(n as f64 / iops);
                    worker::Schedule {
                        gap,
                        poisson: spec.arrivals == Arrivals::Poisson,
                        offset: gap.mul_f64(w as f64 / n as f64),
                        ns_per_byte: 0.0,
                    }
                })
            }),
            control: control.clone(),
            counters: counters[w as usize].clone(),
            data: prepared.data.clone(),
            shaper: crate::io::shaping::Shaper::new(&spec.shape),
        };
        // A metadata run's workers each take a share of the tree instead.
        let replay = super::replay::worker(run, prepared, n, report)?;
        setups.push((
            setup,
            super::meta::worker(plan, run, prepared, w, n),
            replay,
        ));
    }
    Ok((setups, own_tables))
}

/// A worker's setup, and its share of the tree on a metadata run or of
/// the trace on a replay.
type Setup = (
    WorkerSetup,
    Option<crate::io::meta::worker::MetaWorker>,
    Option<crate::io::replay::worker::ReplayWorker>,
);

/// Joins the workers and builds the run's result from what they and the
/// collector measured; a data mismatch or a journal that failed makes the
/// run an error that keeps its result.
fn gather(
    handles: Vec<std::thread::ScopedJoinHandle<'_, worker::WorkerResult>>,
    run: &PlannedRun,
    timeline: super::collect::Timeline,
    prepared: &Prepared,
    journal: Option<Arc<crate::io::verify::journal::Journal>>,
    lost: bool,
) -> std::result::Result<RunResult, RunError> {
    let spec = &run.spec;
    let mut warm = PhaseStats::default();
    let mut meas = PhaseStats::default();
    let mut error = None;
    let mut ops = Vec::new();
    let mut data = crate::io::verify::DataReport::default();
    let mut protocol: Option<crate::result::protocol::ProtoSeen> = None;
    // Each thread's own figures, from its own histograms before the merge
    // (a metadata run's operations are its `ops`, not reads and writes).
    let mut threads = Vec::new();
    let mut left_out = 0u32;
    let measured_s = timeline.measure.1;
    for (i, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(r) => {
                if spec.meta.is_none() {
                    if threads.len() < crate::result::threads::MAX_KEPT_THREADS {
                        threads.push(crate::result::threads::ThreadRun::of(
                            i as u32,
                            &r.measure.read,
                            &r.measure.write,
                            measured_s,
                        ));
                    } else {
                        left_out += 1;
                    }
                }
                warm.merge(&r.warmup);
                meas.merge(&r.measure);
                if let Some(p) = r.protocol {
                    protocol.get_or_insert_with(Default::default).merge(p);
                }
                super::meta::merge(&mut ops, r.meta);
                data.merge(r.data);
                if error.is_none() {
                    error = r.error;
                }
            }
            Err(_) => error = Some("an I/O thread panicked".to_string()),
        }
    }
    let mut result = build_result(run, timeline, &warm, &meas);
    result.threads = threads;
    result.threads_left_out = left_out;
    result.meta_ops = super::meta::results(ops, &result);
    result.protocol = protocol.map(|p| p.stats());
    if prepared.data.as_ref().is_some_and(|d| d.max_errors() > 0) {
        result.data_errors = Some(data.errors);
    }
    let max = prepared.data.as_ref().map_or(0, |d| d.max_errors());
    // The loss of the server is typed (the error's words are the engine's
    // account of it), unless a data mismatch or the journal outranks it.
    let mut kind: fn(String) -> VbError = if lost { VbError::lost } else { VbError::run };
    if let Some(why) = super::data::failure(&data, max) {
        // A mismatch outranks the "stopped at" note that ended the run.
        error = Some(why);
        kind = VbError::run;
    }
    if let Some(why) = super::data::journal_after_run(journal) {
        error = Some(match error {
            Some(e) if !e.contains(&why) => format!("{why}; {e}"),
            _ => why,
        });
        kind = VbError::run;
    }
    match error {
        Some(e) => Err((
            kind(format!("run '{}': {e}", spec.name)),
            Some(Box::new(result)),
        )),
        None => Ok(result),
    }
}

/// Worker `w`'s share of an --io-limit of `limit` bytes over `n` workers, in
/// whole units of the smallest block size so a fixed block size splits exactly.
pub(super) fn io_share(limit: u64, unit: u64, w: u32, n: u32) -> u64 {
    let units = limit / unit.max(1);
    let (base, extra) = (units / n as u64, units % n as u64);
    (base + u64::from((w as u64) < extra)) * unit
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block run through a back end that is not local (the in-memory
    /// test double): its file set made, locked, marked and filled through
    /// the seam, the workers' I/O through its own engine, every I/O
    /// counted there as in the result, and nothing local touched.
    #[test]
    fn a_block_run_goes_through_a_back_end_that_is_not_local() {
        use crate::io::backend::{Storage, mem};
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("far");
        let mut job = crate::spec::tests::sample();
        job.target.path = path.clone();
        job.target.size = 4 << 20;
        job.target.files = 2;
        job.target.direct = false;
        job.engine = crate::spec::EngineChoice::Only(crate::spec::EngineKind::Psync);
        let r = &mut job.runs[0];
        (r.threads, r.iodepth, r.warmup_s, r.duration_s) = (2, 1, 0.0, 30.0);
        r.bs = vec![crate::spec::BlockSize {
            bytes: 4096,
            weight: 1,
        }];
        r.io_limit = Some(1 << 20);
        let plan = crate::plan::plan(job).unwrap();
        let obs = crate::events::Tee::new();
        let stop = Arc::new(AtomicBool::new(false));
        let sets = super::super::prepare::prepare_on(&plan, Storage::Memory, &obs, &stop).unwrap();
        let filled = mem::counts(&path);
        // Two files and the marker made; the lock taken; every byte filled.
        assert_eq!(filled.creates, 3, "{filled:?}");
        assert_eq!(filled.locks, 1, "{filled:?}");
        assert!(filled.file_bytes >= 4 << 20, "{filled:?}");
        assert!(!path.exists(), "a local directory was made");
        let gate = || Some(Instant::now());
        let run = &plan.runs[0];
        let together = Together::default();
        let res = run_one(&plan, run, &sets[0].1, &obs, &stop, (&gate, &together)).unwrap();
        let after = mem::counts(&path);
        let ops = res.totals.read.ops + res.totals.write.ops;
        // --io-limit 1 MiB of 4 KiB I/Os: 256, each one the engine's.
        assert_eq!(ops, 256);
        assert_eq!(after.reads + after.writes, 256, "{after:?}");
        assert_eq!(after.read_bytes + after.write_bytes, 1 << 20, "{after:?}");
        // The set stays locked while prepared: a second prepare is refused.
        let e = super::super::prepare::prepare_on(&plan, Storage::Memory, &obs, &stop).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Refused, "{e}");
        drop(sets);
        // Released, the filled set is reused: nothing made or filled again.
        let again = super::super::prepare::prepare_on(&plan, Storage::Memory, &obs, &stop).unwrap();
        assert_eq!(
            again[0].1.fill.as_ref().map(|f| f.skipped_reused),
            Some(true)
        );
        assert_eq!(mem::counts(&path).creates, after.creates);
    }

    /// A metadata run through the same back end: the tree's skeleton, a
    /// create phase over every file, then a stat and a delete phase, each
    /// operation the back end's and counted there as in the result.
    #[test]
    fn a_metadata_run_goes_through_a_back_end_that_is_not_local() {
        use crate::io::backend::{Storage, mem};
        use crate::spec::meta::{MetaOp, MetaOpWeight, MetaSpec};
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("tree");
        let mut job = crate::spec::tests::sample();
        job.target.path = path.clone();
        job.target.direct = false;
        let phase = |op: MetaOp| crate::spec::RunSpec {
            name: op.to_string(),
            threads: 2,
            iodepth: 1,
            warmup_s: 0.0,
            duration_s: 60.0,
            meta: Some(MetaSpec {
                depth: 2,
                width: 3,
                files_per_dir: 4,
                file_size: vec![crate::spec::BlockSize {
                    bytes: 100,
                    weight: 1,
                }],
                ops: vec![MetaOpWeight { op, weight: 1 }],
                whole_tree: true,
                shared_dirs: false,
                drop_caches: false,
                direct: false,
                host_part: false,
                keep_complete: false,
            }),
            ..crate::spec::RunSpec::default()
        };
        job.runs = vec![
            phase(MetaOp::Create),
            phase(MetaOp::Stat),
            phase(MetaOp::Delete),
        ];
        let plan = crate::plan::plan(job).unwrap();
        let obs = crate::events::Tee::new();
        let stop = Arc::new(AtomicBool::new(false));
        let sets = super::super::prepare::prepare_on(&plan, Storage::Memory, &obs, &stop).unwrap();
        // The skeleton: 3 + 9 directories, made through the seam.
        assert_eq!(mem::counts(&path).tree_dirs, 12);
        let gate = || Some(Instant::now());
        let files = 9 * 4;
        for (i, op) in [MetaOp::Create, MetaOp::Stat, MetaOp::Delete]
            .into_iter()
            .enumerate()
        {
            let run = &plan.runs[i];
            let tree = &sets[0].1;
            let res =
                run_one(&plan, run, tree, &obs, &stop, (&gate, &Together::default())).unwrap();
            let done: u64 = res
                .meta_ops
                .iter()
                .filter(|o| o.op == op)
                .map(|o| o.totals.ops)
                .sum();
            assert_eq!(done, files, "{op}: {:?}", res.meta_ops);
            assert_eq!(mem::counts(&path).meta[op.index()], files, "{op}");
            if op == MetaOp::Create {
                assert_eq!(mem::counts(&path).tree_files, files);
            }
        }
        assert_eq!(mem::counts(&path).tree_files, 0);
        assert!(!path.exists(), "a local directory was made");
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
}

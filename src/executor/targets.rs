//! A job over several local targets (`plan::targets`): every target is
//! prepared (its own file set and lock), then each run starts on all of
//! them at once behind one start line and the results are merged exactly
//! (`result::merge`), each target's own figures kept in `runs[].targets`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use super::startgate::ThreadGate;
use super::{Observer, resolve_rate, run_one, stop_reason};
use crate::error::{Result, VbError};
use crate::io::target::{Prepared, Progress, TargetKind};
use crate::plan::targets::at_target;
use crate::plan::{Plan, PlannedRun};
use crate::result::targets::TargetRun;
use crate::result::{Interval, ResultDoc, RunResult, TargetInfo};
use crate::spec::JobSpec;

type Sets = Vec<(super::meta::SetKey, Prepared)>;

pub fn execute_targets(
    job: &JobSpec,
    plans: &[Plan],
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<ResultDoc> {
    let mut doc = ResultDoc::begin(
        super::this_host(job),
        crate::result::now_rfc3339(),
        job.clone(),
    );
    for p in plans {
        for n in &p.notes {
            if !doc.notes.contains(n) {
                doc.notes.push(n.clone());
            }
        }
    }
    // One target after another: the terminal shows one fill bar at a time,
    // and a refused target stops the job before any other is filled.
    let mut prepared: Vec<Sets> = Vec::with_capacity(plans.len());
    super::rescue::keep(&doc, true);
    super::rescue::doing("preparing the targets");
    for p in plans {
        match super::prepare(p, obs, stop) {
            Ok(sets) => {
                doc.notes
                    .extend(sets.iter().flat_map(|(_, s)| s.notes.clone()));
                doc.fill
                    .extend(sets.iter().flat_map(|(_, s)| s.fill.clone()));
                prepared.push(sets);
            }
            Err(_) if stop.load(Ordering::Relaxed) => {
                doc.interrupted = true;
                return Ok(doc);
            }
            Err(e) => return Err(at_target(&p.job.target.path, e)),
        }
    }
    doc.target = plans.first().zip(prepared.first()).map(|(p, sets)| {
        let first = sets.first().map(|(_, s)| s);
        TargetInfo {
            kind: first.map_or(p.target.kind, |s| s.kind),
            path: p.job.target.path.display().to_string(),
            files: first.map_or(0, |s| s.layout.nfiles),
            file_size: first.map_or(0, |s| s.layout.file_size),
            align: first.map_or(1, |s| s.align),
            mount: match first.map(|s| s.kind) {
                Some(TargetKind::BlockDevice) | None => None,
                _ => crate::io::mounts::for_path(&p.job.target.path),
            },
            memory: super::memory_of(first.map_or(p.target.kind, |s| s.kind), &p.job.target.path),
            blocks: crate::io::mounts::block_sizes(
                &p.job.target.path,
                first.map_or(p.target.kind, |s| s.kind),
            ),
        }
    });
    let mut done: Vec<Vec<RunResult>> = vec![Vec::new(); plans.len()];
    for (i, spec) in job.runs.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            doc.interrupted = true;
            break;
        }
        if let Some(why) = spec
            .stop_rule
            .as_ref()
            .and_then(|rule| stop_reason(rule, &doc.runs))
        {
            let note = format!("skipped {}: {why}", spec.name);
            obs.note(&note);
            doc.notes.push(note);
            continue;
        }
        let whole = whole_run(plans, i, spec);
        super::rescue::doing(format!("running '{}'", spec.name));
        obs.run_started(i, job.runs.len(), &whole);
        let outcomes = run_all(plans, &prepared, &done, i, obs, stop);
        let mut parts = Vec::new();
        let mut rows = Vec::new();
        for (t, o) in outcomes.into_iter().enumerate() {
            let (Some(plan), Some(sets)) = (plans.get(t), prepared.get(t)) else {
                continue;
            };
            let r = match o {
                Ok(r) => r,
                Err(failed) => {
                    let (e, partial) = *failed;
                    if doc.error.is_none() && !(partial.is_none() && stop.load(Ordering::Relaxed)) {
                        doc.error = Some(at_target(&plan.job.target.path, e).to_string());
                    }
                    match partial {
                        Some(r) => *r,
                        None => continue,
                    }
                }
            };
            let kind = sets.first().map_or(plan.target.kind, |(_, s)| s.kind);
            rows.push(TargetRun::of(
                &r,
                t as u32,
                &plan.job.target.path.display().to_string(),
                Some(kind),
            ));
            if let Some(d) = done.get_mut(t) {
                d.push(r.clone());
            }
            parts.push(r);
        }
        if parts.is_empty() {
            doc.interrupted |= stop.load(Ordering::Relaxed);
            break;
        }
        let refs: Vec<&RunResult> = parts.iter().collect();
        let mut merged = crate::result::merge::merge_runs(&refs).map_err(VbError::run)?;
        merged.workload = spec.clone();
        if refs.iter().any(|r| r.workload.rate_iops.is_some()) {
            merged.workload.rate_iops =
                Some(refs.iter().filter_map(|r| r.workload.rate_iops).sum());
        }
        merged.targets = rows;
        obs.run_finished(&merged);
        let interrupted = merged.interrupted;
        doc.runs.push(merged);
        super::rescue::keep(&doc, true);
        if doc.error.is_some() || interrupted || stop.load(Ordering::Relaxed) {
            doc.interrupted |= interrupted || stop.load(Ordering::Relaxed);
            break;
        }
    }
    Ok(doc)
}

/// The run as the user asked for it, for the terminal's run line: the
/// job's threads, and the I/O threads of every target together.
fn whole_run(plans: &[Plan], i: usize, spec: &crate::spec::RunSpec) -> PlannedRun {
    let mut runs = plans.iter().filter_map(|p| p.runs.get(i));
    let first = runs.next();
    let mut whole = PlannedRun {
        spec: spec.clone(),
        engine: first.map_or(crate::io::engine::EngineKind::Psync, |r| r.engine),
        engine_note: first.and_then(|r| r.engine_note.clone()),
        io_threads: first.map_or(0, |r| r.io_threads),
        depth: first.map_or(1, |r| r.depth),
    };
    for r in runs {
        whole.io_threads = whole.io_threads.saturating_add(r.io_threads);
    }
    whole
}

type Outcome = std::result::Result<RunResult, Box<super::RunError>>;

/// Run `i` on every target at once: each target's workers get ready, and
/// all are released together; one that fails before it is ready calls the
/// run off for all (no target measures alone what was meant to be shared).
fn run_all(
    plans: &[Plan],
    prepared: &[Sets],
    done: &[Vec<RunResult>],
    i: usize,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Vec<Outcome> {
    let gate = ThreadGate::new();
    let failed = AtomicUsize::new(0);
    let merger = Merger::new(obs, plans.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter()
            .zip(prepared)
            .zip(done)
            .enumerate()
            .map(|(t, ((plan, sets), done))| {
                let (gate, failed, merger) = (&gate, &failed, &merger);
                s.spawn(move || -> Outcome {
                    let arrived = AtomicBool::new(false);
                    let outcome = one_target(plan, sets, done, i, t, merger, stop, &|| {
                        arrived.store(true, Ordering::SeqCst);
                        gate.arrive();
                        gate.wait_start().then(Instant::now)
                    });
                    if !arrived.load(Ordering::SeqCst) {
                        failed.fetch_add(1, Ordering::SeqCst);
                        gate.arrive();
                    }
                    outcome
                })
            })
            .collect();
        let all_ready = gate.wait_ready(plans.len(), stop, || failed.load(Ordering::SeqCst) > 0);
        gate.release(all_ready && failed.load(Ordering::SeqCst) == 0);
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Box::new((VbError::run("a run thread panicked"), None)))
                })
            })
            .collect()
    })
}

#[allow(clippy::too_many_arguments)]
fn one_target(
    plan: &Plan,
    sets: &Sets,
    done: &[RunResult],
    i: usize,
    t: usize,
    merger: &Merger,
    stop: &Arc<AtomicBool>,
    start: &(dyn Fn() -> Option<Instant> + Sync),
) -> Outcome {
    let planned = plan
        .runs
        .get(i)
        .ok_or_else(|| Box::new((VbError::run(format!("run {i} is not planned")), None)))?;
    // A rate given as a share of an earlier run: this target's own share.
    let run = resolve_rate(planned, done).map_err(|e| Box::new((e, None)))?;
    let prep = super::meta::find_set(sets, &run, &plan.job).map_err(|e| Box::new((e, None)))?;
    let obs = TargetObserver {
        merger,
        t,
        path: plan.job.target.path.display().to_string(),
    };
    run_one(plan, &run, prep, &obs, stop, start).map_err(Box::new)
}

/// Passes the terminal one interval per period, merged over the targets
/// once every target has reported it (as the coordinator does for hosts).
struct Merger<'a> {
    inner: &'a dyn Observer,
    state: Mutex<(Vec<Vec<Interval>>, usize)>,
    started: AtomicBool,
}

impl<'a> Merger<'a> {
    fn new(inner: &'a dyn Observer, n: usize) -> Self {
        Self {
            inner,
            state: Mutex::new((vec![Vec::new(); n], 0)),
            started: AtomicBool::new(false),
        }
    }
}

struct TargetObserver<'a> {
    merger: &'a Merger<'a>,
    t: usize,
    path: String,
}

impl Progress for TargetObserver<'_> {
    fn start(&self, total: u64, what: &str) {
        self.merger.inner.start(total, what);
    }
    fn advance(&self, bytes: u64) {
        self.merger.inner.advance(bytes);
    }
    fn finish(&self) {
        self.merger.inner.finish();
    }
}

impl Observer for TargetObserver<'_> {
    fn note(&self, message: &str) {
        self.merger.inner.note(&format!("{}: {message}", self.path));
    }
    fn run_started(&self, _: usize, _: usize, _: &PlannedRun) {}
    fn io_started(&self, run: &PlannedRun, at: SystemTime) {
        if !self.merger.started.swap(true, Ordering::SeqCst) {
            self.merger.inner.io_started(run, at);
        }
    }
    fn interval(&self, run: &PlannedRun, elapsed_s: f64, total_s: f64, iv: &Interval) {
        let Ok(mut st) = self.merger.state.lock() else {
            return;
        };
        let (series, sent) = &mut *st;
        if let Some(s) = series.get_mut(self.t) {
            s.push(iv.clone());
        }
        let ready = series.iter().map(Vec::len).min().unwrap_or(0);
        while *sent < ready {
            let at: Vec<&Interval> = series.iter().filter_map(|s| s.get(*sent)).collect();
            let merged = crate::result::merge::merge_intervals(&at);
            self.merger.inner.interval(run, elapsed_s, total_s, &merged);
            *sent += 1;
        }
    }
    fn run_finished(&self, _: &RunResult) {}
}

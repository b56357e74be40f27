//! `volbench agent`: the far end of a multi-host run. Started by the
//! coordinator through ssh, it reads protocol messages on stdin and answers
//! on stdout, running the same executor code as a local run (prepare, then
//! `run_one` per target behind the coordinator's start barrier).
//!
//! It never outlives its coordinator: when stdin closes, or nothing at all
//! (not even a heartbeat) arrives for the agreed timeout, it stops its I/O
//! and exits, forcibly if the I/O does not stop within a grace period.

use std::io::{BufReader, Write};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::protocol::{
    AgentJob, FromAgent, PROTOCOL, PlannedRunInfo, PlannedTarget, TargetResult, ToAgent, encode,
    read_line,
};
use crate::error::{Result, VbError};
use crate::executor::{self, Observer};
use crate::io::target::{Prepared, Progress, TargetKind};
use crate::plan::{self, Plan, PlannedRun};
use crate::result::{Interval, RunResult};

/// Heartbeat period and silence timeout until the coordinator's hello says
/// otherwise.
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(1);
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// After a stop for a lost coordinator, the I/O has this long to wind down
/// before the process exits regardless (a hung device must not keep it).
const GRACE: Duration = Duration::from_secs(3);

/// Exit codes of the agent (seen only in the coordinator's messages).
pub const EXIT_LOST: i32 = 75;

pub fn main() -> Result<i32> {
    // A vanished coordinator shows as a write error (then a clean stop),
    // not as SIGPIPE killing the agent mid-write.
    super::set_sigpipe(libc::SIG_IGN);
    let shared = Arc::new(Shared::new());
    let (out_tx, out_rx) = mpsc::channel::<String>();
    let writer = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("vb-agent-out".into())
            .spawn(move || write_loop(out_rx, &shared))
            .map_err(|e| VbError::run(format!("cannot start a thread: {e}")))?
    };
    let link = Link { tx: out_tx };
    let (ctl_tx, ctl_rx) = mpsc::channel::<Control>();
    {
        let shared = shared.clone();
        let link = link.clone();
        std::thread::Builder::new()
            .name("vb-agent-in".into())
            .spawn(move || read_loop(&shared, &link, ctl_tx))
            .map_err(|e| VbError::run(format!("cannot start a thread: {e}")))?;
    }
    {
        let shared = shared.clone();
        let link = link.clone();
        std::thread::Builder::new()
            .name("vb-agent-watch".into())
            .spawn(move || watchdog(&shared, &link))
            .map_err(|e| VbError::run(format!("cannot start a thread: {e}")))?;
    }
    let code = session(&shared, &link, ctl_rx);
    // Let the last messages out, but never wait on a stuck stdout.
    drop(link);
    let deadline = Instant::now() + Duration::from_secs(2);
    while !writer.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    // Exit from here: threads blocked on stdin or a hung stdout must not
    // keep the process alive.
    std::process::exit(code);
}

/// State the agent's threads share.
struct Shared {
    t0: Instant,
    /// Milliseconds since t0 when the coordinator was last heard.
    last_heard_ms: AtomicU64,
    heartbeat_ms: AtomicU64,
    timeout_ms: AtomicU64,
    /// Stops a fill or a run in progress.
    stop: Arc<AtomicBool>,
    /// The coordinator is gone (stdin closed, unreadable, or silent).
    lost: AtomicBool,
    fill_done: AtomicU64,
    fill_total: AtomicU64,
}

impl Shared {
    fn new() -> Self {
        Self {
            t0: Instant::now(),
            last_heard_ms: AtomicU64::new(0),
            heartbeat_ms: AtomicU64::new(DEFAULT_HEARTBEAT.as_millis() as u64),
            timeout_ms: AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64),
            stop: Arc::new(AtomicBool::new(false)),
            lost: AtomicBool::new(false),
            fill_done: AtomicU64::new(0),
            fill_total: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }

    fn lose(&self, why: &str) {
        if !self.lost.swap(true, Ordering::SeqCst) {
            eprintln!("volbench agent: {why}; stopping");
        }
        self.stop.store(true, Ordering::SeqCst);
    }
}

#[derive(Clone)]
struct Link {
    tx: Sender<String>,
}

impl Link {
    fn send(&self, msg: &FromAgent) {
        // The writer is gone only when stdout is: the watchdog handles that.
        let _ = self.tx.send(encode(msg));
    }
}

/// What the reader passes on to the session (heartbeats and pings are
/// answered by the reader itself).
enum Control {
    Msg(ToAgent),
    Closed,
}

fn write_loop(rx: Receiver<String>, shared: &Shared) {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in rx {
        if out
            .write_all(line.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
        {
            shared.lose("the coordinator's end of stdout closed");
            return;
        }
    }
}

fn read_loop(shared: &Shared, link: &Link, ctl: Sender<Control>) {
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut buf = Vec::new();
    loop {
        match read_line(&mut input, &mut buf) {
            Ok(Some(())) => {}
            Ok(None) => {
                shared.lose("stdin closed (the coordinator is gone)");
                break;
            }
            Err(e) => {
                shared.lose(&format!("cannot read the coordinator: {e}"));
                break;
            }
        }
        shared
            .last_heard_ms
            .store(shared.now_ms(), Ordering::SeqCst);
        let msg: ToAgent = match serde_json::from_slice(&buf) {
            Ok(m) => m,
            Err(e) => {
                link.send(&FromAgent::Error {
                    message: format!("unreadable message from the coordinator: {e}"),
                    code: 2,
                });
                shared.lose("unreadable message from the coordinator");
                break;
            }
        };
        match msg {
            ToAgent::Heartbeat => {}
            ToAgent::Ping { id, sent_ns } => link.send(&FromAgent::Pong {
                id,
                sent_ns,
                agent_ns: unix_ns(SystemTime::now()),
            }),
            ToAgent::Stop => {
                shared.stop.store(true, Ordering::SeqCst);
                let _ = ctl.send(Control::Msg(ToAgent::Stop));
            }
            other => {
                if ctl.send(Control::Msg(other)).is_err() {
                    break;
                }
            }
        }
    }
    let _ = ctl.send(Control::Closed);
}

/// Sends heartbeats and fill progress; stops everything when the
/// coordinator falls silent, and ends the process if the stop hangs.
fn watchdog(shared: &Shared, link: &Link) {
    let mut last_beat = Instant::now();
    let mut last_progress = (0, 0);
    let mut lost_at: Option<Instant> = None;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let hb = Duration::from_millis(shared.heartbeat_ms.load(Ordering::Relaxed));
        if last_beat.elapsed() >= hb {
            last_beat = Instant::now();
            let p = (
                shared.fill_done.load(Ordering::Relaxed),
                shared.fill_total.load(Ordering::Relaxed),
            );
            if p != last_progress {
                last_progress = p;
                link.send(&FromAgent::Progress {
                    done: p.0,
                    total: p.1,
                });
            }
            link.send(&FromAgent::Heartbeat);
        }
        let silent = shared
            .now_ms()
            .saturating_sub(shared.last_heard_ms.load(Ordering::SeqCst));
        let timeout = shared.timeout_ms.load(Ordering::Relaxed);
        if silent > timeout {
            shared.lose(&format!(
                "no word from the coordinator for {:.1}s",
                silent as f64 / 1000.0
            ));
        }
        if shared.lost.load(Ordering::SeqCst) {
            let at = *lost_at.get_or_insert_with(Instant::now);
            if at.elapsed() > GRACE {
                eprintln!("volbench agent: the I/O did not stop in time; exiting");
                std::process::exit(EXIT_LOST);
            }
        }
    }
}

fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The conversation; returns the exit code.
fn session(shared: &Shared, link: &Link, ctl: Receiver<Control>) -> i32 {
    // The hello comes first and fast: the coordinator sends it on connect.
    let hello = match ctl.recv_timeout(DEFAULT_TIMEOUT) {
        Ok(Control::Msg(m)) => m,
        Ok(Control::Closed) => return EXIT_LOST,
        Err(_) => {
            eprintln!(
                "volbench agent: no hello from a coordinator; this command is started by `volbench run --hosts`"
            );
            return EXIT_LOST;
        }
    };
    let ToAgent::Hello {
        protocol,
        version,
        heartbeat_ms,
        timeout_ms,
    } = hello
    else {
        link.send(&FromAgent::Error {
            message: "the coordinator did not start with hello".into(),
            code: 2,
        });
        return 2;
    };
    link.send(&FromAgent::Hello {
        protocol: PROTOCOL,
        version: env!("CARGO_PKG_VERSION").into(),
        host: Some(crate::io::host::this_host()),
        pid: std::process::id(),
    });
    if protocol != PROTOCOL {
        let message = format!(
            "this agent is volbench {} speaking protocol {PROTOCOL}; the coordinator is volbench {version} speaking protocol {protocol}",
            env!("CARGO_PKG_VERSION")
        );
        eprintln!("volbench agent: refused: {message}");
        link.send(&FromAgent::Error { message, code: 2 });
        return 2;
    }
    if heartbeat_ms > 0 {
        shared.heartbeat_ms.store(heartbeat_ms, Ordering::Relaxed);
    }
    if timeout_ms > 0 {
        shared.timeout_ms.store(timeout_ms, Ordering::Relaxed);
    }
    let ctl = Mutex::new(ctl);
    let mut job: Option<(AgentJob, Vec<Plan>)> = None;
    // Per target: its file sets (one per file count the runs use), and the
    // results of its runs so far (a rate given as a percentage of an
    // earlier run is resolved against this target's own share).
    let mut prepared: Vec<Vec<(u32, Prepared)>> = Vec::new();
    let mut done_runs: Vec<Vec<RunResult>> = Vec::new();
    loop {
        let msg = {
            let rx = match ctl.lock() {
                Ok(g) => g,
                Err(_) => return 1,
            };
            match rx.recv() {
                Ok(Control::Msg(m)) => m,
                Ok(Control::Closed) | Err(_) => {
                    return if shared.lost.load(Ordering::SeqCst) {
                        EXIT_LOST
                    } else {
                        0
                    };
                }
            }
        };
        match msg {
            ToAgent::Job(j) => match plan_job(&j) {
                Ok(plans) => {
                    link.send(&FromAgent::Planned {
                        targets: plans.iter().map(planned_target).collect(),
                        notes: plans.iter().flat_map(|p| p.notes.iter().cloned()).collect(),
                    });
                    job = Some((*j, plans));
                }
                Err(e) => return fail(link, e),
            },
            ToAgent::Prepare => {
                let Some((_, plans)) = &job else {
                    return fail(link, VbError::input("prepare before the job"));
                };
                match prepare_all(plans, shared, link) {
                    Ok(p) => {
                        link.send(&FromAgent::Prepared {
                            targets: plans
                                .iter()
                                .zip(&p)
                                .map(|(plan, sets)| target_info(plan, sets))
                                .collect(),
                            notes: Vec::new(),
                        });
                        done_runs = vec![Vec::new(); p.len()];
                        prepared = p;
                    }
                    Err(e) => return fail(link, e),
                }
            }
            ToAgent::Run { index } => {
                let Some((_, plans)) = &job else {
                    return fail(link, VbError::input("run before the job"));
                };
                if prepared.len() != plans.len() || index as usize >= plans[0].runs.len() {
                    return fail(link, VbError::input(format!("run {index} is not planned")));
                }
                let done = run_targets(plans, &prepared, &mut done_runs, index, shared, link, &ctl);
                link.send(&done);
            }
            ToAgent::Bye => return 0,
            // A stop between runs: the flag is set; the next run ends at once.
            ToAgent::Stop => {}
            other => {
                return fail(
                    link,
                    VbError::input(format!("unexpected message now: {other:?}")),
                );
            }
        }
    }
}

fn fail(link: &Link, e: VbError) -> i32 {
    link.send(&FromAgent::Error {
        message: e.to_string(),
        code: e.exit_code(),
    });
    e.exit_code()
}

/// One plan per target: the job with the target's path, and with the whole
/// file or device when no --size was given (as a local run does).
fn plan_job(j: &AgentJob) -> Result<Vec<Plan>> {
    if j.targets.is_empty() {
        return Err(VbError::input("no target"));
    }
    let mut plans = Vec::with_capacity(j.targets.len());
    for (i, path) in j.targets.iter().enumerate() {
        let mut spec = j.job.clone();
        spec.target.path = path.clone();
        crate::io::verify::journal_per_target(&mut spec.target.data, i, j.targets.len());
        if !j.size_given {
            let insp = crate::plan::meta::inspect(&spec)?;
            if let (TargetKind::File | TargetKind::BlockDevice, Some(n)) =
                (insp.kind, insp.existing_size)
            {
                spec.target.size = n;
            }
        }
        let plan = plan::plan(spec).map_err(|e| at_target(path, e))?;
        plans.push(plan);
    }
    Ok(plans)
}

fn at_target(path: &std::path::Path, e: VbError) -> VbError {
    let msg = if e.message.contains(&path.display().to_string()) {
        e.message
    } else {
        format!("{}: {}", path.display(), e.message)
    };
    VbError {
        kind: e.kind,
        message: msg,
    }
}

fn planned_target(p: &Plan) -> PlannedTarget {
    PlannedTarget {
        path: p.job.target.path.display().to_string(),
        runs: p
            .runs
            .iter()
            .map(|r| PlannedRunInfo {
                engine: r.engine.name().into(),
                io_threads: r.io_threads,
                depth: r.depth,
            })
            .collect(),
    }
}

/// Prepares every target at once (they are usually separate volumes).
/// The result file's line for a target: its first (usually only) file set.
fn target_info(plan: &Plan, sets: &[(u32, Prepared)]) -> crate::result::TargetInfo {
    let first = sets.first().map(|(_, p)| p);
    crate::result::TargetInfo {
        kind: first.map_or(plan.target.kind, |p| p.kind),
        path: plan.job.target.path.display().to_string(),
        files: sets.iter().map(|(_, p)| p.layout.nfiles).sum(),
        file_size: first.map(|p| p.layout.file_size).unwrap_or(0),
        align: sets.iter().map(|(_, p)| p.align).max().unwrap_or(1),
        mount: match first.map(|p| p.kind) {
            Some(crate::io::target::TargetKind::BlockDevice) | None => None,
            _ => crate::io::mounts::for_path(&plan.job.target.path),
        },
    }
}

type Sets = Vec<(u32, Prepared)>;

fn prepare_all(plans: &[Plan], shared: &Shared, link: &Link) -> Result<Vec<Sets>> {
    let obs = PrepareObserver { shared, link };
    let results: Vec<Result<Sets>> = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter()
            .map(|plan| {
                let obs = &obs;
                s.spawn(move || executor::prepare(plan, obs, &shared.stop))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(VbError::run("preparing a target panicked")))
            })
            .collect()
    });
    results
        .into_iter()
        .zip(plans)
        .map(|(r, p)| r.map_err(|e| at_target(&p.job.target.path, e)))
        .collect()
}

/// Runs run `index` on every target at once behind one start gate.
#[allow(clippy::too_many_arguments)]
fn run_targets(
    plans: &[Plan],
    prepared: &[Sets],
    done_runs: &mut [Vec<RunResult>],
    index: u32,
    shared: &Shared,
    link: &Link,
    ctl: &Mutex<Receiver<Control>>,
) -> FromAgent {
    let gate = Gate::new(plans.len());
    let decide = || -> Option<Instant> {
        link.send(&FromAgent::Ready { index });
        let rx = ctl.lock().ok()?;
        loop {
            match rx.recv() {
                Ok(Control::Msg(ToAgent::Start { index: i, at_ns })) if i == index => {
                    return Some(instant_at(at_ns));
                }
                Ok(Control::Msg(ToAgent::Start { .. })) => continue,
                _ => return None,
            }
        }
    };
    // Boxed: a failed run carries a whole partial result.
    let outcomes: Vec<std::result::Result<RunResult, Box<executor::RunError>>> =
        std::thread::scope(|s| {
            let handles: Vec<_> = plans
                .iter()
                .zip(prepared)
                .zip(done_runs.iter())
                .enumerate()
                .map(|(t, ((plan, sets), done))| {
                    let gate = &gate;
                    let decide = &decide;
                    s.spawn(move || {
                        let called_off = |e: VbError| {
                            // Never reaches the gate: the run is off for all targets.
                            gate.abandon();
                            Err(Box::new((e, None)))
                        };
                        // As the local executor does: the rate as a share of
                        // an earlier run, and the file set of the run's count.
                        let run = match executor::resolve_rate(&plan.runs[index as usize], done) {
                            Ok(r) => r,
                            Err(e) => return called_off(e),
                        };
                        let files = executor::meta::set_key(&run, plan.job.target.files);
                        let Some((_, prep)) = sets.iter().find(|(f, _)| *f == files) else {
                            return called_off(VbError::run(format!(
                                "run '{}': no file set of {files} files was prepared",
                                run.spec.name
                            )));
                        };
                        let obs = RunObserver {
                            link,
                            index,
                            target: t as u32,
                            seq: AtomicU32::new(0),
                        };
                        let arrived = AtomicBool::new(false);
                        let start = || {
                            arrived.store(true, Ordering::SeqCst);
                            gate.arrive(decide)
                        };
                        let r = executor::run_one(plan, &run, prep, &obs, &shared.stop, &start);
                        if !arrived.load(Ordering::SeqCst) {
                            gate.abandon();
                        }
                        r.map_err(Box::new)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Box::new((VbError::run("a run thread panicked"), None)))
                    })
                })
                .collect()
        });
    let mut results = Vec::new();
    let mut error = None;
    for (t, o) in outcomes.into_iter().enumerate() {
        match o {
            Ok(r) => {
                done_runs[t].push(r.clone());
                results.push(TargetResult {
                    target: t as u32,
                    result: r,
                });
            }
            Err(failed) => {
                let (e, partial) = *failed;
                if let Some(r) = partial {
                    results.push(TargetResult {
                        target: t as u32,
                        result: *r,
                    });
                }
                if error.is_none() {
                    error = Some(at_target(&plans[t].job.target.path, e).to_string());
                }
            }
        }
    }
    FromAgent::RunDone {
        index,
        results,
        error,
    }
}

/// Converts a start time in this host's wall clock to a monotonic instant.
fn instant_at(at_ns: u64) -> Instant {
    let now_i = Instant::now();
    let now_ns = unix_ns(SystemTime::now());
    now_i + Duration::from_nanos(at_ns.saturating_sub(now_ns))
}

/// The start barrier across one host's targets: the last target to be ready
/// asks the coordinator for the start time (`decide`) and every target gets
/// it. A target that fails before it is ready calls the run off for all.
struct Gate {
    n: usize,
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    abandoned: usize,
    decision: Option<Option<Instant>>,
}

impl Gate {
    fn new(n: usize) -> Self {
        Self {
            n,
            state: Mutex::new(GateState::default()),
            cv: Condvar::new(),
        }
    }

    fn arrive(&self, decide: &dyn Fn() -> Option<Instant>) -> Option<Instant> {
        let Ok(mut st) = self.state.lock() else {
            return None;
        };
        st.arrived += 1;
        if st.arrived + st.abandoned == self.n && st.decision.is_none() {
            let d = if st.abandoned > 0 {
                None
            } else {
                drop(st);
                let d = decide();
                st = match self.state.lock() {
                    Ok(s) => s,
                    Err(_) => return None,
                };
                d
            };
            st.decision = Some(d);
            self.cv.notify_all();
            return d;
        }
        loop {
            if let Some(d) = st.decision {
                return d;
            }
            st = match self.cv.wait(st) {
                Ok(s) => s,
                Err(_) => return None,
            };
        }
    }

    fn abandon(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.abandoned += 1;
            if st.arrived + st.abandoned == self.n && st.decision.is_none() {
                st.decision = Some(None);
                self.cv.notify_all();
            }
        }
    }
}

struct PrepareObserver<'a> {
    shared: &'a Shared,
    link: &'a Link,
}

impl Progress for PrepareObserver<'_> {
    fn start(&self, total_bytes: u64, _what: &str) {
        let total = self
            .shared
            .fill_total
            .fetch_add(total_bytes, Ordering::Relaxed)
            + total_bytes;
        // Say how much there is to fill at once, so the coordinator's bar
        // knows its length; the watchdog reports progress from here on.
        self.link.send(&FromAgent::Progress {
            done: self.shared.fill_done.load(Ordering::Relaxed),
            total,
        });
    }
    fn advance(&self, bytes: u64) {
        self.shared.fill_done.fetch_add(bytes, Ordering::Relaxed);
    }
    fn finish(&self) {}
}

impl Observer for PrepareObserver<'_> {
    fn note(&self, message: &str) {
        self.link.send(&FromAgent::Note {
            message: message.into(),
        });
    }
    fn run_started(&self, _: usize, _: usize, _: &PlannedRun) {}
    fn interval(&self, _: &PlannedRun, _: f64, _: f64, _: &Interval) {}
    fn run_finished(&self, _: &RunResult) {}
}

struct RunObserver<'a> {
    link: &'a Link,
    index: u32,
    target: u32,
    seq: AtomicU32,
}

impl Progress for RunObserver<'_> {
    fn start(&self, _: u64, _: &str) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

impl Observer for RunObserver<'_> {
    fn note(&self, message: &str) {
        self.link.send(&FromAgent::Note {
            message: message.into(),
        });
    }
    fn run_started(&self, _: usize, _: usize, _: &PlannedRun) {}
    fn io_started(&self, _: &PlannedRun, at: SystemTime) {
        self.link.send(&FromAgent::Started {
            index: self.index,
            target: self.target,
            at_ns: unix_ns(at),
        });
    }
    fn interval(&self, _: &PlannedRun, _: f64, _: f64, iv: &Interval) {
        self.link.send(&FromAgent::Interval {
            index: self.index,
            target: self.target,
            seq: self.seq.fetch_add(1, Ordering::Relaxed),
            interval: iv.clone(),
        });
    }
    fn run_finished(&self, _: &RunResult) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_releases_all_with_one_decision() {
        let gate = Gate::new(3);
        let asked = AtomicU32::new(0);
        let decide = || {
            asked.fetch_add(1, Ordering::SeqCst);
            Some(Instant::now())
        };
        let got: Vec<Option<Instant>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3).map(|_| s.spawn(|| gate.arrive(&decide))).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert!(got.iter().all(|g| g.is_some() && *g == got[0]));
    }

    #[test]
    fn gate_calls_off_when_a_target_fails_first() {
        let gate = Gate::new(2);
        let decide = || -> Option<Instant> { panic!("must not ask the coordinator") };
        let got = std::thread::scope(|s| {
            let waiter = s.spawn(|| gate.arrive(&decide));
            gate.abandon();
            waiter.join().unwrap()
        });
        assert_eq!(got, None);
    }
}

//! The coordinator of a multi-host run: starts one agent per host over ssh,
//! checks versions and clocks, ships each host its job, prepares all hosts
//! in parallel, then for each run releases every host at one absolute start
//! time, prints an interval once every host has reported it, and merges the
//! final results exactly.
//!
//! Faults have one outcome each: a host that cannot be reached (or refuses)
//! before any I/O is an error naming it; a host lost during a run (its
//! connection ends, it sends garbage, or it falls silent past the timeout)
//! is marked failed, the others are stopped, and what was gathered is kept.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::protocol::{
    AgentJob, FromAgent, PROTOCOL, PlannedTarget, TargetResult, ToAgent, encode, read_line,
    sanitize,
};
use super::ssh::{self, Ssh};
use crate::error::{Kind, Result, VbError};
use crate::executor::Observer;
use crate::input::hosts::Assignment;
use crate::io::engine::EngineKind;
use crate::plan::PlannedRun;
use crate::result::merge::{self, Cluster, ClusterRun, CoordinatorCost, HostResult, Unfinished};
use crate::result::{HostInfo, Interval, ResultDoc, RunResult, SCHEMA, TargetInfo, Tool};
use crate::spec::JobSpec;

/// Pings per host to estimate its clock offset (the fastest one is used).
const PINGS: u32 = 5;
/// How long connecting, the version check and the clock pings may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(40);
/// How long the hosts may take to check their targets and plan.
const PLAN_TIMEOUT: Duration = Duration::from_secs(60);
/// After a stop, how long the others have to report what they measured.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// A start skew above this is worth a warning.
const SKEW_WARN_MS: f64 = 50.0;
/// The main loop's longest sleep: heartbeats, timeouts and Ctrl-C are
/// looked at this often.
const TICK: Duration = Duration::from_millis(100);

/// How to reach the hosts and what to run there.
pub struct Options {
    pub hosts: Vec<Assignment>,
    /// One job per host (per-host thread overrides applied), same order.
    pub jobs: Vec<JobSpec>,
    /// The job as given, its target the template; it heads the result.
    pub template: JobSpec,
    pub size_given: bool,
    pub ssh: Ssh,
    pub remote: Remote,
    pub session: String,
    pub heartbeat: Duration,
    pub timeout: Duration,
    /// Hosts that share a target path prepare one after the other.
    pub shared_target: bool,
}

/// Which volbench the hosts run.
pub enum Remote {
    /// A command or path on the host (`volbench` from its PATH by default).
    Installed(String),
    /// This binary, copied into a content-named file in this cache dir.
    Push(String),
}

enum Event {
    Line(Vec<u8>),
    Closed { why: String, stderr: String },
}

struct Host {
    a: Assignment,
    job: JobSpec,
    child: Option<Child>,
    tx: Option<Sender<String>>,
    last_heard: Instant,
    failed: Option<String>,
    /// Exit code kind an agent's own error asked for.
    error_kind: Option<Kind>,
    version: Option<String>,
    info: Option<HostInfo>,
    pings: Vec<(u64, i128)>,
    offset_ns: i128,
    rtt_ns: u64,
    planned: Option<Vec<PlannedTarget>>,
    prepare_sent: bool,
    prepared: Option<Vec<TargetInfo>>,
    fill: (u64, u64),
    fill_known: bool,
    // The run in progress.
    ready: bool,
    /// We told it to stop this run (so an error it reports is ours, not its).
    stopped: bool,
    started: Vec<Option<i128>>,
    intervals: Vec<Vec<Interval>>,
    done: Option<(Vec<TargetResult>, Option<String>)>,
    // Gathered for the result.
    runs: Vec<RunResult>,
    unfinished: Option<Unfinished>,
}

impl Host {
    fn live(&self) -> bool {
        self.failed.is_none()
    }

    fn send(&self, msg: &ToAgent) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(encode(msg));
        }
    }

    fn name(&self) -> &str {
        &self.a.host.name
    }
}

struct Coordinator<'a> {
    hosts: Vec<Host>,
    events: Receiver<(usize, Event)>,
    obs: &'a dyn Observer,
    stop: &'a AtomicBool,
    heartbeat: Duration,
    timeout: Duration,
    last_beat: Instant,
    notes: Vec<String>,
    /// The run in progress: its index, plan for the terminal, printed intervals.
    run: Option<(u32, PlannedRun)>,
    printed: usize,
    fill_shown: u64,
    fill_bar: bool,
}

/// Runs the job on every host; returns the merged result document.
pub fn run(opts: Options, obs: &dyn Observer, stop: &AtomicBool) -> Result<ResultDoc> {
    let t_start = Instant::now();
    let cpu0 = crate::io::host::cpu_seconds();
    let started = crate::result::now_rfc3339();
    let n_runs = opts.template.runs.len();
    let mut c = connect(&opts, obs, stop)?;
    let mut doc = ResultDoc {
        schema: SCHEMA.into(),
        tool: Tool::this(),
        host: crate::io::host::this_host(),
        started,
        spec: opts.template.clone(),
        target: None,
        runs: Vec::new(),
        interrupted: false,
        error: None,
        notes: Vec::new(),
        cluster: None,
    };
    let mut cluster_runs = Vec::new();

    // Versions and clocks, then every host checks its targets and plans:
    // any trouble up to here is an error before any I/O.
    let outcome = c.wait_for(Some(Instant::now() + CONNECT_TIMEOUT), |h| {
        h.version.is_some() && h.pings.len() as u32 >= PINGS
    });
    c.before_io("start the agent", outcome)?;
    for h in &c.hosts {
        h.send(&ToAgent::Job(Box::new(AgentJob {
            host: h.a.host.name.clone(),
            index: h.a.index,
            job: h.job.clone(),
            targets: h.a.targets.clone(),
            size_given: opts.size_given,
        })));
    }
    let outcome = c.wait_for(Some(Instant::now() + PLAN_TIMEOUT), |h| h.planned.is_some());
    c.before_io("plan the job", outcome)?;
    c.clock_notes();

    // Prepare: every host at once, except that a host whose target path an
    // earlier host also uses waits for it (the second finds the set filled).
    let waves = prepare_waves(&c.hosts, opts.shared_target);
    let mut prepare_ok = true;
    for wave in waves {
        for &i in &wave {
            c.hosts[i].prepare_sent = true;
            c.hosts[i].send(&ToAgent::Prepare);
        }
        let outcome = c.wait_until(None, |hs| {
            all_live(hs, |h| !h.prepare_sent || h.prepared.is_some())
                || hs.iter().any(|h| !h.live())
        });
        c.end_fill_bar();
        if outcome == Outcome::Stopped {
            doc.interrupted = true;
            prepare_ok = false;
            break;
        }
        if let Some(e) = c.failures("prepare the target") {
            // Stop the others' fills; nothing was measured yet.
            for h in c.hosts.iter().filter(|h| h.live()) {
                h.send(&ToAgent::Stop);
            }
            c.shutdown();
            return Err(e);
        }
    }

    if prepare_ok {
        for index in 0..n_runs as u32 {
            // Stop rules judge the merged results, so every host skips alike.
            let spec = &opts.template.runs[index as usize];
            if let Some(why) = spec
                .stop_rule
                .as_ref()
                .and_then(|rule| crate::executor::stop_reason(rule, &doc.runs))
            {
                let note = format!("skipped {}: {why}", spec.name);
                obs.note(&note);
                doc.notes.push(note);
                continue;
            }
            let (cr, ended) = c.one_run(index, n_runs, &opts.template);
            if let Some(cr) = cr {
                if let Some(merged) = cr.1 {
                    doc.runs.push(merged);
                }
                cluster_runs.push(cr.0);
            }
            match ended {
                RunEnd::Next => {}
                RunEnd::Interrupted => {
                    doc.interrupted = true;
                    break;
                }
                RunEnd::Failed(e) => {
                    doc.error = Some(e);
                    break;
                }
            }
        }
    }
    c.shutdown();

    doc.target = c.target_summary(&opts.template);
    let mut notes = std::mem::take(&mut c.notes);
    notes.append(&mut doc.notes);
    doc.notes = notes;
    let cpu1 = crate::io::host::cpu_seconds();
    let ssh_cpu = children_cpu();
    let wall = t_start.elapsed().as_secs_f64();
    let busy = (cpu1.0 - cpu0.0) + (cpu1.1 - cpu0.1);
    doc.cluster = Some(Cluster {
        hosts: c.hosts.into_iter().map(host_result).collect(),
        runs: cluster_runs,
        ssh_command: opts.ssh.describe(),
        coordinator: CoordinatorCost {
            user_s: cpu1.0 - cpu0.0,
            sys_s: cpu1.1 - cpu0.1,
            wall_s: wall,
            cpu_pct: if wall > 0.0 { busy / wall * 100.0 } else { 0.0 },
            ssh_user_s: ssh_cpu.0,
            ssh_sys_s: ssh_cpu.1,
        },
    });
    Ok(doc)
}

fn host_result(h: Host) -> HostResult {
    HostResult {
        name: h.a.host.name.clone(),
        index: h.a.index,
        status: if h.failed.is_some() { "failed" } else { "ok" }.into(),
        error: h.failed,
        version: h.version,
        host: h.info,
        clock_offset_ms: (h.rtt_ns > 0).then(|| h.offset_ns as f64 / 1e6),
        rtt_ms: (h.rtt_ns > 0).then(|| h.rtt_ns as f64 / 1e6),
        targets: h.prepared.unwrap_or_default(),
        runs: h.runs,
        unfinished: h.unfinished,
    }
}

/// Groups hosts into prepare waves: a host goes into the first wave in which
/// none of its target paths is already being prepared.
fn prepare_waves(hosts: &[Host], shared: bool) -> Vec<Vec<usize>> {
    if !shared {
        return vec![(0..hosts.len()).collect()];
    }
    let mut waves: Vec<(Vec<usize>, std::collections::HashSet<&Path>)> = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        let paths: Vec<&Path> = h.a.targets.iter().map(|p| p.as_path()).collect();
        let slot = waves
            .iter()
            .position(|(_, used)| paths.iter().all(|p| !used.contains(p)));
        let w = match slot {
            Some(w) => w,
            None => {
                waves.push((Vec::new(), Default::default()));
                waves.len() - 1
            }
        };
        waves[w].0.push(i);
        waves[w].1.extend(paths);
    }
    waves.into_iter().map(|(v, _)| v).collect()
}

/// Starts ssh to every host (after pushing the binary, if asked) and sends
/// the hello. Hosts whose ssh cannot even start are reported together.
fn connect<'a>(
    opts: &Options,
    obs: &'a dyn Observer,
    stop: &'a AtomicBool,
) -> Result<Coordinator<'a>> {
    let binaries = remote_binaries(opts)?;
    let (ev_tx, ev_rx) = mpsc::channel();
    let mut hosts = Vec::with_capacity(opts.hosts.len());
    let mut errors = Vec::new();
    for (i, (a, job)) in opts.hosts.iter().zip(&opts.jobs).enumerate() {
        let remote = format!(
            "exec {} agent --session {}",
            binaries[i],
            ssh::quote(&opts.session)
        );
        let mut host = Host {
            a: a.clone(),
            job: job.clone(),
            child: None,
            tx: None,
            last_heard: Instant::now(),
            failed: None,
            error_kind: None,
            version: None,
            info: None,
            pings: Vec::new(),
            offset_ns: 0,
            rtt_ns: 0,
            planned: None,
            prepare_sent: false,
            prepared: None,
            fill: (0, 0),
            fill_known: false,
            ready: false,
            stopped: false,
            started: Vec::new(),
            intervals: Vec::new(),
            done: None,
            runs: Vec::new(),
            unfinished: None,
        };
        match spawn_agent(&opts.ssh, &a.host.name, &remote, i, ev_tx.clone()) {
            Ok((child, tx)) => {
                host.child = Some(child);
                host.tx = Some(tx);
                host.send(&ToAgent::Hello {
                    protocol: PROTOCOL,
                    version: env!("CARGO_PKG_VERSION").into(),
                    heartbeat_ms: opts.heartbeat.as_millis() as u64,
                    timeout_ms: opts.timeout.as_millis() as u64,
                });
            }
            Err(e) => errors.push(e.to_string()),
        }
        hosts.push(host);
    }
    let mut c = Coordinator {
        hosts,
        events: ev_rx,
        obs,
        stop,
        heartbeat: opts.heartbeat,
        timeout: opts.timeout,
        last_beat: Instant::now(),
        notes: Vec::new(),
        run: None,
        printed: 0,
        fill_shown: 0,
        fill_bar: false,
    };
    if !errors.is_empty() {
        c.shutdown();
        return Err(VbError::target(errors.join("\n")));
    }
    Ok(c)
}

/// The command word that runs volbench on each host.
fn remote_binaries(opts: &Options) -> Result<Vec<String>> {
    match &opts.remote {
        Remote::Installed(path) => Ok(vec![ssh::quote_remote_path(path); opts.hosts.len()]),
        Remote::Push(cache) => {
            let exe = std::env::current_exe()
                .map_err(|e| VbError::run(format!("cannot find this volbench binary: {e}")))?;
            let bytes = std::fs::read(&exe).map_err(|e| {
                VbError::run(format!("cannot read this binary {}: {e}", exe.display()))
            })?;
            let results: Vec<Result<String>> = std::thread::scope(|s| {
                let hs: Vec<_> = opts
                    .hosts
                    .iter()
                    .map(|a| {
                        let (exe, bytes) = (&exe, &bytes);
                        s.spawn(move || {
                            ssh::push_binary(&opts.ssh, &a.host.name, cache, exe, bytes)
                        })
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(VbError::run("pushing the binary panicked")))
                    })
                    .collect()
            });
            let errors: Vec<String> = results
                .iter()
                .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
                .collect();
            if !errors.is_empty() {
                return Err(VbError::target(format!(
                    "--push-binary failed on {} of {} hosts:\n  {}",
                    errors.len(),
                    opts.hosts.len(),
                    errors.join("\n  ")
                )));
            }
            Ok(results.into_iter().filter_map(|r| r.ok()).collect())
        }
    }
}

/// Starts `ssh HOST 'exec volbench agent'` with a writer thread for its
/// stdin and reader threads for stdout (protocol lines) and stderr (kept
/// for error messages).
fn spawn_agent(
    ssh: &Ssh,
    host: &str,
    remote: &str,
    index: usize,
    events: Sender<(usize, Event)>,
) -> Result<(Child, Sender<String>)> {
    let mut child = ssh.command(host, remote).spawn().map_err(|e| {
        VbError::target(format!("host {host}: cannot run '{}': {e}", ssh.describe()))
    })?;
    let (stdin, stdout, stderr) =
        match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(VbError::run("ssh started without its pipes"));
            }
        };
    let (tx, rx) = mpsc::channel::<String>();
    let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name)
            .spawn(f)
            .map(|_| ())
            .map_err(|e| VbError::run(format!("cannot start a thread: {e}")))
    };
    // Writer: a stuck link blocks only this thread, never the coordinator.
    spawn(
        format!("vb-to-{index}"),
        Box::new(move || {
            let mut stdin = stdin;
            for line in rx {
                if stdin
                    .write_all(line.as_bytes())
                    .and_then(|_| stdin.flush())
                    .is_err()
                {
                    break;
                }
            }
            // Dropping stdin here is the agent's end-of-input: it stops.
        }),
    )?;
    let (err_tx, err_rx) = mpsc::channel::<String>();
    spawn(
        format!("vb-err-{index}"),
        Box::new(move || {
            let mut tail: VecDeque<String> = VecDeque::new();
            let mut r = BufReader::new(stderr.take(1 << 22));
            let mut line = Vec::new();
            while let Ok(n) = r.read_until(b'\n', &mut line) {
                if n == 0 {
                    break;
                }
                let text = sanitize(String::from_utf8_lossy(&line).trim_end(), 300);
                if !text.is_empty() {
                    tail.push_back(text);
                    if tail.len() > 8 {
                        tail.pop_front();
                    }
                }
                line.clear();
            }
            let _ = err_tx.send(Vec::from(tail).join(" | "));
        }),
    )?;
    spawn(
        format!("vb-from-{index}"),
        Box::new(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            let why = loop {
                match read_line(&mut r, &mut buf) {
                    Ok(Some(())) => {
                        if events
                            .send((index, Event::Line(std::mem::take(&mut buf))))
                            .is_err()
                        {
                            return;
                        }
                    }
                    Ok(None) => break "the connection closed".to_string(),
                    Err(e) => break format!("unreadable output ({e})"),
                }
            };
            // ssh's last words (e.g. "Connection refused") explain the close.
            let stderr = err_rx
                .recv_timeout(Duration::from_secs(2))
                .unwrap_or_default();
            let _ = events.send((index, Event::Closed { why, stderr }));
        }),
    )?;
    Ok((child, tx))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Done,
    Stopped,
    TimedOut,
}

enum RunEnd {
    Next,
    Interrupted,
    Failed(String),
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl Coordinator<'_> {
    /// Handles events until `done` holds for every live host, Ctrl-C, or the
    /// deadline. Keeps heartbeats going and fails silent hosts meanwhile.
    fn wait_for(&mut self, deadline: Option<Instant>, done: impl Fn(&Host) -> bool) -> Outcome {
        self.wait_until(deadline, |hosts| all_live(hosts, &done))
    }

    /// Like `wait_for`, with a condition over all hosts (live or not).
    fn wait_until(&mut self, deadline: Option<Instant>, cond: impl Fn(&[Host]) -> bool) -> Outcome {
        self.wait_inner(deadline, cond, true)
    }

    /// `heed_stop: false` keeps waiting after Ctrl-C: for the results of
    /// the hosts told to stop.
    fn wait_inner(
        &mut self,
        deadline: Option<Instant>,
        cond: impl Fn(&[Host]) -> bool,
        heed_stop: bool,
    ) -> Outcome {
        loop {
            if cond(&self.hosts) {
                return Outcome::Done;
            }
            if heed_stop && self.stop.load(Ordering::Relaxed) {
                return Outcome::Stopped;
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Outcome::TimedOut;
            }
            let wait = deadline.map_or(TICK, |d| (d - now).min(TICK));
            match self.events.recv_timeout(wait) {
                Ok((i, ev)) => self.handle(i, ev),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Outcome::Done,
            }
            // Drain whatever else is already queued before the checks.
            while let Ok((i, ev)) = self.events.try_recv() {
                self.handle(i, ev);
            }
            self.tick();
        }
    }

    fn tick(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last_beat) >= self.heartbeat {
            self.last_beat = now;
            for h in self.hosts.iter().filter(|h| h.live()) {
                h.send(&ToAgent::Heartbeat);
            }
        }
        for i in 0..self.hosts.len() {
            let h = &self.hosts[i];
            // Before its hello a host is still connecting: CONNECT_TIMEOUT
            // governs that, not the heartbeat silence.
            if h.live() && h.version.is_some() && now.duration_since(h.last_heard) > self.timeout {
                let secs = now.duration_since(h.last_heard).as_secs_f64();
                self.fail(
                    i,
                    format!("no word from it for {secs:.1}s (host down or network cut)"),
                );
            }
        }
    }

    fn fail(&mut self, i: usize, why: String) {
        let h = &mut self.hosts[i];
        if h.failed.is_some() {
            return;
        }
        h.failed = Some(why.clone());
        // Closing its stdin stops the agent if the link still works; killing
        // ssh frees us from a link that does not.
        h.tx = None;
        if let Some(child) = h.child.as_mut() {
            let _ = child.kill();
        }
        let name = h.a.host.name.clone();
        if self.run.is_some() || self.fill_bar {
            self.end_fill_bar();
            self.obs.note(&format!("host {name} failed: {why}"));
        }
    }

    fn handle(&mut self, i: usize, ev: Event) {
        if !self.hosts[i].live() {
            return;
        }
        match ev {
            Event::Closed { why, stderr } => {
                let status = self.hosts[i]
                    .child
                    .as_mut()
                    .and_then(|c| wait_briefly(c, Duration::from_secs(1)));
                let mut msg = why;
                if let Some(st) = status {
                    msg.push_str(&format!(" ({st})"));
                }
                if !stderr.is_empty() {
                    msg.push_str(&format!(": {stderr}"));
                }
                if self.hosts[i].version.is_none() {
                    if status.and_then(|s| s.code()) == Some(127) || stderr.contains("not found") {
                        msg.push_str(
                            "; is volbench installed there? --push-binary copies this one \
                             (or --remote-volbench PATH names it)",
                        );
                    }
                    msg = format!("cannot start the agent: {msg}");
                }
                self.fail(i, msg);
            }
            Event::Line(bytes) => {
                self.hosts[i].last_heard = Instant::now();
                let msg: FromAgent = match crate::remote::protocol::decode(&bytes) {
                    Ok(m) => m,
                    Err(e) => {
                        let text =
                            String::from_utf8_lossy(&bytes[..bytes.len().min(120)]).into_owned();
                        self.fail(
                            i,
                            format!("sent malformed output ({e}): '{}'", sanitize(&text, 120)),
                        );
                        return;
                    }
                };
                if let Err(why) = self.on_message(i, msg) {
                    self.fail(i, why);
                }
            }
        }
    }

    /// Takes in one message; an `Err` is a protocol violation that fails the host.
    fn on_message(&mut self, i: usize, msg: FromAgent) -> std::result::Result<(), String> {
        let n_targets = self.hosts[i].a.targets.len();
        let h = &mut self.hosts[i];
        match msg {
            FromAgent::Heartbeat => {}
            FromAgent::Hello {
                protocol,
                version,
                host,
                ..
            } => {
                if h.version.is_some() {
                    return Err("said hello twice".into());
                }
                let version = sanitize(&version, 40);
                if protocol != PROTOCOL {
                    return Err(format!(
                        "it runs volbench {version} speaking agent protocol {protocol}; this is \
                         volbench {} speaking protocol {PROTOCOL}. Install the same version there, \
                         or pass --push-binary",
                        env!("CARGO_PKG_VERSION")
                    ));
                }
                if version != env!("CARGO_PKG_VERSION") {
                    let note = format!(
                        "host {} runs volbench {version}, this is {} (same protocol)",
                        h.a.host.name,
                        env!("CARGO_PKG_VERSION")
                    );
                    self.notes.push(note);
                }
                let h = &mut self.hosts[i];
                h.version = Some(version);
                h.info = host.map(|mut info| {
                    info.hostname = sanitize(&info.hostname, 100);
                    info.kernel = sanitize(&info.kernel, 100);
                    info
                });
                h.send(&ToAgent::Ping {
                    id: 0,
                    sent_ns: now_ns(),
                });
            }
            FromAgent::Pong {
                id,
                sent_ns,
                agent_ns,
            } => {
                let now = now_ns();
                if id != h.pings.len() as u32 || sent_ns > now || now - sent_ns > 60_000_000_000 {
                    return Err("answered a ping it was not sent".into());
                }
                let rtt = now - sent_ns;
                let offset = agent_ns as i128 - (sent_ns as i128 + now as i128) / 2;
                h.pings.push((rtt, offset));
                if (h.pings.len() as u32) < PINGS {
                    h.send(&ToAgent::Ping {
                        id: id + 1,
                        sent_ns: now_ns(),
                    });
                } else if let Some(&(rtt, off)) = h.pings.iter().min_by_key(|p| p.0) {
                    h.rtt_ns = rtt.max(1);
                    h.offset_ns = off;
                }
            }
            FromAgent::Planned { targets, notes } => {
                if targets.len() != n_targets
                    || targets.iter().any(|t| t.runs.len() != h.job.runs.len())
                {
                    return Err("planned another job than it was sent".into());
                }
                h.planned = Some(targets);
                let name = h.a.host.name.clone();
                for n in notes {
                    self.note(&name, &n);
                }
            }
            FromAgent::Progress { done, total } => {
                if done > total {
                    return Err("reported more filled than there is to fill".into());
                }
                h.fill = (done, total);
                h.fill_known = true;
                self.show_fill();
            }
            FromAgent::Prepared { targets, notes } => {
                if targets.len() != n_targets || !h.prepare_sent {
                    return Err("prepared other targets than it was sent".into());
                }
                h.prepared = Some(
                    targets
                        .into_iter()
                        .map(|mut t| {
                            t.path = sanitize(&t.path, 4096);
                            t
                        })
                        .collect(),
                );
                let name = h.a.host.name.clone();
                for n in notes {
                    self.note(&name, &n);
                }
                self.show_fill();
            }
            FromAgent::Ready { index } => {
                if self.run.as_ref().map(|r| r.0) != Some(index) || h.ready {
                    return Err(format!("ready for run {index}, which was not asked"));
                }
                h.ready = true;
            }
            FromAgent::Started {
                index,
                target,
                at_ns,
            } => {
                let t = target as usize;
                if self.run.as_ref().map(|r| r.0) != Some(index) || t >= n_targets {
                    return Err("started something it was not asked".into());
                }
                h.started[t] = Some(at_ns as i128 - h.offset_ns);
            }
            FromAgent::Interval {
                index,
                target,
                seq,
                interval,
            } => {
                let t = target as usize;
                let Some((cur, run)) = &self.run else {
                    return Err("an interval outside a run".into());
                };
                if *cur != index || t >= n_targets || seq as usize != h.intervals[t].len() {
                    return Err("an interval out of order".into());
                }
                let longest = (run.spec.warmup_s + run.spec.duration_s) * 2.0 + 60.0;
                merge::check_interval(&interval, longest).map_err(|e| format!("sent {e}"))?;
                if h.intervals[t].len() > crate::result::MAX_INTERVALS * 4 {
                    return Err("too many intervals".into());
                }
                h.intervals[t].push(interval);
                self.print_intervals();
            }
            FromAgent::RunDone {
                index,
                results,
                error,
            } => {
                if self.run.as_ref().map(|r| r.0) != Some(index) || h.done.is_some() {
                    return Err(format!("results for run {index}, which was not asked"));
                }
                let spec = &h.job.runs[index as usize];
                let mut seen = vec![false; n_targets];
                for r in &results {
                    let t = r.target as usize;
                    if t >= n_targets || std::mem::replace(&mut seen[t], true) {
                        return Err("results for targets it does not have".into());
                    }
                    merge::check_run(&r.result, spec)
                        .map_err(|e| format!("sent an invalid result: {e}"))?;
                }
                h.done = Some((results, error.map(|e| sanitize(&e, 2000))));
            }
            FromAgent::Note { message } => {
                let name = h.a.host.name.clone();
                self.note(&name, &message);
            }
            FromAgent::Error { message, code } => {
                h.error_kind = Some(match code {
                    2 => Kind::Input,
                    3 => Kind::Refused,
                    4 => Kind::Target,
                    _ => Kind::Run,
                });
                return Err(sanitize(&message, 2000));
            }
        }
        Ok(())
    }

    /// A host's note, shown once however many hosts say it.
    fn note(&mut self, host: &str, message: &str) {
        let message = sanitize(message, 1000);
        if self
            .notes
            .iter()
            .any(|n| n.ends_with(&format!(": {message}")))
        {
            return;
        }
        let line = format!("{host}: {message}");
        self.obs.note(&line);
        self.notes.push(line);
    }

    /// Drives the fill bar from the hosts' summed progress, once every host
    /// filling has said how much it has to fill.
    fn show_fill(&mut self) {
        let filling = |h: &&Host| h.live() && h.prepare_sent;
        if !self
            .hosts
            .iter()
            .filter(filling)
            .all(|h| h.fill_known || h.prepared.is_some())
        {
            return;
        }
        let (done, total) = self
            .hosts
            .iter()
            .filter(filling)
            .fold((0u64, 0u64), |acc, h| {
                // Hosts' claims are added without trusting their size.
                (
                    acc.0.saturating_add(h.fill.0),
                    acc.1.saturating_add(h.fill.1),
                )
            });
        if total == 0 {
            return;
        }
        if !self.fill_bar {
            self.obs.start(total, "filling (all hosts)");
            self.fill_bar = true;
            self.fill_shown = 0;
        }
        if done > self.fill_shown {
            self.obs.advance(done - self.fill_shown);
            self.fill_shown = done;
        }
    }

    fn end_fill_bar(&mut self) {
        if self.fill_bar {
            self.obs.finish();
            self.fill_bar = false;
        }
        for h in &mut self.hosts {
            h.fill_known = false;
            h.fill = (0, 0);
        }
    }

    /// Prints every interval position all live hosts and targets have reached.
    fn print_intervals(&mut self) {
        let Some((_, run)) = &self.run else { return };
        loop {
            let k = self.printed;
            let mut at: Vec<&Interval> = Vec::new();
            for h in self.hosts.iter().filter(|h| h.live()) {
                for series in &h.intervals {
                    match series.get(k) {
                        Some(iv) => at.push(iv),
                        None => return,
                    }
                }
            }
            if at.is_empty() {
                return;
            }
            let iv = merge::merge_intervals(&at);
            let total_s = run.spec.warmup_s + run.spec.duration_s;
            self.obs.interval(run, iv.t_s, total_s, &iv);
            self.printed += 1;
        }
    }

    /// After a phase before any I/O: every failed host is named in one error.
    fn before_io(&mut self, what: &str, outcome: Outcome) -> Result<()> {
        if outcome == Outcome::Stopped {
            self.shutdown();
            return Err(VbError {
                kind: Kind::Run,
                message: "interrupted before any I/O".into(),
            });
        }
        if outcome == Outcome::TimedOut {
            for i in 0..self.hosts.len() {
                let h = &self.hosts[i];
                let done = if what.starts_with("start") {
                    h.version.is_some() && h.pings.len() as u32 >= PINGS
                } else {
                    h.planned.is_some()
                };
                if h.live() && !done {
                    self.fail(i, format!("no answer in time while trying to {what}"));
                }
            }
        }
        if let Some(e) = self.failures(what) {
            self.shutdown();
            return Err(e);
        }
        Ok(())
    }

    /// One error naming every failed host, if any failed.
    fn failures(&self, what: &str) -> Option<VbError> {
        let failed: Vec<&Host> = self.hosts.iter().filter(|h| !h.live()).collect();
        if failed.is_empty() {
            return None;
        }
        let kind = failed
            .iter()
            .find_map(|h| h.error_kind)
            .unwrap_or(Kind::Target);
        let lines: Vec<String> = failed
            .iter()
            .map(|h| format!("  {}: {}", h.name(), h.failed.as_deref().unwrap_or("")))
            .collect();
        Some(VbError {
            kind,
            message: format!(
                "could not {what} on {} of {} hosts (nothing was run):\n{}",
                failed.len(),
                self.hosts.len(),
                lines.join("\n")
            ),
        })
    }

    fn clock_notes(&mut self) {
        let mut far = Vec::new();
        let mut unsure = 0.0f64;
        for h in &self.hosts {
            let off_ms = h.offset_ns as f64 / 1e6;
            if off_ms.abs() > 1000.0 {
                far.push(format!("{} {:+.1}s", h.name(), off_ms / 1000.0));
            }
            unsure = unsure.max(h.rtt_ns as f64 / 2e6);
        }
        if !far.is_empty() {
            let n = format!(
                "host clocks differ from this one's ({}); start times are corrected for it, \
                 but per-host timestamps are in each host's own clock",
                far.join(", ")
            );
            self.obs.note(&n);
            self.notes.push(n);
        }
        if unsure > SKEW_WARN_MS {
            let n = format!(
                "network round trips up to {:.0} ms: clock offsets, and so the common start, \
                 are only known to about +/-{unsure:.0} ms",
                unsure * 2.0
            );
            self.obs.note(&n);
            self.notes.push(n);
        }
    }

    /// One run on every host. Returns its cluster record and merged result
    /// (when any host produced one), and how the invocation goes on.
    #[allow(clippy::type_complexity)]
    fn one_run(
        &mut self,
        index: u32,
        count: usize,
        template: &JobSpec,
    ) -> (Option<(ClusterRun, Option<RunResult>)>, RunEnd) {
        let spec = template.runs[index as usize].clone();
        for h in &mut self.hosts {
            let n = h.a.targets.len();
            h.ready = false;
            h.stopped = false;
            h.started = vec![None; n];
            h.intervals = vec![Vec::new(); n];
            h.done = None;
        }
        let planned = self.planned_run(index, spec.clone());
        self.obs.run_started(index as usize, count, &planned);
        self.run = Some((index, planned));
        self.printed = 0;
        for h in self.hosts.iter().filter(|h| h.live()) {
            h.send(&ToAgent::Run { index });
        }
        // The barrier: every host has its workers set up and waiting (or
        // one is in trouble, and nobody starts).
        let mut outcome = self.wait_until(None, |hs| {
            all_live(hs, |h| h.ready || h.done.is_some()) || trouble(hs)
        });
        if outcome == Outcome::Done && !trouble(&self.hosts) {
            // One absolute start time, far enough ahead to reach every host,
            // sent in each host's own clock.
            let max_rtt = self.hosts.iter().map(|h| h.rtt_ns).max().unwrap_or(0);
            let margin =
                Duration::from_nanos(max_rtt.saturating_mul(4)).max(Duration::from_millis(150));
            let at = now_ns() as i128 + margin.as_nanos() as i128;
            for h in self.hosts.iter().filter(|h| h.live()) {
                h.send(&ToAgent::Start {
                    index,
                    at_ns: (at + h.offset_ns).max(0) as u64,
                });
            }
            let budget = Duration::from_secs_f64(spec.warmup_s + spec.duration_s)
                + margin
                + Duration::from_secs(60);
            // Until every host is done, or one is in trouble, or Ctrl-C.
            outcome = self.wait_until(Some(Instant::now() + budget), |hs| {
                all_live(hs, |h| h.done.is_some()) || trouble(hs)
            });
            if outcome == Outcome::TimedOut {
                for i in 0..self.hosts.len() {
                    if self.hosts[i].live() && self.hosts[i].done.is_none() {
                        self.fail(i, "did not finish the run in time".into());
                    }
                }
            }
        }
        let interrupted = outcome == Outcome::Stopped;
        if interrupted || trouble(&self.hosts) {
            // Stop everyone still going; they send what they measured.
            for h in self
                .hosts
                .iter_mut()
                .filter(|h| h.live() && h.done.is_none())
            {
                h.stopped = true;
                h.send(&ToAgent::Stop);
            }
            let o = self.wait_inner(
                Some(Instant::now() + STOP_TIMEOUT),
                |hs| all_live(hs, |h| h.done.is_some()),
                false,
            );
            if o == Outcome::TimedOut {
                for i in 0..self.hosts.len() {
                    if self.hosts[i].live() && self.hosts[i].done.is_none() {
                        self.fail(
                            i,
                            format!("did not stop within {}s", STOP_TIMEOUT.as_secs()),
                        );
                    }
                }
            }
        }
        // Host errors reported with results (an I/O error there) fail the host too.
        for i in 0..self.hosts.len() {
            if self.hosts[i].stopped {
                continue;
            }
            if let Some(e) = self.hosts[i].done.as_ref().and_then(|d| d.1.clone()) {
                self.fail(i, e);
            }
        }
        let record = self.gather(index, &spec);
        self.run = None;
        let failed: Vec<String> = self
            .hosts
            .iter()
            .filter(|h| !h.live())
            .map(|h| {
                format!(
                    "host {} failed: {}",
                    h.name(),
                    h.failed.as_deref().unwrap_or("")
                )
            })
            .collect();
        let end = if !failed.is_empty() {
            RunEnd::Failed(format!(
                "{}; the other hosts were stopped, and the results hold what was measured until then",
                failed.join("; ")
            ))
        } else if interrupted {
            RunEnd::Interrupted
        } else {
            RunEnd::Next
        };
        (Some(record), end)
    }

    /// The run as the terminal shows it: the template's workload, the engine
    /// the first host resolved, every host's I/O threads together.
    fn planned_run(&self, index: u32, spec: crate::spec::RunSpec) -> PlannedRun {
        let mut engine = EngineKind::Psync;
        let mut io_threads = 0u32;
        let mut depth = 1;
        for (k, h) in self.hosts.iter().filter(|h| h.live()).enumerate() {
            for t in h.planned.iter().flatten() {
                if let Some(r) = t.runs.get(index as usize) {
                    io_threads = io_threads.saturating_add(r.io_threads);
                    if k == 0 {
                        depth = r.depth;
                        engine = match r.engine.as_str() {
                            "io_uring" => EngineKind::IoUring,
                            "null" => EngineKind::Null,
                            _ => EngineKind::Psync,
                        };
                    }
                }
            }
        }
        PlannedRun {
            spec,
            engine,
            engine_note: None,
            io_threads,
            depth,
        }
    }

    /// Merges what the hosts sent for this run: each host over its targets,
    /// then all hosts. Hosts without results keep their intervals aside.
    fn gather(
        &mut self,
        index: u32,
        spec: &crate::spec::RunSpec,
    ) -> (ClusterRun, Option<RunResult>) {
        let mut host_results: Vec<RunResult> = Vec::new();
        let mut starts: Vec<i128> = Vec::new();
        for h in &mut self.hosts {
            starts.extend(h.started.iter().flatten().copied());
            let parts: Vec<&RunResult> = h
                .done
                .as_ref()
                .map(|d| d.0.iter().map(|t| &t.result).collect())
                .unwrap_or_default();
            if parts.is_empty() {
                if h.failed.is_some() && h.unfinished.is_none() {
                    h.unfinished = Some(Unfinished {
                        run: spec.name.clone(),
                        intervals: merge::merge_series(h.intervals.iter().map(|s| s.as_slice())),
                    });
                }
                continue;
            }
            match merge::merge_runs(&parts) {
                Ok(r) => {
                    h.runs.push(r.clone());
                    host_results.push(r);
                }
                Err(e) => {
                    if h.failed.is_none() {
                        h.failed = Some(format!("its results do not merge: {e}"));
                    }
                }
            }
        }
        let refs: Vec<&RunResult> = host_results.iter().collect();
        let merged = if refs.is_empty() {
            None
        } else {
            match merge::merge_runs(&refs) {
                Ok(mut m) => {
                    m.interrupted |= self.hosts.iter().any(|h| !h.live());
                    Some(m)
                }
                Err(e) => {
                    self.notes.push(format!(
                        "run '{}': hosts' results do not merge: {e}",
                        spec.name
                    ));
                    None
                }
            }
        };
        let skew_ms = match (starts.iter().min(), starts.iter().max()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e6,
            _ => 0.0,
        };
        if skew_ms > SKEW_WARN_MS {
            let n = format!(
                "run '{}': the hosts started {skew_ms:.1} ms apart (more than {SKEW_WARN_MS} ms)",
                spec.name
            );
            self.obs.note(&n);
            self.notes.push(n);
        }
        if let Some(m) = &merged {
            self.obs.run_finished(m);
        }
        let _ = index;
        (
            ClusterRun {
                name: spec.name.clone(),
                hosts_merged: host_results.len() as u32,
                hosts_total: self.hosts.len() as u32,
                start_skew_ms: skew_ms,
            },
            merged,
        )
    }

    /// The result's target line: the template, with the first host's kind.
    fn target_summary(&self, template: &JobSpec) -> Option<TargetInfo> {
        let all: Vec<&TargetInfo> = self
            .hosts
            .iter()
            .flat_map(|h| h.prepared.iter().flatten())
            .collect();
        let first = all.first()?;
        Some(TargetInfo {
            kind: first.kind,
            path: template.target.path.display().to_string(),
            files: all
                .iter()
                .map(|t| t.files)
                .fold(0u32, |a, b| a.saturating_add(b)),
            file_size: first.file_size,
            align: all.iter().map(|t| t.align).max().unwrap_or(1),
            mount: first.mount.clone(),
        })
    }

    /// Says goodbye, closes every agent's stdin and waits for the ssh
    /// clients to exit (killing any that do not within a few seconds).
    fn shutdown(&mut self) {
        for h in &mut self.hosts {
            if h.live() {
                h.send(&ToAgent::Bye);
            }
            h.tx = None;
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        for h in &mut self.hosts {
            if let Some(mut child) = h.child.take() {
                let left = deadline.saturating_duration_since(Instant::now());
                if wait_briefly(&mut child, left).is_none() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
    }
}

/// Waits up to `limit` for a child to exit.
fn wait_briefly(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Some(st),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => return None,
        }
    }
}

/// User and system CPU seconds of the children waited for (the ssh clients).
fn children_cpu() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we pass and reads nothing else.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) != 0 {
            return (0.0, 0.0);
        }
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

fn all_live(hosts: &[Host], f: impl Fn(&Host) -> bool) -> bool {
    hosts.iter().filter(|h| h.live()).all(f)
}

/// A host failed, or finished its run with an error.
fn trouble(hosts: &[Host]) -> bool {
    hosts
        .iter()
        .any(|h| !h.live() || h.done.as_ref().is_some_and(|d| d.1.is_some()))
}

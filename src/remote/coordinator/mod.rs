//! The coordinator of a multi-host run: starts one agent per host through its launcher,
//! checks versions and clocks, ships each host its job, prepares all hosts
//! in parallel, then for each run releases every host at one absolute start
//! time, prints an interval once every host has reported it, and merges the
//! final results exactly.
//!
//! Faults have one outcome each: a host that cannot be reached (or refuses)
//! before any I/O is an error naming it; a host lost during a run (its
//! connection ends, it sends garbage, or it falls silent past the timeout)
//! is marked failed, the others are stopped, and what was gathered is kept.

use crate::events::Raise as _;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::launch::Launcher;
use super::protocol::{AgentJob, StepRun, ToAgent};
use crate::error::Result;
use crate::executor::Observer;
use crate::input::hosts::Assignment;
use crate::plan::PlannedRun;
use crate::result::ResultDoc;
use crate::result::merge::{Cluster, ClusterRun, CoordinatorCost, HostResult};
use crate::spec::JobSpec;

mod clock;
mod events;
mod gather;
mod handlers;
mod host;
mod hostbin;
mod launch;
mod progress;
mod runner;
mod runs;
mod search;
mod spawn;
mod step;
#[cfg(test)]
mod tests;

pub(crate) use runner::Hosts;

use events::Outcome;
use host::{Event, Host, all_live};
use runs::RunEnd;

/// Pings per host to estimate its clock offset (the fastest one is used).
const PINGS: u32 = 5;
/// How long the hosts may take to check their targets and plan.
const PLAN_TIMEOUT: Duration = Duration::from_secs(60);
/// After a stop, how long the others have to report what they measured.
pub(crate) const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// A start skew above this is worth a warning.
const SKEW_WARN_MS: f64 = 50.0;
/// The main loop's longest sleep: heartbeats, timeouts and Ctrl-C are
/// looked at this often.
const TICK: Duration = Duration::from_millis(100);

/// How to reach the hosts and what to run there.
pub(crate) struct Options {
    pub hosts: Vec<Assignment>,
    /// One job per host (per-host thread overrides applied), same order.
    pub jobs: Vec<JobSpec>,
    /// The job as given, its target the template; it heads the result.
    pub template: JobSpec,
    pub size_given: bool,
    pub launcher: Launcher,
    pub remote: Remote,
    pub session: String,
    pub heartbeat: Duration,
    pub timeout: Duration,
    /// Hosts that share a target path prepare one after the other.
    pub shared_target: bool,
    /// `--on-host-loss continue`: a lost host is dropped and the others go
    /// on (the totals marked partial) instead of all being stopped.
    pub keep_going: bool,
    /// `--launch-parallel`: launches (and pushes) in flight at once.
    pub launch_parallel: usize,
    /// `--ssh-mux on`: agents on one machine share an ssh master.
    pub ssh_mux: bool,
    /// `--k8s-job`: the Job to make first, its pods the hosts (the caller
    /// owns its deletion).
    pub k8s: Option<crate::remote::launch::k8s::K8sJob>,
}

/// Which volbench the hosts run, as the input read it.
pub(crate) use crate::input::hosts::spec::Binary as Remote;

/// The coordinator's state: the hosts, the one channel all their events
/// arrive on, and what the terminal has been shown.
struct Coordinator<'a> {
    hosts: Vec<Host>,
    events: Receiver<(usize, Event)>,
    obs: &'a dyn Observer,
    stop: &'a AtomicBool,
    heartbeat: Duration,
    timeout: Duration,
    keep_going: bool,
    last_beat: Instant,
    /// When the hosts were last looked at for silence.
    last_scan: Instant,
    notes: Vec<String>,
    /// The run in progress: its index, plan for the terminal, printed intervals.
    run: Option<(u32, PlannedRun)>,
    printed: usize,
    fill_shown: u64,
    fill_bar: bool,
    launched: Option<Instant>,
    /// CPU and wall seconds spent while the hosts' I/O ran, over all runs.
    run_cost: (f64, f64),
    /// The run in progress's common start, in our clock (ns since the
    /// epoch): a host that began well after it got the start late.
    released_at: Option<i128>,
    /// The launcher as the user gave it, for errors about what it started.
    launcher: String,
    /// The latency-search step being run, as each host is sent it, and its
    /// rate for the whole job (`search.rs`).
    step: Option<(StepRun, Option<f64>)>,
    /// The one process carrying every agent (`--launcher slurm`'s srun
    /// step), where the hosts have none of their own.
    carrier: Option<std::process::Child>,
}

/// What the hosts did, ready for the result document.
struct Gathered {
    doc: ResultDoc,
    hosts: Vec<HostResult>,
    runs: Vec<ClusterRun>,
    /// When every agent had said hello and answered its pings.
    launch: Option<Instant>,
    /// CPU and wall seconds while the hosts' I/O ran.
    run_cost: (f64, f64),
}

/// Runs the job on every host; returns the merged result document.
pub(crate) fn run(opts: Options, obs: &dyn Observer, stop: &AtomicBool) -> Result<ResultDoc> {
    let mut opts = opts;
    // The launch time counts from here: the Job's apply included.
    let t_start = Instant::now();
    let cpu0 = crate::io::host::cpu_seconds();
    let started = crate::result::now_rfc3339();
    if let Some(job) = &opts.k8s {
        obs.note(&format!(
            "Kubernetes Job {}: {} pods starting",
            job.name, job.pods
        ));
        let pods = job.start()?;
        for (a, pod) in opts.hosts.iter_mut().zip(pods) {
            a.host.name = pod;
        }
    }
    // The masters' directory lives until the agents are gone: dropped
    // last, it ends the masters.
    let (c, _masters) = if opts.launcher.is_slurm_step() {
        (step::connect(&opts, obs, stop)?, None)
    } else {
        spawn::connect(&opts, obs, stop)?
    };
    let Gathered {
        mut doc,
        hosts,
        runs,
        launch,
        run_cost,
    } = c.drive(&opts.template, opts.size_given, opts.shared_target, started)?;
    if let Some(l) = launch {
        let how = if opts.launcher.is_slurm_step() {
            "one srun step".to_string()
        } else if let Some(j) = &opts.k8s {
            format!(
                "Kubernetes Job {} applied, then --launch-parallel {}",
                j.name, opts.launch_parallel
            )
        } else {
            format!("--launch-parallel {}", opts.launch_parallel)
        };
        obs.note(&format!(
            "{} agents started in {:.2}s ({how})",
            hosts.len(),
            l.duration_since(t_start).as_secs_f64(),
        ));
    }
    let cpu1 = crate::io::host::cpu_seconds();
    let ssh_cpu = spawn::children_cpu();
    let wall = t_start.elapsed().as_secs_f64();
    let busy = (cpu1.0 - cpu0.0) + (cpu1.1 - cpu0.1);
    doc.cluster = Some(Cluster {
        hosts,
        runs,
        ssh_command: if opts.launcher.is_slurm_step() {
            step::describe(opts.hosts.len())
        } else {
            opts.launcher.describe()
        },
        coordinator: CoordinatorCost {
            user_s: cpu1.0 - cpu0.0,
            sys_s: cpu1.1 - cpu0.1,
            wall_s: wall,
            cpu_pct: if wall > 0.0 { busy / wall * 100.0 } else { 0.0 },
            ssh_user_s: ssh_cpu.0,
            ssh_sys_s: ssh_cpu.1,
            launch_s: launch.map(|l| l.duration_since(t_start).as_secs_f64()),
            run_cpu_pct: (run_cost.1 > 0.0).then(|| run_cost.0 / run_cost.1 * 100.0),
        },
    });
    Ok(doc)
}

impl<'a> Coordinator<'a> {
    fn new(
        hosts: Vec<Host>,
        events: Receiver<(usize, Event)>,
        obs: &'a dyn Observer,
        stop: &'a AtomicBool,
        heartbeat: Duration,
        timeout: Duration,
        keep_going: bool,
    ) -> Self {
        Coordinator {
            hosts,
            events,
            obs,
            stop,
            heartbeat,
            timeout,
            keep_going,
            last_beat: Instant::now(),
            last_scan: Instant::now(),
            notes: Vec::new(),
            run: None,
            printed: 0,
            fill_shown: 0,
            fill_bar: false,
            launched: None,
            run_cost: (0.0, 0.0),
            released_at: None,
            launcher: String::new(),
            step: None,
            carrier: None,
        }
    }

    /// The whole invocation on hosts whose agents have been sent the hello:
    /// versions and clocks, the job, preparing, then the runs in order.
    /// Trouble before any I/O is an error; after, the result keeps what was
    /// measured and says what went wrong.
    fn drive(
        mut self,
        template: &JobSpec,
        size_given: bool,
        shared_target: bool,
        started: String,
    ) -> Result<Gathered> {
        let n_runs = template.runs.len();
        let mut doc = ResultDoc::begin(crate::io::host::this_host(), started, template.clone());
        let mut cluster_runs = Vec::new();

        // Versions and clocks, then every host checks its targets and plans:
        // any trouble up to here is an error before any I/O.
        crate::executor::rescue::keep(&doc, true);
        crate::executor::rescue::doing("starting the agents");
        // A program that never says hello is given up after --host-timeout,
        // like a host that falls silent later.
        let outcome = self.wait_for(Some(Instant::now() + self.timeout), |h| {
            h.version.is_some() && h.clock.pings.len() as u32 >= PINGS
        });
        if outcome == Outcome::Stopped {
            return Ok(self.stopped_before_io(doc, "starting the agents"));
        }
        self.before_io("start the agent", outcome)?;
        self.launched = Some(Instant::now());
        for h in &self.hosts {
            // A replay's part goes first: the agent holds it for the job.
            for r in h.job.runs.iter().filter_map(|r| r.replay.as_ref()) {
                if let Some(text) = &r.text {
                    for m in super::protocol::trace_chunks(text) {
                        h.send(&m);
                    }
                }
            }
            h.send(&ToAgent::Job(Box::new(AgentJob {
                host: h.a.host.name.clone(),
                index: h.a.index,
                job: h.job.clone(),
                targets: h.a.targets.clone(),
                size_given,
            })));
        }
        let outcome = self.wait_for(Some(Instant::now() + PLAN_TIMEOUT), |h| {
            h.setup.planned.is_some()
        });
        if outcome == Outcome::Stopped {
            return Ok(self.stopped_before_io(doc, "the hosts planned the job"));
        }
        self.before_io("plan the job", outcome)?;
        crate::executor::rescue::doing("preparing the hosts' targets");
        self.clock_notes();

        if self.prepare(shared_target, &mut doc)? {
            for index in 0..n_runs as u32 {
                // Stop rules judge the merged results, so every host skips alike.
                let spec = &template.runs[index as usize];
                if let Some(why) = spec
                    .stop_rule
                    .as_ref()
                    .and_then(|rule| crate::plan::sequence::stop_reason(rule, &doc.runs))
                {
                    let note = format!("skipped {}: {why}", spec.name);
                    self.obs.note(&note);
                    doc.notes.push(note);
                    continue;
                }
                crate::executor::rescue::doing(format!("running '{}'", spec.name));
                let ended = match &spec.latency_target {
                    Some(s) => self.search(index, template, s, &mut doc, &mut cluster_runs),
                    None => {
                        let (cr, ended) = self.one_run(index, n_runs, template);
                        keep_run(cr, &mut doc, &mut cluster_runs);
                        ended
                    }
                };
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
        self.shutdown();

        doc.target = self.target_summary(template);
        // Each host's fills, in the hosts' order.
        doc.fill = self
            .hosts
            .iter()
            .flat_map(|h| h.setup.fills.iter().cloned())
            .collect();
        let mut notes = std::mem::take(&mut self.notes);
        notes.append(&mut doc.notes);
        doc.notes = notes;
        Ok(Gathered {
            doc,
            launch: self.launched,
            run_cost: self.run_cost,
            hosts: self.hosts.into_iter().map(gather::host_result).collect(),
            runs: cluster_runs,
        })
    }

    /// A stop before any I/O: the agents are told goodbye and the result
    /// says that nothing was measured (exit 130, like any stop).
    fn stopped_before_io(mut self, mut doc: ResultDoc, what: &str) -> Gathered {
        self.shutdown();
        doc.interrupted = true;
        doc.notes
            .push(format!("stopped while {what}: nothing was measured"));
        Gathered {
            doc,
            launch: self.launched,
            run_cost: self.run_cost,
            hosts: self.hosts.into_iter().map(gather::host_result).collect(),
            runs: Vec::new(),
        }
    }

    /// Prepare: every host at once, except that a host whose target path an
    /// earlier host also uses waits for it (the second finds the set filled).
    /// `Ok(false)` after Ctrl-C (nothing measured, the result says so); an
    /// error when a host could not prepare.
    fn prepare(&mut self, shared_target: bool, doc: &mut ResultDoc) -> Result<bool> {
        for wave in prepare_waves(&self.hosts, shared_target) {
            for &i in &wave {
                self.hosts[i].setup.prepare_sent = true;
                self.hosts[i].send(&ToAgent::Prepare);
            }
            let keep_going = self.keep_going;
            let outcome = self.wait_until(None, |hs| {
                all_live(hs, |h| !h.setup.prepare_sent || h.setup.prepared.is_some())
                    || (!keep_going && hs.iter().any(|h| !h.live()))
            });
            self.end_fill_bar();
            if outcome == Outcome::Stopped {
                doc.interrupted = true;
                return Ok(false);
            }
            if self.drop_failed("prepare the target") {
                continue;
            }
            if let Some(e) = self.failures("prepare the target") {
                // Stop the others' fills; nothing was measured yet.
                for h in self.hosts.iter().filter(|h| h.live()) {
                    h.send(&ToAgent::Stop);
                }
                self.shutdown();
                return Err(e);
            }
        }
        Ok(true)
    }
}

/// A run's records into the result: its merged result (kept at once, so a
/// stop leaves it) and its cluster record.
fn keep_run(
    cr: Option<(ClusterRun, Option<crate::result::RunResult>)>,
    doc: &mut ResultDoc,
    cluster_runs: &mut Vec<ClusterRun>,
) {
    if let Some(cr) = cr {
        if let Some(merged) = cr.1 {
            doc.runs.push(merged);
            crate::executor::rescue::keep(doc, true);
        }
        cluster_runs.push(cr.0);
    }
}

/// Groups hosts into prepare waves: a host goes into the first wave in which
/// none of its target paths is already being prepared.
fn prepare_waves(hosts: &[Host], shared: bool) -> Vec<Vec<usize>> {
    if !shared {
        return vec![(0..hosts.len()).collect()];
    }
    let mut waves: Vec<(Vec<usize>, HashSet<&Path>)> = Vec::new();
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

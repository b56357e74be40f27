//! The coordinator driven through its event channel, without ssh: each host
//! is a thread that answers the coordinator's messages the way an agent
//! does (or misbehaves in one chosen way), and the tests check the merged
//! result, each host's status and the errors the user would see.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::super::protocol::{
    FromAgent, PROTOCOL, PlannedRunInfo, PlannedTarget, TargetResult, ToAgent, encode,
};
use super::host::{Event, Host};
use super::{Coordinator, Gathered};
use crate::error::{Kind, VbError};
use crate::executor::Observer;
use crate::input::hosts::{Assignment, HostSpec};
use crate::report::fixtures::{self, RunFixture};
use crate::result::merge::HostStatus;
use crate::result::{Interval, RunResult, TargetInfo};
use crate::spec::{JobSpec, Pattern, TargetKind};

/// How a fake agent misbehaves.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Its hello speaks another protocol version.
    OldProtocol,
    /// It gives up preparing with this exit code.
    PrepareError(i32),
    /// Mid-run, after its first interval, its connection ends.
    LostInRun,
    /// Mid-run, after its first interval, it falls silent (no heartbeats).
    SilentInRun,
    /// Instead of "ready" it writes a line that is not the protocol.
    Garbage,
    /// Its results claim an impossible rate.
    BadResult,
    /// It finishes the run with an I/O error.
    RunError,
    /// At the start it "presses Ctrl-C", then answers the stop.
    CtrlC,
    /// It plans its runs on an engine this volbench does not know.
    UnknownEngine,
}

/// What the fake agents run: one mixed workload with known numbers.
fn workload() -> RunFixture {
    let mut f = RunFixture::new("mix", Pattern::Randrw, 70, 4096).perf(2_000.0, 300.0);
    // The fixture's result has no warm-up totals: no warm-up intervals
    // either, or its intervals would hold more operations than its totals.
    f.warmup_intervals = 0;
    f
}

fn job() -> JobSpec {
    fixtures::doc("coord", &[workload()]).spec
}

struct Agent {
    index: usize,
    targets: usize,
    fault: Fault,
    /// Its clock minus ours.
    offset_ns: i64,
    events: Sender<(usize, Event)>,
    stop: Arc<AtomicBool>,
}

impl Agent {
    fn say(&self, msg: FromAgent) {
        let mut line = encode(&msg).into_bytes();
        line.pop();
        let _ = self.events.send((self.index, Event::Line(line)));
    }

    fn result(&self, name: &str) -> Vec<TargetResult> {
        let mut r = workload().build();
        r.name = name.into();
        r.workload.name = name.into();
        if self.fault == Fault::BadResult {
            r.totals.read.iops = -1.0;
        }
        (0..self.targets)
            .map(|t| TargetResult {
                target: t as u32,
                result: r.clone(),
            })
            .collect()
    }

    /// Answers messages until the coordinator closes its stdin.
    fn serve(self, rx: Receiver<String>) {
        let built = workload().build();
        // The run asked for and not yet answered, and whether it started:
        // a stop ends it with what it measured (nothing, if not started).
        let mut pending: Option<(u32, bool)> = None;
        // The job's run names: a result names the run it is for.
        let mut names: Vec<String> = Vec::new();
        let name = |names: &[String], i: u32| names.get(i as usize).cloned().unwrap_or_default();
        while let Ok(line) = rx.recv() {
            let Ok(msg) = serde_json::from_str::<ToAgent>(&line) else {
                continue;
            };
            match msg {
                ToAgent::Hello { .. } => self.say(FromAgent::Hello {
                    protocol: if self.fault == Fault::OldProtocol {
                        PROTOCOL + 98
                    } else {
                        PROTOCOL
                    },
                    version: env!("CARGO_PKG_VERSION").into(),
                    host: None,
                    pid: 1,
                }),
                ToAgent::Ping { id, sent_ns } => self.say(FromAgent::Pong {
                    id,
                    sent_ns,
                    agent_ns: sent_ns.saturating_add_signed(self.offset_ns),
                }),
                ToAgent::Job(job) => {
                    names = job.job.runs.iter().map(|r| r.name.clone()).collect();
                    self.say(FromAgent::Planned {
                        targets: job
                            .targets
                            .iter()
                            .map(|p| PlannedTarget {
                                path: p.display().to_string(),
                                runs: job
                                    .job
                                    .runs
                                    .iter()
                                    .map(|r| PlannedRunInfo {
                                        engine: if self.fault == Fault::UnknownEngine {
                                            "rbd".into()
                                        } else {
                                            crate::spec::EngineKind::Psync.name().into()
                                        },
                                        io_threads: r.threads,
                                        depth: 1,
                                        size: r.size,
                                    })
                                    .collect(),
                            })
                            .collect(),
                        notes: vec!["direct I/O on".into()],
                    })
                }
                ToAgent::Prepare => {
                    if let Fault::PrepareError(code) = self.fault {
                        self.say(FromAgent::Error {
                            message: "cannot open the target: permission denied".into(),
                            code,
                        });
                        continue;
                    }
                    self.say(FromAgent::Progress {
                        done: 0,
                        total: 1 << 20,
                    });
                    self.say(FromAgent::Progress {
                        done: 1 << 20,
                        total: 1 << 20,
                    });
                    self.say(FromAgent::Prepared {
                        targets: (0..self.targets)
                            .map(|t| TargetInfo {
                                kind: TargetKind::Directory,
                                path: format!("/data/{t}"),
                                files: 2,
                                file_size: 1 << 20,
                                align: 4096,
                                mount: None,
                                memory: None,
                                blocks: Default::default(),
                            })
                            .collect(),
                        notes: Vec::new(),
                        fill: (0..self.targets)
                            .map(|t| crate::result::fill::FillResult {
                                host: "spoofed".into(),
                                path: format!("/data/{t}"),
                                files: 2,
                                bytes: 2 << 20,
                                bs: 1 << 20,
                                threads: 2,
                                seconds: 0.5,
                                mib_s: 4.0,
                                skipped_reused: false,
                            })
                            .collect(),
                    });
                }
                ToAgent::Run { index, .. } => {
                    pending = Some((index, false));
                    if self.fault == Fault::Garbage {
                        let _ = self
                            .events
                            .send((self.index, Event::Line(b"Segmentation fault".to_vec())));
                    } else {
                        self.say(FromAgent::Ready { index });
                    }
                }
                ToAgent::Start { index, at_ns } => {
                    pending = Some((index, true));
                    for t in 0..self.targets as u32 {
                        self.say(FromAgent::Started {
                            index,
                            target: t,
                            at_ns,
                        });
                    }
                    if self.fault == Fault::CtrlC {
                        self.stop.store(true, Ordering::Relaxed);
                        continue;
                    }
                    for (seq, iv) in built.intervals.iter().enumerate() {
                        for t in 0..self.targets as u32 {
                            self.say(FromAgent::Interval {
                                index,
                                target: t,
                                seq: seq as u32,
                                interval: iv.clone(),
                            });
                        }
                        if matches!(self.fault, Fault::LostInRun | Fault::SilentInRun) {
                            break;
                        }
                    }
                    match self.fault {
                        Fault::LostInRun => {
                            let _ = self.events.send((
                                self.index,
                                Event::Closed {
                                    why: "the connection closed".into(),
                                    stderr: "Broken pipe".into(),
                                },
                            ));
                            return;
                        }
                        Fault::SilentInRun => {
                            // Keeps its link open and says nothing more.
                            while rx.recv().is_ok() {}
                            return;
                        }
                        _ => {}
                    }
                    pending = None;
                    self.say(FromAgent::RunDone {
                        index,
                        results: self.result(&name(&names, index)),
                        error: (self.fault == Fault::RunError)
                            .then(|| "write error on /data/0: Input/output error".into()),
                    });
                }
                ToAgent::Stop => {
                    if let Some((index, started)) = pending.take() {
                        self.say(FromAgent::RunDone {
                            index,
                            results: if started {
                                self.result(&name(&names, index))
                            } else {
                                Vec::new()
                            },
                            error: None,
                        });
                    }
                }
                ToAgent::Heartbeat => self.say(FromAgent::Heartbeat),
                ToAgent::Trace { .. } => {} // these fake agents run no replay
                ToAgent::Bye => return,
            }
        }
    }
}

/// What the coordinator told the person at the terminal.
#[derive(Default)]
struct Seen {
    notes: Mutex<Vec<String>>,
    intervals: Mutex<Vec<Interval>>,
    /// Each host's and target's own intervals, passed through before the total.
    parts: Mutex<Vec<(String, String, f64)>>,
    finished: Mutex<Vec<RunResult>>,
    filled: Mutex<(u64, u64)>,
}

impl Observer for Seen {
    fn on(&self, ev: &crate::events::Event<'_>) {
        use crate::events::Event as Ev;
        match ev {
            Ev::FillStarted { total_bytes, .. } => self.filled.lock().unwrap().1 = *total_bytes,
            Ev::FillAdvanced { bytes } => self.filled.lock().unwrap().0 += bytes,
            Ev::Note(message) => self.notes.lock().unwrap().push(message.to_string()),
            Ev::Interval(ev) => {
                if let crate::events::Scope::Part { host, target } = ev.scope {
                    let p = (host.to_string(), target.to_string(), ev.iv.read.iops);
                    self.parts.lock().unwrap().push(p);
                } else {
                    self.intervals.lock().unwrap().push(ev.iv.clone());
                }
            }
            Ev::RunFinished(run) => self.finished.lock().unwrap().push((*run).clone()),
            Ev::FillFinished
            | Ev::RunStarted { .. }
            | Ev::IoStarted { .. }
            | Ev::HostState { .. } => {}
        }
    }
}

/// The hosts, the coordinator's event channel, the Ctrl-C flag, the agents.
struct Cluster(
    Vec<Host>,
    Receiver<(usize, Event)>,
    Arc<AtomicBool>,
    Vec<JoinHandle<()>>,
);

/// Hosts that misbehave as `faults` says, each with two targets, all given
/// `job`; host 1's clock runs 5 s ahead.
fn cluster_of(faults: &[Fault], job: JobSpec) -> Cluster {
    let (ev_tx, ev_rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let mut hosts = Vec::new();
    let mut agents = Vec::new();
    for (i, &fault) in faults.iter().enumerate() {
        let a = Assignment {
            host: HostSpec {
                name: format!("h{i}"),
                ..Default::default()
            },
            index: i as u32,
            targets: vec![PathBuf::from("/data/0"), PathBuf::from("/data/1")],
        };
        let mut h = Host::new(a, job.clone());
        let (tx, rx) = mpsc::channel();
        h.link.tx = Some(tx);
        h.send(&ToAgent::Hello {
            protocol: PROTOCOL,
            version: env!("CARGO_PKG_VERSION").into(),
            heartbeat_ms: 50,
            timeout_ms: 400,
        });
        let agent = Agent {
            index: i,
            targets: 2,
            fault,
            offset_ns: if i == 1 { 5_000_000_000 } else { 0 },
            events: ev_tx.clone(),
            stop: stop.clone(),
        };
        agents.push(std::thread::spawn(move || agent.serve(rx)));
        hosts.push(h);
    }
    // The test keeps no sender: when every agent is gone the channel says so.
    drop(ev_tx);
    Cluster(hosts, ev_rx, stop, agents)
}

/// Runs the whole invocation against fake agents.
fn drive(faults: &[Fault]) -> (Result<Gathered, VbError>, Seen) {
    drive_job(faults, job(), false)
}

fn drive_job(
    faults: &[Fault],
    job: JobSpec,
    keep_going: bool,
) -> (Result<Gathered, VbError>, Seen) {
    let seen = Seen::default();
    let Cluster(hosts, events, stop, agents) = cluster_of(faults, job.clone());
    let c = Coordinator::new(
        hosts,
        events,
        &seen,
        &stop,
        Duration::from_millis(50),
        Duration::from_millis(400),
        keep_going,
    );
    let out = c.drive(&job, false, false, "2026-01-01T00:00:00.000Z".into());
    for a in agents {
        a.join().unwrap();
    }
    (out, seen)
}

fn ok(faults: &[Fault]) -> (Gathered, Seen) {
    let (out, seen) = drive(faults);
    match out {
        Ok(g) => (g, seen),
        Err(e) => panic!("the invocation failed: {e}"),
    }
}

fn statuses(g: &Gathered) -> Vec<HostStatus> {
    g.hosts.iter().map(|h| h.status).collect()
}

#[test]
fn every_hosts_results_are_merged_exactly() {
    let (g, seen) = ok(&[Fault::None, Fault::None]);
    let one = workload().build();
    assert_eq!(g.doc.error, None);
    assert_eq!(statuses(&g), [HostStatus::Ok, HostStatus::Ok]);
    assert_eq!(g.doc.error, None);
    assert!(!g.doc.interrupted);
    assert_eq!(g.doc.runs.len(), 1);
    let merged = &g.doc.runs[0];
    // Two hosts x two targets, each the same known result.
    assert_eq!(merged.totals.read.ops, 4 * one.totals.read.ops);
    assert_eq!(merged.totals.write.ops, 4 * one.totals.write.ops);
    assert_eq!(merged.totals.read.lat_us.p99, one.totals.read.lat_us.p99);
    assert!(!merged.interrupted);
    for h in &g.hosts {
        assert_eq!(h.runs.len(), 1, "{}", h.name);
        assert_eq!(h.runs[0].totals.read.ops, 2 * one.totals.read.ops);
        assert_eq!(h.targets.len(), 2);
        assert!(h.unfinished.is_none());
    }
    assert_eq!(g.runs.len(), 1);
    assert_eq!((g.runs[0].hosts_merged, g.runs[0].hosts_total), (2, 2));
    // The target line sums every host's files.
    let target = g.doc.target.as_ref().unwrap();
    assert_eq!((target.kind, target.files), (TargetKind::Directory, 8));
    // Each host's fill of each target is listed, named by the coordinator
    // (not by what the agent claims).
    let fills: Vec<(String, String)> = g
        .doc
        .fill
        .iter()
        .map(|f| (f.host.clone(), f.path.clone()))
        .collect();
    assert_eq!(fills.len(), 4, "{fills:?}");
    assert!(fills.iter().all(|(h, _)| h != "spoofed"), "{fills:?}");
    assert_eq!(fills[0].1, "/data/0");
    assert_ne!(fills[0].0, fills[3].0, "{fills:?}");
    // The terminal saw each interval once, summed over hosts and targets,
    // one fill bar over all hosts, and the merged run.
    let printed = seen.intervals.lock().unwrap();
    assert_eq!(printed.len(), one.intervals.len());
    let iops = one.intervals[0].read.iops;
    assert!((printed[0].read.iops - 4.0 * iops).abs() < 1e-6 * iops.max(1.0));
    // Every host's every target was passed through on its own, labelled,
    // so a live exporter sees per-host figures.
    let parts = seen.parts.lock().unwrap();
    assert_eq!(parts.len(), 4 * one.intervals.len(), "{parts:?}");
    let pairs: std::collections::BTreeSet<_> = parts.iter().map(|p| (&p.0, &p.1)).collect();
    assert_eq!(pairs.len(), 4, "2 hosts x 2 targets: {parts:?}");
    assert!((parts[0].2 - iops).abs() < 1e-6 * iops.max(1.0));
    assert_eq!(*seen.filled.lock().unwrap(), (2 << 20, 2 << 20));
    assert_eq!(seen.finished.lock().unwrap().len(), 1);
    // A note every host sends is shown once.
    let notes = seen.notes.lock().unwrap();
    assert_eq!(
        notes.iter().filter(|n| n.contains("direct I/O on")).count(),
        1
    );
}

#[test]
fn clock_offsets_are_measured_and_corrected_at_the_start() {
    let (g, seen) = ok(&[Fault::None, Fault::None]);
    let off = |i: usize| g.hosts[i].clock_offset_ms.unwrap();
    assert!(off(0).abs() < 100.0, "{}", off(0));
    assert!((off(1) - 5000.0).abs() < 100.0, "{}", off(1));
    assert!(g.hosts.iter().all(|h| h.rtt_ms.is_some_and(|r| r > 0.0)));
    // Host 1 was sent its start in its own clock, 5 s ahead, and reported
    // it so: corrected, both started together.
    assert!(
        g.runs[0].start_skew_ms < 50.0,
        "{}",
        g.runs[0].start_skew_ms
    );
    let notes = seen.notes.lock().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("host clocks differ") && n.contains("h1 +5.0s")),
        "{notes:?}"
    );
}

#[test]
fn a_host_lost_mid_run_fails_alone_and_keeps_its_intervals() {
    let (g, seen) = ok(&[Fault::None, Fault::LostInRun]);
    assert_eq!(statuses(&g), [HostStatus::Ok, HostStatus::Failed]);
    let err = g.hosts[1].error.as_deref().unwrap();
    assert!(
        err.contains("the connection closed") && err.contains("Broken pipe"),
        "{err}"
    );
    let doc_err = g.doc.error.as_deref().unwrap();
    assert!(
        doc_err.starts_with("host h1 failed: the connection closed"),
        "{doc_err}"
    );
    // What the healthy host measured is kept, marked as cut short.
    assert_eq!(g.doc.runs.len(), 1);
    assert!(g.doc.runs[0].interrupted);
    assert_eq!(
        g.doc.runs[0].totals.read.ops,
        2 * workload().build().totals.read.ops
    );
    assert_eq!((g.runs[0].hosts_merged, g.runs[0].hosts_total), (1, 2));
    let unfinished = g.hosts[1].unfinished.as_ref().unwrap();
    assert_eq!(unfinished.run, "mix");
    assert_eq!(unfinished.intervals.len(), 1);
    assert!(g.hosts[1].runs.is_empty());
    let notes = seen.notes.lock().unwrap();
    assert!(
        notes.iter().any(|n| n.starts_with("host h1 failed")),
        "{notes:?}"
    );
}

#[test]
fn on_host_loss_continue_finishes_with_the_survivors_marked_partial() {
    let faults = [
        Fault::None,
        Fault::LostInRun,
        Fault::None,
        Fault::SilentInRun,
    ];
    let (out, seen) = drive_job(&faults, job(), true);
    let g = out.unwrap();
    let lost = [HostStatus::Ok, HostStatus::Failed];
    assert_eq!(statuses(&g), [lost, lost].concat());
    // The run completes: no error, not interrupted, the survivors' whole run.
    assert_eq!((g.doc.error.as_deref(), g.doc.interrupted), (None, false));
    assert!(!g.doc.runs[0].interrupted);
    let one = workload().build().totals.read.ops;
    assert_eq!(g.doc.runs[0].totals.read.ops, 2 * 2 * one);
    let r = &g.runs[0];
    assert_eq!((r.hosts_merged, r.hosts_total, r.partial), (2, 4, true));
    let notes = seen.notes.lock().unwrap();
    let note = notes.iter().find(|n| n.contains("totals are partial"));
    assert!(
        note.is_some_and(|n| n.contains("h1") && n.contains("h3")),
        "{notes:?}"
    );
}

#[test]
fn a_host_silent_past_the_timeout_fails() {
    let t0 = Instant::now();
    let (g, _) = ok(&[Fault::None, Fault::SilentInRun]);
    assert_eq!(statuses(&g), [HostStatus::Ok, HostStatus::Failed]);
    let err = g.hosts[1].error.as_deref().unwrap();
    assert!(err.starts_with("no word from it for"), "{err}");
    assert_eq!(g.doc.runs.len(), 1);
    // Given up on after the 0.4 s timeout, not the run's minute of slack.
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
}

#[test]
fn a_host_writing_garbage_fails_and_nothing_runs() {
    let (g, _) = ok(&[Fault::Garbage, Fault::None]);
    assert_eq!(statuses(&g), [HostStatus::Failed, HostStatus::Ok]);
    let err = g.hosts[0].error.as_deref().unwrap();
    assert!(
        err.starts_with("sent malformed output") && err.contains("Segmentation fault"),
        "{err}"
    );
    // The barrier never opened: no host was started, nothing was merged.
    assert!(g.doc.runs.is_empty());
    assert_eq!(g.runs[0].hosts_merged, 0);
    assert!(g.doc.error.as_deref().unwrap().contains("host h0 failed"));
}

#[test]
fn an_impossible_result_is_refused_not_merged() {
    let (g, _) = ok(&[Fault::None, Fault::BadResult]);
    assert_eq!(statuses(&g), [HostStatus::Ok, HostStatus::Failed]);
    let err = g.hosts[1].error.as_deref().unwrap();
    assert!(err.starts_with("sent an invalid result"), "{err}");
    assert!(g.doc.runs[0].totals.read.iops > 0.0);
    assert_eq!(g.runs[0].hosts_merged, 1);
}

#[test]
fn an_io_error_with_results_fails_the_host_and_keeps_its_figures() {
    let (g, _) = ok(&[Fault::RunError, Fault::None]);
    assert_eq!(statuses(&g), [HostStatus::Failed, HostStatus::Ok]);
    assert_eq!(
        g.hosts[0].error.as_deref(),
        Some("write error on /data/0: Input/output error")
    );
    assert_eq!(g.hosts[0].runs.len(), 1);
    assert_eq!(g.runs[0].hosts_merged, 2);
    assert!(
        g.doc
            .error
            .as_deref()
            .unwrap()
            .contains("Input/output error")
    );
}

#[test]
fn ctrl_c_mid_run_stops_every_host_and_keeps_their_results() {
    let (g, _) = ok(&[Fault::CtrlC, Fault::CtrlC]);
    assert!(g.doc.interrupted);
    assert_eq!(g.doc.error, None);
    assert_eq!(statuses(&g), [HostStatus::Ok, HostStatus::Ok]);
    assert_eq!(g.runs[0].hosts_merged, 2);
}

#[test]
fn a_prepare_error_names_the_host_with_its_exit_code() {
    let (out, _) = drive(&[Fault::None, Fault::PrepareError(3)]);
    let e = out.err().expect("a host could not prepare");
    assert_eq!(e.kind, Kind::Refused);
    assert!(
        e.message
            .starts_with("could not prepare the target on 1 of 2 hosts (nothing was run)")
            && e.message
                .contains("h1: cannot open the target: permission denied"),
        "{}",
        e.message
    );
}

#[test]
fn another_protocol_version_is_refused_before_any_io() {
    let (out, _) = drive(&[Fault::OldProtocol, Fault::None]);
    let e = out.err().expect("the versions differ");
    assert_eq!(e.kind, Kind::Target);
    assert!(
        e.message
            .starts_with("could not start the agent on 1 of 2 hosts"),
        "{}",
        e.message
    );
    assert!(e.message.contains("h0: it runs volbench") && e.message.contains("--push-binary"));
}

#[test]
fn a_host_count_point_runs_on_the_first_hosts_and_the_others_idle() {
    let mut j = job();
    let base = j.runs[0].clone();
    j.runs = [1u32, 3]
        .iter()
        .map(|&n| crate::spec::RunSpec {
            name: crate::input::hosts::counts::point_name(&base.name, n),
            host_count: Some(n),
            ..base.clone()
        })
        .collect();
    let (out, seen) = drive_job(&[Fault::None; 3], j, false);
    let g = out.unwrap();
    let one = workload().build();
    assert_eq!(g.doc.error, None);
    assert_eq!(statuses(&g), [HostStatus::Ok; 3]);
    assert_eq!(g.doc.runs.len(), 2);
    // One host x two targets, then three hosts x two targets.
    assert_eq!(g.doc.runs[0].totals.read.ops, 2 * one.totals.read.ops);
    assert_eq!(g.doc.runs[1].totals.read.ops, 6 * one.totals.read.ops);
    assert_eq!(g.doc.runs[0].workload.host_count, Some(1));
    assert_eq!(g.doc.runs[1].workload.host_count, Some(3));
    let taking_part: Vec<(u32, u32)> = g
        .runs
        .iter()
        .map(|r| (r.hosts_merged, r.hosts_total))
        .collect();
    assert_eq!(taking_part, [(1, 1), (3, 3)]);
    let per_host: Vec<usize> = g.hosts.iter().map(|h| h.runs.len()).collect();
    assert_eq!(per_host, [2, 1, 1]);
    // The idle hosts' silence did not hold up the terminal's intervals.
    assert_eq!(
        seen.intervals.lock().unwrap().len(),
        2 * one.intervals.len()
    );
}

#[test]
fn a_host_planning_an_unknown_engine_is_refused_not_shown_as_another() {
    let (out, seen) = drive(&[Fault::None, Fault::UnknownEngine]);
    let e = out.err().expect("h1 named an engine outside the table");
    assert!(
        e.message.contains("h1") && e.message.contains("unknown engine 'rbd'"),
        "{}",
        e.message
    );
    for row in crate::spec::ENGINES {
        assert!(e.message.contains(row.name), "{}", e.message);
    }
    assert!(seen.intervals.lock().unwrap().is_empty(), "nothing ran");
}

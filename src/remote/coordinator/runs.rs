//! One run on every host: the barrier (all ready), the common start, the
//! wait for every host's results, and stopping the others when one fails
//! or Ctrl-C comes.

use crate::events::Raise as _;
use std::time::{Duration, Instant};

use super::super::protocol::ToAgent;
use super::events::Outcome;
use super::host::{RunState, all_in_run, trouble};
use super::{Coordinator, STOP_TIMEOUT};
use crate::io::engine::EngineKind;
use crate::plan::PlannedRun;
use crate::result::RunResult;
use crate::result::merge::ClusterRun;
use crate::spec::{JobSpec, RunSpec};

/// How the invocation goes on after a run.
pub(super) enum RunEnd {
    Next,
    Interrupted,
    Failed(String),
}

/// Slack past a run's own length before a host that has not finished is
/// given up on.
const RUN_SLACK: Duration = Duration::from_secs(60);

impl Coordinator<'_> {
    /// One run on every host. Returns its cluster record and merged result
    /// (when any host produced one), and how the invocation goes on.
    #[allow(clippy::type_complexity)]
    pub(super) fn one_run(
        &mut self,
        index: u32,
        count: usize,
        template: &JobSpec,
    ) -> (Option<(ClusterRun, Option<RunResult>)>, RunEnd) {
        let mut spec = template.runs[index as usize].clone();
        // A search step: the run at the step's rate for the whole job, under
        // the step's name (each host is sent its targets' share).
        let step = self.step.clone();
        if let Some((st, total)) = &step {
            spec.latency_target = None;
            spec.rate_iops = *total;
            spec.name = st.name.clone();
        }
        for h in &mut self.hosts {
            h.run = RunState::new(h.a.targets.len());
            h.run.idle = !crate::input::hosts::counts::takes_part(spec.host_count, h.a.index);
        }
        let lost_before: Vec<bool> = self.hosts.iter().map(|h| !h.live()).collect();
        let planned = self.planned_run(index, spec.clone());
        self.obs.run_started(index as usize, count, &planned);
        self.run = Some((index, planned));
        self.printed = 0;
        for h in self.hosts.iter().filter(|h| h.live()) {
            let state = if h.in_run() { "running" } else { "idle" };
            self.obs.host_state(h.name(), state);
        }
        for h in self.hosts.iter().filter(|h| h.in_run()) {
            h.send(&ToAgent::Run {
                index,
                step: step.as_ref().map(|s| s.0.clone()),
            });
        }
        // The barrier: every host has its workers set up and waiting (or
        // one is in trouble, and nobody starts).
        // Going on without lost hosts, only a stop ends the run early.
        let halt = |hs: &[super::host::Host], keep_going: bool| !keep_going && trouble(hs);
        let keep_going = self.keep_going;
        let mut outcome = self.wait_until(None, |hs| {
            all_in_run(hs, |h| h.run.ready || h.run.done.is_some()) || halt(hs, keep_going)
        });
        if outcome == Outcome::Done && !halt(&self.hosts, keep_going) {
            let margin = self.release(index);
            let budget =
                Duration::from_secs_f64(spec.warmup_s + spec.duration_s) + margin + RUN_SLACK;
            let (cpu0, t0) = (crate::io::host::cpu_seconds(), Instant::now());
            // Until every host is done, or one is in trouble, or Ctrl-C.
            outcome = self.wait_until(Some(Instant::now() + budget), |hs| {
                all_in_run(hs, |h| h.run.done.is_some()) || halt(hs, keep_going)
            });
            let cpu1 = crate::io::host::cpu_seconds();
            self.run_cost.0 += (cpu1.0 - cpu0.0) + (cpu1.1 - cpu0.1);
            self.run_cost.1 += t0.elapsed().as_secs_f64();
            if outcome == Outcome::TimedOut {
                for i in 0..self.hosts.len() {
                    if self.hosts[i].in_run() && self.hosts[i].run.done.is_none() {
                        self.fail(i, "did not finish the run in time".into());
                    }
                }
            }
        }
        let interrupted = outcome == Outcome::Stopped;
        if interrupted || halt(&self.hosts, keep_going) {
            self.stop_the_rest();
        }
        // Host errors reported with results (an I/O error there) fail the host too.
        for i in 0..self.hosts.len() {
            if self.hosts[i].run.stopped {
                continue;
            }
            if let Some(e) = self.hosts[i].run.done.as_ref().and_then(|d| d.1.clone()) {
                self.fail(i, e);
            }
        }
        let mut record = self.gather(&spec);
        self.run = None;
        // Lost in this run, named with their causes (one line per cause).
        let lost: Vec<(&str, &str)> = self
            .hosts
            .iter()
            .zip(&lost_before)
            .filter(|(h, before)| !h.live() && !**before)
            .map(|(h, _)| (h.name(), h.failed.as_deref().unwrap_or("")))
            .collect();
        let lines = super::events::group_causes(&lost);
        let n_lost = lost.len();
        let any_left = self.hosts.iter().any(|h| h.in_run());
        let end = if n_lost > 0 && self.keep_going && any_left {
            record.0.partial = true;
            let note = format!(
                "run '{}': {n_lost} host(s) lost and left out (--on-host-loss continue); \
                 the totals are partial, {} of {} hosts:\n{}",
                spec.name,
                record.0.hosts_merged,
                record.0.hosts_total,
                lines.join("\n")
            );
            self.obs.note(&note);
            self.notes.push(note);
            if interrupted {
                RunEnd::Interrupted
            } else {
                RunEnd::Next
            }
        } else if n_lost > 0 {
            // A few lost hosts each get their line; many are grouped by cause.
            let named = if n_lost <= 8 {
                let each: Vec<String> = lost
                    .iter()
                    .map(|(h, why)| format!("host {h} failed: {why}"))
                    .collect();
                each.join("; ")
            } else {
                format!(
                    "{n_lost} of {} hosts lost in run '{}':\n{}\n",
                    record.0.hosts_total,
                    spec.name,
                    lines.join("\n")
                )
            };
            RunEnd::Failed(format!(
                "{named}; the other hosts were stopped, and the results hold what was measured until then"
            ))
        } else if interrupted {
            RunEnd::Interrupted
        } else {
            RunEnd::Next
        };
        (Some(record), end)
    }

    /// Stops every host still going; they send what they measured, and one
    /// that does not within `STOP_TIMEOUT` fails.
    fn stop_the_rest(&mut self) {
        for h in self
            .hosts
            .iter_mut()
            .filter(|h| h.in_run() && h.run.done.is_none())
        {
            h.run.stopped = true;
            h.send(&ToAgent::Stop);
        }
        let o = self.wait_inner(
            Some(Instant::now() + STOP_TIMEOUT),
            |hs| all_in_run(hs, |h| h.run.done.is_some()),
            false,
        );
        if o == Outcome::TimedOut {
            for i in 0..self.hosts.len() {
                if self.hosts[i].in_run() && self.hosts[i].run.done.is_none() {
                    self.fail(
                        i,
                        format!("did not stop within {}s", STOP_TIMEOUT.as_secs()),
                    );
                }
            }
        }
    }

    /// The run as the terminal shows it: the template's workload, the engine
    /// the first host resolved, every host's I/O threads together.
    fn planned_run(&self, index: u32, spec: RunSpec) -> PlannedRun {
        let mut engine = EngineKind::Psync;
        let mut io_threads = 0u32;
        let mut depth = 1;
        for (k, h) in self.hosts.iter().filter(|h| h.in_run()).enumerate() {
            for t in h.setup.planned.iter().flatten() {
                if let Some(r) = t.runs.get(index as usize) {
                    io_threads = io_threads.saturating_add(r.io_threads);
                    if k == 0 {
                        depth = r.depth;
                        // `on_planned` refused a host naming an engine
                        // outside the table, so this always finds it.
                        if let Ok(e) = EngineKind::from_name(&r.engine) {
                            engine = e;
                        }
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
            open_files: None,
        }
    }
}

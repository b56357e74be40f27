//! One run on every host: the barrier (all ready), the common start, the
//! wait for every host's results, and stopping the others when one fails
//! or Ctrl-C comes.

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
        let spec = template.runs[index as usize].clone();
        for h in &mut self.hosts {
            h.run = RunState::new(h.a.targets.len());
            h.run.idle = !crate::input::hosts::counts::takes_part(spec.host_count, h.a.index);
        }
        let planned = self.planned_run(index, spec.clone());
        self.obs.run_started(index as usize, count, &planned);
        self.run = Some((index, planned));
        self.printed = 0;
        for h in self.hosts.iter().filter(|h| h.in_run()) {
            h.send(&ToAgent::Run { index });
        }
        // The barrier: every host has its workers set up and waiting (or
        // one is in trouble, and nobody starts).
        let mut outcome = self.wait_until(None, |hs| {
            all_in_run(hs, |h| h.run.ready || h.run.done.is_some()) || trouble(hs)
        });
        if outcome == Outcome::Done && !trouble(&self.hosts) {
            let margin = self.release(index);
            let budget =
                Duration::from_secs_f64(spec.warmup_s + spec.duration_s) + margin + RUN_SLACK;
            let (cpu0, t0) = (crate::io::host::cpu_seconds(), Instant::now());
            // Until every host is done, or one is in trouble, or Ctrl-C.
            outcome = self.wait_until(Some(Instant::now() + budget), |hs| {
                all_in_run(hs, |h| h.run.done.is_some()) || trouble(hs)
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
        if interrupted || trouble(&self.hosts) {
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
        let record = self.gather(&spec);
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
        }
    }
}

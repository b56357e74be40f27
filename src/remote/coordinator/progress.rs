//! What the terminal shows while the hosts work: one fill bar over all
//! hosts' preparation, and each interval once every host has reported it
//! (each host's own is passed on as it arrives, `handlers.rs`).

use super::Coordinator;
use super::host::{Fill, Host};
use crate::events::{Progress as _, Raise as _};
use crate::result::Interval;
use crate::result::merge;

impl Coordinator<'_> {
    /// Drives the fill bar from the hosts' summed progress, once every host
    /// filling has said how much it has to fill.
    pub(super) fn show_fill(&mut self) {
        let filling = |h: &&Host| h.live() && h.setup.prepare_sent;
        if !self
            .hosts
            .iter()
            .filter(filling)
            .all(|h| h.setup.fill.known || h.setup.prepared.is_some())
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
                    acc.0.saturating_add(h.setup.fill.done),
                    acc.1.saturating_add(h.setup.fill.total),
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

    pub(super) fn end_fill_bar(&mut self) {
        if self.fill_bar {
            self.obs.finish();
            self.fill_bar = false;
        }
        for h in &mut self.hosts {
            h.setup.fill = Fill::default();
        }
    }

    /// Prints every interval position all live hosts and targets have reached.
    pub(super) fn print_intervals(&mut self) {
        let Some((_, run)) = &self.run else { return };
        loop {
            let k = self.printed;
            let mut at: Vec<&Interval> = Vec::new();
            for h in self.hosts.iter().filter(|h| h.in_run()) {
                for series in &h.run.intervals {
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
            self.obs.interval(&crate::events::IntervalEvent {
                run,
                elapsed_s: iv.t_s,
                total_s,
                iv: &iv,
                scope: crate::events::Scope::Total,
                proto: None,
            });
            self.printed += 1;
        }
    }
}

/// One host's interval of target `t`, passed on labelled before the merge:
/// a live exporter sees every host's own figures.
pub(super) fn pass_through(
    obs: &dyn crate::events::Observer,
    run: &crate::plan::PlannedRun,
    h: &Host,
    t: usize,
    iv: &Interval,
) {
    let target = h.a.targets.get(t).map(|p| p.display().to_string());
    obs.interval(&crate::events::IntervalEvent {
        run,
        elapsed_s: iv.t_s,
        total_s: run.spec.warmup_s + run.spec.duration_s,
        iv,
        scope: crate::events::Scope::Part {
            host: h.name(),
            target: target.as_deref().unwrap_or_default(),
        },
        proto: None,
    });
}

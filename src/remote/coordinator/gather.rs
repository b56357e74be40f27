//! Gathering: each host's results merged over its targets, then all hosts
//! merged exactly; a failed host's intervals kept aside; the start skew;
//! and each host's entry in the result's cluster part.

use super::host::Host;
use super::{Coordinator, SKEW_WARN_MS};
use crate::events::Raise as _;
use crate::result::merge::{self, ClusterRun, HostResult, Unfinished};
use crate::result::targets::TargetRun;
use crate::result::{RunResult, TargetInfo};
use crate::spec::{JobSpec, RunSpec};

impl Coordinator<'_> {
    /// Merges what the hosts sent for this run: each host over its targets,
    /// then all hosts. Hosts without results keep their intervals aside.
    pub(super) fn gather(&mut self, spec: &RunSpec) -> (ClusterRun, Option<RunResult>) {
        let mut host_results: Vec<RunResult> = Vec::new();
        let mut targets: Vec<TargetRun> = Vec::new();
        let mut starts: Vec<i128> = Vec::new();
        let mut kept_aside = Vec::new();
        for h in &mut self.hosts {
            starts.extend(h.run.started.iter().flatten().copied());
            let parts: Vec<&RunResult> = h
                .run
                .done
                .as_ref()
                .map(|d| d.0.iter().map(|t| &t.result).collect())
                .unwrap_or_default();
            if parts.is_empty() {
                if h.failed.is_some() && h.unfinished.is_none() {
                    let intervals =
                        merge::merge_series(h.run.intervals.iter().map(|s| s.as_slice()));
                    if !intervals.is_empty() {
                        kept_aside.push(h.a.host.name.clone());
                    }
                    h.unfinished = Some(Unfinished {
                        run: spec.name.clone(),
                        intervals,
                    });
                }
                continue;
            }
            match merge::merge_runs(&parts) {
                Ok(mut r) => {
                    // The merge keeps the parts' threads in order: each
                    // target's stretch is labelled with it and the host.
                    let mut from = 0;
                    for t in h.run.done.iter().flat_map(|d| d.0.iter()) {
                        let to = (from + t.result.threads.len()).min(r.threads.len());
                        if let Some(s) = r.threads.get_mut(from..to) {
                            let target = (parts.len() > 1).then_some(t.target);
                            crate::result::threads::label(s, Some(&h.a.host.name), target);
                        }
                        from = to;
                    }
                    for t in h.run.done.iter().flat_map(|d| d.0.iter()) {
                        let path = h.a.targets.get(t.target as usize);
                        let path = path.map(|p| p.display().to_string()).unwrap_or_default();
                        let kind = h
                            .setup
                            .prepared
                            .as_ref()
                            .and_then(|p| p.get(t.target as usize));
                        targets.push(
                            TargetRun::of(&t.result, t.target, &path, kind.map(|k| k.kind))
                                .on_host(&h.a.host.name),
                        );
                    }
                    // The merged run keeps every thread, labelled with its
                    // host: a host's own copy would only repeat them.
                    let mut own = r.clone();
                    own.threads = Vec::new();
                    own.threads_left_out = 0;
                    h.runs.push(own);
                    host_results.push(r);
                }
                Err(e) => {
                    if h.failed.is_none() {
                        h.failed = Some(format!("its results do not merge: {e}"));
                    }
                }
            }
        }
        if !kept_aside.is_empty() {
            // One note for all of them: a thousand lost hosts are one line.
            let n = kept_aside.len();
            let shown = kept_aside
                .iter()
                .take(4)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            let more = if n > 4 {
                format!(" and {} more", n - 4)
            } else {
                String::new()
            };
            self.notes.push(format!(
                "run '{}': what {n} lost host(s) ({shown}{more}) measured before the loss is \
                 kept apart from the totals (cluster.hosts[].unfinished; `report --format \
                 intervals-csv` lists it as HOST (lost))",
                spec.name
            ));
        }
        let refs: Vec<&RunResult> = host_results.iter().collect();
        let merged = if refs.is_empty() {
            self.run_of_lost_hosts(spec)
        } else {
            match merge::merge_runs(&refs) {
                Ok(mut m) => {
                    // Hosts left out by --on-host-loss continue mark the
                    // run partial (the cluster record), not interrupted.
                    m.interrupted |= !self.keep_going && self.hosts.iter().any(|h| !h.live());
                    // What the run asked for, whatever the agents echo back.
                    m.workload.host_count = spec.host_count;
                    // One host's CPU is not another's: counters stay with
                    // each host's own runs (`cluster.hosts[].runs[]`).
                    m.counters = None;
                    m.targets = targets;
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
            // How late the last one was says whether the start reached it
            // late (a slow link, a margin too short) or it woke late.
            let late = match (self.released_at, starts.iter().max()) {
                (Some(at), Some(last)) => format!(
                    "; the last began {:.1} ms after the common start",
                    (last - at) as f64 / 1e6
                ),
                _ => String::new(),
            };
            let n = format!(
                "run '{}': the hosts started {skew_ms:.1} ms apart (more than {SKEW_WARN_MS} ms){late}",
                spec.name
            );
            self.obs.note(&n);
            self.notes.push(n);
        }
        if let Some(m) = &merged {
            self.obs.run_finished(m);
        }
        (
            ClusterRun {
                name: spec.name.clone(),
                hosts_merged: host_results.len() as u32,
                hosts_total: self.hosts.iter().filter(|h| !h.run.idle).count() as u32,
                start_skew_ms: skew_ms,
                partial: false,
            },
            merged,
        )
    }

    /// A run no host sent results for (every host in it was lost: a
    /// `scancel`, a Slurm time limit, one host cut): what arrived is kept,
    /// the lost hosts' intervals added position by position, as a run whose
    /// figures come from its interval record, marked interrupted.
    fn run_of_lost_hosts(&mut self, spec: &RunSpec) -> Option<RunResult> {
        let planned = self.run.as_ref().map(|r| r.1.clone())?;
        let series: Vec<Vec<crate::result::Interval>> = self
            .hosts
            .iter()
            .filter(|h| h.failed.is_some() && !h.run.idle)
            .map(|h| merge::merge_series(h.run.intervals.iter().map(|s| s.as_slice())))
            .filter(|s| !s.is_empty())
            .collect();
        let longest = series.iter().map(Vec::len).max()?;
        let intervals: Vec<crate::result::Interval> = (0..longest)
            .map(|k| {
                let at: Vec<&crate::result::Interval> =
                    series.iter().filter_map(|s| s.get(k)).collect();
                merge::merge_intervals(&at)
            })
            .collect();
        let mut planned = planned;
        planned.spec = spec.clone();
        let mut run = crate::executor::record::from_interval_record(&planned, intervals);
        run.workload.host_count = spec.host_count;
        let note = format!(
            "run '{}': no host sent its results ({} lost); its figures come from the \
             intervals that arrived from them ({} s measured; operations and bytes exact, \
             percentiles from the per-interval histograms)",
            spec.name,
            series.len(),
            crate::units::trim(run.phases.iter().map(|p| p.duration_s).sum::<f64>(), 1)
        );
        self.obs.note(&note);
        self.notes.push(note);
        Some(run)
    }

    /// The result's target line: the template, with the first host's kind.
    pub(super) fn target_summary(&self, template: &JobSpec) -> Option<TargetInfo> {
        let all: Vec<&TargetInfo> = self
            .hosts
            .iter()
            .flat_map(|h| h.setup.prepared.iter().flatten())
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
            // Memory on any host makes the merged figures partly RAM's.
            memory: all.iter().find_map(|t| t.memory.clone()),
            blocks: first.blocks.clone(),
        })
    }
}

/// A host's entry in the result's cluster part.
pub(super) fn host_result(h: Host) -> HostResult {
    HostResult {
        name: h.a.host.name.clone(),
        index: h.a.index,
        status: h.status(),
        error: h.failed,
        version: h.version,
        // The size the user named for this host wins over its platform's.
        host: h.info.map(|mut i| {
            if let Some(v) = &h.job.reading.vm_size {
                i.vm_size = Some(v.clone());
            }
            i
        }),
        clock_offset_ms: (h.clock.rtt_ns > 0).then(|| h.clock.offset_ns as f64 / 1e6),
        rtt_ms: (h.clock.rtt_ns > 0).then(|| h.clock.rtt_ns as f64 / 1e6),
        targets: h.setup.prepared.unwrap_or_default(),
        runs: h.runs,
        target_runs: Vec::new(),
        unfinished: h.unfinished,
    }
}

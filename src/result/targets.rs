//! Each target's own figures in a run over several targets
//! (`runs[].targets[]`), local target lists and multi-host runs alike (the
//! latter name their host). The run's totals are the exact merge of these;
//! they keep what each target did, so a slow volume among fast ones is seen
//! rather than averaged away.
//!
//! Older results kept them in two other shapes, still read: local lists
//! with a short latency summary per operation, and multi-host runs in
//! `cluster.hosts[].target_runs[]` naming their run; [`upgrade`] moves both
//! into this one.

use serde::{Deserialize, Serialize};

use super::{LatSummary, OpTotals, PhaseName, ResultDoc, RunResult};
use crate::spec::TargetKind;

/// A target a run went on without (`--on-host-loss continue`): its
/// server was lost. Its figures are in no total.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LeftOut {
    pub(crate) path: String,
    /// Why: its run's error (the server, and how long it was waited for).
    pub(crate) error: String,
    /// Seconds of this run's measured phase it ran before the loss (0 for
    /// a target lost in a run before).
    pub(crate) measured_s: f64,
}

/// One target's share of one run (on one host, in a multi-host run).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "Wire")]
pub struct TargetRun {
    /// The host that drove it; absent in a local run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Index into the run's target list (local) or the host's `targets`.
    pub(crate) target: u32,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<TargetKind>,
    /// I/O threads this target ran (0 in results written before it was kept).
    pub io_threads: u32,
    /// The target's own measured phase: its rates are its counts over it.
    pub(crate) duration_s: f64,
    pub read: OpTotals,
    pub write: OpTotals,
    /// Reads and writes together, from the target's own histograms.
    pub lat_us: LatSummary,
    /// Set only while reading an old multi-host result: the run it belongs to.
    #[serde(skip)]
    legacy_run: Option<String>,
}

impl TargetRun {
    pub(crate) fn of(r: &RunResult, target: u32, path: &str, kind: Option<TargetKind>) -> Self {
        Self {
            host: None,
            target,
            path: path.to_string(),
            kind,
            io_threads: r.io_threads,
            duration_s: measured_s(r),
            read: r.totals.read.clone(),
            write: r.totals.write.clone(),
            lat_us: r.latency(),
            legacy_run: None,
        }
    }

    pub(crate) fn on_host(mut self, host: &str) -> Self {
        self.host = Some(host.to_string());
        self
    }

    pub(crate) fn total_iops(&self) -> f64 {
        self.read.iops + self.write.iops
    }

    pub(crate) fn total_mib_s(&self) -> f64 {
        self.read.mib_s + self.write.mib_s
    }
}

fn measured_s(r: &RunResult) -> f64 {
    r.phases
        .iter()
        .find(|p| p.name == PhaseName::Measure)
        .map_or(0.0, |p| p.duration_s)
}

/// A run's targets grouped by host, in order of first appearance (one
/// group, host None, for a local run): siblings are the targets one client
/// drove together.
pub(crate) fn by_host(r: &RunResult) -> Vec<(Option<&str>, Vec<&TargetRun>)> {
    let mut out: Vec<(Option<&str>, Vec<&TargetRun>)> = Vec::new();
    for t in &r.targets {
        let h = t.host.as_deref();
        match out.iter_mut().find(|(k, _)| *k == h) {
            Some((_, ts)) => ts.push(t),
            None => out.push((h, vec![t])),
        }
    }
    out
}

/// Moves figures kept in older shapes into `runs[].targets[]`: an old
/// multi-host result's `cluster.hosts[].target_runs[]` (each naming its
/// run), and an old local list's targets, which lacked their own duration
/// (the run's measured phase, which every target ran).
pub(crate) fn upgrade(doc: &mut ResultDoc) {
    if let Some(c) = doc.cluster.as_mut() {
        for h in &mut c.hosts {
            for mut t in std::mem::take(&mut h.target_runs) {
                let Some(run) = t.legacy_run.take() else {
                    continue;
                };
                if let Some(r) = doc.runs.iter_mut().find(|r| r.name == run) {
                    t.host = Some(h.name.clone());
                    r.targets.push(t);
                }
            }
        }
    }
    for r in &mut doc.runs {
        let secs = measured_s(r);
        for t in &mut r.targets {
            if t.duration_s == 0.0 && t.host.is_none() {
                t.duration_s = secs;
            }
        }
    }
}

/// Any shape a target's figures were written in.
#[derive(Deserialize)]
struct Wire {
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    run: Option<String>,
    #[serde(default)]
    target: u32,
    path: String,
    #[serde(default)]
    kind: Option<TargetKind>,
    #[serde(default)]
    io_threads: u32,
    #[serde(default)]
    duration_s: f64,
    read: WireOp,
    write: WireOp,
    #[serde(default)]
    lat_us: Option<LatSummary>,
}

/// An operation's totals, or the short form old local lists wrote (mean
/// and p99 only).
#[derive(Deserialize)]
struct WireOp {
    ops: u64,
    bytes: u64,
    iops: f64,
    mib_s: f64,
    #[serde(default)]
    lat_us: Option<LatSummary>,
    #[serde(default)]
    service_lat_us: Option<LatSummary>,
    #[serde(default)]
    lat_us_mean: f64,
    #[serde(default)]
    lat_us_p99: f64,
}

impl From<WireOp> for OpTotals {
    fn from(w: WireOp) -> Self {
        let lat_us = w.lat_us.unwrap_or(LatSummary {
            mean: w.lat_us_mean,
            p99: w.lat_us_p99,
            ..LatSummary::default()
        });
        OpTotals {
            ops: w.ops,
            bytes: w.bytes,
            iops: w.iops,
            mib_s: w.mib_s,
            lat_us,
            service_lat_us: w.service_lat_us,
        }
    }
}

impl From<Wire> for TargetRun {
    fn from(w: Wire) -> Self {
        let (read, write): (OpTotals, OpTotals) = (w.read.into(), w.write.into());
        // Old local lists kept no combined summary: the ops-weighted mean,
        // and the larger p99 (a bound; the histograms were not kept).
        let lat_us = w.lat_us.unwrap_or_else(|| {
            let n = read.ops.saturating_add(write.ops) as f64;
            let mean = if n > 0.0 {
                (read.lat_us.mean * read.ops as f64 + write.lat_us.mean * write.ops as f64) / n
            } else {
                0.0
            };
            LatSummary {
                mean,
                p99: read.lat_us.p99.max(write.lat_us.p99),
                ..LatSummary::default()
            }
        });
        TargetRun {
            host: w.host,
            target: w.target,
            path: w.path,
            kind: w.kind,
            io_threads: w.io_threads,
            duration_s: w.duration_s,
            read,
            write,
            lat_us,
            legacy_run: w.run,
        }
    }
}

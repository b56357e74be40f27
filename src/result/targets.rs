//! Per-target figures of a multi-host run: each host's targets' own totals
//! for each run (`cluster.hosts[].target_runs[]`), kept beside the host's
//! merge so a slow volume among a host's targets can be named. A host's
//! run is the exact merge of these, and a result read back must say so.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::check::{MAX_IOPS, MAX_MIB_S, MAX_SECONDS, bounded, check_lat, num};
use super::merge::HostResult;
use super::{LatSummary, OpTotals, PhaseName, RunResult};

const MIB: f64 = 1024.0 * 1024.0;

/// One target's share of one run on one host.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetRun {
    pub run: String,
    /// Index into the host's `targets`.
    pub target: u32,
    pub path: String,
    /// The target's own measured phase.
    pub duration_s: f64,
    pub read: OpTotals,
    pub write: OpTotals,
    /// Reads and writes together, from the target's own histograms.
    pub lat_us: LatSummary,
}

impl TargetRun {
    pub fn of(r: &RunResult, target: u32, path: &str) -> Self {
        Self {
            run: r.name.clone(),
            target,
            path: path.to_string(),
            duration_s: r
                .phases
                .iter()
                .find(|p| p.name == PhaseName::Measure)
                .map_or(0.0, |p| p.duration_s),
            read: r.totals.read.clone(),
            write: r.totals.write.clone(),
            lat_us: r.latency(),
        }
    }

    pub fn total_iops(&self) -> f64 {
        self.read.iops + self.write.iops
    }

    pub fn total_mib_s(&self) -> f64 {
        self.read.mib_s + self.write.mib_s
    }
}

/// Whether a rate read back agrees with its count over the target's own
/// window (one process measured it, so exactly, up to JSON's last digit).
fn agrees(claimed: f64, count: f64, seconds: f64) -> bool {
    let expect = if seconds > 0.0 { count / seconds } else { 0.0 };
    (claimed - expect).abs() <= 1e-9 * expect.abs().max(claimed.abs()) + 1e-9
}

fn check_op(what: &str, t: &OpTotals, seconds: f64) -> Result<(), String> {
    bounded(&format!("{what} IOPS"), t.iops, MAX_IOPS)?;
    bounded(&format!("{what} MiB/s"), t.mib_s, MAX_MIB_S)?;
    check_lat(what, &t.lat_us, t.ops)?;
    if !agrees(t.iops, t.ops as f64, seconds) {
        return Err(format!(
            "{what} IOPS {} does not agree with {} operations in {} s",
            num(t.iops),
            t.ops,
            num(seconds)
        ));
    }
    if !agrees(t.mib_s, t.bytes as f64 / MIB, seconds) {
        return Err(format!(
            "{what} MiB/s {} does not agree with {} bytes in {} s",
            num(t.mib_s),
            t.bytes,
            num(seconds)
        ));
    }
    Ok(())
}

/// Checks a host's per-target figures: each well-formed and agreeing with
/// its own operations and duration, no target twice in a run, and per run
/// the targets' operations and bytes adding up to the host's totals.
pub fn check_host(h: &HostResult) -> Result<(), String> {
    let mut sums: BTreeMap<&str, [u64; 4]> = BTreeMap::new();
    let mut seen: BTreeMap<(&str, u32), ()> = BTreeMap::new();
    for t in &h.target_runs {
        let what = format!("run '{}', target {}", t.run, t.path);
        if t.target as usize >= h.targets.len().max(1) {
            return Err(format!(
                "{what}: target {} of {}",
                t.target,
                h.targets.len()
            ));
        }
        if seen.insert((t.run.as_str(), t.target), ()).is_some() {
            return Err(format!("{what}: given twice"));
        }
        bounded(&format!("{what}: duration_s"), t.duration_s, MAX_SECONDS)?;
        check_op(&format!("{what}: read"), &t.read, t.duration_s)?;
        check_op(&format!("{what}: write"), &t.write, t.duration_s)?;
        check_lat(&what, &t.lat_us, t.read.ops.saturating_add(t.write.ops))?;
        let s = sums.entry(t.run.as_str()).or_default();
        for (i, v) in [t.read.ops, t.read.bytes, t.write.ops, t.write.bytes]
            .into_iter()
            .enumerate()
        {
            s[i] = s[i].saturating_add(v);
        }
    }
    for (run, s) in sums {
        let Some(r) = h.runs.iter().find(|r| r.name == run) else {
            return Err(format!(
                "targets of run '{run}', which the host did not finish"
            ));
        };
        let host = [
            r.totals.read.ops,
            r.totals.read.bytes,
            r.totals.write.ops,
            r.totals.write.bytes,
        ];
        if s != host {
            return Err(format!(
                "run '{run}': the targets add up to {}/{} reads/writes, the host claims {}/{}",
                s[0], s[2], host[0], host[2]
            ));
        }
    }
    Ok(())
}

//! Multi-host runs: one target well below its siblings on the same host.
//! A host driving several volumes at once shares its CPU and network among
//! them, so a target far below the others on that host is the volume (its
//! tier, its quota, a throttle) rather than the client; it is named with
//! its host and path.

use std::collections::BTreeMap;

use super::hosts::{SLOW, others_median};
use super::{Finding, Kind, num, usable};
use crate::result::ResultDoc;
use crate::result::merge::HostStatus;

pub(super) fn slow_target(doc: &ResultDoc) -> Vec<Finding> {
    let Some(cluster) = &doc.cluster else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for h in cluster.hosts.iter().filter(|h| h.status == HostStatus::Ok) {
        // Per target path: (run, its IOPS, its siblings' median), and how
        // many runs it was held against its siblings in.
        let mut slow: BTreeMap<&str, Vec<(&str, f64, f64)>> = BTreeMap::new();
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for r in h.runs.iter().filter(|r| {
            usable(r) && r.rate.is_none() && !r.workload.discard && r.meta_ops.is_empty()
        }) {
            let ts: Vec<_> = h.target_runs.iter().filter(|t| t.run == r.name).collect();
            if ts.len() < 2 {
                continue;
            }
            let iops: Vec<f64> = ts.iter().map(|t| t.total_iops()).collect();
            for (i, t) in ts.iter().enumerate() {
                *seen.entry(t.path.as_str()).or_default() += 1;
                let med = others_median(&iops, i);
                if med > 0.0 && iops[i] < SLOW * med {
                    slow.entry(t.path.as_str())
                        .or_default()
                        .push((r.name.as_str(), iops[i], med));
                }
            }
        }
        for (path, runs) in slow {
            let Some(&(run, iops, med)) = runs
                .iter()
                .min_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))
            else {
                continue;
            };
            let pct = iops / med * 100.0;
            let n = seen.get(path).copied().unwrap_or(0);
            let every = n >= 2 && runs.len() == n;
            let message = format!(
                "slow target: {path} on {host} did {} IOPS in run {run}, {pct:.0}% of the median \
                 of that host's other targets ({} IOPS); slow in {} of {n} runs. The same client \
                 drove them all, so look at that volume: its tier or quota, a throttle, or the \
                 device under it.",
                num(iops),
                num(med),
                runs.len(),
                host = h.name,
            );
            out.push(super::hosts::slow_finding(
                Kind::SlowTarget,
                message,
                every,
                ("target_iops", iops),
                ("siblings_median_iops", med),
                &runs,
            ));
        }
    }
    out
}

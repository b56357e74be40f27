//! One target well below its siblings: the targets one client drove
//! together (a local target list, or one host's targets in a multi-host
//! run). They shared that client's CPU and network, so a target far below
//! the others is the volume (its tier, its quota, a throttle) rather than
//! the client; it is named with its path (and host).

use std::collections::BTreeMap;

use super::group::{self, Each};
use super::hosts::{SLOW, others_median};
use super::{Finding, Kind, num, usable};
use crate::result::ResultDoc;
use crate::result::targets::by_host;

pub(super) fn slow_target(doc: &ResultDoc) -> Vec<Finding> {
    // Per (host, target path): (run, its IOPS, its siblings' median), and
    // how many runs it was held against its siblings in.
    type Key<'a> = (Option<&'a str>, &'a str);
    let mut slow: BTreeMap<Key, Vec<(&str, f64, f64)>> = BTreeMap::new();
    let mut seen: BTreeMap<Key, usize> = BTreeMap::new();
    for r in doc
        .runs
        .iter()
        .filter(|r| usable(r) && r.rate.is_none() && !r.workload.discard && r.meta_ops.is_empty())
    {
        for (host, ts) in by_host(r) {
            if ts.len() < 2 {
                continue;
            }
            let iops: Vec<f64> = ts.iter().map(|t| t.total_iops()).collect();
            for (i, t) in ts.iter().enumerate() {
                let key = (host, t.path.as_str());
                *seen.entry(key).or_default() += 1;
                let med = others_median(&iops, i);
                if med > 0.0 && iops[i] < SLOW * med {
                    slow.entry(key)
                        .or_default()
                        .push((r.name.as_str(), iops[i], med));
                }
            }
        }
    }
    let mut each = Vec::new();
    for ((host, path), runs) in slow {
        let Some(&(run, iops, med)) = runs
            .iter()
            .min_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))
        else {
            continue;
        };
        let pct = iops / med * 100.0;
        let n = seen.get(&(host, path)).copied().unwrap_or(0);
        let (on, siblings) = match host {
            Some(h) => (format!(" on {h}"), "that host's other targets"),
            None => (String::new(), "the run's other targets"),
        };
        let every = n >= 2 && runs.len() == n;
        let message = format!(
            "slow target: {path}{on} did {} IOPS in run {run}, {pct:.0}% of the median \
                 of {siblings} ({} IOPS); slow in {} of {n} runs. The same client \
                 drove them all, so look at that volume: its tier or quota, a throttle, or the \
                 device under it.",
            num(iops),
            num(med),
            runs.len(),
        );
        let finding = super::hosts::slow_finding(
            Kind::SlowTarget,
            message,
            every,
            ("target_iops", iops),
            ("siblings_median_iops", med),
            &runs,
        );
        each.push(Each {
            subject: match host {
                Some(h) => format!("{h}:{path}"),
                None => path.to_string(),
            },
            class: "slow",
            finding,
        });
    }
    // Many targets slow alike (one per host of a fleet on a throttled
    // tier) are said once.
    let of = seen.len();
    group::fold(each, of, "targets", |_, m| {
        format!(
            "slow targets: each did {}% of the median of the other targets its client drove. \
             The same client drove them all, so look at those volumes: their tier or quota, a \
             throttle, or the devices under them.",
            group::span(m, "percent", group::pct)
        )
    })
}

//! Runs that differ only in how many hosts drove them (a host-count sweep,
//! or results compared side by side): the aggregate staying flat while the
//! hosts at least doubled names a limit the hosts share, and each host's
//! interface counters say whether it was rather their own NICs. The papers
//! add clients until the storage stops scaling; this says where it did.

use std::collections::BTreeMap;

use super::{Confidence, Finding, Kind, num, usable};
use crate::result::merge::HostStatus;
use crate::result::{ResultDoc, RunResult};

/// The aggregate grew by less than this share while the hosts at least
/// doubled: flat. Not tighter: hosts sharing a capped volume wander a few
/// percent run to run, and a healthy doubling adds far more than 15%.
pub(crate) const FLAT_GAIN: f64 = 0.15;
/// Hosts must at least double between the two points judged.
const HOSTS_FACTOR: u32 = 2;
/// Below this gain the flat line is sure on its own.
const VERY_FLAT_GAIN: f64 = 0.05;
/// Every host's busiest interface at this share of its link speed: the
/// hosts' own NICs are the limit.
const NIC_AT_LINK: f64 = 0.90;
/// Every host's busiest interface below this share: not their NICs.
const NIC_FAR: f64 = 0.50;
/// Transfers below this size are judged on IOPS, larger ones on MiB/s
/// (the report's headline figure draws the line at the same size).
const IOPS_BELOW_BYTES: u64 = 32 << 10;

/// One point of a host-count series: a run merged over `hosts` hosts, and
/// each host's own run at that point (with its counters, when recorded).
#[derive(Debug, Clone)]
pub(crate) struct HostPoint<'a> {
    pub(crate) hosts: u32,
    pub(crate) run: &'a RunResult,
    pub(crate) per_host: Vec<(&'a str, &'a RunResult)>,
}

/// The figure a series is judged on: IOPS for small transfers, MiB/s for
/// large ones, with its unit.
pub(crate) fn figure(r: &RunResult) -> (f64, &'static str) {
    if r.workload.max_bs() < IOPS_BELOW_BYTES {
        (r.total_iops(), "IOPS")
    } else {
        (r.total_mib_s(), "MiB/s")
    }
}

/// A run whose figure says what the storage and the hosts can do: measured
/// in full, not a metadata run, not held to a rate.
fn judged(r: &RunResult) -> bool {
    usable(r)
        && !r.workload.discard
        && r.meta_ops.is_empty()
        && r.rate.is_none()
        && r.workload.rate_iops.is_none()
        && r.workload.rate_pct.is_none()
        && r.workload.shape.rate_bytes.is_none()
}

/// The workload with its name and host count blanked: runs with the same
/// key differ only in how many hosts ran them.
fn key(r: &RunResult) -> String {
    let mut w = r.workload.clone();
    w.name.clear();
    w.host_count = None;
    serde_json::to_string(&w).unwrap_or_default()
}

/// Each host's own run of this name, from hosts that came through.
fn per_host<'a>(doc: &'a ResultDoc, name: &str) -> Vec<(&'a str, &'a RunResult)> {
    doc.cluster
        .iter()
        .flat_map(|c| &c.hosts)
        .filter(|h| h.status == HostStatus::Ok)
        .filter_map(|h| {
            let r = h.runs.iter().find(|r| r.name == name)?;
            Some((h.name.as_str(), r))
        })
        .collect()
}

/// The host-count series of one result: its runs with a host count,
/// grouped by everything else, each group in host-count order, only groups
/// of two or more counts.
pub(crate) fn series(doc: &ResultDoc) -> Vec<Vec<HostPoint<'_>>> {
    let mut groups: BTreeMap<String, Vec<HostPoint>> = BTreeMap::new();
    for r in doc.runs.iter().filter(|r| judged(r)) {
        let Some(hosts) = r.workload.host_count else {
            continue;
        };
        groups.entry(key(r)).or_default().push(HostPoint {
            hosts,
            run: r,
            per_host: per_host(doc, &r.name),
        });
    }
    tidy(groups.into_values())
}

/// Several results, each one run on its hosts (`compare`): the runs that
/// differ only in host count, as series. A result's host count is its
/// runs' own, else the hosts its cluster merged.
pub(crate) fn across<'a>(docs: &[&'a ResultDoc]) -> Vec<Vec<HostPoint<'a>>> {
    let mut groups: BTreeMap<String, Vec<HostPoint>> = BTreeMap::new();
    for d in docs {
        let runs: Vec<&RunResult> = d.runs.iter().filter(|r| judged(r)).collect();
        let [r] = runs.as_slice() else { continue };
        let hosts = r.workload.host_count.or_else(|| {
            let c = d.cluster.as_ref()?;
            c.runs
                .iter()
                .find(|cr| cr.name == r.name)
                .map(|cr| cr.hosts_merged)
        });
        let hosts = hosts.unwrap_or(1);
        groups.entry(key(r)).or_default().push(HostPoint {
            hosts,
            run: r,
            per_host: per_host(d, &r.name),
        });
    }
    tidy(groups.into_values())
}

fn tidy<'a>(groups: impl Iterator<Item = Vec<HostPoint<'a>>>) -> Vec<Vec<HostPoint<'a>>> {
    groups
        .map(|mut g| {
            g.sort_by_key(|p| p.hosts);
            g.dedup_by_key(|p| p.hosts);
            g
        })
        .filter(|g| g.len() >= 2)
        .collect()
}

/// The finder: each host-count series of the result judged.
pub(super) fn flat_with_hosts(doc: &ResultDoc) -> Vec<Finding> {
    series(doc).iter().filter_map(|s| judge(s)).collect()
}

/// A host's busiest interface direction at a point: (MiB/s, link MiB/s).
fn nic(r: &RunResult) -> Option<(f64, Option<f64>)> {
    let c = r.counters.as_ref()?;
    let s = c.summary.as_ref()?;
    s.net
        .iter()
        .map(|n| {
            let link = c
                .interfaces
                .iter()
                .find(|i| i.name == n.name)
                .and_then(|i| i.speed_mbit)
                .filter(|m| *m > 0.0)
                .map(|m| m * 1e6 / 8.0 / 1048576.0);
            (n.tx_mib_s.max(n.rx_mib_s), link)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// Flat from the first point whose figure the points after it, up to at
/// least twice its hosts, never beat by `FLAT_GAIN`; the evidence is each
/// host's NIC at the last point.
pub(crate) fn judge(points: &[HostPoint]) -> Option<Finding> {
    let last = points.last()?;
    let (from, gain) = points.iter().enumerate().find_map(|(i, p)| {
        let (v, _) = figure(p.run);
        if last.hosts < HOSTS_FACTOR.saturating_mul(p.hosts) || v <= 0.0 {
            return None;
        }
        let peak = points
            .get(i..)?
            .iter()
            .map(|q| figure(q.run).0)
            .fold(0.0, f64::max);
        let gain = peak / v - 1.0;
        (gain < FLAT_GAIN).then_some((p, gain))
    })?;
    let (v0, unit) = figure(from.run);
    let (v1, _) = figure(last.run);
    let nics: Vec<(f64, Option<f64>)> = last.per_host.iter().filter_map(|(_, r)| nic(r)).collect();
    let shares: Vec<f64> = nics
        .iter()
        .filter_map(|(rate, link)| link.map(|l| rate / l))
        .collect();
    let all_known = !nics.is_empty() && shares.len() == nics.len();
    let top_rate = nics.iter().map(|n| n.0).fold(0.0, f64::max);
    let top_share = shares.iter().copied().fold(0.0, f64::max);
    let low_share = shares.iter().copied().fold(f64::INFINITY, f64::min);
    let very_flat = gain < VERY_FLAT_GAIN;
    let head = format!(
        "flat as hosts are added: {} did {} {unit} on {} host{} and {} {unit} on {} hosts \
         ({:+.0}% for {:.0}x the hosts)",
        last.run.name,
        num(v0),
        from.hosts,
        if from.hosts == 1 { "" } else { "s" },
        num(v1),
        last.hosts,
        (v1 / v0 - 1.0) * 100.0,
        last.hosts as f64 / from.hosts as f64
    );
    let per_host = v1 / last.hosts.max(1) as f64;
    let (sure, reading) = if all_known && low_share >= NIC_AT_LINK {
        (
            Confidence::Medium,
            format!(
                "Each host's interface ran at {:.0}% or more of its link speed: the clients' \
                 NICs are the limit, each host getting {} {unit}; faster NICs, or hosts \
                 on other links",
                low_share * 100.0,
                num(per_host)
            ),
        )
    } else if all_known && top_share < NIC_FAR {
        (
            if very_flat {
                Confidence::High
            } else {
                Confidence::Medium
            },
            format!(
                "The hosts' interfaces ran at most {:.0}% of their link speed ({} MiB/s), so \
                 not their NICs: a limit they share sets it, the volume or service (its \
                 provisioned throughput or IOPS) or a shared network egress; more clients \
                 will not help",
                top_share * 100.0,
                num(top_rate)
            ),
        )
    } else if nics.is_empty() {
        (
            if very_flat {
                Confidence::Medium
            } else {
                Confidence::Low
            },
            "A limit the hosts share sets it (the volume or service, or a shared network \
             egress); no interface counters were recorded to rule out the clients' NICs"
                .to_string(),
        )
    } else {
        (
            Confidence::Medium,
            format!(
                "A limit the hosts share is likely (the volume or service, or a shared \
                 egress); the hosts' busiest interfaces moved up to {} MiB/s{}",
                num(top_rate),
                if shares.is_empty() {
                    ", link speeds unknown".to_string()
                } else {
                    format!(", {:.0}% of link speed", top_share * 100.0)
                }
            ),
        )
    };
    let mut f = Finding::new(Kind::FlatWithHosts, sure, format!("{head}. {reading}."))
        .figure("hosts_from", from.hosts as f64)
        .figure("hosts_to", last.hosts as f64)
        .figure("value_from", v0)
        .figure("value_to", v1)
        .figure("gain_pct", gain * 100.0)
        .figure("per_host", per_host);
    if !nics.is_empty() {
        f = f.figure("nic_mib_s", top_rate);
    }
    if !shares.is_empty() {
        f = f.figure("nic_link_pct", top_share * 100.0);
    }
    f.runs = points
        .iter()
        .filter(|p| p.hosts >= from.hosts)
        .map(|p| p.run.name.clone())
        .collect();
    Some(f)
}

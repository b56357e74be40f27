//! Hosts whose reads came from a cache, not the storage: their figures
//! are the cache's, so they are named as such and left out of the
//! yardstick the slow-host rule holds the others against (one cached host
//! among healthy ones made the healthy look slow).

use super::group::{self, Each};
use super::{Confidence, Finding, Kind, num, usable};
use crate::result::merge::{Cluster, HostStatus};
use crate::result::{ResultDoc, RunResult};

/// Reads this much faster than the other hosts' (mean latency at most this
/// share of their median) did not reach the same storage: a slower path,
/// a busier client, a farther server wander 2-3x; a cache hit answers in
/// microseconds where the storage takes a hundred or more.
const CACHE_SHARE: f64 = 0.2;
/// The devices and network interfaces below a host moved less than this
/// share of its reads' MiB/s: the rest never left the host (as
/// `series::from_memory` reads a buffered run).
const UNSEEN: f64 = 0.5;
/// Reads below this MiB/s are too few for the counters to tell.
const MIN_READ_MIB_S: f64 = 1.0;

/// Why one host's reads in one run were a cache's.
#[derive(Debug, Clone, Copy)]
enum Evidence {
    /// Its devices and interfaces moved `below` MiB/s of its `read` MiB/s.
    Counters { read: f64, below: f64 },
    /// Its mean read latency against the other hosts' median, µs.
    Latency { own: f64, others: f64 },
}

/// A run's hosts' reads: every finished host's run of that name that read
/// from storage (the null engine has none to cache).
fn readers<'a>(cluster: &'a Cluster, run: &str) -> Vec<(&'a str, &'a RunResult)> {
    cluster
        .hosts
        .iter()
        .filter(|h| h.status == HostStatus::Ok)
        .filter_map(|h| {
            let r = h.runs.iter().find(|r| r.name == run)?;
            let storage = r.engine.is_empty() || !r.engine.iter().all(|e| e.caps().diskless);
            (usable(r) && !r.workload.discard && r.totals.read.ops > 0 && storage)
                .then_some((h.name.as_str(), r))
        })
        .collect()
}

/// The counters' word on one host's reads, when they have one.
fn by_counters(r: &RunResult) -> Option<Evidence> {
    let s = r.counters.as_ref()?.summary.as_ref()?;
    if s.devices.is_empty() && s.net.is_empty() {
        return None;
    }
    let read = r.totals.read.mib_s;
    let device = s.devices.iter().map(|d| d.mib_s()).fold(0.0, f64::max);
    let wire = s
        .net
        .iter()
        .map(|n| n.rx_mib_s + n.tx_mib_s)
        .fold(0.0, f64::max);
    let below = device.max(wire);
    (read >= MIN_READ_MIB_S && below < UNSEEN * read).then_some(Evidence::Counters { read, below })
}

/// Each host of a run whose reads came from a cache, and why.
fn judged(cluster: &Cluster, run: &str) -> Vec<(String, Evidence)> {
    let hosts = readers(cluster, run);
    let lat: Vec<f64> = hosts
        .iter()
        .map(|(_, r)| r.totals.read.lat_us.mean)
        .collect();
    let mut out = Vec::new();
    for (i, (host, r)) in hosts.iter().enumerate() {
        if let Some(e) = by_counters(r) {
            out.push((host.to_string(), e));
            continue;
        }
        // Against the others only when there are two or more of them: of
        // two hosts alone, the latency cannot tell which one is odd.
        if hosts.len() >= 3 {
            let others = group::others_median(&lat, i);
            if lat[i] > 0.0 && lat[i] < CACHE_SHARE * others {
                out.push((
                    host.to_string(),
                    Evidence::Latency {
                        own: lat[i],
                        others,
                    },
                ));
            }
        }
    }
    out
}

/// The hosts of a run whose reads came from a cache (`slow_host` leaves
/// them out of its median).
pub(super) fn cached_hosts(cluster: &Cluster, run: &str) -> Vec<String> {
    judged(cluster, run).into_iter().map(|(h, _)| h).collect()
}

/// Hosts whose reads came from a cache, named once each (with the run
/// that shows it best), many alike said once.
pub(super) fn cached_reads(doc: &ResultDoc) -> Vec<Finding> {
    let Some(cluster) = &doc.cluster else {
        return Vec::new();
    };
    let mut names: Vec<&str> = Vec::new();
    for h in &cluster.hosts {
        for r in &h.runs {
            if !names.contains(&r.name.as_str()) {
                names.push(r.name.as_str());
            }
        }
    }
    let mut by_host: Vec<(String, &str, Evidence)> = Vec::new();
    for run in names {
        for (host, e) in judged(cluster, run) {
            if !by_host.iter().any(|(h, _, _)| *h == host) {
                by_host.push((host, run, e));
            }
        }
    }
    let each: Vec<Each> = by_host
        .into_iter()
        .map(|(host, run, e)| {
            let (why, sure, f) = match e {
                Evidence::Counters { read, below } => (
                    format!(
                        "its devices and network moved {} MiB/s while it read {} MiB/s",
                        num(below),
                        num(read)
                    ),
                    Confidence::High,
                    Finding::new(Kind::CachedReads, Confidence::High, String::new())
                        .figure("read_mib_s", read)
                        .figure("below_mib_s", below),
                ),
                Evidence::Latency { own, others } => (
                    format!(
                        "its reads took {} µs on average against {} µs on the other hosts \
                         (median)",
                        num(own),
                        num(others)
                    ),
                    Confidence::Medium,
                    Finding::new(Kind::CachedReads, Confidence::Medium, String::new())
                        .figure("read_latency_us", own)
                        .figure("others_read_latency_us", others),
                ),
            };
            let mut f = f;
            f.message = format!(
                "{host}'s reads came from a cache, not the storage: in run {run} {why}. Its \
                 figures are the cache's and are left out when the hosts are compared; check \
                 its mount options (a client cache, FS-Cache, a caching layer under direct I/O)."
            );
            f.confidence = sure;
            f.runs = vec![run.to_string()];
            Each {
                subject: host,
                class: "cached",
                finding: f,
            }
        })
        .collect();
    group::fold(each, cluster.hosts.len(), "hosts", |_, m| {
        let why = match group::spread(m, "read_latency_us") {
            Some(_) => format!(
                "their reads took {} µs on average, a fifth or less of the other hosts'",
                group::span(m, "read_latency_us", num)
            ),
            None => "their reads were far faster than the other hosts', or moved little on \
                     their devices and network"
                .to_string(),
        };
        format!(
            "reads came from a cache, not the storage: {why}. Their figures are the cache's and \
             are left out when the hosts are compared; check their mount options (a client \
             cache, FS-Cache, a caching layer under direct I/O)."
        )
    })
}

//! Multi-host runs: one client well below the others. The papers add
//! clients until the storage stops scaling; a single slow client (a busier
//! VM, a worse network path, a different mount) makes that curve lie, so
//! it is named.

use std::collections::BTreeMap;

use super::group::{self, Each};
use super::{Confidence, Finding, Kind, num, usable};
use crate::result::ResultDoc;
use crate::result::merge::HostStatus;

/// A host below this share of the median of the other hosts is slow. Not
/// tighter: hosts sharing one volume wander 10-20% between each other on
/// a healthy run, while a throttled or starved client sits far below.
pub(crate) const SLOW: f64 = 0.75;
/// Below this share, or slow in every run of two or more, it is certain.
const VERY_SLOW: f64 = 0.50;

pub(crate) use super::group::others_median;

/// One host's share of a run, as the slow-host rule holds it against the
/// others'.
struct Part<'a> {
    host: &'a str,
    /// IOPS per I/O kept in flight (threads x iodepth): by Little's law
    /// 1 / latency, what each slot got from the storage. A host given more
    /// threads in the hosts file does more IOPS, not more per slot, so the
    /// others are not "slow" beside it.
    per_slot: f64,
    iops: f64,
    slots: u32,
    /// Its reads came from a cache (`cache::cached`): never a yardstick.
    cached: bool,
}

/// Each host that finished a run is held against the median IOPS per I/O
/// in flight of the other hosts in that run (hosts whose reads came from a
/// cache left out of that median); a host slow in any run is named once,
/// with each run where it was, and many hosts slow alike are said once.
pub(super) fn slow_host(doc: &ResultDoc) -> Vec<Finding> {
    let Some(cluster) = &doc.cluster else {
        return Vec::new();
    };
    // Per run name: every host that finished it.
    let mut per_run: BTreeMap<&str, Vec<Part>> = BTreeMap::new();
    for h in cluster.hosts.iter().filter(|h| h.status == HostStatus::Ok) {
        for r in h.runs.iter().filter(|r| {
            usable(r) && r.rate.is_none() && !r.workload.discard && r.meta_ops.is_empty()
        }) {
            // A replay's hosts were asked for different loads (an uneven
            // share, a later start): each is held against its own part.
            let iops = match replay_pace(r) {
                Pace::NotReplay => r.total_iops(),
                Pace::Flat(iops) => iops,
                Pace::Timed => continue,
            };
            let slots = r.littles_law.concurrency.max(1);
            per_run.entry(r.name.as_str()).or_default().push(Part {
                host: h.name.as_str(),
                per_slot: iops / f64::from(slots),
                iops,
                slots,
                cached: false,
            });
        }
    }
    for (run, parts) in per_run.iter_mut() {
        let cached = super::cache::cached_hosts(cluster, run);
        for p in parts.iter_mut() {
            p.cached = cached.iter().any(|c| c == p.host);
        }
    }
    // Per slow host: (run, its IOPS per slot, the others' median), and
    // its IOPS and slots in the worst run.
    let mut slow: BTreeMap<&str, Vec<(&str, f64, f64)>> = BTreeMap::new();
    let mut runs_seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut judged: Vec<&str> = Vec::new();
    for (run, parts) in &per_run {
        // The yardstick: hosts whose reads reached the storage.
        let fair: Vec<&Part> = parts.iter().filter(|p| !p.cached).collect();
        if fair.len() < 2 {
            continue;
        }
        let all: Vec<f64> = fair.iter().map(|p| p.per_slot).collect();
        for (i, p) in fair.iter().enumerate() {
            *runs_seen.entry(p.host).or_default() += 1;
            if !judged.contains(&p.host) {
                judged.push(p.host);
            }
            let med = others_median(&all, i);
            if med > 0.0 && p.per_slot < SLOW * med {
                slow.entry(p.host).or_default().push((run, p.per_slot, med));
            }
        }
    }
    let mut each = Vec::new();
    // In the order the hosts were judged (the hosts file's), not by name:
    // client-6 comes before client-101.
    for (host, runs) in judged.iter().filter_map(|h| Some((*h, slow.get(h)?))) {
        let Some(&(run, per_slot, med)) = runs
            .iter()
            .min_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))
        else {
            continue;
        };
        let Some(part) = per_run
            .get(run)
            .and_then(|ps| ps.iter().find(|p| p.host == host))
        else {
            continue;
        };
        let pct = per_slot / med * 100.0;
        let seen = runs_seen.get(host).copied().unwrap_or(0);
        let every = seen >= 2 && runs.len() == seen;
        let each_run: Vec<String> = runs
            .iter()
            .map(|(r, v, m)| format!("{r} {} vs {}", num(*v), num(*m)))
            .collect();
        let message = format!(
            "slow host: {host} did {} IOPS with {} in flight in run {run}, {} IOPS per I/O in \
             flight, {pct:.0}% of the median of the other hosts ({} per I/O in flight); slow in \
             {} of {seen} runs ({}). Its CPU, network path or mount differs from the others: \
             compare their counters and mount options, or leave it out when adding clients to \
             find the storage's limit.",
            num(part.iops),
            part.slots,
            num(per_slot),
            num(med),
            runs.len(),
            each_run.join(", ")
        );
        let finding = slow_finding(
            Kind::SlowHost,
            message,
            every,
            ("host_iops_per_slot", per_slot),
            ("others_median_iops_per_slot", med),
            runs,
        )
        .figure("host_iops", part.iops)
        .figure("in_flight", f64::from(part.slots));
        each.push(Each {
            subject: host.to_string(),
            class: "slow",
            finding,
        });
    }
    group::fold(each, judged.len(), "hosts", |_, m| {
        let runs = match m
            .iter()
            .flat_map(|f| &f.runs)
            .collect::<Vec<_>>()
            .as_slice()
        {
            [] => String::new(),
            [one, rest @ ..] if rest.iter().all(|r| r == one) => format!(" in run {one}"),
            [one, ..] => format!(" in run {one} and others"),
        };
        format!(
            "slow hosts: each did {}% of the median of the other hosts per I/O in \
             flight{runs}. Their CPU, network path or mount differs from the others': compare \
             their counters and mount options, or leave them out when adding clients to find \
             the storage's limit.",
            group::span(m, "percent", group::pct)
        )
    })
}

/// How a host's run is held against the others.
enum Pace {
    NotReplay,
    /// A replay as fast as the depth allowed: its IOPS while it ran,
    /// after its start offset (`whole` with --replay-offset).
    Flat(f64),
    /// A replay at the trace's times: held against its own part only
    /// (`behind_part`), never against hosts asked for other rates.
    Timed,
}

fn replay_pace(r: &crate::result::RunResult) -> Pace {
    let Some(rp) = &r.replay else {
        return Pace::NotReplay;
    };
    if rp.scheduled_s.is_some() {
        return Pace::Timed;
    }
    let active = (rp.ran_s - delay_s(r)).max(1e-3);
    Pace::Flat(rp.issued as f64 / active)
}

/// How much later than the run's start a host's part began.
fn delay_s(r: &crate::result::RunResult) -> f64 {
    r.workload
        .replay
        .as_ref()
        .and_then(|s| s.part.as_ref())
        .map_or(0.0, |p| p.delay_ns as f64 / 1e9)
}

/// Lateness under this is startup and the last requests' own service
/// time, not a host falling behind its part.
const BEHIND_GRACE_S: f64 = 0.5;

/// A timed replay across hosts: each host against what its own part asked
/// (its requests over its part's scheduled time, after its start offset).
/// A host that kept less than `SLOW` of that pace fell behind: its client
/// or its path could not issue its share on time.
pub(super) fn behind_part(doc: &ResultDoc) -> Vec<Finding> {
    let Some(cluster) = &doc.cluster else {
        return Vec::new();
    };
    if cluster.hosts.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for h in cluster.hosts.iter().filter(|h| h.status == HostStatus::Ok) {
        let mut behind: Vec<(&str, f64, f64)> = Vec::new();
        let mut seen = 0;
        for r in h.runs.iter().filter(|r| usable(r) && !r.workload.discard) {
            let (Some(rp), Some(asked)) =
                (&r.replay, r.replay.as_ref().and_then(|p| p.scheduled_s))
            else {
                continue;
            };
            seen += 1;
            let took = (rp.ran_s - delay_s(r)).max(1e-3);
            if took - asked > BEHIND_GRACE_S && asked / took < SLOW {
                behind.push((r.name.as_str(), took, asked));
            }
        }
        let Some(&(run, took, asked)) = behind.first() else {
            continue;
        };
        let rp = h
            .runs
            .iter()
            .find(|r| r.name == run)
            .and_then(|r| r.replay.as_ref());
        let requests = rp.map_or(0, |p| p.requests);
        let kept = asked / took;
        let message = format!(
            "slow host: {} took {took:.1} s for its part of the replay in run {run} ({} requests \
             scheduled over {asked:.1} s): it kept {:.0}% of the trace's pace. Its CPU, network \
             path or mount could not issue its share on time: compare its counters and mount \
             options with the other hosts'.",
            h.name,
            num(requests as f64),
            kept * 100.0
        );
        // The figures: the pace kept against the pace asked (1 = on time).
        let runs: Vec<(&str, f64, f64)> = behind.iter().map(|(n, t, a)| (*n, a / t, 1.0)).collect();
        out.push(slow_finding(
            Kind::SlowHost,
            message,
            seen >= 2 && behind.len() == seen,
            ("pace_kept", kept),
            ("pace_asked", 1.0),
            &runs,
        ));
    }
    out
}

/// A slow host or target as a finding: sure when it was slow in every run
/// or far below its peers, with its figures and the runs it was slow in.
pub(super) fn slow_finding<R: std::fmt::Display>(
    kind: Kind,
    message: String,
    every: bool,
    (name, iops): (&str, f64),
    (peers, med): (&str, f64),
    runs: &[(R, f64, f64)],
) -> Finding {
    let pct = iops / med * 100.0;
    let sure = if every || pct < VERY_SLOW * 100.0 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    let mut f = Finding::new(kind, sure, message)
        .figure(name, iops)
        .figure(peers, med)
        .figure("percent", pct)
        .figure("slow_runs", runs.len() as f64);
    f.runs = runs.iter().map(|(r, _, _)| r.to_string()).collect();
    f
}

//! The client's side, from the counters each host recorded: the device
//! under the target busy all the time, the network near the link's speed
//! or a cap, NFS requests queueing on the client (its CPU: `cpu`).
//! Each reads `RunResult::counters` (local runs, and every host's own runs
//! in a multi-host result) and stays quiet on a result without them.

use super::counted::{Seen, runs_text, with_counters};
use super::series::{FLAT, block_size_series};
use super::{Confidence, Finding, Kind, num, saturation};
use crate::result::counters::CounterInterval;
use crate::result::{ResultDoc, RunResult};
use crate::stats::mean_spread;

/// A device busy this share of the time has a request in it all the time.
/// Not 95: the kernel advances busy time (io_ticks) in jiffies at request
/// start and end, and undercounts; on Linux 6.18 a loop device holding 7.4
/// of 8 requests all the time read 92%.
const DEVICE_BUSY: f64 = 85.0;
/// ...and with at least this share of volbench's I/Os queued in it, the
/// time is spent in the device, not on the client.
const DEVICE_QUEUE: f64 = 0.75;
/// A device moving more than this multiple of volbench's MiB/s (plus
/// `DEVICE_SLACK_MIB_S`) is busy with someone else's I/O (a shared disk
/// below a loop device): bytes pass through the layers unchanged.
const DEVICE_OWN: f64 = 1.5;
const DEVICE_SLACK_MIB_S: f64 = 0.5;
/// Traffic at this share of the link's speed (or an expected cap) is at it.
const NEAR_LINK: f64 = 0.90;
/// An interface carries a run's I/O when it moves at least this share of
/// volbench's MiB/s (the rest of the traffic is protocol overhead).
const CARRIES: f64 = 0.80;
/// NFS execution this many times the round trip: requests queue on the client.
const NFS_QUEUE: f64 = 2.0;
/// ...and by at least this many milliseconds (on a fast LAN both are
/// fractions of a millisecond and a ratio alone means nothing).
const NFS_QUEUE_MS: f64 = 0.5;
/// Operations per second below this are too few to judge NFS timings on.
const NFS_MIN_OPS_S: f64 = 10.0;

/// The device under the target busy all the time with volbench's I/Os
/// queued in it: the time is spent in the device (Perfmon's % Disk Time at
/// 100%, the papers' sign of a disk at its limit).
pub(super) fn device_busy(doc: &ResultDoc) -> Vec<Finding> {
    let mut hits = Vec::new();
    for Seen { run: r, c, s, .. } in with_counters(doc) {
        let conc = r.littles_law.concurrency as f64;
        let Some(d) = s
            .devices
            .iter()
            .filter(|d| d.busy_pct >= DEVICE_BUSY && d.iops() > 0.0)
            .filter(|d| conc > 0.0 && d.avg_queue >= DEVICE_QUEUE * conc)
            .filter(|d| d.mib_s() <= DEVICE_OWN * r.total_mib_s() + DEVICE_SLACK_MIB_S)
            .max_by(|a, b| a.avg_queue.total_cmp(&b.avg_queue))
        else {
            continue;
        };
        // Busy with the queue in it is every driven device; only a run at
        // a ceiling says the device (or its cap) is the limit.
        let Some(why) = saturation::ceiling(doc, r) else {
            continue;
        };
        hits.push((r, c, d, why));
    }
    let Some((r, c, d, why)) = hits
        .iter()
        .max_by(|a, b| a.2.busy_pct.total_cmp(&b.2.busy_pct))
        .cloned()
    else {
        return Vec::new();
    };
    let conc = r.littles_law.concurrency as f64;
    let below = c
        .devices
        .iter()
        .find(|x| x.name == d.name)
        .filter(|x| !x.via.is_empty())
        .map(|x| format!(" ({})", x.via))
        .unwrap_or_default();
    let message = format!(
        "device at its limit: {}{below} was {:.0}% busy with {} requests in it on average, of \
         the {} volbench kept in flight, in {}, and {why}: the I/Os waited in the device (or \
         what lies below it, a cap), not on the client, at {} transfers/s of {} KiB. More \
         threads will not raise it; a larger disk or tier, or more disks, will.",
        d.name,
        d.busy_pct,
        num(d.avg_queue),
        num(conc),
        runs_text(r, hits.len()),
        num(d.iops()),
        num(d.avg_request_kib),
    );
    let sure = if d.busy_pct >= 98.0 && d.avg_queue >= 0.9 * conc {
        Confidence::High
    } else {
        Confidence::Medium
    };
    vec![
        Finding::new(Kind::DeviceBusy, sure, message)
            .figure("busy_pct", d.busy_pct)
            .figure("avg_queue", d.avg_queue)
            .figure("concurrency", conc)
            .figure("device_iops", d.iops())
            .figure("device_mib_s", d.mib_s())
            .figure("avg_request_kib", d.avg_request_kib)
            .runs(hits.iter().map(|h| h.0)),
    ]
}

/// The busiest direction of each interface in a stretch, in MiB/s.
fn busiest_link(s: &CounterInterval) -> Option<(&str, f64, &'static str)> {
    s.net
        .iter()
        .map(|n| {
            if n.tx_mib_s >= n.rx_mib_s {
                (n.name.as_str(), n.tx_mib_s, "out")
            } else {
                (n.name.as_str(), n.rx_mib_s, "in")
            }
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The network as the limit: an interface near its link speed or an
/// expected cap (--expect), or carrying the I/O at a rate that stays flat
/// while the block size changes (a shaped link or a VM's egress cap).
pub(super) fn network(doc: &ResultDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    let runs = with_counters(doc);
    // Near the link's own speed.
    let mut at_link: Vec<(&RunResult, &str, f64, f64, &str)> = Vec::new();
    for Seen { run: r, c, s, .. } in &runs {
        for n in &s.net {
            let Some(mbit) = c
                .interfaces
                .iter()
                .find(|i| i.name == n.name)
                .and_then(|i| i.speed_mbit)
            else {
                continue;
            };
            let link = mbit * 1e6 / 8.0 / 1048576.0;
            for (rate, dir) in [(n.tx_mib_s, "out"), (n.rx_mib_s, "in")] {
                if rate >= NEAR_LINK * link {
                    at_link.push((r, n.name.as_str(), rate, link, dir));
                }
            }
        }
    }
    if let Some(&(r, name, rate, link, dir)) = at_link
        .iter()
        .max_by(|a, b| (a.2 / a.3).total_cmp(&(b.2 / b.3)))
    {
        out.push(
            Finding::new(
                Kind::NetworkLimit,
                Confidence::High,
                format!(
                    "network at link speed: {name} moved {} MiB/s {dir} in {}, {:.0}% of its \
                     {} MiB/s link. The network, not the storage, sets these figures: a \
                     faster link, more interfaces or more clients.",
                    num(rate),
                    runs_text(r, at_link.len()),
                    rate / link * 100.0,
                    num(link),
                ),
            )
            .figure("mib_s", rate)
            .figure("link_mib_s", link)
            .figure("percent", rate / link * 100.0)
            .runs(at_link.iter().map(|x| x.0)),
        );
        return out;
    }
    // Near an expected throughput cap, with the I/O crossing the interface.
    if let Some(limit) = doc.expect.as_ref().and_then(|e| e.mib_s) {
        let hit = runs.iter().find_map(|Seen { run: r, s, .. }| {
            let (name, rate, dir) = busiest_link(s)?;
            (rate >= NEAR_LINK * limit && rate >= CARRIES * r.total_mib_s())
                .then_some((*r, name, rate, dir))
        });
        if let Some((r, name, rate, dir)) = hit {
            out.push(
                Finding::new(
                    Kind::NetworkLimit,
                    Confidence::Medium,
                    format!(
                        "network at the expected cap: {name} moved {} MiB/s {dir} in run {}, \
                         {:.0}% of the {} MiB/s expected: the I/O crosses this interface, so \
                         an egress limit of the client (a VM's network cap) binds before the \
                         storage's.",
                        num(rate),
                        r.name,
                        rate / limit * 100.0,
                        num(limit),
                    ),
                )
                .figure("mib_s", rate)
                .figure("limit_mib_s", limit)
                .figure("percent", rate / limit * 100.0)
                .runs([r]),
            );
            return out;
        }
    }
    // Flat across block sizes on an interface that carries the I/O (the
    // first such, by name: a bridge and its port carry the same traffic).
    for g in block_size_series(doc) {
        let summaries: Vec<&CounterInterval> = g
            .iter()
            .filter_map(|r| r.counters.as_ref().and_then(|c| c.summary.as_ref()))
            .collect();
        if summaries.len() != g.len() {
            continue;
        }
        let mut names: Vec<&str> = summaries[0].net.iter().map(|n| n.name.as_str()).collect();
        names.sort_unstable();
        let carried = names.into_iter().find_map(|name| {
            let mut links = Vec::new();
            for (r, s) in g.iter().zip(&summaries) {
                let n = s.net.iter().find(|n| n.name == name)?;
                let (rate, dir) = if n.tx_mib_s >= n.rx_mib_s {
                    (n.tx_mib_s, "out")
                } else {
                    (n.rx_mib_s, "in")
                };
                if rate <= 0.0 || rate < CARRIES * r.total_mib_s() {
                    return None;
                }
                links.push((name, rate, dir));
            }
            let rates: Vec<f64> = links.iter().map(|l| l.1).collect();
            let flat = mean_spread(&rates).is_some_and(|(_, spread)| spread <= FLAT);
            flat.then_some(links)
        });
        let Some(links) = carried else { continue };
        let vals: Vec<f64> = links.iter().map(|l| l.1).collect();
        let Some((mean, spread)) = mean_spread(&vals) else {
            continue;
        };
        let (name, _, dir) = links[0];
        out.push(
            Finding::new(
                Kind::NetworkLimit,
                Confidence::Medium,
                format!(
                    "network cap: {name} carried the I/O at {} MiB/s {dir}, flat within {:.0}% \
                     across block sizes ({}): a throughput cap on the network path (a shaped \
                     link, the VM's egress limit), not the storage's.",
                    num(mean),
                    spread * 100.0,
                    vals.iter().map(|v| num(*v)).collect::<Vec<_>>().join(" / "),
                ),
            )
            .figure("mib_s", mean)
            .figure("spread_pct", spread * 100.0)
            .runs(g.iter().copied()),
        );
    }
    out
}

/// NFS requests taking much longer to execute than their round trip: they
/// waited on the client for a slot on the connection.
pub(super) fn nfs_queueing(doc: &ResultDoc) -> Vec<Finding> {
    let mut hits = Vec::new();
    for Seen {
        host, run: r, c, s, ..
    } in with_counters(doc)
    {
        let Some(nfs) = &s.nfs else { continue };
        for op in &nfs.ops {
            if op.ops_s >= NFS_MIN_OPS_S
                && op.avg_exe_ms >= NFS_QUEUE * op.avg_rtt_ms
                && op.avg_exe_ms - op.avg_rtt_ms >= NFS_QUEUE_MS
            {
                hits.push((r, c, op, nfs.avg_backlog, host.clone()));
            }
        }
    }
    let ratio = |o: &crate::result::counters::NfsOpRates| o.avg_exe_ms / o.avg_rtt_ms.max(1e-3);
    let Some((r, c, op, backlog, host)) =
        hits.iter().max_by(|a, b| ratio(a.2).total_cmp(&ratio(b.2)))
    else {
        return Vec::new();
    };
    let nconnect = doc
        .target
        .as_ref()
        .and_then(|t| t.mount.as_ref())
        .and_then(|m| {
            m.key_options()
                .into_iter()
                .find(|o| o.starts_with("nconnect="))
        });
    let advice = match nconnect {
        Some(n) => format!("the mount has {n}: more connections, or more clients"),
        None => "mount with nconnect=8 (the papers see reads rise 2.3-3x), or more clients".into(),
    };
    let message = format!(
        "NFS queueing on {}: {} took {} ms to execute but {} ms on the wire (round trip) in \
         {} on {}, {:.1}x: requests waited on the client for the connection (backlog {} per \
         request). Not the server, not the network: {advice}.",
        host,
        op.op,
        num(op.avg_exe_ms),
        num(op.avg_rtt_ms),
        runs_text(r, hits.len()),
        c.nfs_mount.as_deref().unwrap_or("the mount"),
        ratio(op),
        num(*backlog),
    );
    let sure = if ratio(op) >= 4.0 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    vec![
        Finding::new(Kind::NfsQueueing, sure, message)
            .figure("exe_ms", op.avg_exe_ms)
            .figure("rtt_ms", op.avg_rtt_ms)
            .figure("ratio", ratio(op))
            .figure("ops_s", op.ops_s)
            .figure("avg_backlog", *backlog)
            .runs(hits.iter().map(|h| h.0)),
    ]
}

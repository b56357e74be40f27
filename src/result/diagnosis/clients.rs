//! The client's side, from the counters each host recorded: its CPUs
//! saturated, the device under the target busy all the time, the network
//! near the link's speed or a cap, NFS requests queueing on the client.
//! Each reads `RunResult::counters` (local runs, and every host's own runs
//! in a multi-host result) and stays quiet on a result without them.

use super::limits::{FLAT, block_size_series};
use super::{Confidence, Finding, Kind, measured, measured_secs, num, saturation, usable};
use crate::result::counters::{CounterInterval, RunCounters};
use crate::result::{ResultDoc, RunResult};
use crate::stats::mean_spread;

/// Runs measured for less than this are not judged on CPU: the kernel
/// counts CPU time in ticks (100 or 250 a second), so a metadata phase of
/// 20 ms on 2 CPUs has 4 ticks to share out and reads 20% or 100% by luck
/// (seen: a thread "at 101% of a core" on a host 20% busy).
const CPU_MIN_SECS: f64 = 0.5;
/// volbench's own CPU must be visible in the host's: the host's busy time
/// (over all CPUs) at least this share of what volbench's threads say they
/// used, or one of the two is miscounted and neither is trusted.
const CPU_AGREE: f64 = 0.75;
/// Host CPU busy (user + system + steal) at or above this, in percent of
/// all CPUs, is saturated: what is left is too little to keep I/O going.
const CPU_BUSY: f64 = 90.0;
/// One volbench I/O thread using this much of a core is core-bound.
const THREAD_BUSY: f64 = 90.0;
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

/// A run with counters: who it ran on (the host's name in a multi-host
/// run, else its hostname), the run, its counters and their summary.
struct Seen<'a> {
    host: String,
    run: &'a RunResult,
    c: &'a RunCounters,
    s: &'a CounterInterval,
}

/// Every measured run that has counters, with the host it ran on: the
/// local runs, then each host's own in a multi-host result.
fn with_counters(doc: &ResultDoc) -> Vec<Seen<'_>> {
    let local = measured(doc).map(|r| (None, r));
    let hosts = doc.cluster.iter().flat_map(|c| &c.hosts).flat_map(|h| {
        h.runs
            .iter()
            .filter(|r| !r.workload.discard && usable(r))
            .map(move |r| (Some(h.name.as_str()), r))
    });
    local
        .chain(hosts)
        .filter_map(|(name, run)| {
            let c = run.counters.as_ref()?;
            let host = match name {
                Some(n) => format!("client {n}"),
                None if c.host.is_empty() => "the client".into(),
                None => format!("client {}", c.host),
            };
            Some(Seen {
                host,
                run,
                c,
                s: c.summary.as_ref()?,
            })
        })
        .collect()
}

/// "run X" or "run X (and N more)".
fn runs_text(worst: &RunResult, n: usize) -> String {
    match n {
        0 | 1 => format!("run {}", worst.name),
        n => format!("run {} (and {} more)", worst.name, n - 1),
    }
}

/// The client's CPUs saturated, or volbench's threads each on a full core:
/// the figures are then the client's limit, not the storage's.
pub(super) fn client_cpu(doc: &ResultDoc) -> Vec<Finding> {
    // Per host: its runs over the line, how busy, and whether host-wide.
    type Busy<'a> = (&'a RunResult, f64, bool);
    let mut hosts: Vec<(String, &RunCounters, Vec<Busy>)> = Vec::new();
    for Seen { host, run: r, c, s } in with_counters(doc) {
        let Some(cpu) = &s.cpu else { continue };
        if measured_secs(r) < CPU_MIN_SECS {
            continue;
        }
        let own = r.totals.cpu.user_pct + r.totals.cpu.sys_pct;
        let per_thread = own / r.io_threads.max(1) as f64;
        let host_saw = cpu.busy_pct() * c.cpus.max(1) as f64;
        // A page-cache or metadata run is served by the kernel on the
        // thread's own CPU: a thread on a full core is what such a run is,
        // at the concurrency asked for, not a limit put on the storage's
        // figures (a saturated host still is, above).
        let storage_io = !r.workload.buffered && r.meta_ops.is_empty();
        let (busy, host_wide) = if cpu.busy_pct() >= CPU_BUSY {
            (cpu.busy_pct(), true)
        } else if per_thread >= THREAD_BUSY && storage_io && host_saw >= CPU_AGREE * own {
            (per_thread, false)
        } else {
            continue;
        };
        match hosts.iter_mut().find(|(h, _, _)| *h == host) {
            Some((_, _, v)) => v.push((r, busy, host_wide)),
            None => hosts.push((host, c, vec![(r, busy, host_wide)])),
        }
    }
    let mut out = Vec::new();
    for (host, c, runs) in hosts {
        let Some(&(worst, busy, host_wide)) = runs.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let Some(cpu) = worst
            .counters
            .as_ref()
            .and_then(|c| c.summary.as_ref())
            .and_then(|s| s.cpu.as_ref())
        else {
            continue;
        };
        let own = worst.totals.cpu.user_pct + worst.totals.cpu.sys_pct;
        // volbench's own CPU in percent of the whole host, to tell its load
        // from someone else's.
        let own_share = own / c.cpus.max(1) as f64;
        // Whose load it was decides what to say: volbench's (the client is
        // the limit), other processes' (the figures may carry waits for a
        // CPU, nothing more is known), or the hypervisor's (steal).
        let others = host_wide && own_share < busy / 2.0;
        let stolen = host_wide && cpu.steal_pct >= cpu.user_pct + cpu.system_pct;
        let runs_said = runs_text(worst, runs.len());
        let (message, sure) = if stolen {
            (
                format!(
                    "{host} short of CPU: its {} CPUs were {busy:.0}% busy in {runs_said}, {:.0}% \
                     of it steal (the hypervisor running other work), user {:.0}%, system \
                     {:.0}%. The figures may be the VM's, not the storage's: a larger or \
                     dedicated VM, then measure again.",
                    c.cpus, cpu.steal_pct, cpu.user_pct, cpu.system_pct,
                ),
                Confidence::Medium,
            )
        } else if others {
            (
                format!(
                    "{host} busy with other work: its {} CPUs were {busy:.0}% busy in \
                     {runs_said} but volbench used {own_share:.0}% of the host. The figures may \
                     include waits for a CPU: measure again on a quiet client.",
                    c.cpus,
                ),
                Confidence::Low,
            )
        } else if host_wide {
            (
                format!(
                    "{host} CPU-bound: its {} CPUs were {busy:.0}% busy (user {:.0}%, system \
                     {:.0}%) in {runs_said}. The storage may do more than measured: add \
                     clients, or use fewer threads with more iodepth (io_uring), as the papers \
                     advise.",
                    c.cpus, cpu.user_pct, cpu.system_pct,
                ),
                sure_of(busy),
            )
        } else {
            (
                format!(
                    "{host} core-bound: each of volbench's {} I/O threads used {busy:.0}% of a \
                     core in {runs_said} (the busiest CPU {:.0}% busy). More threads (or \
                     iodepth with io_uring) may give more.",
                    worst.io_threads, cpu.busiest_cpu_pct,
                ),
                sure_of(busy),
            )
        };
        out.push(
            Finding::new(Kind::ClientCpu, sure, message)
                .figure("host_busy_pct", cpu.busy_pct())
                .figure("user_pct", cpu.user_pct)
                .figure("system_pct", cpu.system_pct)
                .figure("steal_pct", cpu.steal_pct)
                .figure("busiest_cpu_pct", cpu.busiest_cpu_pct)
                .figure("volbench_cpu_pct", own)
                .figure("cpus", c.cpus as f64)
                .runs(runs.iter().map(|(r, _, _)| *r)),
        );
    }
    out
}

fn sure_of(busy: f64) -> Confidence {
    if busy >= 97.0 {
        Confidence::High
    } else {
        Confidence::Medium
    }
}

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
    for Seen { host, run: r, c, s } in with_counters(doc) {
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

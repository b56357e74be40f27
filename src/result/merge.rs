//! Exact merging of many hosts' results, and the checks that keep a remote
//! host's figures out of the merge unless they are well-formed: a histogram
//! whose counts do not add up, a rate that is not a finite number or a
//! result for another workload is refused, never averaged in.

use crate::result::check;
pub(crate) use crate::result::cluster::{
    Cluster, ClusterRun, CoordinatorCost, HostResult, HostStatus, Unfinished,
};
use crate::result::protocol::{ProtocolOp, ProtocolStats};
use crate::result::smb::{SmbChannel, SmbCommand, SmbStats};
use crate::result::{
    Cpu, Histograms, Interval, IntervalOp, LatSummary, LittlesLaw, OpPair, OpTotals, Phase,
    PhaseName, RateResult, RunResult, SteadyResult, Totals,
};
use crate::spec::RunSpec;
use crate::stats::{BucketedHistogram, percentile_ns};

/// Merges results of the same run from several hosts or targets: ops and
/// bytes add, rates add (each part over its own measured window), latency
/// moments combine exactly, percentiles come from the added histograms.
pub fn merge_runs(parts: &[&RunResult]) -> Result<RunResult, String> {
    let first = *parts.first().ok_or("nothing to merge")?;
    let mut engines = Vec::new();
    for e in parts.iter().flat_map(|p| &p.engine) {
        if !engines.contains(e) {
            engines.push(*e);
        }
    }
    let (read, read_h) = merge_measured(parts, |r| (&r.totals.read, &r.histograms.read))?;
    let (write, write_h) = merge_measured(parts, |r| (&r.totals.write, &r.histograms.write))?;
    let warmups: Vec<&OpPair> = parts.iter().filter_map(|p| p.warmup.as_ref()).collect();
    let warmup = (!warmups.is_empty()).then(|| OpPair {
        read: merge_unbucketed(warmups.iter().map(|w| &w.read)),
        write: merge_unbucketed(warmups.iter().map(|w| &w.write)),
    });
    let in_flight = (read.iops * read.lat_us.mean + write.iops * write.lat_us.mean) / 1e6;
    let (threads, threads_left_out) = crate::result::threads::concat(parts);
    let mut concurrency = 0u32;
    let mut io_threads = 0u32;
    for p in parts {
        concurrency = concurrency.saturating_add(p.littles_law.concurrency);
        io_threads = io_threads.saturating_add(p.io_threads);
    }
    Ok(RunResult {
        name: first.name.clone(),
        workload: first.workload.clone(),
        engine: engines,
        io_threads,
        depth_per_thread: parts.iter().map(|p| p.depth_per_thread).max().unwrap_or(1),
        phases: merge_phases(parts),
        totals: Totals {
            read,
            write,
            // The busiest part: whether any one client ran out of CPU is
            // what this column is read for (and the targets of one host
            // share one process, so adding would count it twice).
            cpu: Cpu {
                user_pct: parts
                    .iter()
                    .map(|p| p.totals.cpu.user_pct)
                    .fold(0.0, f64::max),
                sys_pct: parts
                    .iter()
                    .map(|p| p.totals.cpu.sys_pct)
                    .fold(0.0, f64::max),
            },
            // A replay's flushes and discards have no histogram: counts and
            // moments exact, percentiles the highest of the parts.
            flush: some(parts, |p| p.totals.flush.as_ref())
                .map(|v| merge_unbucketed(v.into_iter())),
            discard: some(parts, |p| p.totals.discard.as_ref())
                .map(|v| merge_unbucketed(v.into_iter())),
        },
        warmup,
        intervals: merge_series(parts.iter().map(|p| p.intervals.as_slice())),
        histograms: Histograms {
            read: read_h,
            write: write_h,
        },
        littles_law: LittlesLaw {
            concurrency,
            iops_x_latency: in_flight,
        },
        interrupted: parts.iter().any(|p| p.interrupted),
        meta_ops: merge_ops(parts)?,
        counters: crate::result::counters::merge(parts.iter().map(|p| p.counters.as_ref())),
        data_errors: parts
            .iter()
            .filter_map(|p| p.data_errors)
            .reduce(|a, b| a + b),
        // Per-target figures belong to the caller that knows the targets.
        protocol: merge_protocol(
            &parts
                .iter()
                .filter_map(|p| p.protocol.as_ref())
                .collect::<Vec<_>>(),
        ),
        left_out: parts.iter().flat_map(|p| p.left_out.clone()).collect(),
        targets: Vec::new(),
        stalls: parts
            .iter()
            .flat_map(|p| p.stalls.iter().copied())
            .collect(),
        // Each host replayed its part of the trace: the parts add up.
        replay: some(parts, |p| p.replay.as_ref())
            .and_then(|v| crate::result::replay::ReplayResult::merge(&v)),
        // Hosts' results always hold their histograms (`check_run` below).
        from_intervals: parts.iter().any(|p| p.from_intervals),
        histograms_left_out: false,
        threads,
        threads_left_out,
        // Every part carries its share of the rate: targets and results add.
        rate: first.rate.as_ref().map(|r0| {
            let rates: Vec<&RateResult> = parts.iter().filter_map(|p| p.rate.as_ref()).collect();
            RateResult {
                target_iops: rates.iter().map(|r| r.target_iops).sum(),
                achieved_iops: rates.iter().map(|r| r.achieved_iops).sum(),
                reached: rates.iter().all(|r| r.reached),
                arrivals: r0.arrivals,
            }
        }),
        // Steady only when every part settled; measuring began at the latest.
        steady: first.steady.as_ref().map(|_| {
            let st: Vec<&SteadyResult> = parts.iter().filter_map(|p| p.steady.as_ref()).collect();
            SteadyResult {
                reached: st.iter().all(|x| x.reached),
                after_s: st.iter().map(|x| x.after_s).fold(0.0, f64::max),
            }
        }),
    })
}

/// What the parts that carry it carry, or None if none does.
fn some<'a, T>(
    parts: &[&'a RunResult],
    pick: impl Fn(&'a RunResult) -> Option<&'a T>,
) -> Option<Vec<&'a T>> {
    let v: Vec<&T> = parts.iter().filter_map(|p| pick(p)).collect();
    if v.is_empty() { None } else { Some(v) }
}

/// Phases by name: the earliest start and the longest duration.
fn merge_phases(parts: &[&RunResult]) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::new();
    for p in parts {
        for ph in &p.phases {
            match out.iter_mut().find(|o| o.name == ph.name) {
                Some(o) => {
                    // RFC 3339 UTC strings of one format sort as times.
                    if ph.start < o.start {
                        o.start = ph.start.clone();
                    }
                    o.duration_s = o.duration_s.max(ph.duration_s);
                }
                None => out.push(ph.clone()),
            }
        }
    }
    out
}

fn merge_measured<'a, T>(
    parts: &[&'a T],
    pick: impl Fn(&'a T) -> (&'a OpTotals, &'a BucketedHistogram),
) -> Result<(OpTotals, BucketedHistogram), String> {
    let mut hist = None::<histogram::Histogram>;
    for p in parts {
        let h = pick(p).1.to_histogram()?;
        match hist.as_mut() {
            None => hist = Some(h),
            Some(acc) => acc
                .checked_add_assign(&h)
                .map_err(|e| format!("histograms do not add: {e}"))?,
        }
    }
    let hist = hist.ok_or("nothing to merge")?;
    let mut t = merge_unbucketed(parts.iter().map(|p| pick(p).0));
    if t.ops > 0 {
        let (min_ns, max_ns) = (
            (t.lat_us.min * 1000.0).round() as u64,
            (t.lat_us.max * 1000.0).round() as u64,
        );
        let p = |q: f64| percentile_ns(&hist, q, min_ns, max_ns) / 1000.0;
        t.lat_us.p50 = p(50.0);
        t.lat_us.p90 = p(90.0);
        t.lat_us.p99 = p(99.0);
        t.lat_us.p99_9 = p(99.9);
        t.lat_us.p99_99 = p(99.99);
    }
    Ok((t, BucketedHistogram::from_histogram(&hist)))
}

/// A metadata run's operations, each merged over the parts that did it.
fn merge_ops(parts: &[&RunResult]) -> Result<Vec<crate::result::meta::MetaOpResult>, String> {
    let mut out = Vec::new();
    for op in crate::spec::meta::ALL_OPS {
        let mine: Vec<&crate::result::meta::MetaOpResult> = parts
            .iter()
            .flat_map(|p| p.meta_ops.iter().filter(|o| o.op == op))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let (totals, histogram) = merge_measured(&mine, |o| (&o.totals, &o.histogram))?;
        let warm: Vec<&OpTotals> = mine.iter().filter_map(|o| o.warmup.as_ref()).collect();
        out.push(crate::result::meta::MetaOpResult {
            op,
            totals,
            warmup: (!warm.is_empty()).then(|| merge_unbucketed(warm.into_iter())),
            histogram,
            kept: mine.iter().map(|o| o.kept).sum(),
        });
    }
    Ok(out)
}

/// Everything but the percentiles, exactly. Percentiles are left as the
/// highest of the parts (an upper bound) for callers without histograms.
fn merge_unbucketed<'a>(parts: impl Iterator<Item = &'a OpTotals>) -> OpTotals {
    let parts: Vec<&OpTotals> = parts.filter(|p| p.ops > 0).collect();
    let mut t = OpTotals::default();
    if parts.is_empty() {
        return t;
    }
    for p in &parts {
        t.ops = t.ops.saturating_add(p.ops);
        t.bytes = t.bytes.saturating_add(p.bytes);
        t.iops += p.iops;
        t.mib_s += p.mib_s;
    }
    t.lat_us = merge_lat(parts.iter().map(|p| (p.ops, &p.lat_us)));
    // Service time (rate-limited runs) has no histogram: moments exact,
    // percentiles the highest of the parts.
    let service: Vec<(u64, &LatSummary)> = parts
        .iter()
        .filter_map(|p| p.service_lat_us.as_ref().map(|l| (p.ops, l)))
        .collect();
    if !service.is_empty() {
        t.service_lat_us = Some(merge_lat(service.into_iter()));
    }
    t
}

/// Hosts' figures of one run, merged: counts added, latencies weighted by
/// their calls (`merge_lat`).
pub(crate) fn merge_protocol(parts: &[&ProtocolStats]) -> Option<ProtocolStats> {
    let first = parts.first()?;
    let mut out = ProtocolStats {
        protocol: first.protocol.clone(),
        version: first.version.clone(),
        connections: parts.iter().map(|p| p.connections).sum(),
        reconnects: parts.iter().map(|p| p.reconnects).sum(),
        ops: Vec::new(),
        // Hosts' connections one after another, threads numbered on.
        per_connection: Vec::new(),
        smb: merge_smb(
            &parts
                .iter()
                .filter_map(|p| p.smb.as_ref())
                .collect::<Vec<_>>(),
        ),
    };
    let mut threads = 0;
    for p in parts {
        for c in &p.per_connection {
            if out.per_connection.len() < crate::units::bounds::MAX_PROTOCOL_CONNS_LISTED {
                out.per_connection
                    .push(crate::result::protocol::ProtocolConn {
                        thread: threads + c.thread,
                        ..*c
                    });
            }
        }
        threads += p
            .per_connection
            .iter()
            .map(|c| c.thread + 1)
            .max()
            .unwrap_or(0);
    }
    let mut names: Vec<&str> = Vec::new();
    for p in parts {
        for o in &p.ops {
            if !names.contains(&o.op.as_str()) {
                names.push(&o.op);
            }
        }
    }
    for name in names {
        let same: Vec<&ProtocolOp> = parts
            .iter()
            .flat_map(|p| p.ops.iter().filter(|o| o.op == name))
            .collect();
        out.ops.push(ProtocolOp {
            op: name.to_string(),
            calls: same.iter().map(|o| o.calls).sum(),
            bytes: same.iter().map(|o| o.bytes).sum(),
            rtt_us: merge_lat(same.iter().map(|o| (o.calls, &o.rtt_us))),
            exec_us: merge_lat(same.iter().map(|o| (o.calls, &o.exec_us))),
            errors: same.iter().map(|o| o.errors).sum(),
            retrans: same.iter().map(|o| o.retrans).sum(),
            timeouts: same.iter().map(|o| o.timeouts).sum(),
        });
    }
    Some(out)
}

/// Hosts' SMB figures of one run, merged channel K into channel K: counts
/// added, latencies weighted by their requests (`merge::merge_lat`).
pub(crate) fn merge_smb(parts: &[&SmbStats]) -> Option<SmbStats> {
    let first = parts.first()?;
    let mut out = SmbStats {
        channels: Vec::new(),
        ..(*first).clone()
    };
    let mut places: Vec<u32> = parts
        .iter()
        .flat_map(|p| p.channels.iter().map(|c| c.channel))
        .collect();
    places.sort_unstable();
    places.dedup();
    for k in places {
        let same: Vec<&SmbChannel> = parts
            .iter()
            .flat_map(|p| p.channels.iter().filter(|c| c.channel == k))
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for c in &same {
            for x in &c.commands {
                if !names.contains(&x.command.as_str()) {
                    names.push(&x.command);
                }
            }
        }
        let commands = names
            .into_iter()
            .map(|n| {
                let xs: Vec<&SmbCommand> = same
                    .iter()
                    .flat_map(|c| c.commands.iter().filter(|x| x.command == n))
                    .collect();
                SmbCommand {
                    command: n.to_string(),
                    requests: xs.iter().map(|x| x.requests).sum(),
                    bytes: xs.iter().map(|x| x.bytes).sum(),
                    errors: xs.iter().map(|x| x.errors).sum(),
                    latency_us: merge_lat(xs.iter().map(|x| (x.requests, &x.latency_us))),
                }
            })
            .collect();
        out.channels.push(SmbChannel {
            channel: k,
            server: same.first().map(|c| c.server.clone()).unwrap_or_default(),
            sessions: same.iter().map(|c| c.sessions).sum(),
            credits_granted: same.iter().map(|c| c.credits_granted).sum(),
            credit_waits: same.iter().map(|c| c.credit_waits).sum(),
            credit_wait_ms: same.iter().map(|c| c.credit_wait_ms).sum(),
            max_in_flight: same.iter().map(|c| c.max_in_flight).max().unwrap_or(0),
            reconnects: same.iter().map(|c| c.reconnects).sum(),
            commands,
        });
    }
    Some(out)
}

/// Combines latency summaries of `ops` operations each: the mean and the
/// standard deviation exactly (from each part's moments), min and max
/// exactly, percentiles as the highest of the parts.
pub(crate) fn merge_lat<'a>(parts: impl Iterator<Item = (u64, &'a LatSummary)>) -> LatSummary {
    let mut lat = LatSummary {
        min: f64::INFINITY,
        ..LatSummary::default()
    };
    let (mut n_all, mut lat_sum, mut sq_sum) = (0u64, 0.0, 0.0);
    for (ops, l) in parts {
        let n = ops as f64;
        n_all = n_all.saturating_add(ops);
        lat_sum += l.mean * n;
        // Sum of squares from the sample standard deviation and the mean.
        sq_sum += l.stddev * l.stddev * (n - 1.0).max(0.0) + n * l.mean * l.mean;
        lat.min = lat.min.min(l.min);
        lat.max = lat.max.max(l.max);
        lat.p50 = lat.p50.max(l.p50);
        lat.p90 = lat.p90.max(l.p90);
        lat.p99 = lat.p99.max(l.p99);
        lat.p99_9 = lat.p99_9.max(l.p99_9);
        lat.p99_99 = lat.p99_99.max(l.p99_99);
    }
    if n_all == 0 {
        return LatSummary::default();
    }
    let n = n_all as f64;
    lat.mean = lat_sum / n;
    lat.stddev = if n_all > 1 {
        ((sq_sum - n * lat.mean * lat.mean).max(0.0) / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    lat
}

/// Intervals of several parts side by side: the k-th of each are added.
/// Only positions every part has are kept.
pub(crate) fn merge_series<'a>(series: impl Iterator<Item = &'a [Interval]>) -> Vec<Interval> {
    let series: Vec<&[Interval]> = series.collect();
    let len = series.iter().map(|s| s.len()).min().unwrap_or(0);
    (0..len)
        .map(|k| {
            let at: Vec<&Interval> = series.iter().map(|s| &s[k]).collect();
            merge_intervals(&at)
        })
        .collect()
}

/// The same interval from several parts: rates add, mean latency is
/// weighted by operations, times are the parts' latest and longest.
pub(crate) fn merge_intervals(parts: &[&Interval]) -> Interval {
    let op = |f: fn(&Interval) -> &IntervalOp| {
        let mut o = IntervalOp::default();
        let mut ops = 0.0;
        let mut svc = None::<f64>;
        for p in parts {
            let x = f(p);
            o.iops += x.iops;
            o.mib_s += x.mib_s;
            let n = x.iops * p.duration_s;
            o.lat_us_mean += x.lat_us_mean * n;
            if let Some(s) = x.service_us_mean {
                *svc.get_or_insert(0.0) += s * n;
            }
            o.lat_hist = crate::stats::live_hist::sparse_add(&o.lat_hist, &x.lat_hist);
            ops += n;
        }
        // Per-operation means; an interval without operations has none.
        let ops = if ops > 0.0 { ops } else { f64::INFINITY };
        o.lat_us_mean /= ops;
        o.service_us_mean = svc.map(|v| v / ops);
        o
    };
    Interval {
        t_s: parts.iter().map(|p| p.t_s).fold(0.0, f64::max),
        duration_s: parts.iter().map(|p| p.duration_s).fold(0.0, f64::max),
        phase: parts.first().map_or(PhaseName::Measure, |p| p.phase),
        read: op(|i| &i.read),
        write: op(|i| &i.write),
        meta_ops: crate::result::meta::merge_interval_ops(
            parts.iter().map(|p| (&p.meta_ops[..], p.duration_s)),
            None,
        ),
    }
}

// ---- checks on what a remote host sends ----

/// An interval as a host streams it: sound, and no longer than the run.
pub(crate) fn check_interval(iv: &Interval, longest_s: f64) -> Result<(), String> {
    check::check_interval(iv, longest_s)
}

/// Whether two rates that should be one computation agree (JSON may round
/// the last digit).
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-9
}

/// A run result from a host, checked against the run it was asked to do.
/// A host computes each rate from its own counts and clock, so every rate
/// must agree with its operations and its phase's duration: a figure that
/// is merely finite (a tampered 1e308 IOPS) is not enough.
pub fn check_run(r: &RunResult, spec: &RunSpec) -> Result<(), String> {
    // The rate may be resolved on the host (a percentage of an earlier run),
    // so the workload is compared on what defines the operations.
    let w = &r.workload;
    if r.name != spec.name
        || w.name != spec.name
        || w.rw != spec.rw
        || w.read_pct != spec.read_pct
        || w.bs != spec.bs
        || w.write_bs != spec.write_bs
        || w.threads != spec.threads
        || w.iodepth != spec.iodepth
    {
        return Err(format!("a result for another run than '{}'", spec.name));
    }
    if r.engine.len() != 1 {
        return Err("a host's result names more than one engine".into());
    }
    // An agent's run always ends with its workers' own histograms; one
    // without them would merge into totals its histogram does not hold.
    if r.from_intervals {
        return Err("a result without its histograms".into());
    }
    let max_threads = spec.threads.saturating_mul(spec.iodepth);
    if r.io_threads == 0 || r.io_threads > max_threads || r.depth_per_thread > spec.iodepth {
        return Err(format!(
            "{} I/O threads x depth {} for {} threads x iodepth {}",
            r.io_threads, r.depth_per_thread, spec.threads, spec.iodepth
        ));
    }
    check::check_run(r, check::Rates::Exact)?;
    if spec.read_pct == 100 && r.totals.write.ops > 0 || spec.read_pct == 0 && r.totals.read.ops > 0
    {
        return Err("operations of a type the workload does not issue".into());
    }
    for (name, t) in [("read", &r.totals.read), ("write", &r.totals.write)] {
        let l = &t.lat_us;
        if t.ops > 0 && !(l.min <= l.mean * 1.000_001 && l.mean <= l.max * 1.000_001) {
            return Err(format!("{name}: mean latency outside min..max"));
        }
    }
    let longest = (spec.warmup_s + spec.duration_s) * 2.0 + 60.0;
    for p in &r.phases {
        if p.start.len() > 40 || p.duration_s > longest {
            return Err("a phase out of shape".into());
        }
    }
    let (rd, wr) = (&r.totals.read, &r.totals.write);
    let in_flight = (rd.iops * rd.lat_us.mean + wr.iops * wr.lat_us.mean) / 1e6;
    if !same(r.littles_law.iops_x_latency, in_flight) {
        return Err(format!(
            "Little's law figure {} does not agree with its IOPS and latency ({in_flight})",
            r.littles_law.iops_x_latency
        ));
    }
    if let Some(rate) = &r.rate {
        if !same(rate.achieved_iops, rd.iops + wr.iops) {
            return Err(format!(
                "achieved rate {} IOPS does not agree with its totals ({} IOPS)",
                rate.achieved_iops,
                rd.iops + wr.iops
            ));
        }
    }
    // The intervals cover the warm-up and the measured phase: together they
    // cannot hold more operations than both phases did (one per interval
    // of slack for rounding at the boundaries).
    let warm_ops = r
        .warmup
        .as_ref()
        .map_or(0, |w| w.read.ops.saturating_add(w.write.ops));
    let all_ops = (rd.ops.saturating_add(wr.ops).saturating_add(warm_ops)) as f64;
    let mut iv_ops = 0.0;
    for iv in &r.intervals {
        check_interval(iv, longest)?;
        iv_ops += (iv.read.iops + iv.write.iops) * iv.duration_s;
    }
    if iv_ops > all_ops * 1.01 + r.intervals.len() as f64 {
        return Err(format!(
            "intervals holding {iv_ops:.0} operations in a run of {all_ops:.0}"
        ));
    }
    // Metadata runs keep their latencies per operation, not in these.
    if r.workload.meta.is_none() {
        check_interval_hists(r)?;
    }
    Ok(())
}

/// The I/Os a run's intervals' histograms hold together, at most the run's
/// (its warm-up's included), give or take the skew at each end.
fn check_interval_hists(r: &RunResult) -> Result<(), String> {
    let warm = r
        .warmup
        .as_ref()
        .map_or(0, |w| w.read.ops.saturating_add(w.write.ops));
    let all = r
        .totals
        .read
        .ops
        .saturating_add(r.totals.write.ops)
        .saturating_add(warm) as f64;
    let held: u64 = r
        .intervals
        .iter()
        .flat_map(|iv| iv.read.lat_hist.iter().chain(&iv.write.lat_hist))
        .fold(0u64, |a, b| a.saturating_add(b[1]));
    if held as f64 > all * 1.01 + check::INTERVAL_HIST_EXTRA * (r.intervals.len() as f64).max(1.0) {
        return Err(format!(
            "its intervals' latency histograms hold {held} I/Os in a run of {all:.0}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;

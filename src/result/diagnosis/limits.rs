//! Limits of the storage: measured against the one given with --expect,
//! or inferred from the shape of the results (a cap makes IOPS or MiB/s
//! flat where they should move with the block size).

use super::series::{FLAT, MIN_BS_SPAN, block_size_series, closed_loop};
use super::{Confidence, Finding, Kind, bs_text, num, verdict};
use crate::result::{Op, ResultDoc, RunResult};

/// Within this fraction of a limit counts as "at" it (the throttles the
/// papers meet let a little through above and settle a little below).
const NEAR: f64 = 0.90;
/// Above the limit by more than this, the limit is not what was expected.
const ABOVE: f64 = 1.10;
/// An IOPS cap is told from a device's own per-request cost only when the
/// level sizes reach this far.
const MIN_IOPS_CAP_TOP: u64 = 16 << 10;
/// A bandwidth cap is told from a device streaming at its top speed only
/// when the sizes start at or below this.
const MAX_BW_CAP_BOTTOM: u64 = 64 << 10;
/// A stretch short of the whole series must be this level: the sizes
/// beyond it moved, so the noise of a busy client is in the runs, and a
/// healthy device read 17,396 / 21,143 IOPS at 4 / 16 KiB beside a
/// compiler (9.7%), where a volume with both caps read 500 / 517 (1.7%).
const PART_FLAT: f64 = 0.05;
/// With fewer I/Os in flight than this, level IOPS may be a fixed latency.
const MIN_CAP_CONCURRENCY: u32 = 4;

#[derive(Clone, Copy, PartialEq)]
enum Dim {
    Iops,
    MibS,
    /// One direction of a service that caps reads and writes apart.
    OpIops(Op),
    OpMibS(Op),
}

impl Dim {
    fn of(self, r: &RunResult) -> f64 {
        match self {
            Dim::Iops => r.total_iops(),
            Dim::MibS => r.total_mib_s(),
            Dim::OpIops(op) => r.totals.op(op).iops,
            Dim::OpMibS(op) => r.totals.op(op).mib_s,
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Dim::Iops => "IOPS",
            Dim::MibS => "MiB/s",
            Dim::OpIops(Op::Read) => "read IOPS",
            Dim::OpIops(Op::Write) => "write IOPS",
            Dim::OpMibS(Op::Read) => "read MiB/s",
            Dim::OpMibS(Op::Write) => "write MiB/s",
        }
    }
    fn key(self) -> &'static str {
        match self {
            Dim::Iops => "iops",
            Dim::MibS => "mib_s",
            Dim::OpIops(Op::Read) => "read_iops",
            Dim::OpIops(Op::Write) => "write_iops",
            Dim::OpMibS(Op::Read) => "read_mib_s",
            Dim::OpMibS(Op::Write) => "write_mib_s",
        }
    }
    /// Whether a run says anything about this limit: a per-direction one
    /// only from runs that do that operation.
    fn applies(self, r: &RunResult) -> bool {
        match self {
            Dim::Iops | Dim::MibS => true,
            Dim::OpIops(op) | Dim::OpMibS(op) => r.does(op),
        }
    }
}

/// The measured figures against the limits given with --expect.
pub(super) fn expected(doc: &ResultDoc) -> Vec<Finding> {
    let Some(e) = &doc.expect else {
        return Vec::new();
    };
    let runs = closed_loop(doc);
    if runs.is_empty() {
        return Vec::new();
    }
    let what = e
        .service
        .as_ref()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut best_pct: Vec<(f64, &RunResult)> = Vec::new();
    let all = runs;
    for (dim, limit) in [
        (Dim::Iops, e.iops),
        (Dim::MibS, e.mib_s),
        (Dim::OpIops(Op::Read), e.read_iops),
        (Dim::OpIops(Op::Write), e.write_iops),
        (Dim::OpMibS(Op::Read), e.read_mib_s),
        (Dim::OpMibS(Op::Write), e.write_mib_s),
    ] {
        let Some(limit) = limit.filter(|l| *l > 0.0) else {
            continue;
        };
        let runs: Vec<&RunResult> = all.iter().copied().filter(|r| dim.applies(r)).collect();
        let pct = |r: &RunResult| dim.of(r) / limit * 100.0;
        let Some(best) = runs
            .iter()
            .copied()
            .max_by(|a, b| pct(a).total_cmp(&pct(b)))
        else {
            continue;
        };
        best_pct.push((pct(best), best));
        let near: Vec<&RunResult> = runs
            .iter()
            .copied()
            .filter(|r| pct(r) >= NEAR * 100.0 && pct(r) <= ABOVE * 100.0)
            .collect();
        let above: Vec<&RunResult> = runs
            .iter()
            .copied()
            .filter(|r| pct(r) > ABOVE * 100.0)
            .collect();
        let unit = dim.unit();
        if !near.is_empty() {
            // Closest to the limit first: that run is the evidence.
            let mut near = near;
            near.sort_by(|a, b| (pct(a) - 100.0).abs().total_cmp(&(pct(b) - 100.0).abs()));
            let lead = near[0];
            let each: Vec<String> = near
                .iter()
                .map(|r| format!("{} {} ({:.0}%)", r.name, num(dim.of(r)), pct(r)))
                .collect();
            let message = format!(
                "at or near a provisioned limit: {} {unit} = {:.0}% of the {}-{unit} limit{what}, \
                 in {} of {} runs ({}). More threads or clients will not raise it; a larger \
                 quota or a higher service level will.",
                num(dim.of(lead)),
                pct(lead),
                num(limit),
                near.len(),
                runs.len(),
                each.join(", ")
            );
            let sure = if near.len() >= 2 {
                Confidence::High
            } else {
                Confidence::Medium
            };
            out.push(
                Finding::new(Kind::AtExpectedLimit, sure, message)
                    .figure(&format!("limit_{}", dim.key()), limit)
                    .figure(&format!("measured_{}", dim.key()), dim.of(lead))
                    .figure("percent", pct(lead))
                    .figure("runs_at_limit", near.len() as f64)
                    .runs(near.iter().copied()),
            );
        }
        if !above.is_empty() {
            let top = above
                .iter()
                .copied()
                .max_by(|a, b| pct(a).total_cmp(&pct(b)))
                .unwrap_or(above[0]);
            let message = format!(
                "above the expected limit: {} {unit} = {:.0}% of the {}-{unit} limit{what} in \
                 run {}. The storage delivers more than expected (burst credits, a cache, a \
                 larger level than assumed), or the expectation is wrong.",
                num(dim.of(top)),
                pct(top),
                num(limit),
                top.name
            );
            out.push(
                Finding::new(Kind::AboveExpectedLimit, Confidence::Medium, message)
                    .figure(&format!("limit_{}", dim.key()), limit)
                    .figure(&format!("measured_{}", dim.key()), dim.of(top))
                    .figure("percent", pct(top))
                    .runs(above.iter().copied()),
            );
        }
    }
    let best = best_pct.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((best, run)) = best.filter(|_| out.is_empty()) {
        // Level across block sizes, well below the expectation: a cap, only
        // a lower one than expected; more threads would not reach it. Unless
        // the client sets the level, which the verdict asks first.
        let level = block_size_series(doc).into_iter().find_map(|g| {
            [Dim::Iops, Dim::MibS]
                .into_iter()
                .find_map(|d| flat_stretch(&g, d).map(|(_, mean, _)| (d, mean)))
        });
        let level = level.filter(|_| verdict::client(doc, run).is_none());
        let limit = verdict::judge(doc, run, run.total_iops() * 100.0 / best.max(1e-9));
        let why = match level {
            Some((d, mean)) => format!(
                ", and the runs are level at {} {} across block sizes: a cap lower than the one \
                 expected. Check the volume's level, tier or quota.",
                num(mean),
                d.unit()
            ),
            None => format!(" (run {}); {}", run.name, limit.sentence()),
        };
        let message = format!(
            "below the expected limit ({}{what}): the best run reached {best:.0}% of it{why}",
            e.limits_text(),
        );
        let mut f = Finding::new(Kind::BelowExpectedLimit, Confidence::Medium, message)
            .figure("percent", best)
            .runs([run]);
        if level.is_none() {
            if let verdict::Limit::TooFewInFlight { needed, .. } = limit {
                f = f.figure("needed_in_flight", needed);
            }
        }
        out.push(f);
    }
    out
}

/// The longest stretch of `g` (by block size) whose `dim` is flat and
/// spans MIN_BS_SPAN: for IOPS from the smallest size up (an IOPS cap binds
/// where transfers are small), for MiB/s from the largest down (a bandwidth
/// cap binds where they are large). A volume with both caps shows IOPS
/// level at 4-16 KiB and MiB/s level at 64-256 KiB, never all of it flat.
fn flat_stretch<'a>(g: &[&'a RunResult], dim: Dim) -> Option<(Vec<&'a RunResult>, f64, f64)> {
    let n = g.len();
    let bs = |i: usize| g[i].workload.bs[0].bytes as f64;
    let windows: Vec<(usize, usize)> = match dim {
        Dim::Iops | Dim::OpIops(_) => (1..n).rev().map(|j| (0, j)).collect(),
        Dim::MibS | Dim::OpMibS(_) => (0..n - 1).map(|i| (i, n - 1)).collect(),
    };
    windows.into_iter().find_map(|(i, j)| {
        // Within these sizes any device gives level figures of its own,
        // which say nothing about a cap: IOPS from 512 B to 4 KiB (the
        // per-request cost dominates: a healthy loop device read 36,196 /
        // 37,816 / 37,531 / 37,638), MiB/s from 256 KiB up (it streams at
        // its top speed: 1,048 / 1,023 / 1,078).
        let own_level = match dim {
            Dim::Iops | Dim::OpIops(_) => bs(j) < MIN_IOPS_CAP_TOP as f64,
            Dim::MibS | Dim::OpMibS(_) => bs(i) > MAX_BW_CAP_BOTTOM as f64,
        };
        if own_level || bs(j) < MIN_BS_SPAN * bs(i) {
            return None;
        }
        let part = &g[i..=j];
        let vals: Vec<f64> = part.iter().map(|r| dim.of(r)).collect();
        let (mean, spread) = crate::stats::mean_spread(&vals)?;
        let within = if part.len() < n { PART_FLAT } else { FLAT };
        (spread <= within).then(|| (part.to_vec(), mean, spread))
    })
}

fn flat(doc: &ResultDoc, dim: Dim, kind: Kind) -> Vec<Finding> {
    let mut out = Vec::new();
    for whole in block_size_series(doc) {
        let Some((g, mean, spread)) = flat_stretch(&whole, dim) else {
            continue;
        };
        // A client short of CPU, or one that did not keep its I/Os in
        // flight, holds IOPS level too: that is no cap of the storage
        // (`client_cpu` or `littles_law_gap` says what it is).
        if g.iter().any(|r| verdict::client(doc, r).is_some()) {
            continue;
        }
        let vals: Vec<f64> = g.iter().map(|r| dim.of(r)).collect();
        let first = g[0].workload.bs[0].bytes;
        let last = g[g.len() - 1].workload.bs[0].bytes;
        let conc = g
            .iter()
            .map(|r| r.littles_law.concurrency)
            .min()
            .unwrap_or(0);
        let sizes: Vec<String> = g.iter().map(|r| bs_text(r.workload.bs[0].bytes)).collect();
        let unit = dim.unit();
        let (cap, why) = match dim {
            Dim::Iops | Dim::OpIops(_) => (
                "an IOPS cap",
                "larger transfers should give fewer IOPS; a provisioned IOPS limit (a disk \
                 tier, a storage account) holds them level",
            ),
            Dim::MibS | Dim::OpMibS(_) => (
                "a bandwidth cap",
                "smaller transfers should move fewer MiB/s; a throughput limit (the volume's \
                 quota x service level, the VM's or the link's) holds them level",
            ),
        };
        // What else could hold them level, when something could.
        let doubt = if dim == Dim::Iops && conc < MIN_CAP_CONCURRENCY {
            format!(
                " With {conc} I/O{} in flight IOPS = in flight / latency whatever the size, so \
                 a fixed latency per I/O (a network round trip) looks the same: a run with \
                 more threads tells them apart.",
                if conc == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        let message = format!(
            "{cap} near {} {unit}: {unit} flat within {:.0}% at {} ({}); {why}.{doubt}",
            num(mean),
            spread * 100.0,
            sizes.join(", "),
            vals.iter().map(|v| num(*v)).collect::<Vec<_>>().join(" / "),
        );
        let sure = if doubt.is_empty() && g.len() >= 3 && last as f64 >= 8.0 * first as f64 {
            Confidence::Medium
        } else {
            Confidence::Low
        };
        out.push(
            Finding::new(kind, sure, message)
                .figure(&format!("cap_{}", dim.key()), mean)
                .figure("spread_pct", spread * 100.0)
                .figure("bs_min", first as f64)
                .figure("bs_max", last as f64)
                .runs(g.iter().copied()),
        );
    }
    out
}

pub(super) fn inferred_iops_cap(doc: &ResultDoc) -> Vec<Finding> {
    flat(doc, Dim::Iops, Kind::InferredIopsCap)
}

pub(super) fn inferred_bandwidth_cap(doc: &ResultDoc) -> Vec<Finding> {
    flat(doc, Dim::MibS, Kind::InferredBandwidthCap)
}

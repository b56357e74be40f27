//! Limits of the storage: measured against the one given with --expect,
//! or inferred from the shape of the results (a cap makes IOPS or MiB/s
//! flat where they should move with the block size).

use std::collections::BTreeMap;

use super::{Confidence, Finding, Kind, bs_text, measured, num, paced, shape_key};
use crate::result::{ResultDoc, RunResult};

/// Within this fraction of a limit counts as "at" it (the throttles the
/// papers meet let a little through above and settle a little below).
const NEAR: f64 = 0.90;
/// Above the limit by more than this, the limit is not what was expected.
const ABOVE: f64 = 1.10;
/// Runs whose IOPS (or MiB/s) spread at most this much around their mean
/// are "flat". Not tighter: a kernel throttle measured over a few seconds
/// wanders about 5% (seen at 5.1% on a 4 MiB/s cgroup cap, 2 s runs), while
/// an uncapped device moves its IOPS or MiB/s by the block-size ratio
/// (at least 4x, see MIN_BS_SPAN), far outside 10%.
pub(super) const FLAT: f64 = 0.10;
/// Block sizes must span at least this factor for flatness to mean a cap:
/// between 4 and 8 KiB a latency-bound device gives nearly equal IOPS too.
const MIN_BS_SPAN: f64 = 4.0;

#[derive(Clone, Copy)]
enum Dim {
    Iops,
    MibS,
}

impl Dim {
    fn of(self, r: &RunResult) -> f64 {
        match self {
            Dim::Iops => r.total_iops(),
            Dim::MibS => r.total_mib_s(),
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Dim::Iops => "IOPS",
            Dim::MibS => "MiB/s",
        }
    }
    fn key(self) -> &'static str {
        match self {
            Dim::Iops => "iops",
            Dim::MibS => "mib_s",
        }
    }
}

/// Open-loop runs are held below capacity on purpose; they say nothing
/// about where the storage stops.
fn closed_loop(doc: &ResultDoc) -> Vec<&RunResult> {
    measured(doc).filter(|r| !paced(r)).collect()
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
    let mut best_pct: Vec<f64> = Vec::new();
    for (dim, limit) in [(Dim::Iops, e.iops), (Dim::MibS, e.mib_s)] {
        let Some(limit) = limit.filter(|l| *l > 0.0) else {
            continue;
        };
        let pct = |r: &RunResult| dim.of(r) / limit * 100.0;
        let Some(best) = runs
            .iter()
            .copied()
            .max_by(|a, b| pct(a).total_cmp(&pct(b)))
        else {
            continue;
        };
        best_pct.push(pct(best));
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
    if out.is_empty() && !best_pct.is_empty() {
        let best = best_pct.iter().copied().fold(0.0, f64::max);
        let message = format!(
            "below the expected limit ({}{what}): the best run reached {best:.0}% of it. \
             Something else bounds these runs: latency x concurrency (Little's law: add \
             threads or iodepth), the client, or the network.",
            e.limits_text()
        );
        out.push(
            Finding::new(Kind::BelowExpectedLimit, Confidence::Medium, message)
                .figure("percent", best),
        );
    }
    out
}

/// Runs of one shape but for a single block size each, grouped, with the
/// block sizes spanning enough to tell a cap from a latency-bound device.
pub(super) fn block_size_series(doc: &ResultDoc) -> Vec<Vec<&RunResult>> {
    let mut groups: BTreeMap<String, Vec<&RunResult>> = BTreeMap::new();
    for r in closed_loop(doc) {
        if r.workload.bs.len() == 1 {
            groups.entry(shape_key(r, true)).or_default().push(r);
        }
    }
    groups
        .into_values()
        .filter_map(|mut g| {
            g.sort_by_key(|r| r.workload.bs[0].bytes);
            g.dedup_by_key(|r| r.workload.bs[0].bytes);
            let (lo, hi) = (
                g.first()?.workload.bs[0].bytes,
                g.last()?.workload.bs[0].bytes,
            );
            (g.len() >= 2 && hi as f64 >= MIN_BS_SPAN * lo as f64).then_some(g)
        })
        .collect()
}

fn flat(doc: &ResultDoc, dim: Dim, kind: Kind) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in block_size_series(doc) {
        let vals: Vec<f64> = g.iter().map(|r| dim.of(r)).collect();
        let Some((mean, spread)) = crate::stats::mean_spread(&vals) else {
            continue;
        };
        if spread > FLAT {
            continue;
        }
        let first = g[0].workload.bs[0].bytes;
        let last = g[g.len() - 1].workload.bs[0].bytes;
        let sizes: Vec<String> = g.iter().map(|r| bs_text(r.workload.bs[0].bytes)).collect();
        let unit = dim.unit();
        let (cap, why) = match dim {
            Dim::Iops => (
                "an IOPS cap",
                "larger transfers should give fewer IOPS; a provisioned IOPS limit (a disk \
                 tier, a storage account) holds them level",
            ),
            Dim::MibS => (
                "a bandwidth cap",
                "smaller transfers should move fewer MiB/s; a throughput limit (the volume's \
                 quota x service level, the VM's or the link's) holds them level",
            ),
        };
        let message = format!(
            "{cap} near {} {unit}: {unit} flat within {:.0}% at {} ({}); {why}.",
            num(mean),
            spread * 100.0,
            sizes.join(", "),
            vals.iter().map(|v| num(*v)).collect::<Vec<_>>().join(" / "),
        );
        let sure = if g.len() >= 3 && last as f64 >= 8.0 * first as f64 {
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

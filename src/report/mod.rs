//! Reports: everything a person looks at after a run, built from
//! `result.json` files alone. `detect` finds which charts the runs call for,
//! `charts` draws them (with `svg`), `tables` lays out the numbers,
//! `html` assembles the self-contained page, `compare` matches runs across
//! results, and `export` writes the Markdown, CSV and JSON views.

pub(crate) mod buckets_csv;
pub(crate) mod charts;
pub mod compare;
pub mod detect;
pub mod export;
pub mod fio_json;
pub mod html;
pub mod intervals_csv;
pub mod page;
pub mod profile;
pub mod sections;
#[cfg(test)]
mod snapshot;
pub(crate) mod svg;
pub(crate) mod tables;
pub(crate) mod threads;

pub use crate::output::source::{Source, label_sources, load, own_source};
use crate::result::{Op, OpTotals, ResultDoc, RunResult};
use crate::stats::percentile_ns;

/// One run of one source: what every chart and table is made of.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    pub source: usize,
    pub run: &'a RunResult,
}

/// Every run of every source, less the warm-up runs a suite discards (the
/// papers' "discard the first test"): they are listed, not charted.
pub fn items(sources: &[Source]) -> Vec<Item<'_>> {
    sources
        .iter()
        .enumerate()
        .flat_map(|(s, src)| {
            src.doc
                .runs
                .iter()
                .filter(|run| !run.workload.discard)
                .map(move |run| Item { source: s, run })
        })
        .collect()
}

/// Which figure the papers quote for a workload: MiB/s for large transfers
/// (64 KiB sequential), IOPS for small ones (4-8 KiB random).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    Iops,
    MibS,
}

impl Metric {
    pub(crate) fn of(run: &RunResult) -> Self {
        if run.workload.max_bs() >= 32 * 1024 {
            Metric::MibS
        } else {
            Metric::Iops
        }
    }

    pub(crate) fn get(self, op: &OpTotals) -> f64 {
        match self {
            Metric::Iops => op.iops,
            Metric::MibS => op.mib_s,
        }
    }

    pub(crate) fn unit(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::MibS => "MiB/s",
        }
    }
}

/// Percentiles the latency-distribution chart plots, as far as the sample
/// count supports them (p99.99 needs at least 10,000 operations).
pub(crate) const PLOT_PERCENTILES: [f64; 16] = [
    0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 98.0, 99.0, 99.5, 99.8, 99.9, 99.95, 99.99, 99.995,
    99.999,
];

/// (percentile, latency in µs) points of one operation type, rebuilt from
/// the run's stored histogram.
pub(crate) fn percentile_points(run: &RunResult, op: Op) -> Vec<(f64, f64)> {
    let (h, t) = (run.histograms.op(op), run.totals.op(op));
    if t.ops == 0 {
        return Vec::new();
    }
    let Ok(hist) = h.to_histogram() else {
        return Vec::new();
    };
    let lo = (t.lat_us.min * 1000.0) as u64;
    let hi = (t.lat_us.max * 1000.0).ceil() as u64;
    PLOT_PERCENTILES
        .iter()
        .filter(|&&p| p == 0.0 || (1.0 - p / 100.0) * t.ops as f64 >= 1.0)
        .map(|&p| {
            let v = if p == 0.0 {
                t.lat_us.min
            } else {
                percentile_ns(&hist, p, lo, hi) / 1000.0
            };
            (p, v)
        })
        .collect()
}

/// Where a result ran, as a header names it: the host, or for a multi-host
/// result the hosts that ran the I/O (the first few, then how many more),
/// not the coordinator that only gathered them.
pub(crate) fn where_run(d: &ResultDoc) -> String {
    const SHOWN: usize = 6;
    let Some(c) = d.cluster.as_ref().filter(|c| !c.hosts.is_empty()) else {
        return d.host.hostname.clone();
    };
    let names: Vec<&str> = c.hosts.iter().map(|h| h.name.as_str()).collect();
    let mut list = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        list.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    format!(
        "{} host{} ({list}), coordinated from {}",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        d.host.hostname
    )
}

/// "2 x qd 4" for a run's concurrency as asked.
pub(crate) fn concurrency(run: &RunResult) -> String {
    format!("{} x qd {}", run.workload.threads, run.workload.iodepth)
}

/// Run names as shown: plain with one source, "source: run" with several.
pub(crate) fn run_label(sources: &[Source], item: &Item) -> String {
    if sources.len() > 1 {
        format!("{}: {}", sources[item.source].label, item.run.name)
    } else {
        item.run.name.clone()
    }
}

/// Synthetic results with known numbers; public so the end-to-end tests can
/// write them as result files.
#[doc(hidden)]
#[cfg(any(test, feature = "test-fixtures"))]
pub mod fixtures;

//! The per-target breakdown of a multi-host result: each target's own
//! figures on its host for each run (`cluster.hosts[].target_runs[]`), as a
//! table and bar charts, so one slow volume among a host's targets stands
//! out (its bars carry their share of the host's other targets' median).

use super::charts::Figure;
use super::html::Section;
use super::svg::{self, Axis, Bar, Category, Fmt, bar_chart};
use super::{Metric, Source};
use crate::output::fmt::{mib_s, micros, number};
use crate::output::table::Table;
use crate::result::diagnosis::hosts::{SLOW, others_median};
use crate::result::merge::HostStatus;
use crate::result::targets::TargetRun;
use crate::result::{ResultDoc, RunResult};

/// Per run kept in the report: its (host, that host's targets) pairs.
type PerRun<'a> = Vec<(&'a RunResult, Vec<(&'a str, Vec<&'a TargetRun>)>)>;

fn per_run(doc: &ResultDoc) -> PerRun<'_> {
    let Some(c) = &doc.cluster else {
        return Vec::new();
    };
    doc.runs
        .iter()
        .filter(|r| !r.workload.discard && r.meta_ops.is_empty())
        .map(|run| {
            let hosts = c
                .hosts
                .iter()
                .filter(|h| h.status == HostStatus::Ok)
                .map(|h| {
                    let ts = h.target_runs.iter().filter(|t| t.run == run.name);
                    (h.name.as_str(), ts.collect::<Vec<_>>())
                })
                .filter(|(_, ts)| !ts.is_empty())
                .collect();
            (run, hosts)
        })
        .collect()
}

/// Whether a result has anything the per-host table does not already say:
/// some host drove two or more targets.
pub fn has_targets(doc: &ResultDoc) -> bool {
    doc.cluster.as_ref().is_some_and(|c| {
        c.hosts.iter().any(|h| {
            let mut idx: Vec<u32> = h.target_runs.iter().map(|t| t.target).collect();
            idx.sort_unstable();
            idx.dedup();
            idx.len() >= 2
        })
    })
}

/// Each target's IOPS, MiB/s, mean and p99 per run, with its share of the
/// median of its host's other targets.
pub fn table(doc: &ResultDoc) -> Table {
    let mut t = Table::new(
        "Per target",
        &[
            "run",
            "host",
            "target",
            "IOPS",
            "MiB/s",
            "mean",
            "p99",
            "% of siblings",
        ],
        3,
    );
    for (run, hosts) in per_run(doc) {
        for (host, ts) in hosts {
            let iops: Vec<f64> = ts.iter().map(|t| t.total_iops()).collect();
            for (i, tr) in ts.iter().enumerate() {
                let med = others_median(&iops, i);
                let share = if ts.len() >= 2 && med > 0.0 {
                    format!("{:.0}%", iops[i] / med * 100.0)
                } else {
                    "-".into()
                };
                t.rows.push(vec![
                    run.name.clone(),
                    host.to_string(),
                    tr.path.clone(),
                    number(tr.total_iops()),
                    mib_s(tr.total_mib_s()),
                    micros(tr.lat_us.mean),
                    micros(tr.lat_us.p99),
                    share,
                ]);
            }
        }
    }
    t
}

/// Bar charts, one per run: a bar per target (grouped by host) of the
/// run's headline figure; a target below the slow share of its siblings'
/// median carries that share as a label.
pub fn figures(doc: &ResultDoc) -> Vec<Figure> {
    let mut out = Vec::new();
    for (run, hosts) in per_run(doc) {
        let metric = Metric::of(run);
        let value = |t: &TargetRun| match metric {
            Metric::Iops => t.total_iops(),
            Metric::MibS => t.total_mib_s(),
        };
        let width = hosts.iter().map(|(_, ts)| ts.len()).max().unwrap_or(0);
        let series: Vec<(String, usize)> = (0..width)
            .map(|i| (format!("target {}", i + 1), i))
            .collect();
        let cats: Vec<Category> = hosts
            .iter()
            .map(|(host, ts)| {
                let vals: Vec<f64> = ts.iter().map(|t| value(t)).collect();
                let mut bars: Vec<Option<Bar>> = vec![None; width];
                for (i, t) in ts.iter().enumerate() {
                    let med = others_median(&vals, i);
                    let share = (med > 0.0).then(|| vals[i] / med);
                    bars[i] = Some(Bar {
                        value: vals[i],
                        tip: format!(
                            "{host} {}: {} {}, mean {}, p99 {}",
                            t.path,
                            number(vals[i]),
                            metric.unit(),
                            micros(t.lat_us.mean),
                            micros(t.lat_us.p99)
                        ),
                        label: share
                            .filter(|s| *s < SLOW && ts.len() >= 2)
                            .map(|s| format!("{:.0}%", s * 100.0)),
                    });
                }
                Category {
                    name: host.to_string(),
                    bars,
                }
            })
            .collect();
        if cats.is_empty() || width < 2 {
            continue;
        }
        let title = format!("{} per target: {}", metric.unit(), run.name);
        let y = Axis::linear(metric.unit(), Fmt::Number);
        out.push(Figure {
            kind: "targets",
            svg: bar_chart("targets", &title, &y, &series, &cats, svg::FULL),
            caption: "One group per host, one bar per target in the order given (hover for its \
                      path); a bar labelled with a percentage is that target's share of the \
                      median of its host's other targets, a slow target."
                .into(),
            title,
        });
    }
    out
}

/// The "Per target" section, for multi-host results where some host drove
/// two or more targets.
pub fn section(sources: &[Source]) -> Option<Section> {
    super::hosts::breakdown(
        Section::new(
            "targets",
            "Per target",
            "Each target's own figures on its host; each host's figures above are their exact merge.",
        ),
        "Per target",
        sources,
        has_targets,
        table,
        figures,
    )
}

/// For `report --format csv`: each target's figures as a result of their
/// own (the merged run with the target's totals in place), labelled
/// `host:path`, so they take summary.csv's columns.
pub fn csv_docs(doc: &ResultDoc) -> Vec<(String, ResultDoc)> {
    if !has_targets(doc) {
        return Vec::new();
    }
    let mut base = doc.clone();
    base.cluster = None;
    base.runs.clear();
    let mut out: Vec<(String, ResultDoc)> = Vec::new();
    for (run, hosts) in per_run(doc) {
        for (host, ts) in hosts {
            for t in ts {
                let label = format!("{host}:{}", t.path);
                let mut r = run.clone();
                r.totals.read = t.read.clone();
                r.totals.write = t.write.clone();
                for p in &mut r.phases {
                    if p.name == crate::result::PhaseName::Measure {
                        p.duration_s = t.duration_s;
                    }
                }
                match out.iter_mut().find(|(l, _)| *l == label) {
                    Some((_, d)) => d.runs.push(r),
                    None => {
                        let mut d = base.clone();
                        d.runs = vec![r];
                        out.push((label, d));
                    }
                }
            }
        }
    }
    out
}

//! The per-target breakdown of a result over several targets (a local
//! target list or hosts' targets, `runs[].targets[]`): the one per-target
//! table and a bar chart per run, so one slow volume among its siblings
//! stands out (its bar carries its share of their median).

use super::super::charts::Figure;
use super::super::page::Section;
use super::super::svg::{self, Axis, Bar, Category, Fmt, bar_chart};
use super::super::{Metric, Source};
use crate::output::fmt::{micros, number};
use crate::output::table::Table;
use crate::output::target_table::{self, TITLE};
use crate::result::diagnosis::hosts::{SLOW, others_median};
use crate::result::targets::{TargetRun, by_host};
use crate::result::{ResultDoc, RunResult};

/// Per run kept in the report: its (host, that host's targets) groups.
type PerRun<'a> = Vec<(&'a RunResult, Vec<(Option<&'a str>, Vec<&'a TargetRun>)>)>;

fn runs(doc: &ResultDoc) -> Vec<&RunResult> {
    doc.runs
        .iter()
        .filter(|r| !r.workload.discard && r.meta_ops.is_empty())
        .collect()
}

fn per_run(doc: &ResultDoc) -> PerRun<'_> {
    runs(doc).into_iter().map(|r| (r, by_host(r))).collect()
}

/// Whether a result has anything its totals do not already say: some
/// client drove two or more targets.
pub(crate) fn has_targets(doc: &ResultDoc) -> bool {
    runs(doc).iter().any(|r| target_table::has_targets(r))
}

/// The per-target table (`output::target_table`).
pub(crate) fn table(doc: &ResultDoc) -> Table {
    target_table::per_target(&runs(doc)).unwrap_or_else(|| Table::new(TITLE, &[], 0))
}

/// Bar charts, one per run: a bar per target (grouped by host) of the
/// run's headline figure; a target below the slow share of its siblings'
/// median carries that share as a label.
pub(crate) fn figures(doc: &ResultDoc) -> Vec<Figure> {
    let mut out = Vec::new();
    for (run, hosts) in per_run(doc) {
        let metric = Metric::of(run);
        let value = |t: &TargetRun| match metric {
            Metric::Iops => t.total_iops(),
            Metric::MibS => t.total_mib_s(),
        };
        let width = hosts.iter().map(|(_, ts)| ts.len()).max().unwrap_or(0);
        let local = hosts.iter().all(|(h, _)| h.is_none());
        let series: Vec<(String, usize)> = (0..width)
            .map(|i| (format!("target {}", i + 1), i))
            .collect();
        let cats: Vec<Category> = hosts
            .iter()
            .map(|(host, ts)| {
                let host = host.unwrap_or("local");
                let vals: Vec<f64> = ts.iter().map(|t| value(t)).collect();
                let mut bars: Vec<Option<Bar>> = vec![None; width];
                for (i, t) in ts.iter().enumerate() {
                    let med = others_median(&vals, i);
                    let share = (med > 0.0).then(|| vals[i] / med);
                    bars[i] = Some(Bar {
                        value: vals[i],
                        tip: format!(
                            "{}{}: {} {}, mean {}, p99 {}",
                            if local {
                                String::new()
                            } else {
                                format!("{host} ")
                            },
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
            caption: "One group per host (one for a local run), one bar per target in the order \
                      given (hover for its path); a bar labelled with a percentage is that \
                      target's share of the median of its siblings, a slow target."
                .into(),
            title,
        });
    }
    out
}

/// The "Per target" section, for results where some client drove two or
/// more targets.
pub(crate) fn section(sources: &[Source]) -> Option<Section> {
    super::hosts::breakdown(
        Section::new(
            "targets",
            "Per target",
            "Each target's own figures (on its host, in a multi-host run); the figures above are their exact merge.",
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
/// `host:path` (`path` in a local run), so they take summary.csv's columns.
pub(crate) fn csv_docs(doc: &ResultDoc) -> Vec<(String, ResultDoc)> {
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
                let label = match host {
                    Some(h) => format!("{h}:{}", t.path),
                    None => t.path.clone(),
                };
                let mut r = run.clone();
                r.targets.clear();
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

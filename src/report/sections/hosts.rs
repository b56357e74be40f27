//! The per-host breakdown of a multi-host result: each host's own figures
//! for each run, a table and bar charts, so one slow client stands out
//! (its bars are labelled with their share of the other hosts' median).

use super::super::charts::Figure;
use super::super::page::{Group, Section};
use super::super::svg::{self, Axis, Bar, Category, Fmt, bar_chart};
use super::super::{Metric, Source};
use crate::output::fmt::{mib_s, micros, number};
use crate::output::table::Table;
use crate::result::ResultDoc;
use crate::result::diagnosis::hosts::{SLOW, others_median};
use crate::result::merge::HostStatus;

/// One run as each host did it: (host name, its result), hosts that did
/// not finish the run left out.
fn per_run(doc: &ResultDoc) -> Vec<(&str, Vec<(&str, &crate::result::RunResult)>)> {
    let Some(c) = &doc.cluster else {
        return Vec::new();
    };
    doc.runs
        .iter()
        .filter(|r| !r.workload.discard)
        .map(|run| {
            let hosts = c
                .hosts
                .iter()
                .filter(|h| h.status == HostStatus::Ok)
                .filter_map(|h| {
                    h.runs
                        .iter()
                        .find(|r| r.name == run.name)
                        .map(|r| (h.name.as_str(), r))
                })
                .collect();
            (run.name.as_str(), hosts)
        })
        .collect()
}

fn host_names(doc: &ResultDoc) -> Vec<&str> {
    doc.cluster
        .iter()
        .flat_map(|c| c.hosts.iter().map(|h| h.name.as_str()))
        .collect()
}

/// Each host's IOPS, MiB/s, mean and p99 per run, with its share of the
/// other hosts' median IOPS.
pub fn table(doc: &ResultDoc) -> Table {
    let mut t = Table::new(
        "Per host",
        &["run", "host", "IOPS", "MiB/s", "mean", "p99", "% of others"],
        2,
    );
    for (run, hosts) in per_run(doc) {
        let iops: Vec<f64> = hosts.iter().map(|(_, r)| r.total_iops()).collect();
        for (i, (host, r)) in hosts.iter().enumerate() {
            let l = r.latency();
            let med = others_median(&iops, i);
            let share = if hosts.len() >= 2 && med > 0.0 {
                format!("{:.0}%", iops[i] / med * 100.0)
            } else {
                "-".into()
            };
            t.rows.push(vec![
                run.to_string(),
                host.to_string(),
                number(r.total_iops()),
                mib_s(r.total_mib_s()),
                micros(l.mean),
                micros(l.p99),
                share,
            ]);
        }
    }
    if let Some(c) = &doc.cluster {
        for h in c.hosts.iter().filter(|h| h.status == HostStatus::Failed) {
            t.notes.push(format!(
                "{} failed: {}",
                h.name,
                h.error.as_deref().unwrap_or("no reason given")
            ));
        }
    }
    t
}

/// Bar charts: per run, one bar per host, of the run's headline figure
/// (IOPS or MiB/s), then of p99 latency. Hosts below the slow-host share
/// of the others' median carry that share as a label.
pub fn figures(doc: &ResultDoc) -> Vec<Figure> {
    let runs = per_run(doc);
    let names = host_names(doc);
    let series: Vec<(String, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), i))
        .collect();
    let slot = |host: &str| names.iter().position(|n| *n == host);
    let mut out = Vec::new();
    for metric in [Metric::Iops, Metric::MibS] {
        let cats: Vec<Category> = runs
            .iter()
            .filter(|(_, hosts)| hosts.first().is_some_and(|(_, r)| Metric::of(r) == metric))
            .map(|(run, hosts)| {
                let vals: Vec<f64> = hosts
                    .iter()
                    .map(|(_, r)| match metric {
                        Metric::Iops => r.total_iops(),
                        Metric::MibS => r.total_mib_s(),
                    })
                    .collect();
                let mut bars: Vec<Option<Bar>> = vec![None; names.len()];
                for (i, (host, r)) in hosts.iter().enumerate() {
                    let med = others_median(&vals, i);
                    let share = (med > 0.0).then(|| vals[i] / med);
                    let Some(k) = slot(host) else { continue };
                    bars[k] = Some(Bar {
                        value: vals[i],
                        tip: format!(
                            "{host} {run}: {} {}, mean {}, p99 {}",
                            number(vals[i]),
                            metric.unit(),
                            micros(r.latency().mean),
                            micros(r.latency().p99)
                        ),
                        label: share
                            .filter(|s| *s < SLOW && hosts.len() >= 2)
                            .map(|s| format!("{:.0}%", s * 100.0)),
                    });
                }
                Category {
                    name: run.to_string(),
                    bars,
                }
            })
            .collect();
        if cats.is_empty() {
            continue;
        }
        let title = format!("{} per host", metric.unit());
        let y = Axis::linear(metric.unit(), Fmt::Number);
        out.push(Figure {
            kind: "hosts",
            svg: bar_chart("hosts", &title, &y, &series, &cats, svg::FULL),
            caption: "One bar per host in each run; a bar labelled with a percentage is that \
                      host's share of the other hosts' median, a slow host."
                .into(),
            title,
        });
    }
    let cats: Vec<Category> = runs
        .iter()
        .map(|(run, hosts)| {
            let mut bars: Vec<Option<Bar>> = vec![None; names.len()];
            for (host, r) in hosts {
                let l = r.latency();
                if let Some(k) = slot(host) {
                    bars[k] = Some(Bar {
                        value: l.p99,
                        tip: format!(
                            "{host} {run}: p99 {}, mean {}",
                            micros(l.p99),
                            micros(l.mean)
                        ),
                        label: None,
                    });
                }
            }
            Category {
                name: run.to_string(),
                bars,
            }
        })
        .collect();
    if !cats.is_empty() {
        let title = "p99 latency per host".to_string();
        let y = Axis::linear("p99 latency", Fmt::Micros);
        out.push(Figure {
            kind: "hosts-latency",
            svg: bar_chart("hosts-latency", &title, &y, &series, &cats, svg::FULL),
            caption: "Each host's own p99, from its merged histograms.".into(),
            title,
        });
    }
    out
}

/// The "Per host" section, for results of two or more hosts.
pub fn section(sources: &[Source]) -> Option<Section> {
    breakdown(
        Section::new(
            "hosts",
            "Per host",
            "Each client's own figures; the totals above are their exact merge.",
        ),
        "Per host",
        sources,
        |doc| host_names(doc).len() >= 2,
        table,
        figures,
    )
}

/// A breakdown section (per host, per target): for each source that has
/// one, its table and charts, headed by the source's label when the report
/// holds several results.
pub(super) fn breakdown(
    mut sec: Section,
    title: &str,
    sources: &[Source],
    has: impl Fn(&ResultDoc) -> bool,
    table: impl Fn(&ResultDoc) -> Table,
    figures: impl Fn(&ResultDoc) -> Vec<Figure>,
) -> Option<Section> {
    let several = sources.len() > 1;
    for s in sources.iter().filter(|s| has(&s.doc)) {
        let mut t = table(&s.doc);
        if several {
            t.title = format!("{title}: {}", s.label);
        }
        sec.groups.push(Group {
            heading: if several {
                s.label.clone()
            } else {
                String::new()
            },
            small: false,
            figures: figures(&s.doc),
        });
        sec.tables.push(t);
    }
    (!sec.tables.is_empty()).then_some(sec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;
    use crate::report::snapshot::{one, snapshot};

    #[test]
    fn a_row_per_run_and_host_with_its_share_of_the_others() {
        let d = fixtures::multi_host(&[10_000.0, 10_400.0, 5_000.0]);
        let t = table(&d);
        assert_eq!(t.rows.len(), 6, "two runs x three hosts");
        let slow = t
            .rows
            .iter()
            .find(|r| r[0] == "8k-random-read" && r[1] == "client-3")
            .unwrap();
        assert_eq!(slow[2], "5,000");
        // Median of the other two: 10,200.
        assert_eq!(slow[6], "49%");
    }

    #[test]
    fn the_slow_host_bar_is_labelled_and_the_others_are_not() {
        let d = fixtures::multi_host(&[10_000.0, 10_400.0, 5_000.0]);
        let figs = figures(&d);
        let kinds: Vec<&str> = figs.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, ["hosts", "hosts", "hosts-latency"]);
        assert_eq!(figs[0].svg.matches("class=\"bar\"").count(), 3);
        assert_eq!(figs[0].svg.matches("class=\"barlabel\"").count(), 1);
        assert!(figs[0].svg.contains(">49%<"));
        snapshot("hosts.svg", &figs[0].svg);
        let healthy = figures(&fixtures::multi_host(&[10_000.0, 10_400.0, 9_000.0]));
        assert!(!healthy[0].svg.contains("barlabel"));
    }

    #[test]
    fn only_multi_host_results_get_the_section() {
        assert!(section(&one(fixtures::six_patterns(), "/r/six")).is_none());
        let s = one(fixtures::multi_host(&[1_000.0, 1_000.0]), "/r/mh");
        let sec = section(&s).unwrap();
        assert_eq!(sec.tables.len(), 1);
        assert_eq!(sec.groups[0].figures.len(), 3);
    }
}

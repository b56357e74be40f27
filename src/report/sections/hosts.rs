//! The per-host breakdown of a multi-host result: each host's own figures
//! for each run, a table and bar charts, so one slow client stands out
//! (its bars are labelled with their share of the other hosts' median).

use super::super::charts::Figure;
use super::super::page::{Group, Section};
use super::super::svg::{self, Axis, Bar, Category, Fmt, bar_chart};
use super::super::{Metric, Source};
use crate::output::fmt::{micros, number};
use crate::output::table::Table;
use crate::output::target_table::{self, MANY_HOSTS, SPREAD};
use crate::result::{ResultDoc, RunResult};

/// A run's name and each host's result of it.
type HostRuns<'a> = (&'a str, Vec<(&'a str, &'a RunResult)>);
use crate::result::diagnosis::hosts::{SLOW, others_median};

/// One run as each host did it: (host name, its result), hosts that did
/// not finish the run left out.
fn per_run(doc: &ResultDoc) -> Vec<HostRuns<'_>> {
    target_table::host_runs(doc)
}

fn host_names(doc: &ResultDoc) -> Vec<&str> {
    doc.cluster
        .iter()
        .flat_map(|c| c.hosts.iter().map(|h| h.name.as_str()))
        .collect()
}

/// Each host's IOPS, MiB/s, mean and p99 per run, with its share of the
/// other hosts' median IOPS (the terminal's table: past a few dozen hosts,
/// their spread and the slowest named).
pub(crate) fn table(doc: &ResultDoc) -> Table {
    target_table::per_host(doc).unwrap_or_else(|| {
        Table::new(
            "Per host",
            &["run", "host", "IOPS", "MiB/s", "mean", "p99", "% of others"],
            2,
        )
    })
}

/// The runs whose headline figure is `metric` (IOPS or MiB/s), each with
/// its hosts and their values of that figure, in the hosts' order.
fn headline<'a>(
    runs: &'a [HostRuns<'a>],
    metric: Metric,
) -> impl Iterator<Item = (&'a str, &'a [(&'a str, &'a RunResult)], Vec<f64>)> {
    runs.iter()
        .filter(move |(_, hosts)| hosts.first().is_some_and(|(_, r)| Metric::of(r) == metric))
        .map(move |(run, hosts)| {
            let vals = hosts
                .iter()
                .map(|(_, r)| match metric {
                    Metric::Iops => r.total_iops(),
                    Metric::MibS => r.total_mib_s(),
                })
                .collect();
            (*run, hosts.as_slice(), vals)
        })
}

/// Past `MANY_HOSTS`, a bar per host is a comb no one can read: per run,
/// five bars for the hosts' spread (min, p5, median, p95, max) of the
/// headline figure and of p99; the table names the slowest.
fn spread_figures(doc: &ResultDoc) -> Vec<Figure> {
    let runs = per_run(doc);
    let series: Vec<(String, usize)> = SPREAD
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.to_string(), i))
        .collect();
    let spread = |run: &str, vals: &[f64], show: &dyn Fn(f64) -> String| Category {
        name: run.to_string(),
        bars: SPREAD
            .iter()
            .map(|(label, q)| {
                let v = target_table::quantile(vals, *q);
                Some(Bar {
                    value: v,
                    tip: format!("{run}: {label} of {} hosts {}", vals.len(), show(v)),
                    label: None,
                })
            })
            .collect(),
    };
    let mut out = Vec::new();
    for metric in [Metric::Iops, Metric::MibS] {
        let cats: Vec<Category> = headline(&runs, metric)
            .map(|(run, _, vals)| {
                spread(run, &vals, &|v| format!("{} {}", number(v), metric.unit()))
            })
            .collect();
        if cats.is_empty() {
            continue;
        }
        let title = format!("{} per host: the spread", metric.unit());
        let y = Axis::linear(metric.unit(), Fmt::Number);
        out.push(Figure {
            kind: "hosts",
            svg: bar_chart("hosts", &title, &y, &series, &cats, svg::FULL),
            caption: "Per run, the hosts' minimum, 5th percentile, median, 95th percentile and \
                      maximum; the table below names the slowest hosts."
                .into(),
            title,
        });
    }
    let cats: Vec<Category> = runs
        .iter()
        .map(|(run, hosts)| {
            let vals: Vec<f64> = hosts.iter().map(|(_, r)| r.latency().p99).collect();
            spread(run, &vals, &|v| format!("p99 {}", micros(v)))
        })
        .collect();
    if !cats.is_empty() {
        let title = "p99 latency per host: the spread".to_string();
        let y = Axis::linear("p99 latency", Fmt::Micros);
        out.push(Figure {
            kind: "hosts-latency",
            svg: bar_chart("hosts-latency", &title, &y, &series, &cats, svg::FULL),
            caption: "Per run, the spread of the hosts' own p99s, from their merged histograms."
                .into(),
            title,
        });
    }
    out
}

/// Bar charts: per run, one bar per host, of the run's headline figure
/// (IOPS or MiB/s), then of p99 latency. Hosts below the slow-host share
/// of the others' median carry that share as a label.
pub(crate) fn figures(doc: &ResultDoc) -> Vec<Figure> {
    let names = host_names(doc);
    if names.len() > MANY_HOSTS {
        return spread_figures(doc);
    }
    let runs = per_run(doc);
    let series: Vec<(String, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), i))
        .collect();
    let slot = |host: &str| names.iter().position(|n| *n == host);
    let mut out = Vec::new();
    for metric in [Metric::Iops, Metric::MibS] {
        let cats: Vec<Category> = headline(&runs, metric)
            .map(|(run, hosts, vals)| {
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
pub(crate) fn section(sources: &[Source]) -> Option<Section> {
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
    fn a_thousand_hosts_show_their_spread_and_the_slowest_not_a_thousand_rows() {
        // Hosts at 10,000 IOPS and up, client-1000 at 4,000, client-7 at 6,000.
        let mut iops: Vec<f64> = (0..1000).map(|i| 10_000.0 + i as f64).collect();
        iops[999] = 4_000.0;
        iops[6] = 6_000.0;
        let d = fixtures::multi_host(&iops);
        let t = table(&d);
        let per_run = SPREAD.len() + target_table::SLOWEST;
        assert_eq!(t.rows.len(), 2 * per_run, "two runs: spread + slowest");
        let rr: Vec<&Vec<String>> = t.rows.iter().filter(|r| r[0] == "8k-random-read").collect();
        assert_eq!(rr[0][1], "min of 1000");
        assert_eq!(rr[0][2], "4,000");
        assert_eq!(rr[2][1], "median of 1000");
        assert_eq!(rr[4][1], "max of 1000");
        assert_eq!(rr[4][2], "10,998");
        // The slowest first, by name, with its share of the others' median.
        assert_eq!(rr[5][1], "slow: client-1000");
        assert_eq!(rr[6][1], "slow: client-7");
        assert_eq!(rr[7][1], "slow: client-1");
        assert_eq!(rr[5][6], "38%");
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("1000 hosts") && n.contains("result.json"))
        );
        // The terminal gets the same table, not a thousand lines.
        assert!(crate::output::summary(&d).lines().count() < 100);
        // Charts: five spread bars per run, not a thousand.
        let figs = figures(&d);
        assert_eq!(figs.len(), 3);
        assert_eq!(figs[0].svg.matches("class=\"bar\"").count(), 5);
        assert_eq!(figs[2].svg.matches("class=\"bar\"").count(), 10);
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

//! Aggregate throughput against host count, for runs that differ only in
//! how many hosts drove them (a `--host-counts` sweep, or results each on
//! its own number of hosts in `compare`): a table and a chart with the
//! per-host share and the line perfect scaling would have drawn.

use super::super::charts::Figure;
use super::super::page::Section;
use super::super::svg::{self, Axis, Fmt, Series, line_chart};
use super::super::{Metric, Source};
use crate::output::fmt::{mib_s, number};
use crate::output::table::Table;
use crate::result::ResultDoc;
use crate::result::diagnosis::scaling::{HostPoint, series};

/// One row per point: the hosts, the aggregate IOPS and MiB/s, each host's
/// share, and the aggregate as a multiple of the first point's (beside the
/// multiple of hosts).
pub(crate) fn table_of(all: &[Vec<HostPoint>]) -> Table {
    let mut t = Table::new(
        "Host counts",
        &[
            "run",
            "hosts",
            "IOPS",
            "MiB/s",
            "IOPS per host",
            "MiB/s per host",
            "x first",
            "x hosts",
        ],
        2,
    );
    for points in all {
        let Some(first) = points.first() else {
            continue;
        };
        let base = headline(first);
        for p in points {
            let n = f64::from(p.hosts.max(1));
            let v = headline(p);
            t.rows.push(vec![
                p.run.name.clone(),
                p.hosts.to_string(),
                number(p.run.total_iops()),
                mib_s(p.run.total_mib_s()),
                number(p.run.total_iops() / n),
                mib_s(p.run.total_mib_s() / n),
                if base > 0.0 {
                    format!("{:.2}", v / base)
                } else {
                    "-".into()
                },
                format!("{:.2}", n / f64::from(first.hosts.max(1))),
            ]);
        }
    }
    t.notes.push(
        "x first: the aggregate as a multiple of the fewest hosts' (IOPS below 32 KiB \
         transfers, MiB/s above); x hosts: the multiple perfect scaling would give."
            .into(),
    );
    t
}

fn headline(p: &HostPoint) -> f64 {
    match Metric::of(p.run) {
        Metric::Iops => p.run.total_iops(),
        Metric::MibS => p.run.total_mib_s(),
    }
}

/// The table of one result's host-count sweeps.
pub(crate) fn table(doc: &ResultDoc) -> Table {
    table_of(&series(doc))
}

/// Per series: the aggregate against host count, the mean per host, and
/// the first point scaled by the hosts (dashed: perfect scaling).
pub(crate) fn figures_of(all: &[Vec<HostPoint>]) -> Vec<Figure> {
    let mut out = Vec::new();
    for points in all {
        let (Some(first), Some(last)) = (points.first(), points.last()) else {
            continue;
        };
        let metric = Metric::of(first.run);
        let unit = metric.unit();
        let mut agg = Series::new(format!("{unit}, all hosts"), 0);
        let mut each = Series::new(format!("{unit} per host"), 1);
        let mut ideal = Series::new("perfect scaling", 0);
        ideal.dashed = true;
        ideal.marks = false;
        let base = headline(first) / f64::from(first.hosts.max(1));
        for p in points {
            let n = f64::from(p.hosts.max(1));
            let v = headline(p);
            agg.push(
                n,
                v,
                format!("{}: {} {unit} on {} hosts", p.run.name, number(v), p.hosts),
            );
            each.push(
                n,
                v / n,
                format!("{}: {} {unit} per host", p.run.name, number(v / n)),
            );
            ideal.push(n, base * n, format!("{} {unit}", number(base * n)));
        }
        let title = format!("{unit} against host count: {}", last.run.name);
        let x = Axis::linear("hosts", Fmt::Number);
        let y = Axis::linear(unit, Fmt::Number);
        out.push(Figure {
            kind: "host-counts",
            svg: line_chart(
                "host-counts",
                &title,
                &x,
                &y,
                &[ideal, agg, each],
                &[],
                svg::FULL,
            ),
            caption: "The aggregate against the number of hosts, each host's share below it, \
                      and dashed what perfect scaling from the fewest hosts would give: a flat \
                      aggregate is a limit the hosts share."
                .into(),
            title,
        });
    }
    out
}

pub(crate) fn figures(doc: &ResultDoc) -> Vec<Figure> {
    figures_of(&series(doc))
}

/// The "Host counts" section, for results with a host-count sweep.
pub(crate) fn section(sources: &[Source]) -> Option<Section> {
    super::hosts::breakdown(
        Section::new(
            "host-counts",
            "Host counts",
            "The same workload on more and more hosts: where the aggregate stops growing, \
             something the hosts share is the limit.",
        ),
        "Host counts",
        sources,
        |doc| !series(doc).is_empty(),
        table,
        figures,
    )
}

/// `compare` over results that differ only in host count (each one run
/// on its hosts): the scaling table and chart, with the flat-with-hosts
/// finding over them in the table's notes.
pub(crate) fn compare_section(sources: &[Source]) -> Option<Section> {
    use crate::result::diagnosis::scaling::{across, judge};
    let docs: Vec<&ResultDoc> = sources.iter().map(|s| &s.doc).collect();
    let all = across(&docs);
    if all.is_empty() {
        return None;
    }
    let mut t = table_of(&all);
    t.notes
        .extend(all.iter().filter_map(|s| judge(s)).map(|f| f.message));
    let mut sec = Section::new(
        "host-counts",
        "Host counts",
        "Results that differ only in how many hosts ran them, in host-count order.",
    )
    .figures(figures_of(&all));
    sec.tables.push(t);
    Some(sec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    #[test]
    fn a_row_per_point_with_the_per_host_share_and_the_scaling() {
        let doc = fixtures::host_sweep(&[&[1600.0], &[800.0, 800.0]], None);
        let t = table(&doc);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][1], "1");
        assert_eq!(t.rows[1][1], "2");
        // Flat: the same aggregate, half of it per host, 2x the hosts.
        assert_eq!(t.rows[1][6], "1.00");
        assert_eq!(t.rows[1][7], "2.00");
        assert_eq!(t.rows[1][3], t.rows[0][3]);
        assert_eq!(figures(&doc).len(), 1);
    }

    #[test]
    fn results_without_a_host_count_sweep_get_no_section() {
        let doc = fixtures::multi_host(&[1000.0, 1000.0]);
        assert!(series(&doc).is_empty());
        assert!(figures(&doc).is_empty());
    }
}

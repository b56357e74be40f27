//! IOPS and MiB/s against transfer size, for runs that differ only in
//! block size: the papers' chart for telling an IOPS cap (IOPS flat, MiB/s
//! climbing) from a bandwidth cap (MiB/s flat, IOPS falling). The limits
//! known for the result are drawn across it.

use std::collections::BTreeMap;

use super::super::svg::{self, Axis, Fmt, Series, line_chart_with_refs};
use super::super::{Item, Source, concurrency};
use super::Figure;
use super::limit_lines::{Dim, limits};
use crate::output::fmt::{micros, number};

/// Fewer sizes than this draw no line worth reading.
const MIN_SIZES: usize = 3;

/// Runs of one source and one workload but for their (single) block size,
/// ordered by it: indices into `items`.
pub(crate) fn series(items: &[Item]) -> Vec<Vec<usize>> {
    let mut groups: BTreeMap<(usize, String), Vec<usize>> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        let w = &it.run.workload;
        if w.single_bs().is_none() || w.meta.is_some() || it.run.rate.is_some() {
            continue;
        }
        let mut k = w.clone();
        k.name.clear();
        k.bs.clear();
        let key = serde_json::to_string(&k).unwrap_or_default();
        groups.entry((it.source, key)).or_default().push(i);
    }
    groups
        .into_values()
        .filter_map(|mut g| {
            g.sort_by_key(|&i| items[i].run.workload.bs[0].bytes);
            g.dedup_by_key(|i| items[*i].run.workload.bs[0].bytes);
            (g.len() >= MIN_SIZES).then_some(g)
        })
        .collect()
}

/// An IOPS chart and a MiB/s chart for one series of block sizes, the
/// x axis in powers of two.
pub(crate) fn figures(group: &[usize], items: &[Item], sources: &[Source]) -> Vec<Figure> {
    let Some(first) = group.first().map(|&i| items[i]) else {
        return Vec::new();
    };
    let doc = &sources[first.source].doc;
    let w = &first.run.workload;
    let what = match w.read_pct {
        100 | 0 => format!("{}, {}", w.rw.name(), concurrency(first.run)),
        p => format!("{} {p}% read, {}", w.rw.name(), concurrency(first.run)),
    };
    let mut out = Vec::new();
    for (dim, unit) in [(Dim::Iops, "IOPS"), (Dim::MibS, "MiB/s")] {
        let mut s = Series::new(unit, if dim == Dim::Iops { 0 } else { 2 });
        for &i in group {
            let run = items[i].run;
            let bytes = run.workload.bs[0].bytes.max(1);
            let v = match dim {
                Dim::Iops => run.total_iops(),
                Dim::MibS => run.total_mib_s(),
            };
            s.push(
                (bytes as f64).log2(),
                v,
                format!(
                    "{}: {} {unit} at {}, mean {}",
                    run.name,
                    number(v),
                    run.workload.bs_label(),
                    micros(run.mean_latency_us())
                ),
            );
        }
        let refs = limits(doc, dim);
        let mut x = Axis::linear("transfer size", Fmt::Log2Size);
        x.zero = false;
        let y = Axis::linear(unit, Fmt::Number);
        let title = format!("{unit} by transfer size: {what}");
        out.push(Figure {
            kind: "transfer",
            svg: line_chart_with_refs(
                "transfer",
                &title,
                &x,
                &y,
                std::slice::from_ref(&s),
                &[],
                &refs,
                svg::FULL,
            ),
            caption: match dim {
                Dim::Iops => "IOPS should fall as transfers grow; flat IOPS is an IOPS cap.",
                Dim::MibS => "MiB/s should climb as transfers grow; flat MiB/s is a bandwidth cap.",
            }
            .into(),
            title,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::snapshot::{one, snapshot};
    use crate::report::{fixtures, items};
    use crate::result::expect::Expectation;

    #[test]
    fn runs_differing_only_in_block_size_form_a_series() {
        let s = one(
            fixtures::transfer_sizes([500.0, 498.0, 503.0, 499.0]),
            "/r/t",
        );
        let all = items(&s);
        assert_eq!(series(&all), vec![vec![0, 1, 2, 3]]);
        // Six patterns differ in more than block size; a thread curve in
        // concurrency: neither is a transfer-size series.
        for d in [fixtures::six_patterns(), fixtures::thread_curve()] {
            let s = one(d, "/r/x");
            assert!(series(&items(&s)).is_empty());
        }
    }

    #[test]
    fn the_expected_limit_is_drawn_across_the_iops_chart() {
        let mut d = fixtures::transfer_sizes([500.0, 498.0, 503.0, 499.0]);
        d.expect = Some(Expectation {
            given: "iops=500".into(),
            iops: Some(500.0),
            ..Expectation::default()
        });
        let s = one(d, "/r/t");
        let all = items(&s);
        let figs = figures(&series(&all)[0], &all, &s);
        assert_eq!(figs.len(), 2);
        assert_eq!(figs[0].svg.matches("class=\"mark\"").count(), 4);
        assert!(figs[0].svg.contains("class=\"limit\" data-value=\"500\""));
        assert!(figs[0].svg.contains("limit 500 IOPS (--expect)"));
        assert!(
            !figs[1].svg.contains("class=\"limit\""),
            "no MiB/s limit given"
        );
        for size in [">4KiB<", ">8KiB<", ">16KiB<", ">64KiB<"] {
            assert!(figs[0].svg.contains(size), "{size}");
        }
        snapshot("transfer.svg", &figs[0].svg);
    }
}

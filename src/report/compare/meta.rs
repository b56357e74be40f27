//! `compare` of metadata runs: for each operation of each matched run
//! (create, open, stat, read, delete...), its ops/s and mean and p99
//! latency in every result, with the ratio and change to the first: the
//! with/without layout of the Azure Files metadata-caching study ("-30%
//! latency, +60% IOPS"). Block-I/O matches are left to `compare`.

use super::super::{Item, Source};
use super::model::{Comparison, ratio};
use crate::output::fmt::{micros, number, trim};
use crate::output::table::Table;
use crate::result::meta::MetaOpResult;
use crate::spec::meta::{ALL_OPS, MetaOp};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Figure {
    OpsPerS,
    Mean,
    P99,
}

impl Figure {
    const ALL: [Figure; 3] = [Figure::OpsPerS, Figure::Mean, Figure::P99];

    fn label(self) -> &'static str {
        match self {
            Figure::OpsPerS => "ops/s",
            Figure::Mean => "mean latency",
            Figure::P99 => "p99 latency",
        }
    }

    fn of(self, o: &MetaOpResult) -> Option<f64> {
        let t = &o.totals;
        (t.ops > 0).then_some(match self {
            Figure::OpsPerS => t.iops,
            Figure::Mean => t.lat_us.mean,
            Figure::P99 => t.lat_us.p99,
        })
    }

    fn show(self, v: f64) -> String {
        match self {
            Figure::OpsPerS => number(v),
            Figure::Mean | Figure::P99 => micros(v),
        }
    }
}

/// "+60%", "-30%": the change from the first result, as the study quotes it.
fn change(v: Option<f64>, base: Option<f64>) -> String {
    match (v, base) {
        (Some(v), Some(b)) if b > 0.0 => {
            let pct = (v / b - 1.0) * 100.0;
            format!("{}{}%", if pct >= 0.0 { "+" } else { "" }, trim(pct, 0))
        }
        _ => "-".into(),
    }
}

/// Per match that has operations: (run name, operation, each result's
/// entry for it).
fn op_rows<'a>(
    c: &Comparison,
    all: &[Item<'a>],
) -> Vec<(String, MetaOp, Vec<Option<&'a MetaOpResult>>)> {
    let mut out = Vec::new();
    for m in &c.matches {
        for op in ALL_OPS {
            let per: Vec<Option<&MetaOpResult>> = m
                .items
                .iter()
                .map(|i| i.and_then(|i| all[i].run.meta_ops.iter().find(|o| o.op == op)))
                .collect();
            if per.iter().any(Option::is_some) {
                out.push((m.name.clone(), op, per));
            }
        }
    }
    out
}

/// Run | op | figure | first | second | second/first | change | ...; None
/// when no matched run has operations.
pub(crate) fn table(c: &Comparison, sources: &[Source], all: &[Item]) -> Option<Table> {
    let rows = op_rows(c, all);
    if rows.is_empty() {
        return None;
    }
    let mut head = vec!["run".to_string(), "op".into(), "figure".into()];
    for (i, s) in sources.iter().enumerate() {
        head.push(s.label.clone());
        if i > 0 {
            head.push(format!("{} / {}", s.label, sources[0].label));
            head.push("change".into());
        }
    }
    let mut t = Table {
        title: "Per operation".into(),
        numeric: (0..head.len()).map(|i| i >= 3).collect(),
        about: String::new(),
        head,
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for (name, op, per) in rows {
        for f in Figure::ALL {
            let vals: Vec<Option<f64>> = per.iter().map(|o| o.and_then(|o| f.of(o))).collect();
            let mut row = vec![name.clone(), op.to_string(), f.label().to_string()];
            for (i, v) in vals.iter().enumerate() {
                row.push(v.map_or_else(|| "-".to_string(), |v| f.show(v)));
                if i > 0 {
                    row.push(ratio(*v, vals[0]));
                    row.push(change(*v, vals[0]));
                }
            }
            t.rows.push(row);
        }
    }
    t.notes.push(
        "ratios and changes are to the first result: ops/s above 1x and latency below 1x is better"
            .into(),
    );
    Some(t)
}

/// One line per operation and later result: "meta-create create: ops/s
/// 1,000 → 1,600 (+60%), mean latency 850 µs → 595 µs (-30%), p99 ...".
pub(crate) fn headlines(c: &Comparison, all: &[Item]) -> Vec<String> {
    let mut out = Vec::new();
    for (name, op, per) in op_rows(c, all) {
        let Some(base) = per.first().copied().flatten() else {
            continue;
        };
        for other in per.iter().skip(1).copied().flatten() {
            let parts: Vec<String> = Figure::ALL
                .iter()
                .map(|f| {
                    let (b, v) = (f.of(base), f.of(other));
                    let show = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |x| f.show(x));
                    format!("{} {} → {} ({})", f.label(), show(b), show(v), change(v, b))
                })
                .collect();
            out.push(format!("{name} {op}: {}", parts.join(", ")));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::report::compare::match_runs;
    use crate::report::fixtures::{self, RunFixture};
    use crate::report::{items, label_sources};
    use crate::spec::Pattern;
    use crate::stats::OpStats;

    /// A result with one metadata phase: `n` creates of `lat_us` each in 1 s.
    fn meta_doc(n: u64, lat_us: u64) -> crate::result::ResultDoc {
        let mut doc = fixtures::doc("vm", &[RunFixture::new("create", Pattern::Randrw, 0, 4096)]);
        let mut s = OpStats::new();
        for _ in 0..n {
            s.record(lat_us * 1000, 4096);
        }
        doc.runs[0].meta_ops = vec![MetaOpResult::new(MetaOp::Create, &s, 1.0, None)];
        doc
    }

    #[test]
    fn metadata_results_compare_per_operation_with_the_change() {
        // The study's shape: caching on gives +60% creates/s at -30% latency.
        let mut s = vec![
            Source {
                label: String::new(),
                path: "/r/nocache".into(),
                doc: meta_doc(1000, 850),
            },
            Source {
                label: String::new(),
                path: "/r/cache".into(),
                doc: meta_doc(1600, 595),
            },
        ];
        label_sources(&mut s);
        let all = items(&s);
        let c = match_runs(&s, &all);
        let t = table(&c, &s, &all).unwrap();
        assert_eq!(
            t.head[3..],
            ["nocache", "cache", "cache / nocache", "change"]
        );
        let row = |f: &str| t.rows.iter().find(|r| r[2] == f).unwrap()[1..].to_vec();
        assert_eq!(
            row("ops/s"),
            ["create", "ops/s", "1,000", "1,600", "1.60x", "+60%"]
        );
        let mean = row("mean latency");
        assert_eq!(mean[4..], ["0.700x", "-30%"], "{mean:?}");
        let lines = headlines(&c, &all);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("create create: ops/s 1,000 → 1,600 (+60%), mean latency"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("(-30%)"), "{}", lines[0]);
    }

    #[test]
    fn block_results_have_no_operation_table() {
        let mut s = vec![
            Source {
                label: String::new(),
                path: "/r/a".into(),
                doc: fixtures::six_patterns(),
            },
            Source {
                label: String::new(),
                path: "/r/b".into(),
                doc: fixtures::six_patterns(),
            },
        ];
        label_sources(&mut s);
        let all = items(&s);
        let c = match_runs(&s, &all);
        assert!(table(&c, &s, &all).is_none());
        assert!(headlines(&c, &all).is_empty());
    }
}

//! `report --format intervals-csv`: every interval of every run as a CSV
//! row per operation, from result.json alone, for spreadsheets and plots of
//! a run over time (vdbench's interval lines, elbencho's --livecsv after
//! the fact). A multi-host result adds each host's own intervals beside the
//! merged ones (`host` column; `all` for the merge), and a host lost in a
//! run its intervals before the loss (`NAME (lost)`: not in the totals).

use super::Source;
use crate::error::{Result, VbError};
use crate::result::meta::IntervalMetaOp;
use crate::result::{Interval, IntervalOp, Op, RunResult};
use crate::stats::live_hist::{bounds, index, sparse_percentile};

pub(crate) const HEADER: [&str; 15] = [
    "source",
    "run",
    "host",
    "t_s",
    "duration_s",
    "phase",
    "op",
    "iops",
    "mib_s",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p99_us",
    "lat_p99_9_us",
    "lat_max_us",
    "ops",
];

/// Every source's runs, merged rows first, then each host's.
pub(crate) fn intervals_csv(sources: &[Source]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| VbError::run(format!("cannot format CSV: {e}"));
    w.write_record(HEADER).map_err(err)?;
    for s in sources {
        for run in &s.doc.runs {
            rows(&mut w, &s.label, run, "all").map_err(err)?;
        }
        for h in s.doc.cluster.iter().flat_map(|c| &c.hosts) {
            for run in &h.runs {
                rows(&mut w, &s.label, run, &h.name).map_err(err)?;
            }
            // A lost host's intervals, shaped as the run they belong to.
            let lost = h.unfinished.as_ref().and_then(|u| {
                let run = s.doc.runs.iter().find(|r| r.name == u.run)?;
                Some((u, run))
            });
            if let Some((u, run)) = lost {
                let mut part = run.clone();
                part.intervals = u.intervals.clone();
                rows(&mut w, &s.label, &part, &format!("{} (lost)", h.name)).map_err(err)?;
            }
        }
    }
    crate::output::csv_text(w)
}

fn rows(
    w: &mut csv::Writer<Vec<u8>>,
    source: &str,
    run: &RunResult,
    host: &str,
) -> std::result::Result<(), csv::Error> {
    for iv in &run.intervals {
        if run.workload.meta.is_some() {
            for m in &iv.meta_ops {
                w.write_record(meta_record(source, &run.name, host, iv, m))?;
            }
            continue;
        }
        for (op, o) in [(Op::Read, &iv.read), (Op::Write, &iv.write)] {
            if run.does(op) {
                w.write_record(record(source, &run.name, host, iv, &op.to_string(), o))?;
            }
        }
    }
    Ok(())
}

fn record(
    source: &str,
    run: &str,
    host: &str,
    iv: &Interval,
    op: &str,
    o: &IntervalOp,
) -> Vec<String> {
    let f3 = |v: f64| format!("{v:.3}");
    // Percentiles come from the interval's own histogram; an interval
    // without one (results written before it was kept) leaves them empty
    // rather than invent them.
    let pct = |p: f64| sparse_percentile(&o.lat_hist, p).map_or(String::new(), |ns| f3(ns / 1e3));
    let max = o
        .lat_hist
        .last()
        .map_or(String::new(), |b| f3(bounds(index(b[0])).1 as f64 / 1e3));
    let ops: u64 = o.lat_hist.iter().map(|b| b[1]).sum();
    vec![
        source.to_string(),
        run.to_string(),
        host.to_string(),
        f3(iv.t_s),
        f3(iv.duration_s),
        iv.phase.to_string(),
        op.to_string(),
        f3(o.iops),
        f3(o.mib_s),
        f3(o.lat_us_mean),
        pct(50.0),
        pct(99.0),
        pct(99.9),
        max,
        if o.lat_hist.is_empty() {
            String::new()
        } else {
            ops.to_string()
        },
    ]
}

/// A metadata operation's interval: its rate and mean; no byte rate or
/// histogram is kept per interval for these.
fn meta_record(
    source: &str,
    run: &str,
    host: &str,
    iv: &Interval,
    m: &IntervalMetaOp,
) -> Vec<String> {
    let f3 = |v: f64| format!("{v:.3}");
    let mut r = vec![
        source.to_string(),
        run.to_string(),
        host.to_string(),
        f3(iv.t_s),
        f3(iv.duration_s),
        iv.phase.to_string(),
        m.op.to_string(),
        f3(m.iops),
        String::new(),
        f3(m.lat_us_mean),
    ];
    r.resize(HEADER.len(), String::new());
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{self, RunFixture};
    use crate::spec::Pattern;

    fn one(doc: crate::result::ResultDoc) -> Vec<Source> {
        vec![Source {
            label: "r".into(),
            path: "/r".into(),
            doc,
        }]
    }

    #[test]
    fn a_row_per_interval_and_op_with_percentiles_from_its_histogram() {
        let doc = fixtures::doc(
            "vm",
            &[RunFixture::new("mix", Pattern::Randrw, 70, 8 << 10).perf(1000.0, 500.0)],
        );
        let n = doc.runs[0].intervals.len();
        let text = intervals_csv(&one(doc)).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), HEADER);
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), 2 * n, "a read and a write row per interval");
        for row in &rows {
            let p50: f64 = row[10].parse().unwrap();
            let p99: f64 = row[11].parse().unwrap();
            let max: f64 = row[13].parse().unwrap();
            assert!(p50 > 0.0 && p50 <= p99 && p99 <= max, "{row:?}");
        }
    }

    #[test]
    fn each_host_of_a_multi_host_result_has_its_rows() {
        let doc = fixtures::multi_host(&[100.0, 200.0]);
        let hosts: Vec<String> = doc
            .cluster
            .as_ref()
            .unwrap()
            .hosts
            .iter()
            .map(|h| h.name.clone())
            .collect();
        let text = intervals_csv(&one(doc)).unwrap();
        for h in hosts.iter().map(String::as_str).chain(["all"]) {
            assert!(
                text.lines().any(|l| l.split(',').nth(2) == Some(h)),
                "no rows for {h}: {text}"
            );
        }
    }
}

//! `report --format latency-buckets`: how many I/Os of each run fell in
//! each latency band, IOMeter-style, as CSV, from the run's merged
//! histogram in result.json. The bands are a fixed 1-2-5 ladder from 10 us
//! to 10 s, so results from different runs and hosts line up column by
//! column; the histogram's own buckets (under 1% wide) fall in the band
//! holding their lower bound.

use super::Source;
use crate::error::{Result, VbError};
use crate::result::{Op, RunResult};
use crate::stats::BucketedHistogram;

/// Upper bounds of the bands in microseconds; a last band holds the rest.
pub(crate) const EDGES_US: [u64; 19] = [
    10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000,
    500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000,
];

pub(crate) const HEADER: [&str; 9] = [
    "source",
    "run",
    "op",
    "from_us",
    "to_us",
    "count",
    "percent",
    "cumulative_percent",
    "ops",
];

pub(crate) fn buckets_csv(sources: &[Source]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| VbError::run(format!("cannot format CSV: {e}"));
    w.write_record(HEADER).map_err(err)?;
    for s in sources {
        for run in &s.doc.runs {
            for (op, h) in [
                (Op::Read, &run.histograms.read),
                (Op::Write, &run.histograms.write),
            ] {
                if !run.does(op) || run.workload.meta.is_some() {
                    continue;
                }
                for row in rows(&s.label, run, op, h) {
                    w.write_record(row).map_err(err)?;
                }
            }
        }
    }
    crate::output::csv_text(w)
}

/// The counts per band: `EDGES_US.len() + 1` entries.
pub(crate) fn bands(h: &BucketedHistogram) -> Vec<u64> {
    let mut counts = vec![0u64; EDGES_US.len() + 1];
    for [lo_ns, _, n] in &h.buckets {
        // A bucket starting at exactly an edge belongs above it: bands are
        // [from, to).
        let band = EDGES_US
            .iter()
            .position(|&e| *lo_ns < e.saturating_mul(1000))
            .unwrap_or(EDGES_US.len());
        counts[band] = counts[band].saturating_add(*n);
    }
    counts
}

fn rows(source: &str, run: &RunResult, op: Op, h: &BucketedHistogram) -> Vec<Vec<String>> {
    let counts = bands(h);
    let total: u64 = counts.iter().fold(0, |a, &b| a.saturating_add(b));
    let mut cum = 0u64;
    let pct = |n: u64| {
        if total == 0 {
            String::new()
        } else {
            format!("{:.4}", n as f64 * 100.0 / total as f64)
        }
    };
    counts
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            cum = cum.saturating_add(n);
            let from = if i == 0 { 0 } else { EDGES_US[i - 1] };
            let to = EDGES_US.get(i).map_or(String::new(), u64::to_string);
            vec![
                source.to_string(),
                run.name.clone(),
                op.to_string(),
                from.to_string(),
                to,
                n.to_string(),
                pct(n),
                pct(cum),
                total.to_string(),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(buckets: &[[u64; 3]]) -> BucketedHistogram {
        BucketedHistogram {
            unit: "ns".into(),
            grouping_power: crate::stats::GROUPING_POWER,
            max_value_power: crate::stats::MAX_VALUE_POWER,
            buckets: buckets.to_vec(),
        }
    }

    #[test]
    fn counts_land_in_their_band_and_edges_belong_above() {
        // 5 us, exactly 10 us, 150 us, 3 ms, 20 s.
        let h = hist(&[
            [5_000, 5_039, 7],
            [10_000, 10_079, 3],
            [150_000, 151_000, 5],
            [3_000_000, 3_010_000, 2],
            [20_000_000_000, 20_100_000_000, 1],
        ]);
        let b = bands(&h);
        assert_eq!(b.len(), EDGES_US.len() + 1);
        assert_eq!(b[0], 7, "below 10 us");
        assert_eq!(b[1], 3, "10..20 us");
        assert_eq!(b[4], 5, "100..200 us");
        assert_eq!(b[8], 2, "2..5 ms");
        assert_eq!(b[EDGES_US.len()], 1, "10 s and above");
        assert_eq!(b.iter().sum::<u64>(), 18, "nothing lost");
    }
}

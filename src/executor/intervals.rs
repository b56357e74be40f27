//! The interval record of a run, bounded in length: past `MAX_INTERVALS`
//! adjacent intervals of one phase are merged, time-weighted.

use crate::result::{Interval, MAX_INTERVAL_BUCKETS, MAX_INTERVALS};

/// Interval records with a bounded length: past `MAX_INTERVALS`, adjacent
/// pairs in the same phase are merged (time-weighted), halving the count.
#[derive(Default)]
pub(super) struct IntervalLog {
    items: Vec<Interval>,
    /// Latency buckets held over all intervals (bounded by MAX_INTERVAL_BUCKETS).
    buckets: usize,
}

fn buckets(iv: &Interval) -> usize {
    iv.read.lat_hist.len() + iv.write.lat_hist.len()
}

impl IntervalLog {
    pub(super) fn push(&mut self, iv: Interval) {
        self.buckets += buckets(&iv);
        self.items.push(iv);
        if self.items.len() >= MAX_INTERVALS {
            self.compact();
        }
        // Merged neighbours share most buckets, so each pass nearly halves
        // the count; a pass that merges nothing (phases alternating) stops.
        while self.buckets > MAX_INTERVAL_BUCKETS {
            let before = self.items.len();
            self.compact();
            if self.items.len() == before {
                break;
            }
        }
    }

    fn compact(&mut self) {
        crate::result::thin::halve(&mut self.items);
        self.buckets = self.items.iter().map(buckets).sum();
    }

    pub(super) fn into_vec(self) -> Vec<Interval> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{IntervalOp, PhaseName};

    fn iv(t: f64, phase: PhaseName, iops: f64, lat: f64) -> Interval {
        Interval {
            t_s: t,
            duration_s: 1.0,
            phase,
            read: IntervalOp {
                iops,
                mib_s: iops / 256.0,
                lat_us_mean: lat,
                service_us_mean: None,
                lat_hist: vec![[1024, iops as u64]],
            },
            write: IntervalOp::default(),
            meta_ops: Vec::new(),
        }
    }

    #[test]
    fn interval_log_stays_bounded_and_keeps_the_totals() {
        let mut log = IntervalLog::default();
        let n = 3 * MAX_INTERVALS + 17;
        for i in 0..n {
            log.push(iv(
                i as f64 + 1.0,
                PhaseName::Measure,
                1000.0 + (i % 7) as f64,
                100.0 + (i % 3) as f64,
            ));
        }
        let v = log.into_vec();
        assert!(v.len() < MAX_INTERVALS);
        let secs: f64 = v.iter().map(|i| i.duration_s).sum();
        assert!((secs - n as f64).abs() < 1e-6);
        let ops: f64 = v.iter().map(|i| i.read.iops * i.duration_s).sum();
        let exact: f64 = (0..n).map(|i| 1000.0 + (i % 7) as f64).sum();
        assert!((ops - exact).abs() < 1e-6 * exact);
        assert_eq!(v.last().unwrap().t_s, n as f64);
        // Each interval's histogram is merged with the rest: no count lost.
        let counted: u64 = v.iter().map(|i| i.read.lat_hist[0][1]).sum();
        assert_eq!(counted as f64, exact);
    }

    #[test]
    fn wide_latency_histograms_are_merged_down_to_the_bucket_bound() {
        let mut log = IntervalLog::default();
        // Every interval fills 400 buckets per op, spread over the same span.
        let wide: Vec<[u64; 2]> = (0..400)
            .map(|i| [crate::stats::live_hist::bounds(100 + i).0, 10])
            .collect();
        let n = 1000;
        for i in 0..n {
            let mut v = iv(i as f64 + 1.0, PhaseName::Measure, 4000.0, 100.0);
            v.read.lat_hist = wide.clone();
            v.write.lat_hist = wide.clone();
            log.push(v);
        }
        let v = log.into_vec();
        let held: usize = v
            .iter()
            .map(|i| i.read.lat_hist.len() + i.write.lat_hist.len())
            .sum();
        assert!(held <= MAX_INTERVAL_BUCKETS, "{held}");
        // Halving stops once under the bound: at least half of what fits.
        assert!(
            v.len() >= MAX_INTERVAL_BUCKETS / 800 / 2,
            "{} intervals left",
            v.len()
        );
        let counted: u64 = v.iter().flat_map(|i| &i.read.lat_hist).map(|b| b[1]).sum();
        assert_eq!(counted, n as u64 * 400 * 10, "no latency lost in merging");
    }

    #[test]
    fn intervals_of_different_phases_are_never_merged() {
        let mut log = IntervalLog::default();
        log.push(iv(1.0, PhaseName::Warmup, 10.0, 1.0));
        for i in 0..MAX_INTERVALS {
            log.push(iv(i as f64 + 2.0, PhaseName::Measure, 20.0, 1.0));
        }
        let v = log.into_vec();
        assert_eq!(v[0].phase, PhaseName::Warmup);
        assert_eq!(v[0].duration_s, 1.0);
        assert!(v[1..].iter().all(|i| i.phase == PhaseName::Measure));
    }
}

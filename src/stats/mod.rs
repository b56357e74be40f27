//! Latency statistics. Each worker owns its accumulators (no sharing on the
//! I/O path); totals and percentiles come only from histograms merged by
//! addition, never from averaging averages.

pub(crate) mod live_hist;
pub(crate) mod live_links;

use std::sync::atomic::{AtomicU64, Ordering};

use histogram::Histogram;
use serde::{Deserialize, Serialize};

/// 2^7 = 128 linear buckets per power of two: relative bucket width under
/// 0.8%, close to fio's 64-per-group resolution.
pub(crate) const GROUPING_POWER: u8 = 7;
/// Values are nanoseconds; 2^40 ns is about 18 minutes, far above any I/O.
pub(crate) const MAX_VALUE_POWER: u8 = 40;
const MAX_VALUE_NS: u64 = (1u64 << MAX_VALUE_POWER) - 1;

#[cfg(test)]
/// The percentiles every report carries.
pub(crate) const PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// Exact moments plus a log-linear histogram of one operation type.
#[derive(Clone, Debug)]
pub struct OpStats {
    pub ops: u64,
    pub bytes: u64,
    pub(crate) lat_sum_ns: u128,
    pub(crate) lat_sumsq_ns: f64,
    pub(crate) lat_min_ns: u64,
    pub(crate) lat_max_ns: u64,
    pub hist: Histogram,
}

impl Default for OpStats {
    fn default() -> Self {
        Self::new()
    }
}

impl OpStats {
    pub fn new() -> Self {
        Self {
            ops: 0,
            bytes: 0,
            lat_sum_ns: 0,
            lat_sumsq_ns: 0.0,
            lat_min_ns: u64::MAX,
            lat_max_ns: 0,
            // Both powers are constants known to be valid.
            hist: Histogram::new(GROUPING_POWER, MAX_VALUE_POWER).expect("valid histogram config"),
        }
    }

    #[inline]
    pub fn record(&mut self, lat_ns: u64, bytes: u64) {
        let lat = lat_ns.min(MAX_VALUE_NS);
        self.ops += 1;
        self.bytes += bytes;
        self.lat_sum_ns += lat as u128;
        let l = lat as f64;
        self.lat_sumsq_ns += l * l;
        self.lat_min_ns = self.lat_min_ns.min(lat);
        self.lat_max_ns = self.lat_max_ns.max(lat);
        // Cannot fail: the value was clamped into range above.
        let _ = self.hist.increment(lat);
    }

    /// Exact merge: counts, sums and buckets add.
    pub(crate) fn merge(&mut self, other: &OpStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.lat_sum_ns += other.lat_sum_ns;
        self.lat_sumsq_ns += other.lat_sumsq_ns;
        self.lat_min_ns = self.lat_min_ns.min(other.lat_min_ns);
        self.lat_max_ns = self.lat_max_ns.max(other.lat_max_ns);
        // Same configuration on both sides, so the merge cannot fail.
        let _ = self.hist.checked_add_assign(&other.hist);
    }

    pub(crate) fn mean_ns(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.lat_sum_ns as f64 / self.ops as f64
        }
    }

    pub(crate) fn stddev_ns(&self) -> f64 {
        if self.ops < 2 {
            return 0.0;
        }
        let n = self.ops as f64;
        let mean = self.mean_ns();
        ((self.lat_sumsq_ns / n - mean * mean).max(0.0) * n / (n - 1.0)).sqrt()
    }

    /// The p-th percentile (0..100): the value below or at which p% of the
    /// operations completed, read as the midpoint of its histogram bucket and
    /// kept inside the exact min and max.
    pub(crate) fn percentile_ns(&self, p: f64) -> f64 {
        percentile_ns(&self.hist, p, self.lat_min_ns, self.lat_max_ns)
    }
}

pub(crate) fn percentile_ns(hist: &Histogram, p: f64, min: u64, max: u64) -> f64 {
    match hist.quantile_bucket((p / 100.0).clamp(0.0, 1.0)) {
        Ok(Some(bucket)) => {
            let mid = (bucket.start() as f64 + bucket.end() as f64) / 2.0;
            mid.clamp(min as f64, max as f64)
        }
        _ => 0.0,
    }
}

/// A histogram in a compact, mergeable form for result files: the bucket
/// configuration and the non-empty buckets as `[lower_ns, upper_ns, count]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketedHistogram {
    pub(crate) unit: String,
    pub grouping_power: u8,
    pub max_value_power: u8,
    pub(crate) buckets: Vec<[u64; 3]>,
}

impl BucketedHistogram {
    pub fn from_histogram(h: &Histogram) -> Self {
        Self {
            unit: "ns".into(),
            grouping_power: GROUPING_POWER,
            max_value_power: MAX_VALUE_POWER,
            buckets: h
                .iter()
                .filter(|b| b.count() > 0)
                .map(|b| [b.start(), b.end(), b.count()])
                .collect(),
        }
    }

    /// Rebuilds the histogram, e.g. to merge results from several files or hosts.
    pub(crate) fn to_histogram(&self) -> Result<Histogram, String> {
        let mut h = Histogram::new(self.grouping_power, self.max_value_power)
            .map_err(|e| format!("bad histogram configuration: {e}"))?;
        for [lo, _, count] in &self.buckets {
            h.add(*lo, *count)
                .map_err(|e| format!("histogram bucket {lo} out of range: {e}"))?;
        }
        Ok(h)
    }
}

/// Running totals a worker publishes for the interval collector. One writer
/// (the worker) stores plain values; the collector reads them once per
/// interval, so the cache line moves once per interval, not per I/O.
#[derive(Default, Debug)]
#[repr(align(128))]
pub(crate) struct LiveCounters {
    pub(crate) read_ops: AtomicU64,
    pub(crate) read_bytes: AtomicU64,
    pub(crate) read_lat_ns: AtomicU64,
    pub(crate) write_ops: AtomicU64,
    pub(crate) write_bytes: AtomicU64,
    pub(crate) write_lat_ns: AtomicU64,
    /// Service-time sums (rate-limited runs; zero otherwise).
    pub(crate) read_svc_ns: AtomicU64,
    pub(crate) write_svc_ns: AtomicU64,
    /// Latency per bucket, for each interval's own percentiles.
    pub(crate) read_hist: live_hist::LiveHist,
    pub(crate) write_hist: live_hist::LiveHist,
    /// Metadata runs: operations and latency sums per operation (by index).
    pub(crate) meta_ops: [AtomicU64; META_OPS],
    pub(crate) meta_lat_ns: [AtomicU64; META_OPS],
    /// A protocol client's running totals (`proto::*` below), stored by
    /// its engine after each batch of completions; zero for the others.
    pub(crate) proto: [AtomicU64; PROTO_FIELDS],
    /// The same client's totals per connection (`live_links`), set up by
    /// its engine's first publish; unset for the others.
    pub(crate) links: std::sync::OnceLock<live_links::LiveLinks>,
    /// Odd while the engine is storing `proto` and `links`: the sequence
    /// that makes them one publication (`live_links::publish`, `read`).
    pub(crate) proto_seq: AtomicU64,
}

/// Operations a metadata run tells apart (`spec::meta::ALL_OPS`).
pub(crate) const META_OPS: usize = 12;

/// What a protocol client counts, by index into `LiveCounters::proto`.
pub(crate) const PROTO_FIELDS: usize = 8;
pub(crate) mod proto {
    /// Calls answered, and the data they moved.
    pub(crate) const CALLS: usize = 0;
    pub(crate) const BYTES: usize = 1;
    /// Round-trip and execute time, summed over the calls, in ns.
    pub(crate) const RTT_NS: usize = 2;
    pub(crate) const EXEC_NS: usize = 3;
    pub(crate) const ERRORS: usize = 4;
    pub(crate) const RETRANS: usize = 5;
    pub(crate) const TIMEOUTS: usize = 6;
    pub(crate) const RECONNECTS: usize = 7;
}

/// A snapshot of `LiveCounters`, and the difference of two snapshots.
#[derive(Default, Debug, Clone, Copy, PartialEq)]
pub(crate) struct CounterSnapshot {
    pub(crate) read_ops: u64,
    pub(crate) read_bytes: u64,
    pub(crate) read_lat_ns: u64,
    pub(crate) write_ops: u64,
    pub(crate) write_bytes: u64,
    pub(crate) write_lat_ns: u64,
    pub(crate) read_svc_ns: u64,
    pub(crate) write_svc_ns: u64,
    pub(crate) meta_ops: [u64; META_OPS],
    pub(crate) meta_lat_ns: [u64; META_OPS],
    pub(crate) proto: [u64; PROTO_FIELDS],
}

impl LiveCounters {
    /// The worker's totals now; a protocol client's connections added into
    /// `links`, read with its totals as one publication.
    pub(crate) fn snapshot(&self, links: &mut live_links::LinkSum) -> CounterSnapshot {
        CounterSnapshot {
            read_ops: self.read_ops.load(Ordering::Relaxed),
            read_bytes: self.read_bytes.load(Ordering::Relaxed),
            read_lat_ns: self.read_lat_ns.load(Ordering::Relaxed),
            write_ops: self.write_ops.load(Ordering::Relaxed),
            write_bytes: self.write_bytes.load(Ordering::Relaxed),
            write_lat_ns: self.write_lat_ns.load(Ordering::Relaxed),
            read_svc_ns: self.read_svc_ns.load(Ordering::Relaxed),
            write_svc_ns: self.write_svc_ns.load(Ordering::Relaxed),
            meta_ops: std::array::from_fn(|i| self.meta_ops[i].load(Ordering::Relaxed)),
            meta_lat_ns: std::array::from_fn(|i| self.meta_lat_ns[i].load(Ordering::Relaxed)),
            proto: live_links::read(self, links),
        }
    }
}

impl CounterSnapshot {
    pub(crate) fn add(&mut self, o: &CounterSnapshot) {
        self.read_ops += o.read_ops;
        self.read_bytes += o.read_bytes;
        self.read_lat_ns += o.read_lat_ns;
        self.write_ops += o.write_ops;
        self.write_bytes += o.write_bytes;
        self.write_lat_ns += o.write_lat_ns;
        self.read_svc_ns += o.read_svc_ns;
        self.write_svc_ns += o.write_svc_ns;
        for i in 0..META_OPS {
            self.meta_ops[i] += o.meta_ops[i];
            self.meta_lat_ns[i] += o.meta_lat_ns[i];
        }
        for i in 0..PROTO_FIELDS {
            self.proto[i] += o.proto[i];
        }
    }

    pub(crate) fn since(&self, earlier: &CounterSnapshot) -> CounterSnapshot {
        CounterSnapshot {
            read_ops: self.read_ops.saturating_sub(earlier.read_ops),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            read_lat_ns: self.read_lat_ns.saturating_sub(earlier.read_lat_ns),
            write_ops: self.write_ops.saturating_sub(earlier.write_ops),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            write_lat_ns: self.write_lat_ns.saturating_sub(earlier.write_lat_ns),
            read_svc_ns: self.read_svc_ns.saturating_sub(earlier.read_svc_ns),
            write_svc_ns: self.write_svc_ns.saturating_sub(earlier.write_svc_ns),
            meta_ops: std::array::from_fn(|i| self.meta_ops[i].saturating_sub(earlier.meta_ops[i])),
            meta_lat_ns: std::array::from_fn(|i| {
                self.meta_lat_ns[i].saturating_sub(earlier.meta_lat_ns[i])
            }),
            proto: std::array::from_fn(|i| self.proto[i].saturating_sub(earlier.proto[i])),
        }
    }
}

/// The mean of `values` and the largest distance of one from it, as a
/// fraction of the mean (0.08: every value within 8% of it); None when
/// there are none or the mean is not positive. One definition of "flat"
/// for steady-state detection and the diagnosis finders.
pub(crate) fn mean_spread(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if mean.is_nan() || mean <= 0.0 {
        return None;
    }
    let spread = values
        .iter()
        .map(|v| (v - mean).abs() / mean)
        .fold(0.0, f64::max);
    Some((mean, spread))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_the_farthest_value_from_the_mean_as_a_fraction_of_it() {
        let (mean, spread) = mean_spread(&[90.0, 100.0, 110.0]).unwrap();
        assert_eq!(mean, 100.0);
        assert!((spread - 0.10).abs() < 1e-12);
        assert_eq!(mean_spread(&[]), None);
        assert_eq!(mean_spread(&[0.0, 0.0]), None);
    }

    /// Nearest-rank percentile of raw samples: the smallest value with at
    /// least p% of samples at or below it.
    fn exact_percentile(sorted: &[u64], p: f64) -> u64 {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank - 1]
    }

    fn samples(seed: u64, n: usize) -> Vec<u64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        // A long-tailed mix like real latencies: mostly 50-200us, some ms.
        (0..n)
            .map(|_| {
                if rng.u32(0..100) < 95 {
                    rng.u64(50_000..200_000)
                } else {
                    rng.u64(1_000_000..20_000_000)
                }
            })
            .collect()
    }

    #[test]
    fn percentiles_match_exact_values_within_bucket_error() {
        let raw = samples(7, 100_000);
        let mut s = OpStats::new();
        for &v in &raw {
            s.record(v, 4096);
        }
        let mut sorted = raw.clone();
        sorted.sort_unstable();
        for p in PERCENTILES {
            let exact = exact_percentile(&sorted, p) as f64;
            let got = s.percentile_ns(p);
            let err = (got - exact).abs() / exact;
            assert!(err < 0.008, "p{p}: got {got}, exact {exact}, error {err}");
        }
        let mean = raw.iter().map(|&v| v as f64).sum::<f64>() / raw.len() as f64;
        assert!((s.mean_ns() - mean).abs() < 1e-6 * mean);
        assert_eq!(s.lat_min_ns, sorted[0]);
        assert_eq!(s.lat_max_ns, *sorted.last().unwrap());
        let var =
            raw.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / (raw.len() - 1) as f64;
        assert!((s.stddev_ns() - var.sqrt()).abs() / var.sqrt() < 1e-6);
    }

    #[test]
    fn merged_histograms_equal_one_histogram_of_all_samples() {
        let a = samples(1, 30_000);
        let b = samples(2, 50_000);
        let mut sa = OpStats::new();
        let mut sb = OpStats::new();
        let mut all = OpStats::new();
        for &v in &a {
            sa.record(v, 8192);
            all.record(v, 8192);
        }
        for &v in &b {
            sb.record(v, 8192);
            all.record(v, 8192);
        }
        sa.merge(&sb);
        assert_eq!(sa.ops, all.ops);
        assert_eq!(sa.bytes, 80_000 * 8192);
        assert_eq!(sa.hist, all.hist);
        assert_eq!(sa.lat_sum_ns, all.lat_sum_ns);
        for p in PERCENTILES {
            assert_eq!(sa.percentile_ns(p), all.percentile_ns(p));
        }
        // Averaging the two halves' p99 would not give the merged p99; the
        // merge must not depend on such shortcuts.
        let mut sorted: Vec<u64> = a.iter().chain(&b).copied().collect();
        sorted.sort_unstable();
        let exact = exact_percentile(&sorted, 99.0) as f64;
        assert!((sa.percentile_ns(99.0) - exact).abs() / exact < 0.008);
    }

    #[test]
    fn bucketed_form_round_trips() {
        let mut s = OpStats::new();
        for v in samples(3, 10_000) {
            s.record(v, 4096);
        }
        let b = BucketedHistogram::from_histogram(&s.hist);
        let json = serde_json::to_string(&b).unwrap();
        let back: BucketedHistogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_histogram().unwrap(), s.hist);
        assert_eq!(b.buckets.iter().map(|x| x[2]).sum::<u64>(), 10_000);
    }

    #[test]
    fn huge_latencies_are_clamped_not_lost() {
        let mut s = OpStats::new();
        s.record(u64::MAX, 1);
        assert_eq!(s.ops, 1);
        assert_eq!(s.hist.iter().map(|b| b.count()).sum::<u64>(), 1);
    }

    #[test]
    fn empty_stats_report_zeros() {
        let s = OpStats::new();
        assert_eq!(s.mean_ns(), 0.0);
        assert_eq!(s.percentile_ns(99.0), 0.0);
    }
}

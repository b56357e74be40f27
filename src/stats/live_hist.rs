//! A coarse latency histogram a worker updates per I/O and the collector
//! reads once per interval, so each interval carries its own distribution
//! and its p50/p99 come from counts, never from averaged percentiles.
//!
//! Written by hand rather than with `histogram::AtomicHistogram`: that one
//! increments with a locked read-modify-write, while here one thread
//! writes (a plain load and store, as `LiveCounters`), and its bucket index
//! is private while result files must name each bucket's bounds. The
//! collector reads these counts a moment apart from `LiveCounters`, so an
//! interval's histogram may hold a few I/Os more or fewer than its rate
//! (those completed in between); over the run they agree. Sixteen
//! buckets per power of two (each at most 6.25% wide) keep a snapshot
//! small enough to copy every interval.

use std::sync::atomic::{AtomicU64, Ordering};

/// Sub-buckets per power of two: 2^4.
const GP: u32 = 4;
const SUB: u64 = 1 << GP;
/// Latencies at or above 2^36 ns (about 69 s) share the last bucket.
const MAX_POWER: u32 = 36;
/// Buckets in all: values below 16 ns one each, then 16 per power.
pub(crate) const BUCKETS: usize = ((MAX_POWER - GP + 1) as usize + 1) * SUB as usize;

/// The bucket of a latency in ns.
#[inline]
pub(crate) fn index(v: u64) -> usize {
    let v = v.min((1u64 << (MAX_POWER + 1)) - 1);
    if v < SUB {
        return v as usize;
    }
    let p = 63 - v.leading_zeros();
    (((p - GP + 1) as u64 * SUB) + ((v >> (p - GP)) & (SUB - 1))) as usize
}

/// The lowest and highest latency (ns) of a bucket.
pub(crate) fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, i);
    }
    let p = (i / SUB) as u32 + GP - 1;
    let lo = (SUB + i % SUB) << (p - GP);
    (lo, lo + (1u64 << (p - GP)) - 1)
}

/// One worker's counts per bucket of one operation type.
#[derive(Debug)]
pub(crate) struct LiveHist {
    counts: Box<[AtomicU64; BUCKETS]>,
}

impl Default for LiveHist {
    fn default() -> Self {
        Self {
            counts: Box::new(std::array::from_fn(|_| AtomicU64::new(0))),
        }
    }
}

impl LiveHist {
    /// Called by the one worker that owns it: no other thread writes, so
    /// a load and a store suffice (no locked instruction per I/O).
    #[inline]
    pub(crate) fn record(&self, lat_ns: u64) {
        let c = &self.counts[index(lat_ns)];
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Adds this histogram's counts into `into` (the collector's sum over
    /// workers).
    pub(crate) fn add_to(&self, into: &mut [u64]) {
        for (a, c) in into.iter_mut().zip(self.counts.iter()) {
            *a += c.load(Ordering::Relaxed);
        }
    }
}

/// The counts of `now` less those of `before`, as `[lower_ns, count]` of
/// the non-empty buckets, lowest first (the form intervals store).
pub(crate) fn sparse_delta(now: &[u64], before: &[u64]) -> Vec<[u64; 2]> {
    now.iter()
        .zip(before)
        .enumerate()
        .filter_map(|(i, (n, b))| {
            let d = n.saturating_sub(*b);
            (d > 0).then(|| [bounds(i).0, d])
        })
        .collect()
}

/// Two sparse histograms added (both lowest first).
pub(crate) fn sparse_add(a: &[[u64; 2]], b: &[[u64; 2]]) -> Vec<[u64; 2]> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x[0] == y[0] => {
                out.push([x[0], x[1].saturating_add(y[1])]);
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x[0] < y[0] => {
                out.push(*x);
                i += 1;
            }
            (Some(x), None) => {
                out.push(*x);
                i += 1;
            }
            (_, Some(y)) => {
                out.push(*y);
                j += 1;
            }
            (None, None) => break,
        }
    }
    out
}

/// The p-th percentile (0..100) in ns: the midpoint of the bucket holding
/// that rank; None for an empty histogram.
pub(crate) fn sparse_percentile(h: &[[u64; 2]], p: f64) -> Option<f64> {
    let total: u64 = h.iter().map(|b| b[1]).fold(0u64, u64::saturating_add);
    if total == 0 {
        return None;
    }
    let rank = ((p / 100.0).clamp(0.0, 1.0) * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for b in h {
        seen = seen.saturating_add(b[1]);
        if seen >= rank {
            let (lo, hi) = bounds(index(b[0]));
            return Some((lo as f64 + hi as f64) / 2.0);
        }
    }
    None
}

/// Whether a sparse histogram from a file or a host is well-formed: each
/// lower bound a bucket's, strictly ascending, no empty entries.
pub(crate) fn sparse_check(h: &[[u64; 2]]) -> Result<u64, String> {
    if h.len() > BUCKETS {
        return Err(format!("{} latency buckets (at most {BUCKETS})", h.len()));
    }
    let mut total = 0u64;
    let mut last: Option<u64> = None;
    for &[lo, n] in h {
        if bounds(index(lo)).0 != lo || index(lo) >= BUCKETS {
            return Err(format!("{lo} ns is no latency bucket's lower bound"));
        }
        if last.is_some_and(|l| l >= lo) || n == 0 {
            return Err("latency buckets out of order, repeated or empty".into());
        }
        last = Some(lo);
        total = total.saturating_add(n);
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lands_in_a_bucket_that_holds_it() {
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..100_000 {
            let v = rng.u64(0..(1u64 << 37));
            let i = index(v);
            assert!(i < BUCKETS);
            let (lo, hi) = bounds(i);
            assert!(lo <= v && v <= hi, "{v} in [{lo}, {hi}]");
            // At most 1/16 of the value wide: a percentile is off by < 3.2%.
            assert!((hi - lo) as f64 <= v.max(16) as f64 / 16.0);
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
        for i in 0..BUCKETS {
            assert_eq!(index(bounds(i).0), i);
            assert_eq!(index(bounds(i).1), i);
        }
    }

    #[test]
    fn interval_percentiles_match_the_exact_ones_within_a_bucket() {
        let mut rng = fastrand::Rng::with_seed(9);
        let h = LiveHist::default();
        let mut raw: Vec<u64> = (0..20_000)
            .map(|_| {
                if rng.u32(0..100) < 97 {
                    rng.u64(80_000..150_000)
                } else {
                    rng.u64(2_000_000..9_000_000)
                }
            })
            .collect();
        for &v in &raw {
            h.record(v);
        }
        let mut now = vec![0u64; BUCKETS];
        h.add_to(&mut now);
        let s = sparse_delta(&now, &vec![0u64; BUCKETS]);
        assert_eq!(sparse_check(&s), Ok(20_000));
        raw.sort_unstable();
        for p in [50.0, 99.0] {
            let exact = raw[(p / 100.0 * raw.len() as f64).ceil() as usize - 1] as f64;
            let got = sparse_percentile(&s, p).unwrap();
            assert!(
                (got - exact).abs() / exact < 0.035,
                "p{p}: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn deltas_and_sums_keep_every_count() {
        let h = LiveHist::default();
        let mut before = vec![0u64; BUCKETS];
        for v in [100, 100, 5_000] {
            h.record(v);
        }
        h.add_to(&mut before);
        for v in [100, 70_000, 70_001] {
            h.record(v);
        }
        let mut now = vec![0u64; BUCKETS];
        h.add_to(&mut now);
        let d = sparse_delta(&now, &before);
        assert_eq!(d.iter().map(|b| b[1]).sum::<u64>(), 3);
        let first = sparse_delta(&before, &vec![0; BUCKETS]);
        let all = sparse_add(&first, &d);
        assert_eq!(sparse_delta(&now, &vec![0; BUCKETS]), all);
        assert_eq!(sparse_percentile(&[], 50.0), None);
    }

    #[test]
    fn malformed_histograms_are_refused() {
        assert!(
            sparse_check(&[[33, 1]]).is_err(),
            "33 is inside the bucket 32-33"
        );
        assert!(sparse_check(&[[64, 1], [32, 1]]).is_err());
        assert!(sparse_check(&[[32, 0]]).is_err());
        assert!(sparse_check(&[[32, 2], [64, 1]]).is_ok());
    }
}

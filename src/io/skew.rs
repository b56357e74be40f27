//! Skewed random offsets at the cost of two random draws and a table read
//! per I/O. The distribution's inverse CDF is cut once, at set-up, into
//! `BUCKETS` ranges of equal probability; an I/O picks a range uniformly and
//! a slot uniformly inside it. Each range carries exactly 1/BUCKETS of the
//! I/O, so any share of the space gets its intended share of the I/O to
//! within a couple of buckets (0.05%), whatever the distribution.
//! Hand-written because the crates that sample zipf (rand_distr) draw by
//! rejection with several `powf` per sample and know no hot/cold zones.

use crate::spec::shape::Distribution;

/// Power of two, so a bucket is a mask of one random word.
pub(crate) const BUCKETS: usize = 4096;

/// Slot ranges `(first, count)`: slot k covers bytes k*align..(k+1)*align of
/// the set seen as one space (file after file); the hottest slots first.
pub(crate) fn table(dist: &Distribution, slots: u64) -> Vec<(u64, u64)> {
    let slots = slots.max(1);
    let q: Box<dyn Fn(f64) -> f64> = match dist {
        Distribution::Uniform => Box::new(move |u| u * slots as f64),
        Distribution::Pareto { h } => {
            // A share h of the I/O in the first 1-h of the space: the CDF
            // over the space fraction x is 1-(1-x)^(1/p), p = ln h / ln(1-h).
            let p = h.ln() / (1.0 - h).ln();
            Box::new(move |u| (1.0 - (1.0 - u).powf(p)) * slots as f64)
        }
        Distribution::Hot { zones } => {
            let mut pts = vec![(0.0f64, 0.0f64)];
            let (mut io, mut space) = (0.0, 0.0);
            for z in zones {
                io += z.io_pct / 100.0;
                space += z.space_pct / 100.0;
                pts.push((io.min(1.0), space.min(1.0)));
            }
            pts.push((1.0, 1.0));
            Box::new(move |u| {
                // The zone holding quantile u; linear inside it.
                let mut prev = (0.0, 0.0);
                for &(io, space) in &pts {
                    if u <= io && io > prev.0 {
                        let f = (u - prev.0) / (io - prev.0);
                        return (prev.1 + f * (space - prev.1)) * slots as f64;
                    }
                    prev = (io, space);
                }
                slots as f64
            })
        }
        Distribution::Zipf { theta } => {
            let z = Zipf::new(*theta, slots);
            Box::new(move |u| z.quantile(u))
        }
    };
    (0..BUCKETS)
        .map(|i| {
            let lo = q(i as f64 / BUCKETS as f64).clamp(0.0, slots as f64);
            let hi = q((i + 1) as f64 / BUCKETS as f64).clamp(lo, slots as f64);
            let first = (lo.floor() as u64).min(slots - 1);
            let end = (hi.ceil() as u64).clamp(first + 1, slots);
            (first, end - first)
        })
        .collect()
}

/// Zipf over `n` slots, slot k (0-based) with weight (k+1)^-theta. Sums of
/// the first `HEAD` weights are exact; beyond, the midpoint integral (its
/// error shrinks like k^-(theta+2)) keeps set-up cheap for 2^44 slots.
struct Zipf {
    theta: f64,
    n: u64,
    head: Vec<f64>,
    total: f64,
}

const HEAD: u64 = 1 << 14;

impl Zipf {
    fn new(theta: f64, n: u64) -> Self {
        let mut head = Vec::with_capacity(HEAD.min(n) as usize + 1);
        let mut sum = 0.0;
        head.push(0.0);
        for k in 1..=HEAD.min(n) {
            sum += (k as f64).powf(-theta);
            head.push(sum);
        }
        let mut z = Self {
            theta,
            n,
            head,
            total: 0.0,
        };
        z.total = z.cum(n);
        z
    }

    /// Weight of the first `k` slots.
    fn cum(&self, k: u64) -> f64 {
        let m = (self.head.len() - 1) as u64;
        let at = |i: u64| self.head.get(i as usize).copied().unwrap_or(0.0);
        if k <= m {
            return at(k);
        }
        let (a, b) = (m as f64 + 0.5, k as f64 + 0.5);
        let tail = if (self.theta - 1.0).abs() < 1e-12 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - self.theta) - a.powf(1.0 - self.theta)) / (1.0 - self.theta)
        };
        at(m) + tail
    }

    /// The position (in slots, fractional) below which a share u of the weight lies.
    fn quantile(&self, u: f64) -> f64 {
        let target = u * self.total;
        // The first k with cum(k+1) >= target: slot k holds the quantile.
        let (mut lo, mut hi) = (0u64, self.n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.cum(mid + 1) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let k = lo.min(self.n - 1);
        let below = self.cum(k);
        let w = (self.cum(k + 1) - below).max(f64::MIN_POSITIVE);
        k as f64 + ((target - below) / w).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::shape::HotZone;

    /// Share of `draws` samples landing in the first `hot` slots.
    fn share(t: &[(u64, u64)], hot: u64, draws: usize) -> f64 {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut hits = 0;
        for _ in 0..draws {
            let (first, count) = t[rng.usize(0..BUCKETS)];
            if first + rng.u64(0..count) < hot {
                hits += 1;
            }
        }
        hits as f64 / draws as f64
    }

    #[test]
    fn hot_80_20_sends_80_percent_to_the_first_fifth() {
        let d = Distribution::Hot {
            zones: vec![HotZone {
                io_pct: 80.0,
                space_pct: 20.0,
            }],
        };
        let t = table(&d, 1 << 18);
        let s = share(&t, (1 << 18) / 5, 200_000);
        assert!((s - 0.80).abs() < 0.02, "hot share {s}");
    }

    #[test]
    fn zipf_top_tenth_gets_its_exact_share() {
        let (theta, n) = (1.2f64, 100_000u64);
        let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-theta)).collect();
        let total: f64 = w.iter().sum();
        let expected = w.iter().take((n / 10) as usize).sum::<f64>() / total;
        let t = table(&Distribution::Zipf { theta }, n);
        let s = share(&t, n / 10, 200_000);
        assert!(
            (s - expected).abs() < 0.01,
            "top 10%: {s}, expected {expected}"
        );
        // And the single hottest slot, far more skewed than any bucket.
        let top = w[0] / total;
        let s1 = share(&t, 1, 200_000);
        assert!((s1 - top).abs() < 0.01, "top slot: {s1}, expected {top}");
    }

    #[test]
    fn pareto_h_puts_h_of_the_io_in_the_first_1_minus_h() {
        let n = 1 << 20;
        let t = table(&Distribution::Pareto { h: 0.8 }, n);
        let s = share(&t, n / 5, 200_000);
        assert!((s - 0.8).abs() < 0.02, "pareto share {s}");
    }

    #[test]
    fn uniform_and_tiny_spaces_stay_in_bounds() {
        for slots in [1u64, 3, 4095, 4097] {
            for d in [
                Distribution::Uniform,
                Distribution::Zipf { theta: 0.5 },
                Distribution::Pareto { h: 0.9 },
            ] {
                for (first, count) in table(&d, slots) {
                    assert!(count >= 1 && first + count <= slots, "{d:?} {slots}");
                }
            }
        }
    }
}

//! What a comparison is made of: the matched runs, the figures compared
//! and their ratio. A leaf both `compare` and its metadata part use.

use super::super::Metric;
use crate::output::fmt::{micros, number};
use crate::result::{Op, RunResult};

/// One run of the first result and its counterpart in each result
/// (indices into `items(sources)`; `None` where missing).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Match {
    pub(crate) name: String,
    pub(crate) items: Vec<Option<usize>>,
}

#[derive(Debug, Clone, Default)]
pub struct Comparison {
    pub(crate) matches: Vec<Match>,
    pub(crate) warnings: Vec<String>,
}

/// A figure compared for each run and operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compared {
    Iops,
    MibS,
    MeanLatency,
    P99Latency,
}

impl Compared {
    pub(crate) const ALL: [Compared; 4] = [
        Compared::Iops,
        Compared::MibS,
        Compared::MeanLatency,
        Compared::P99Latency,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Compared::Iops => "IOPS",
            Compared::MibS => "MiB/s",
            Compared::MeanLatency => "mean latency",
            Compared::P99Latency => "p99 latency",
        }
    }

    /// The headline figure the papers quote for a workload.
    pub(super) fn headline(m: Metric) -> Self {
        match m {
            Metric::Iops => Compared::Iops,
            Metric::MibS => Compared::MibS,
        }
    }

    /// The figure of one operation type of a run; None when the run does
    /// not do that operation.
    pub(crate) fn of(self, run: &RunResult, op: Op) -> Option<f64> {
        let t = run.does(op).then(|| run.totals.op(op))?;
        Some(match self {
            Compared::Iops => t.iops,
            Compared::MibS => t.mib_s,
            Compared::MeanLatency => t.lat_us.mean,
            Compared::P99Latency => t.lat_us.p99,
        })
    }

    pub(super) fn show(self, v: f64) -> String {
        match self {
            Compared::Iops | Compared::MibS => number(v),
            Compared::MeanLatency | Compared::P99Latency => micros(v),
        }
    }
}

/// "2.30x", or "-" without a base to divide by. Never "0.00x" or "inf":
/// three significant digits at any size, and a zero base said in words.
pub(crate) fn ratio(v: Option<f64>, base: Option<f64>) -> String {
    match (v, base) {
        (Some(v), Some(b)) if b > 0.0 && v.is_finite() => show_ratio(v / b),
        (Some(_), Some(0.0)) => "n/a (base 0)".into(),
        _ => "-".into(),
    }
}

/// A ratio with three significant digits: 2.30x, 0.430x, 0.00432x, 1,234x.
pub(crate) fn show_ratio(r: f64) -> String {
    if r == 0.0 {
        return "0x".into();
    }
    if r >= 1000.0 {
        return format!("{}x", number(r.round()));
    }
    if r >= 1.0 {
        // 2.30x as before; 12.3x; 123x.
        let decimals = 2usize.saturating_sub(r.log10().floor() as usize);
        return format!("{r:.decimals$}x");
    }
    let digits = (-r.log10().floor()) as usize + 2;
    format!("{r:.digits$}x")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_keep_three_significant_digits_and_never_round_to_zero() {
        assert_eq!(show_ratio(2.3), "2.30x");
        assert_eq!(show_ratio(1.0), "1.00x");
        assert_eq!(show_ratio(12.34), "12.3x");
        assert_eq!(show_ratio(123.4), "123x");
        assert_eq!(show_ratio(12_345.0), "12,345x");
        assert_eq!(show_ratio(0.43), "0.430x");
        assert_eq!(show_ratio(0.004321), "0.00432x");
        assert_eq!(show_ratio(0.0), "0x");
        assert_eq!(ratio(Some(5.0), Some(0.0)), "n/a (base 0)");
        assert_eq!(ratio(Some(5.0), None), "-");
        assert_eq!(ratio(None, Some(5.0)), "-");
    }
}

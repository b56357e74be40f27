//! Latency limits as people state them (`p99=2ms`, `read:p99.9=5ms`), and
//! the search for the highest rate that keeps them (`--latency-target`).
//! One parser serves the flag, the curve stop of a suite and the search, so
//! a limit reads and is bounded the same wherever it is typed.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::units::bounds;

/// A limit's latency as it was typed (bounded by `parse`, so exact in ns).
fn shown(us: f64) -> String {
    crate::units::format_duration(std::time::Duration::from_nanos((us * 1e3).round() as u64))
}

/// Which operations a limit is judged on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LatencyOp {
    /// Reads and writes together: the percentile of their merged histogram.
    #[default]
    All,
    Read,
    Write,
}

/// "The p-th percentile of latency stays at or below this."
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct LatencyLimit {
    #[serde(default)]
    pub(crate) op: LatencyOp,
    /// In (0, 100]; 100 is the slowest I/O.
    pub(crate) percentile: f64,
    pub(crate) limit_us: f64,
}

impl LatencyLimit {
    /// `[read:|write:]pNN[.N]=DURATION`, e.g. `p99=2ms`, `read:p99.9=500us`.
    pub(crate) fn parse(flag: &str, text: &str) -> Result<Self> {
        let t = text.trim();
        let bad = |why: &str| {
            VbError::input(format!(
                "{flag} '{text}': {why} (write it as p99=2ms, read:p99.9=5ms or write:p50=1ms)"
            ))
        };
        let (op, rest) = match t.split_once(':') {
            Some((o, r)) => match o.trim().to_ascii_lowercase().as_str() {
                "read" | "r" => (LatencyOp::Read, r),
                "write" | "w" => (LatencyOp::Write, r),
                _ => return Err(bad(&format!("'{o}' is not read or write"))),
            },
            None => (LatencyOp::All, t),
        };
        let (p, lat) = rest
            .split_once('=')
            .or_else(|| rest.split_once('<'))
            .ok_or_else(|| bad("no '=' between the percentile and the latency"))?;
        let p = p.trim();
        let digits = p
            .strip_prefix('p')
            .or_else(|| p.strip_prefix('P'))
            .ok_or_else(|| bad("the percentile starts with p"))?;
        let percentile: f64 = digits
            .parse()
            .map_err(|_| bad(&format!("'{p}' is not a percentile")))?;
        if !(percentile > 0.0 && percentile <= bounds::MAX_PERCENTILE) {
            return Err(VbError::input(format!(
                "{flag} '{text}': percentile {digits} is outside (0, 100]"
            )));
        }
        let lat = lat.trim().trim_start_matches('=').trim();
        let d =
            crate::units::parse_duration_in(flag, lat, bounds::MIN_LATENCY, bounds::MAX_LATENCY)?;
        Ok(Self {
            op,
            percentile,
            limit_us: d.as_secs_f64() * 1e6,
        })
    }

    /// A comma-separated list of limits, all of which must hold; one
    /// percentile of one kind of operation has at most one limit.
    pub(crate) fn parse_list(flag: &str, text: &str) -> Result<Vec<Self>> {
        let mut out: Vec<Self> = Vec::new();
        for part in text.split(',') {
            let l = Self::parse(flag, part)?;
            // Two limits on one percentile of the same operations: one of
            // them is never the one that decides, and which was meant is
            // the user's to say.
            if let Some(o) = out
                .iter()
                .find(|o| o.op == l.op && o.percentile == l.percentile)
            {
                return Err(VbError::input(format!(
                    "{flag} '{}': two limits on {}p{} ({} and {}); give one",
                    crate::units::bounds::one_line(text),
                    match l.op {
                        LatencyOp::All => "",
                        LatencyOp::Read => "read:",
                        LatencyOp::Write => "write:",
                    },
                    l.percentile,
                    shown(o.limit_us),
                    shown(l.limit_us),
                )));
            }
            out.push(l);
        }
        if out.len() > bounds::MAX_LATENCY_LIMITS {
            return Err(VbError::input(format!(
                "{flag}: {} limits; at most {}",
                out.len(),
                bounds::MAX_LATENCY_LIMITS
            )));
        }
        Ok(out)
    }

    /// Checks a limit that did not come through `parse` (a result or job
    /// read back).
    pub(crate) fn validate(&self, flag: &str) -> Result<()> {
        if !(self.percentile > 0.0 && self.percentile <= bounds::MAX_PERCENTILE) {
            return Err(VbError::input(format!(
                "{flag}: percentile {} is outside (0, 100]",
                self.percentile
            )));
        }
        bounds::number(
            flag,
            self.limit_us,
            bounds::MIN_LATENCY.as_secs_f64() * 1e6,
            bounds::MAX_LATENCY.as_secs_f64() * 1e6,
        )
        .map(|_| ())
    }

    /// "read p99 <= 2ms", as every view names the limit.
    pub(crate) fn label(&self) -> String {
        let op = match self.op {
            LatencyOp::All => "",
            LatencyOp::Read => "read ",
            LatencyOp::Write => "write ",
        };
        format!(
            "{op}p{} <= {}",
            crate::units::trim(self.percentile, 4),
            crate::units::bounds::human(std::time::Duration::from_secs_f64(self.limit_us / 1e6))
        )
    }
}

/// A measured latency as people read it: "158 µs", "2.31 ms", "1.20 s".
pub(crate) fn show_us(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// `--latency-target`: find the highest open-loop rate at which every
/// limit holds, by a closed-loop run (the ceiling), bisection on the rate,
/// and a confirming run at the rate found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySearch {
    pub(crate) limits: Vec<LatencyLimit>,
    /// Runs the search may make, the closed-loop one and the confirmation
    /// included.
    pub(crate) max_steps: u32,
    /// Stop bisecting once the rates that pass and fail are this close,
    /// as a percentage of the closed-loop maximum.
    pub(crate) precision_pct: f64,
}

/// What `--search-steps` and `--search-precision` default to: a closed
/// loop, five halvings (1/32 of the maximum apart, inside the default 5%),
/// a confirmation and two to spare for a confirmation that fails.
pub(crate) const SEARCH_STEPS: u32 = 10;
pub(crate) const SEARCH_PRECISION_PCT: f64 = 5.0;

impl LatencySearch {
    pub(crate) fn validate(&self) -> Result<()> {
        if self.limits.is_empty() {
            return Err(VbError::input("--latency-target names no limit"));
        }
        for l in &self.limits {
            l.validate("--latency-target")?;
        }
        bounds::count(
            "--search-steps",
            u64::from(self.max_steps),
            bounds::MIN_SEARCH_STEPS,
            bounds::MAX_SEARCH_STEPS,
        )?;
        bounds::number(
            "--search-precision (%)",
            self.precision_pct,
            bounds::MIN_SEARCH_PRECISION_PCT,
            bounds::MAX_SEARCH_PRECISION_PCT,
        )
        .map(|_| ())
    }

    /// "p99 <= 2ms and read p99.9 <= 5ms".
    pub(crate) fn label(&self) -> String {
        self.limits
            .iter()
            .map(LatencyLimit::label)
            .collect::<Vec<_>>()
            .join(" and ")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn two_limits_on_one_percentile_are_refused_naming_both() {
        let e = LatencyLimit::parse_list("--latency-target", "p99=2ms,p99=5ms").unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::BAD_INPUT);
        assert!(e.message.contains("two limits on p99"), "{}", e.message);
        assert!(e.message.contains("2ms and 5ms"), "{}", e.message);
        let e =
            LatencyLimit::parse_list("--latency-target", "read:p99.9=1ms,r:p99.9=1ms").unwrap_err();
        assert!(e.message.contains("read:p99.9"), "{}", e.message);
        // One percentile of different operations, or two percentiles, are fine.
        for ok in ["p99=2ms,read:p99=1ms,write:p99=3ms", "p99=2ms,p99.9=5ms"] {
            assert!(
                LatencyLimit::parse_list("--latency-target", ok).is_ok(),
                "{ok}"
            );
        }
    }

    #[test]
    fn limits_read_as_people_write_them() {
        let l = LatencyLimit::parse("--latency-target", "p99=2ms").unwrap();
        assert_eq!(
            (l.op, l.percentile, l.limit_us),
            (LatencyOp::All, 99.0, 2000.0)
        );
        let l = LatencyLimit::parse("--latency-target", " read:p99.9=500us").unwrap();
        assert_eq!(
            (l.op, l.percentile, l.limit_us),
            (LatencyOp::Read, 99.9, 500.0)
        );
        let l = LatencyLimit::parse("x", "write:p100=1s").unwrap();
        assert_eq!((l.op, l.percentile), (LatencyOp::Write, 100.0));
        assert_eq!(l.label(), "write p100 <= 1s");
        let v = LatencyLimit::parse_list("x", "p99=2ms,read:p50=1ms").unwrap();
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn bad_limits_are_refused_by_name() {
        for bad in [
            "p101=2ms",
            "p0=2ms",
            "p-5=2ms",
            "pNaN=2ms",
            "99=2ms",
            "p99",
            "p99=",
            "p99=0s",
            "p99=2h",
            "both:p99=2ms",
            "p99=2parsecs",
            "pinf=1ms",
        ] {
            let e = LatencyLimit::parse("--latency-target", bad).unwrap_err();
            assert!(
                e.message.contains("--latency-target"),
                "{bad}: {}",
                e.message
            );
        }
        let e = LatencyLimit::parse("--latency-target", "p101=2ms").unwrap_err();
        assert!(e.message.contains("outside (0, 100]"), "{}", e.message);
    }

    #[test]
    fn search_bounds_hold() {
        let l = LatencyLimit::parse("x", "p99=2ms").unwrap();
        let s = |steps, pct| LatencySearch {
            limits: vec![l],
            max_steps: steps,
            precision_pct: pct,
        };
        assert!(s(SEARCH_STEPS, SEARCH_PRECISION_PCT).validate().is_ok());
        assert!(s(2, 5.0).validate().is_err());
        assert!(s(1000, 5.0).validate().is_err());
        assert!(s(10, 0.0).validate().is_err());
        assert!(s(10, 90.0).validate().is_err());
        assert!(
            LatencySearch {
                limits: vec![],
                ..s(10, 5.0)
            }
            .validate()
            .is_err()
        );
    }
}

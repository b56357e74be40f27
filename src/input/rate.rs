//! `--rate-iops R,W` and `--latency-target` onto a run: the rates as the
//! services state them (per direction), and the search for the rate that
//! keeps a latency target.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::{Result, VbError};
use crate::input::args::rate::RateArgs;
use crate::spec::RunSpec;
use crate::spec::latency::{LatencyLimit, LatencySearch, SEARCH_PRECISION_PCT, SEARCH_STEPS};
use crate::units::bounds;

/// Applies the flags to the run every sweep point starts from.
/// `mix_given`: the user chose the read share (--read-pct, or a pattern
/// that fixes it), so per-direction caps cannot choose it.
pub(crate) fn apply(a: &RateArgs, mix_given: bool, base: &mut RunSpec) -> Result<()> {
    if let Some(text) = &a.rate_iops {
        if base.rate_iops.is_some() || base.shape.rate_bytes.is_some() {
            return Err(VbError::input(
                "--rate-iops and --rate both set a rate; give one",
            ));
        }
        let (r, w) = per_direction(text)?;
        let (read_pct, total) = resolve(r, w, mix_given.then_some(base.read_pct), base)?;
        base.read_pct = read_pct;
        base.rate_iops = Some(total);
    }
    if let Some(text) = &a.latency_target {
        let steps = match &a.search_steps {
            Some(t) => crate::units::parse_count_in(
                "--search-steps",
                t,
                bounds::MIN_SEARCH_STEPS,
                bounds::MAX_SEARCH_STEPS,
            )? as u32,
            None => SEARCH_STEPS,
        };
        let precision = match &a.search_precision {
            Some(t) => {
                let v: f64 = t.trim().trim_end_matches('%').parse().map_err(|_| {
                    VbError::input(format!("--search-precision '{t}' is not a percentage"))
                })?;
                bounds::number(
                    "--search-precision (%)",
                    v,
                    bounds::MIN_SEARCH_PRECISION_PCT,
                    bounds::MAX_SEARCH_PRECISION_PCT,
                )?
            }
            None => SEARCH_PRECISION_PCT,
        };
        base.latency_target = Some(LatencySearch {
            limits: LatencyLimit::parse_list("--latency-target", text)?,
            max_steps: steps,
            precision_pct: precision,
        });
    }
    Ok(())
}

/// `R,W`: each a rate (0.01..1e9), 0 or empty for "uncapped".
fn per_direction(text: &str) -> Result<(Option<f64>, Option<f64>)> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let [r, w] = parts.as_slice() else {
        return Err(VbError::input(format!(
            "--rate-iops '{text}' takes reads,writes per second (500,200); for one rate \
             across both use --rate"
        )));
    };
    let one = |t: &str| -> Result<Option<f64>> {
        if t.is_empty() {
            return Ok(None);
        }
        let v: f64 = t
            .parse()
            .map_err(|_| VbError::input(format!("--rate-iops '{text}': '{t}' is not a number")))?;
        if v == 0.0 {
            return Ok(None);
        }
        bounds::number("--rate-iops", v, bounds::MIN_RATE, bounds::MAX_RATE).map(Some)
    };
    Ok((one(r)?, one(w)?))
}

/// The read share and the total rate for per-direction caps. With the mix
/// given, the direction that reaches its cap first sets the pace; without
/// it, the mix follows the caps. The mix is whole percent, so the total is
/// the largest that keeps both directions at or under their caps.
fn resolve(r: Option<f64>, w: Option<f64>, mix: Option<u8>, run: &RunSpec) -> Result<(u8, f64)> {
    let read_pct = match (mix, r, w) {
        (Some(p), ..) => p,
        (None, Some(r), Some(w)) => ((r / (r + w) * 100.0).round() as u8).clamp(1, 99),
        (None, ..) => run.read_pct,
    };
    let share = f64::from(read_pct) / 100.0;
    let caps = [(r, share, "read"), (w, 1.0 - share, "write")];
    let total = caps
        .iter()
        .filter_map(|&(cap, s, _)| cap.filter(|_| s > 0.0).map(|c| c / s))
        .min_by(f64::total_cmp);
    let Some(total) = total else {
        let named = caps
            .iter()
            .filter(|(c, ..)| c.is_some())
            .map(|(.., n)| *n)
            .collect::<Vec<_>>()
            .join(" and ");
        return Err(VbError::input(if named.is_empty() {
            "--rate-iops caps neither reads nor writes".to_string()
        } else {
            format!(
                "--rate-iops caps {named}s, which --rw {} at {read_pct}% reads does not do",
                run.rw.name()
            )
        }));
    };
    bounds::number(
        "--rate-iops (total)",
        total,
        bounds::MIN_RATE,
        bounds::MAX_RATE,
    )?;
    Ok((read_pct, total))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::spec::Pattern;

    fn run(rw: &str) -> RunSpec {
        let rw = Pattern::parse(rw).unwrap();
        RunSpec {
            rw,
            read_pct: rw.fixed_read_pct().unwrap_or(50),
            ..RunSpec::default()
        }
    }

    fn rates(text: &str, mix: Option<u8>, rw: &str) -> Result<(u8, f64)> {
        let mut base = run(rw);
        if let Some(p) = mix {
            base.read_pct = p;
        }
        let a = RateArgs {
            rate_iops: Some(text.into()),
            ..RateArgs::default()
        };
        apply(&a, mix.is_some() || !base.rw.is_mixed(), &mut base)?;
        Ok((base.read_pct, base.rate_iops.unwrap_or(0.0)))
    }

    #[test]
    fn caps_per_direction_set_the_mix_or_the_pace() {
        // The mix follows the caps: 500 reads and 500 writes, 50/50.
        assert_eq!(rates("500,500", None, "randrw").unwrap(), (50, 1000.0));
        // A given mix: reads reach 500 first at 70% reads (714/s in all).
        let (p, t) = rates("500,500", Some(70), "randrw").unwrap();
        assert_eq!(p, 70);
        assert!((t - 500.0 / 0.7).abs() < 1e-9, "{t}");
        // Whole-percent mix: neither direction goes over its cap.
        let (p, t) = rates("500,200", None, "randrw").unwrap();
        assert_eq!(p, 71);
        assert!(t * 0.71 <= 500.0 + 1e-9 && t * 0.29 <= 200.0 + 1e-9, "{t}");
        // A read-only pattern with only a read cap; fio's empty / 0 = uncapped.
        assert_eq!(rates("800,", None, "randread").unwrap(), (100, 800.0));
        assert_eq!(rates("800,0", None, "randread").unwrap(), (100, 800.0));
    }

    #[test]
    fn per_direction_caps_refuse_what_they_cannot_mean() {
        for (text, rw) in [
            ("500", "randrw"),
            ("500,200,100", "randrw"),
            (",", "randrw"),
            ("0,0", "randrw"),
            ("abc,5", "randrw"),
            ("-5,5", "randrw"),
            ("1e10,5", "randrw"),
            (",500", "randread"),
        ] {
            let e = rates(text, None, rw).unwrap_err();
            assert!(e.message.contains("--rate-iops"), "{text}: {}", e.message);
        }
    }

    #[test]
    fn a_latency_target_becomes_the_runs_search() {
        let mut base = run("randread");
        let a = RateArgs {
            latency_target: Some("p99=2ms,read:p99.9=5ms".into()),
            search_steps: Some("12".into()),
            ..RateArgs::default()
        };
        apply(&a, true, &mut base).unwrap();
        let s = base.latency_target.unwrap();
        assert_eq!((s.limits.len(), s.max_steps, s.precision_pct), (2, 12, 5.0));
        let bad = RateArgs {
            latency_target: Some("p101=2ms".into()),
            ..RateArgs::default()
        };
        assert!(apply(&bad, true, &mut run("randread")).is_err());
    }
}

//! `--rate-iops R,W`, `--rate-bw R,W` and `--latency-target` onto a run:
//! the rates as the services state them (per direction), and the search
//! for the rate that keeps a latency target.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::{Result, VbError};
use crate::input::args::rate::RateArgs;
use crate::spec::RunSpec;
use crate::spec::latency::{LatencyLimit, LatencySearch, SEARCH_PRECISION_PCT, SEARCH_STEPS};
use crate::units::bounds;

/// What a pair of per-direction caps counts: I/Os or bytes a second. Both
/// become one total rate and the read share; the run's schedule (an I/O's
/// gap is 1/IOPS, or its length over the byte rate) then holds each
/// direction at its share, since reads and writes draw their sizes from the
/// same block-size mix.
#[derive(Clone, Copy)]
enum Caps {
    Iops,
    Bandwidth,
}

impl Caps {
    fn flag(self) -> &'static str {
        match self {
            Caps::Iops => "--rate-iops",
            Caps::Bandwidth => "--rate-bw",
        }
    }

    fn example(self) -> &'static str {
        match self {
            Caps::Iops => "reads,writes per second (500,200)",
            Caps::Bandwidth => "read,write bandwidth (40MiB/s,10MiB/s)",
        }
    }

    /// One side: None for "uncapped" (empty or 0, as fio writes it).
    fn one(self, text: &str, t: &str) -> Result<Option<f64>> {
        let flag = self.flag();
        if t.is_empty() {
            return Ok(None);
        }
        match self {
            Caps::Iops => {
                let v: f64 = t.parse().map_err(|_| {
                    VbError::input(format!("{flag} '{text}': '{t}' is not a number"))
                })?;
                if v == 0.0 {
                    return Ok(None);
                }
                bounds::number(flag, v, bounds::MIN_RATE, bounds::MAX_RATE).map(Some)
            }
            Caps::Bandwidth => {
                if t.trim_start_matches('0').is_empty() {
                    return Ok(None);
                }
                // fio's rate=50m is bytes a second too: "/s" is implied.
                let size = crate::spec::shape::bandwidth_size(t).unwrap_or(t);
                let bytes = crate::units::parse_size(size)
                    .map_err(|e| VbError::input(format!("{flag} '{text}': {}", e.message)))?
                    as f64;
                let (lo, hi) = (bounds::MIN_RATE_BYTES, bounds::MAX_RATE_BYTES);
                if !(lo..=hi).contains(&bytes) {
                    return Err(VbError::input(format!(
                        "{flag} '{text}': {t} is outside {}/s..{}/s",
                        crate::units::format_size(lo as u64),
                        crate::units::format_size(hi as u64)
                    )));
                }
                Ok(Some(bytes))
            }
        }
    }

    fn total_bound(self, total: f64) -> Result<f64> {
        let (lo, hi, name) = match self {
            Caps::Iops => (bounds::MIN_RATE, bounds::MAX_RATE, "--rate-iops (total)"),
            Caps::Bandwidth => (
                bounds::MIN_RATE_BYTES,
                bounds::MAX_RATE_BYTES,
                "--rate-bw (total bytes/s)",
            ),
        };
        bounds::number(name, total, lo, hi)
    }
}

/// Applies the flags to the run every sweep point starts from.
/// `mix_given`: the user chose the read share (--read-pct, or a pattern
/// that fixes it), so per-direction caps cannot choose it.
pub(crate) fn apply(a: &RateArgs, mix_given: bool, base: &mut RunSpec) -> Result<()> {
    let set = base.rate_iops.is_some() || base.shape.rate_bytes.is_some();
    match (&a.rate_iops, &a.rate_bw) {
        (Some(_), Some(_)) => {
            return Err(VbError::input(
                "--rate-iops and --rate-bw both set a rate; give one",
            ));
        }
        (Some(_), None) | (None, Some(_)) if set => {
            let flag = if a.rate_iops.is_some() {
                Caps::Iops.flag()
            } else {
                Caps::Bandwidth.flag()
            };
            return Err(VbError::input(format!(
                "{flag} and --rate both set a rate; give one"
            )));
        }
        _ => {}
    }
    for (text, caps) in [(&a.rate_iops, Caps::Iops), (&a.rate_bw, Caps::Bandwidth)] {
        let Some(text) = text else { continue };
        let (r, w) = per_direction(caps, text)?;
        let (read_pct, total) = resolve(caps, r, w, mix_given.then_some(base.read_pct), base)?;
        base.read_pct = read_pct;
        match caps {
            Caps::Iops => base.rate_iops = Some(total),
            Caps::Bandwidth => base.shape.rate_bytes = Some(total),
        }
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

/// `R,W`: each a rate within its bound, 0 or empty for "uncapped".
fn per_direction(caps: Caps, text: &str) -> Result<(Option<f64>, Option<f64>)> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let [r, w] = parts.as_slice() else {
        return Err(VbError::input(format!(
            "{} '{text}' takes {}; for one rate across both use --rate",
            caps.flag(),
            caps.example()
        )));
    };
    Ok((caps.one(text, r)?, caps.one(text, w)?))
}

/// The read share and the total rate for per-direction caps. With the mix
/// given, the direction that reaches its cap first sets the pace; without
/// it, the mix follows the caps. The mix is whole percent, so the total is
/// the largest that keeps both directions at or under their caps.
fn resolve(
    kind: Caps,
    r: Option<f64>,
    w: Option<f64>,
    mix: Option<u8>,
    run: &RunSpec,
) -> Result<(u8, f64)> {
    // Bandwidth caps become I/O rates over each direction's mean size, so
    // the mix is of I/Os (what read_pct counts) when writes have sizes of
    // their own (--write-bs); the total goes back to bytes below.
    let (size_r, size_w) = match kind {
        Caps::Bandwidth if !run.write_bs.is_empty() => (run.mean_size(false), run.mean_size(true)),
        _ => (1.0, 1.0),
    };
    let (r_io, w_io) = (r.map(|x| x / size_r), w.map(|x| x / size_w));
    let read_pct = match (mix, r_io, w_io) {
        (Some(p), ..) => p,
        (None, Some(r), Some(w)) => ((r / (r + w) * 100.0).round() as u8).clamp(1, 99),
        (None, ..) => run.read_pct,
    };
    let share = f64::from(read_pct) / 100.0;
    let caps = [(r_io, share, "read"), (w_io, 1.0 - share, "write")];
    let total = caps
        .iter()
        .filter_map(|&(cap, s, _)| cap.filter(|_| s > 0.0).map(|c| c / s))
        .min_by(f64::total_cmp)
        .map(|io| io * (share * size_r + (1.0 - share) * size_w));
    let Some(total) = total else {
        let named = caps
            .iter()
            .filter(|(c, ..)| c.is_some())
            .map(|(.., n)| *n)
            .collect::<Vec<_>>()
            .join(" and ");
        let flag = kind.flag();
        return Err(VbError::input(if named.is_empty() {
            format!("{flag} caps neither reads nor writes")
        } else {
            format!(
                "{flag} caps {named}s, which --rw {} at {read_pct}% reads does not do",
                run.rw.name()
            )
        }));
    };
    Ok((read_pct, kind.total_bound(total)?))
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

    fn bandwidths(text: &str, mix: Option<u8>, rw: &str) -> Result<(u8, f64)> {
        let mut base = run(rw);
        if let Some(p) = mix {
            base.read_pct = p;
        }
        let a = RateArgs {
            rate_bw: Some(text.into()),
            ..RateArgs::default()
        };
        apply(&a, mix.is_some() || !base.rw.is_mixed(), &mut base)?;
        assert!(base.rate_iops.is_none(), "a bandwidth cap paces by bytes");
        Ok((base.read_pct, base.shape.rate_bytes.unwrap_or(0.0)))
    }

    const MIB: f64 = 1048576.0;

    #[test]
    fn bandwidth_caps_per_direction_set_the_mix_or_the_pace() {
        // 40 + 10 MiB/s: 80% reads at 50 MiB/s in all.
        assert_eq!(
            bandwidths("40MiB/s,10MiB/s", None, "randrw").unwrap(),
            (80, 50.0 * MIB)
        );
        // "/s" may be left out; fio's 40m is bytes a second.
        assert_eq!(
            bandwidths("40MiB,10m", None, "randrw").unwrap(),
            (80, 50.0 * MIB)
        );
        // A given 50/50 mix: writes reach 10 MiB/s first, so 20 MiB/s in all.
        assert_eq!(
            bandwidths("40MiB/s,10MiB/s", Some(50), "randrw").unwrap(),
            (50, 20.0 * MIB)
        );
        // Whole-percent mix keeps both under their caps.
        let (p, t) = bandwidths("30MiB/s,7MiB/s", None, "randrw").unwrap();
        assert_eq!(p, 81);
        assert!(t * 0.81 <= 30.0 * MIB + 1e-6 && t * 0.19 <= 7.0 * MIB + 1e-6);
        // One direction uncapped (empty or 0); a write-only pattern.
        assert_eq!(
            bandwidths(",8MiB/s", None, "randwrite").unwrap(),
            (0, 8.0 * MIB)
        );
        assert_eq!(
            bandwidths("0,8MiB/s", None, "write").unwrap(),
            (0, 8.0 * MIB)
        );
    }

    #[test]
    fn bandwidth_caps_over_per_direction_sizes_mix_i_os_not_bytes() {
        // 16 MiB/s of 8 KiB reads and 16 MiB/s of 128 KiB writes are 2048
        // and 128 I/Os a second: 94% of the I/Os are reads, and the total
        // keeps both directions' bytes under their caps.
        let mut base = run("randrw");
        base.bs = vec![crate::spec::BlockSize {
            bytes: 8192,
            weight: 1,
        }];
        base.write_bs = vec![crate::spec::BlockSize {
            bytes: 131072,
            weight: 1,
        }];
        let a = RateArgs {
            rate_bw: Some("16MiB/s,16MiB/s".into()),
            ..RateArgs::default()
        };
        apply(&a, false, &mut base).unwrap();
        assert_eq!(base.read_pct, 94);
        let bytes = base.shape.rate_bytes.unwrap();
        let io = bytes / base.mean_bs();
        let (read_b, write_b) = (io * 0.94 * 8192.0, io * 0.06 * 131072.0);
        assert!(read_b <= 16.0 * MIB * 1.000001 && write_b <= 16.0 * MIB * 1.000001);
        assert!(
            (read_b - 16.0 * MIB).abs() < 1.0 || (write_b - 16.0 * MIB).abs() < 1.0,
            "one direction at its cap: {read_b} {write_b}"
        );
    }

    #[test]
    fn bandwidth_caps_refuse_what_they_cannot_mean_naming_the_flag() {
        for (text, rw, needle) in [
            ("40MiB/s", "randrw", "takes read,write bandwidth"),
            ("1,2,3", "randrw", "takes read,write bandwidth"),
            ("0,0", "randrw", "caps neither"),
            (",", "randrw", "caps neither"),
            ("abc,5MiB", "randrw", "--rate-bw"),
            ("-5MiB,5MiB", "randrw", "--rate-bw"),
            ("100,5MiB", "randrw", "100 is outside 1KiB/s..1PiB/s"),
            ("2PiB/s,1MiB/s", "randrw", "outside"),
            (",5MiB/s", "randread", "caps writes, which --rw randread"),
        ] {
            let e = bandwidths(text, None, rw).unwrap_err();
            assert!(e.message.contains("--rate-bw"), "{text}: {}", e.message);
            assert!(e.message.contains(needle), "{text}: {}", e.message);
        }
        // One rate at a time.
        let mut base = run("randrw");
        let both = RateArgs {
            rate_iops: Some("5,5".into()),
            rate_bw: Some("5MiB,5MiB".into()),
            ..RateArgs::default()
        };
        let e = apply(&both, false, &mut base).unwrap_err();
        assert!(
            e.message.contains("--rate-iops and --rate-bw"),
            "{}",
            e.message
        );
        base.shape.rate_bytes = Some(MIB);
        let bw = RateArgs {
            rate_bw: Some("5MiB,5MiB".into()),
            ..RateArgs::default()
        };
        let e = apply(&bw, false, &mut base).unwrap_err();
        assert!(e.message.contains("--rate-bw and --rate"), "{}", e.message);
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

//! Little's law for sizing a test: I/Os in flight = IOPS x latency. The
//! papers use it to pick thread counts (e.g. 1.3 ms x 3,500 IOPS = 4.6
//! threads); given two of the three, `volbench plan` gives the third.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::{Result, VbError};
use crate::input::args::PlanArgs;
use crate::output::fmt::{in_flight, micros, thousands};
use crate::units::bounds;
use crate::units::{parse_count_in, parse_duration_in};

/// In-flight I/Os needed for `iops` at `latency_s`.
pub(crate) fn concurrency(iops: f64, latency_s: f64) -> f64 {
    iops * latency_s
}

/// IOPS that `in_flight` I/Os sustain at `latency_s`.
pub(crate) fn iops(in_flight: f64, latency_s: f64) -> f64 {
    in_flight / latency_s
}

/// The latency at which `in_flight` I/Os give `iops`.
pub(crate) fn latency_s(in_flight: f64, iops: f64) -> f64 {
    in_flight / iops
}

/// A number with thousands separators allowed (3,500), within `lo..=hi`.
fn positive(flag: &str, text: &str, lo: f64, hi: f64) -> Result<f64> {
    let v = text
        .trim()
        .replace(',', "")
        .parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && v.is_finite())
        .ok_or_else(|| VbError::input(format!("{flag} '{text}' is not a positive number")))?;
    bounds::number(flag, v, lo, hi)
}

fn ms(s: f64) -> String {
    micros(s * 1e6)
}

pub fn answer(a: &PlanArgs) -> Result<String> {
    let hosts = parse_count_in("--hosts", &a.hosts, 1, bounds::MAX_HOSTS as u64)? as f64;
    let lat = a
        .latency
        .as_deref()
        .map(|t| {
            parse_duration_in("--latency", t, bounds::MIN_LATENCY, bounds::MAX_LATENCY)
                .map(|d| d.as_secs_f64())
        })
        .transpose()?;
    let iops_v = a
        .iops
        .as_deref()
        .map(|t| positive("--iops", t, bounds::MIN_PLAN_IOPS, bounds::MAX_PLAN_IOPS))
        .transpose()?;
    let conc = a
        .concurrency
        .as_deref()
        .map(|t| {
            positive(
                "--concurrency",
                t,
                bounds::MIN_PLAN_CONCURRENCY,
                bounds::MAX_PLAN_CONCURRENCY,
            )
        })
        .transpose()?;
    // A host runs whole threads: a share like 0.17 cannot be set, so each
    // host's share is rounded up and the total that gives is said.
    let per_host = |n: f64| {
        if hosts <= 1.0 {
            return String::new();
        }
        let each = (n / hosts).ceil().max(1.0);
        let more = if each * hosts > n.ceil() {
            format!(
                ", {} in all: each host's share rounded up to whole I/Os",
                each * hosts
            )
        } else {
            String::new()
        };
        format!(", {each} per host over {hosts} hosts{more}")
    };
    Ok(match (lat, iops_v, conc) {
        (Some(l), Some(i), None) => {
            let n = concurrency(i, l);
            let whole = n.ceil().max(1.0);
            format!(
                "{} IOPS at {} latency needs {} I/Os in flight: use at least {whole} \
                 (threads x iodepth, summed over hosts{})",
                thousands(i),
                ms(l),
                in_flight(n),
                per_host(whole)
            )
        }
        (Some(l), None, Some(c)) => format!(
            "{c} I/Os in flight at {} latency sustain at most {} IOPS{}",
            ms(l),
            thousands(iops(c, l)),
            per_host(c)
        ),
        (None, Some(i), Some(c)) => format!(
            "{} IOPS with {c} I/Os in flight means a mean latency of {}; if the storage is slower, \
             add concurrency",
            thousands(i),
            ms(latency_s(c, i))
        ),
        _ => {
            return Err(VbError::input(
                "give exactly two of --latency, --iops and --concurrency (e.g. --latency 1.3ms --iops 3500)",
            ));
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn args(latency: Option<&str>, iops: Option<&str>, conc: Option<&str>) -> PlanArgs {
        PlanArgs {
            latency: latency.map(String::from),
            iops: iops.map(String::from),
            concurrency: conc.map(String::from),
            hosts: "1".into(),
        }
    }

    #[test]
    fn the_papers_example() {
        // 1.3 ms x 3,500 IOPS = 4.55 threads (Azure NetApp Files paper).
        assert!((concurrency(3500.0, 0.0013) - 4.55).abs() < 1e-9);
        let text = answer(&args(Some("1.3ms"), Some("3500"), None)).unwrap();
        assert!(
            text.contains("4.55 I/Os in flight") && text.contains("at least 5"),
            "{text}"
        );
    }

    #[test]
    fn the_inverse_questions() {
        assert!((iops(8.0, 0.002) - 4000.0).abs() < 1e-9);
        assert!((latency_s(8.0, 4000.0) - 0.002).abs() < 1e-12);
        assert!(
            answer(&args(Some("2ms"), None, Some("8")))
                .unwrap()
                .contains("4,000 IOPS")
        );
        assert!(
            answer(&args(None, Some("4000"), Some("8")))
                .unwrap()
                .contains("2 ms")
        );
    }

    #[test]
    fn spreads_over_hosts() {
        let mut a = args(Some("1ms"), Some("24000"), None);
        a.hosts = "6".into();
        assert!(answer(&a).unwrap().contains(", 4 per host over 6 hosts)"));
    }

    #[test]
    fn a_host_never_gets_a_fraction_of_a_thread() {
        let mut a = args(Some("1ms"), Some("1000"), None);
        a.hosts = "6".into();
        let text = answer(&a).unwrap();
        assert!(
            text.contains("1 per host over 6 hosts, 6 in all: each host's share rounded up"),
            "{text}"
        );
        assert!(!text.contains("0.17"), "{text}");
        let mut a = args(Some("1ms"), None, Some("8"));
        a.hosts = "6".into();
        let text = answer(&a).unwrap();
        assert!(
            text.contains("2 per host over 6 hosts, 12 in all"),
            "{text}"
        );
    }

    #[test]
    fn needs_two_of_three() {
        assert!(answer(&args(Some("1ms"), None, None)).is_err());
        assert!(answer(&args(Some("1ms"), Some("1"), Some("1"))).is_err());
        assert!(answer(&args(None, Some("-5"), Some("1"))).is_err());
    }

    #[test]
    fn extreme_numbers_are_refused_with_their_bounds() {
        // Found in issue 9: --latency 1e30 panicked.
        let e = answer(&args(Some("1e30"), Some("5"), None)).unwrap_err();
        assert!(e.to_string().contains("--latency"), "{e}");
        let e = answer(&args(Some("1ms"), Some("1e-300"), None)).unwrap_err();
        assert!(e.to_string().contains("--iops 1e-300 is outside"), "{e}");
        let e = answer(&args(None, Some("5"), Some("1e30"))).unwrap_err();
        assert!(e.to_string().contains("--concurrency"), "{e}");
        let mut a = args(Some("1ms"), Some("5"), None);
        a.hosts = "0".into();
        assert!(
            answer(&a)
                .unwrap_err()
                .to_string()
                .contains("--hosts 0 is outside 1..1024")
        );
    }
}

//! `compare PROFILE RESULT`: how far production sits below what a volume
//! gave. The p95 of the profile's busy intervals (never one interval: a
//! single burst, or a sampling edge, would set the verdict) is held against
//! the result's run that resembles production most, and against the limits
//! the result states (`--expect`) or found (`--latency-target`); the
//! nearest of them is the headroom.

use serde::Serialize;

use crate::output::fmt::{micros, number, trim};
use crate::result::profile::{DeviceSummary, Profile};
use crate::result::search::measured_us;
use crate::result::{ResultDoc, RunResult};
use crate::spec::latency::{LatencyLimit, LatencyOp};

/// The JSON verdict's schema name; bump on an incompatible change.
pub(crate) const SCHEMA: &str = "volbench.headroom/v1";

/// A run resembles production when its read share is within this many
/// percentage points of the profile's mean mix...
pub(crate) const MIX_TOLERANCE_PTS: f64 = 10.0;
/// ...and its mean request size within this fraction of the profile's: the
/// block layer merges and splits requests, so the device's mean size is
/// never exactly the size the application asked for.
pub(crate) const SIZE_TOLERANCE: f64 = 0.25;

/// What production did on the device compared, over the capture.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Production {
    pub(crate) device: String,
    pub(crate) peak_iops: f64,
    pub(crate) p95_iops: f64,
    pub(crate) peak_mib_s: f64,
    pub(crate) p95_mib_s: f64,
    /// The busy intervals the p95 is taken over (with fewer than 20, the
    /// p95 is the busiest of them, as nearest-rank gives).
    pub(crate) intervals: usize,
    /// What the headroom is held against: "p95 of 60 busy intervals".
    pub(crate) yardstick: String,
    pub(crate) read_pct: f64,
    pub(crate) request_kib: f64,
    /// Mean time per request (iostat's await) in the worst interval and at
    /// the p95 of intervals: the block counters give no percentiles.
    pub(crate) peak_await_ms: f64,
    pub(crate) p95_await_ms: f64,
}

/// The run of the result production is held against.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Measured {
    pub(crate) run: String,
    pub(crate) iops: f64,
    pub(crate) mib_s: f64,
    pub(crate) read_pct: f64,
    pub(crate) request_kib: f64,
    /// p99 over reads and writes, from the run's merged histograms.
    pub(crate) p99_us: Option<f64>,
    /// Whether its mix and size are within the tolerances of production's.
    pub(crate) resembles: bool,
    /// The rate the run was held to, when it was (an open-loop `--like`
    /// run): its figures are then that rate, not a ceiling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) held_to: Option<String>,
}

/// One limit and how far above production's peak it lies.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Limit {
    /// "measured IOPS", "measured MiB/s", "stated IOPS", "IOPS at p99 <= 2 ms"...
    pub(crate) what: String,
    pub(crate) value: f64,
    /// What production's peak reaches of the same figure.
    pub(crate) production: f64,
    /// value / production: how many times production's peak fits under it.
    pub(crate) headroom: f64,
}

/// The whole statement, and the verdict `--fail-below` makes of it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Headroom {
    pub(crate) schema: &'static str,
    pub(crate) production: Production,
    pub(crate) measured: Measured,
    /// Why the run does not resemble production, when it does not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) differences: Vec<String>,
    /// Every limit found, nearest first.
    pub(crate) limits: Vec<Limit>,
    /// The nearest limit's headroom.
    pub(crate) headroom: f64,
    pub(crate) nearest: String,
    pub(crate) fail_below: Option<f64>,
    pub(crate) passed: bool,
}

/// The run's read share and mean request size, measured (what the device
/// saw is compared with what the run did, not with what it was asked).
fn mix_and_size(run: &RunResult) -> (f64, f64) {
    let (r, w) = (&run.totals.read, &run.totals.write);
    let ops = (r.ops + w.ops) as f64;
    if ops == 0.0 {
        return (0.0, 0.0);
    }
    (
        r.ops as f64 / ops * 100.0,
        (r.bytes + w.bytes) as f64 / ops / 1024.0,
    )
}

fn differences(p: &Production, read_pct: f64, kib: f64) -> Vec<String> {
    let mut v = Vec::new();
    if (read_pct - p.read_pct).abs() > MIX_TOLERANCE_PTS {
        v.push(format!(
            "its mix is {}/{} against production's {}/{} (more than {} points apart)",
            trim(read_pct, 0),
            trim(100.0 - read_pct, 0),
            trim(p.read_pct, 0),
            trim(100.0 - p.read_pct, 0),
            trim(MIX_TOLERANCE_PTS, 0)
        ));
    }
    if p.request_kib > 0.0 && (kib / p.request_kib - 1.0).abs() > SIZE_TOLERANCE {
        v.push(format!(
            "its requests average {} KiB against production's {} KiB (more than {}% apart)",
            trim(kib, 1),
            trim(p.request_kib, 1),
            trim(SIZE_TOLERANCE * 100.0, 0)
        ));
    }
    v
}

fn production(d: &DeviceSummary) -> Production {
    Production {
        device: d.name.clone(),
        peak_iops: d.iops.peak,
        p95_iops: d.iops.p95,
        peak_mib_s: d.mib_s.peak,
        p95_mib_s: d.mib_s.p95,
        intervals: d.active_intervals,
        yardstick: format!("p95 of {} busy intervals", d.active_intervals),
        read_pct: d.read_pct.mean,
        request_kib: d.request_kib.mean,
        peak_await_ms: d.await_ms.peak,
        p95_await_ms: d.await_ms.p95,
    }
}

/// The run to hold production against: of the runs that resemble it, the
/// one that gave the most IOPS; else (said so) the one nearest in mix and size.
fn pick<'a>(p: &Production, runs: &[&'a RunResult]) -> Option<(&'a RunResult, Vec<String>)> {
    let scored: Vec<(&RunResult, Vec<String>)> = runs
        .iter()
        .filter(|r| r.totals.read.ops + r.totals.write.ops > 0)
        .map(|r| {
            let (pct, kib) = mix_and_size(r);
            (*r, differences(p, pct, kib))
        })
        .collect();
    let best_alike = scored
        .iter()
        .filter(|(_, d)| d.is_empty())
        .max_by(|a, b| a.0.total_iops().total_cmp(&b.0.total_iops()));
    if let Some((r, d)) = best_alike {
        return Some((r, d.clone()));
    }
    let distance = |r: &RunResult| {
        let (pct, kib) = mix_and_size(r);
        let size = if p.request_kib > 0.0 {
            (kib / p.request_kib - 1.0).abs()
        } else {
            0.0
        };
        (pct - p.read_pct).abs() / 100.0 + size
    };
    scored
        .into_iter()
        .min_by(|a, b| distance(a.0).total_cmp(&distance(b.0)))
}

fn limit(what: String, value: f64, production: f64) -> Option<Limit> {
    if production > 0.0 && value.is_finite() && value > 0.0 {
        Some(Limit {
            what,
            value,
            production,
            headroom: value / production,
        })
    } else {
        None
    }
}

/// Production's p95 interval against the run's figures and the result's
/// limits.
fn limits(p: &Production, run: &RunResult, doc: &ResultDoc) -> Vec<Limit> {
    let mut v: Vec<Limit> = Vec::new();
    v.extend(limit("measured IOPS".into(), run.total_iops(), p.p95_iops));
    v.extend(limit(
        "measured MiB/s".into(),
        run.total_mib_s(),
        p.p95_mib_s,
    ));
    if let Some(e) = &doc.expect {
        if let Some(i) = e.iops {
            v.extend(limit("stated IOPS limit".into(), i, p.p95_iops));
        }
        if let Some(m) = e.mib_s {
            v.extend(limit("stated MiB/s limit".into(), m, p.p95_mib_s));
        }
    }
    for s in &doc.latency_search {
        if let Some(found) = s.found_iops {
            let keeping = s
                .limits
                .iter()
                .map(LatencyLimit::label)
                .collect::<Vec<_>>()
                .join(" and ");
            v.extend(limit(format!("IOPS keeping {keeping}"), found, p.p95_iops));
        }
    }
    v.sort_by(|a, b| a.headroom.total_cmp(&b.headroom));
    v
}

/// The headroom of `doc` over the production in `profile` (its busiest
/// device); Err says why there is nothing to compare.
pub(crate) fn headroom(
    profile: &Profile,
    doc: &ResultDoc,
    shown: &str,
    fail_below: Option<f64>,
) -> Result<Headroom, String> {
    let dev = profile
        .device(None)
        .filter(|d| d.iops.p95 > 0.0)
        .ok_or("the profile saw no block requests: there is no production peak to compare")?;
    let prod = production(dev);
    let runs: Vec<&RunResult> = doc.runs.iter().filter(|r| !r.workload.discard).collect();
    let (run, differences) = pick(&prod, &runs)
        .ok_or_else(|| format!("{shown} has no run that completed any read or write"))?;
    let (read_pct, request_kib) = mix_and_size(run);
    let p99 = LatencyLimit {
        op: LatencyOp::All,
        percentile: 99.0,
        limit_us: 0.0,
    };
    let limits = limits(&prod, run, doc);
    let nearest = limits
        .first()
        .ok_or_else(|| format!("{shown}: its run {} gave no figure to compare", run.name))?;
    let (headroom, nearest_what) = (nearest.headroom, nearest.what.clone());
    Ok(Headroom {
        schema: SCHEMA,
        measured: Measured {
            run: run.name.clone(),
            iops: run.total_iops(),
            mib_s: run.total_mib_s(),
            read_pct,
            request_kib,
            p99_us: measured_us(run, &p99),
            resembles: differences.is_empty(),
            held_to: held_to(run),
        },
        production: prod,
        differences,
        limits,
        headroom,
        nearest: nearest_what,
        fail_below,
        passed: fail_below.is_none_or(|f| headroom >= f),
    })
}

/// The rate a run was held to, as a person reads it; None for a closed
/// loop (and for a rate it could not keep: then it ran flat out).
fn held_to(run: &RunResult) -> Option<String> {
    if let Some(r) = &run.rate {
        return r.reached.then(|| format!("{} IOPS", number(r.target_iops)));
    }
    if let Some(b) = run.workload.shape.rate_bytes {
        return Some(format!("{}/s", crate::units::format_size(b as u64)));
    }
    crate::result::diagnosis::paced(run).then(|| "a share of its maximum".to_string())
}

/// A headroom as printed: two decimals below 2x, where 0.95x and 1x are
/// different verdicts, never rounded up past what was measured; one above.
fn ratio(v: f64) -> String {
    if v < 2.0 {
        // The nudge keeps a ratio that is 0.95 in decimal (0.9499... in
        // binary) from flooring to 0.94.
        trim(((v * 100.0) + 1e-9).floor() / 100.0, 2)
    } else {
        trim(v, 1)
    }
}

impl Headroom {
    /// The statement a person reads, one line each.
    pub(crate) fn lines(&self) -> Vec<String> {
        let (p, m) = (&self.production, &self.measured);
        let mut out = vec![format!(
            "production ({}) does {} IOPS at the {} (peak {}), {} MiB/s, {} KiB, {}/{}, await {} at peak (p95 {}); \
             this volume gave {} IOPS, {} MiB/s{} ({}): {}x headroom",
            p.device,
            number(p.p95_iops),
            p.yardstick,
            number(p.peak_iops),
            trim(p.p95_mib_s, 1),
            trim(p.request_kib, 1),
            trim(p.read_pct, 0),
            trim(100.0 - p.read_pct, 0),
            micros(p.peak_await_ms * 1000.0),
            micros(p.p95_await_ms * 1000.0),
            number(m.iops),
            trim(m.mib_s, 1),
            m.p99_us
                .map(|u| format!(" at p99 {}", micros(u)))
                .unwrap_or_default(),
            m.run,
            ratio(self.headroom),
        )];
        out.push(format!(
            "nearest limit: {} ({} against production's p95 {}: {}x)",
            self.nearest,
            number(self.limits[0].value),
            number(self.limits[0].production),
            ratio(self.limits[0].headroom)
        ));
        for l in self.limits.iter().skip(1) {
            out.push(format!(
                "  then {}: {} ({}x)",
                l.what,
                number(l.value),
                ratio(l.headroom)
            ));
        }
        if let Some(rate) = &self.measured.held_to {
            out.push(format!(
                "warning: run {} was held to a rate ({}): its figures are the rate asked, not \
                 where the volume stops, so it cannot show headroom; measure closed loop (no \
                 --rate) or with --latency-target",
                m.run, rate
            ));
        }
        if !self.differences.is_empty() {
            out.push(format!(
                "warning: run {} does not resemble production: {}; the headroom is of a different workload",
                m.run,
                self.differences.join("; ")
            ));
        }
        if let Some(f) = self.fail_below {
            out.push(if self.passed {
                format!("pass: headroom {}x >= {}", ratio(self.headroom), trim(f, 2))
            } else {
                format!("FAIL: headroom {}x < {}", ratio(self.headroom), trim(f, 2))
            });
        }
        out
    }
}

#[cfg(test)]
mod ratio_tests {
    use super::ratio;

    #[test]
    fn a_headroom_is_never_printed_above_what_was_measured() {
        assert_eq!(ratio(0.95), "0.95");
        assert_eq!(ratio(0.999), "0.99");
        assert_eq!(ratio(1.049), "1.04");
        assert_eq!(ratio(2.13), "2.1");
    }
}

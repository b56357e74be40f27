//! `compare --fail-below RATIO`: the verdict a CI pipeline acts on. Each
//! matched figure of each later result is held against the first result's;
//! one worse than RATIO of it fails the comparison.
//!
//! "Worse" is measured as a performance ratio, so one threshold serves every
//! figure: new/base for IOPS and MiB/s (higher is better), base/new for
//! latencies (lower is better). 0.9 thus fails a 10% drop in IOPS and a
//! latency grown past 1/0.9 = 1.11x.

use serde::Serialize;

use super::model::{Compared, Comparison, show_ratio};
use super::ops_of_match;
use crate::error::{Result, VbError, exit};
use crate::report::{Item, Source};
use crate::units::bounds;

/// The JSON verdict's schema name; bump on an incompatible change.
pub(crate) const SCHEMA: &str = "volbench.compare/v1";

/// One figure of one run held against the base.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Checked {
    pub(crate) run: String,
    pub(crate) op: String,
    pub(crate) metric: &'static str,
    /// The result this figure comes from (its label), and the base's.
    pub(crate) result: String,
    pub(crate) base: f64,
    pub(crate) value: f64,
    /// value / base, as the comparison table shows it.
    pub(crate) ratio: f64,
    /// value / base where higher is better, base / value for latencies.
    pub(crate) performance: f64,
    pub(crate) failed: bool,
}

/// What `--json` prints: the figures, the unmatched runs, the warnings and
/// whether the gate passed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Verdict {
    pub(crate) schema: &'static str,
    pub(crate) base: String,
    pub(crate) fail_below: Option<f64>,
    pub(crate) passed: bool,
    pub(crate) figures: Vec<Checked>,
    /// Runs of the base with no counterpart in a later result: named, not
    /// failed (nothing was measured to compare).
    pub(crate) unmatched: Vec<String>,
    /// Figures whose base is zero: no ratio can be taken.
    pub(crate) no_base: Vec<String>,
    pub(crate) warnings: Vec<String>,
}

impl Compared {
    /// The metric's name as `--fail-on` takes it and the JSON writes it.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Compared::Iops => "iops",
            Compared::MibS => "mib_s",
            Compared::MeanLatency => "mean_lat",
            Compared::P99Latency => "p99_lat",
        }
    }

    fn lower_is_better(self) -> bool {
        matches!(self, Compared::MeanLatency | Compared::P99Latency)
    }

    /// `--fail-on`'s names: the key, or a short form.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "iops" => Some(Compared::Iops),
            "mib_s" | "mib/s" | "mibs" | "bw" => Some(Compared::MibS),
            "mean_lat" | "mean" | "lat" => Some(Compared::MeanLatency),
            "p99_lat" | "p99" => Some(Compared::P99Latency),
            _ => None,
        }
    }
}

/// `--fail-below` and `--fail-on` as given, checked.
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    pub(crate) fail_below: Option<f64>,
    pub(crate) metrics: Vec<Compared>,
}

impl Gate {
    pub(crate) fn parse(fail_below: Option<&str>, fail_on: Option<&str>) -> Result<Self> {
        let fail_below = match fail_below {
            None => None,
            Some(t) => {
                let v: f64 = t.trim().parse().map_err(|_| {
                    VbError::input(format!(
                        "--fail-below {t:?} is not a number (a ratio such as 0.9)"
                    ))
                })?;
                Some(bounds::number(
                    "--fail-below",
                    v,
                    bounds::MIN_FAIL_BELOW,
                    bounds::MAX_FAIL_BELOW,
                )?)
            }
        };
        let metrics = match fail_on {
            None => Compared::ALL.to_vec(),
            Some(list) => {
                let mut v = Vec::new();
                for name in list.split(',') {
                    let m = Compared::parse(name).ok_or_else(|| {
                        VbError::input(format!(
                            "--fail-on {:?}: unknown figure (iops, mib_s, mean_lat, p99_lat)",
                            name.trim()
                        ))
                    })?;
                    if !v.contains(&m) {
                        v.push(m);
                    }
                }
                v
            }
        };
        Ok(Self {
            fail_below,
            metrics,
        })
    }

    pub(crate) fn judge(&self, c: &Comparison, sources: &[Source], all: &[Item]) -> Verdict {
        let v = verdict(c, sources, all, &self.metrics, self.fail_below);
        if let Some(r) = self.fail_below {
            let failed = failure_lines(&v);
            for line in &failed {
                crate::console::errln!("failed: {line}");
            }
            if failed.is_empty() {
                crate::console::errln!(
                    "gate passed: {} figure(s), none below {r} of the base",
                    v.figures.len()
                );
            } else {
                crate::console::errln!(
                    "gate failed: {} of {} figure(s) below {r} of the base",
                    failed.len(),
                    v.figures.len()
                );
            }
        }
        v
    }

    pub(crate) fn json(&self, v: &Verdict) -> Result<String> {
        serde_json::to_string_pretty(v)
            .map_err(|e| VbError::run(format!("writing the verdict as JSON: {e}")))
    }

    pub(crate) fn exit_code(&self, v: &Verdict) -> i32 {
        if v.passed { exit::OK } else { exit::REGRESSION }
    }
}

/// Every matched figure of the chosen metrics against the base, failed
/// where its performance ratio is below `fail_below`.
pub(crate) fn verdict(
    c: &Comparison,
    sources: &[Source],
    all: &[Item],
    metrics: &[Compared],
    fail_below: Option<f64>,
) -> Verdict {
    let mut v = Verdict {
        schema: SCHEMA,
        base: sources.first().map(|s| s.label.clone()).unwrap_or_default(),
        fail_below,
        passed: true,
        figures: Vec::new(),
        unmatched: Vec::new(),
        no_base: Vec::new(),
        warnings: c.warnings.clone(),
    };
    for m in &c.matches {
        let Some(Some(b)) = m.items.first() else {
            continue;
        };
        for (s, item) in m.items.iter().enumerate().skip(1) {
            let Some(i) = item else {
                v.unmatched
                    .push(format!("{} (missing in {})", m.name, sources[s].label));
                continue;
            };
            for op in ops_of_match(m, all) {
                for &metric in metrics {
                    let (Some(base), Some(value)) =
                        (metric.of(all[*b].run, op), metric.of(all[*i].run, op))
                    else {
                        continue;
                    };
                    let what = format!("{} {op} {}", m.name, metric.label());
                    if base <= 0.0 || !base.is_finite() || !value.is_finite() {
                        v.no_base.push(format!("{what} in {}", sources[s].label));
                        continue;
                    }
                    let ratio = value / base;
                    let performance = match (metric.lower_is_better(), value > 0.0) {
                        (false, _) => ratio,
                        (true, true) => base / value,
                        // A latency of zero is no measurement to hold up.
                        (true, false) => continue,
                    };
                    let failed = fail_below.is_some_and(|r| performance < r);
                    v.passed &= !failed;
                    v.figures.push(Checked {
                        run: m.name.clone(),
                        op: op.to_string(),
                        metric: metric.key(),
                        result: sources[s].label.clone(),
                        base,
                        value,
                        ratio,
                        performance,
                        failed,
                    });
                }
            }
        }
    }
    v
}

/// The lines printed for a failed gate, one per failed figure, worst first:
/// "8k-random-read read IOPS: 0.430x of without (12,000 -> 5,160), below 0.9".
pub(crate) fn failure_lines(v: &Verdict) -> Vec<String> {
    let Some(limit) = v.fail_below else {
        return Vec::new();
    };
    let mut failed: Vec<&Checked> = v.figures.iter().filter(|f| f.failed).collect();
    failed.sort_by(|a, b| a.performance.total_cmp(&b.performance));
    failed
        .iter()
        .map(|f| {
            let metric = Compared::parse(f.metric).unwrap_or(Compared::Iops);
            let how = if metric.lower_is_better() {
                format!(
                    "{} is {} the base's (performance {})",
                    metric.label(),
                    show_ratio(f.ratio),
                    show_ratio(f.performance)
                )
            } else {
                format!("{} is {} the base's", metric.label(), show_ratio(f.ratio))
            };
            format!(
                "{} {} in {}: {how} ({} -> {}), below {limit}",
                f.run,
                f.op,
                f.result,
                metric.show(f.base),
                metric.show(f.value)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{self, RunFixture};
    use crate::report::{items, label_sources};
    use crate::spec::Pattern;

    fn sources(base_iops: f64, new_iops: f64, base_lat: f64, new_lat: f64) -> Vec<Source> {
        let mk = |iops: f64, lat: f64| {
            fixtures::doc(
                "vm",
                &[
                    RunFixture::new("8k-random-read", Pattern::Randread, 100, 8 << 10)
                        .perf(iops, lat),
                ],
            )
        };
        let mut s = vec![
            Source {
                label: String::new(),
                path: "/r/before".into(),
                doc: mk(base_iops, base_lat),
            },
            Source {
                label: String::new(),
                path: "/r/after".into(),
                doc: mk(new_iops, new_lat),
            },
        ];
        label_sources(&mut s);
        s
    }

    fn judge(s: &[Source], metrics: &[Compared], limit: f64) -> Verdict {
        let all = items(s);
        let c = super::super::match_runs(s, &all);
        verdict(&c, s, &all, metrics, Some(limit))
    }

    #[test]
    fn a_drop_below_the_ratio_fails_and_says_by_how_much() {
        let s = sources(12_000.0, 5_160.0, 500.0, 500.0);
        let v = judge(&s, &[Compared::Iops], 0.9);
        assert!(!v.passed);
        let lines = failure_lines(&v);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("IOPS is 0.430x the base's"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("below 0.9"), "{}", lines[0]);
    }

    #[test]
    fn an_equal_or_better_result_passes() {
        let s = sources(12_000.0, 11_000.0, 500.0, 400.0);
        let v = judge(&s, &Compared::ALL, 0.9);
        assert!(v.passed, "{:?}", failure_lines(&v));
        assert!(!v.figures.is_empty());
    }

    #[test]
    fn latency_grown_past_the_inverse_ratio_fails() {
        // Mean latency 500 -> 600 us: performance 0.833, below 0.9.
        let s = sources(10_000.0, 10_000.0, 500.0, 600.0);
        let v = judge(&s, &[Compared::MeanLatency], 0.9);
        assert!(!v.passed);
        let f = &v.figures[0];
        assert!(
            (f.performance / (500.0 / 600.0) - 1.0).abs() < 0.02,
            "{f:?}"
        );
        // ...and the same latency passes at 0.8.
        assert!(judge(&s, &[Compared::MeanLatency], 0.8).passed);
    }

    #[test]
    fn a_zero_base_is_named_not_divided() {
        let s = sources(0.0, 5_000.0, 500.0, 500.0);
        let v = judge(&s, &[Compared::Iops], 0.9);
        assert!(v.passed);
        assert_eq!(v.no_base.len(), 1, "{:?}", v.no_base);
    }

    #[test]
    fn metric_names_parse() {
        for m in Compared::ALL {
            assert_eq!(Compared::parse(m.key()), Some(m));
        }
        assert_eq!(Compared::parse("p99"), Some(Compared::P99Latency));
        assert_eq!(Compared::parse("latency99"), None);
    }
}

//! Sweeps: a value given as a list (`1,2,4,8`) or a range (`100:0:-10`,
//! `1:64:*2`) expands into one run per point, crossed with the other swept
//! values, as vdbench's forthreads / forxfersize / forrdpct do.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::{Result, VbError};
use crate::spec::{BlockSize, RunSpec};
use crate::units::bounds::{MAX_RUNS, MAX_SWEEP_POINTS};
use crate::units::{parse_block_size, parse_bs_list};

/// Splits a sweep into its points. Numeric ranges are `start:end[:step]`
/// (step may be negative, or `*N` to multiply); lists are comma-separated.
/// At most `MAX_SWEEP_POINTS` points in all, counted while generating, so a
/// range like `1:1e15:*1.000001` is refused before it allocates.
pub fn parse_numbers(flag: &str, text: &str) -> Result<Vec<f64>> {
    let too_many = || {
        VbError::input(format!(
            "{flag} '{text}' has more than {MAX_SWEEP_POINTS} points"
        ))
    };
    let mut out: Vec<f64> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(VbError::input(format!(
                "{flag} '{text}' has an empty entry"
            )));
        }
        let num = |s: &str| -> Result<f64> {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| VbError::input(format!("{flag} '{text}': '{s}' is not a number")))
        };
        let fields: Vec<&str> = part.split(':').collect();
        match fields.as_slice() {
            [one] => {
                if out.len() >= MAX_SWEEP_POINTS {
                    return Err(too_many());
                }
                out.push(num(one)?)
            }
            [a, b] | [a, b, _] => {
                let (start, end) = (num(a)?, num(b)?);
                let step = fields.get(2).map(|s| s.trim()).unwrap_or("");
                if let Some(factor) = step.strip_prefix('*') {
                    let f = num(factor)?;
                    if f <= 1.0 || start <= 0.0 || end < start {
                        return Err(VbError::input(format!(
                            "{flag} '{text}': a multiplying range needs 0 < start <= end and a factor above 1"
                        )));
                    }
                    let mut x = start;
                    while x <= end * (1.0 + 1e-9) && x.is_finite() {
                        if out.len() >= MAX_SWEEP_POINTS {
                            return Err(too_many());
                        }
                        out.push(x);
                        let next = x * f;
                        // A factor within rounding of 1 would never move.
                        if next <= x {
                            return Err(too_many());
                        }
                        x = next;
                    }
                } else {
                    let step = if step.is_empty() {
                        if end >= start { 1.0 } else { -1.0 }
                    } else {
                        num(step)?
                    };
                    if step == 0.0 || (end - start) * step < 0.0 {
                        return Err(VbError::input(format!(
                            "{flag} '{text}': step {step} never gets from {start} to {end}"
                        )));
                    }
                    let n = ((end - start) / step + 1e-9).floor();
                    if !(n.is_finite() && n < (MAX_SWEEP_POINTS - out.len()) as f64) {
                        return Err(too_many());
                    }
                    let n = n as usize + 1;
                    out.extend((0..n).map(|i| start + step * i as f64));
                }
            }
            _ => {
                return Err(VbError::input(format!(
                    "{flag} '{text}': '{part}' is not a number or a start:end:step range"
                )));
            }
        }
    }
    Ok(out)
}

/// Whole-number points (threads, iodepth, read percentage, files), each
/// within `lo..=hi`.
pub fn parse_counts(flag: &str, text: &str, lo: u64, hi: u64) -> Result<Vec<u64>> {
    parse_numbers(flag, text)?
        .into_iter()
        .map(|v| {
            if v.fract() != 0.0 {
                Err(VbError::input(format!(
                    "{flag} '{text}': {} is not a whole number",
                    crate::units::bounds::short(v)
                )))
            } else if v < lo as f64 || v > hi as f64 {
                Err(VbError::input(format!(
                    "{flag} {} is outside {lo}..{hi}",
                    crate::units::bounds::short(v)
                )))
            } else {
                Ok(v as u64)
            }
        })
        .collect()
}

/// Block-size points: `4k,64k` sweeps; an entry with weights (`4k:30,64k:70`)
/// is one mixed point.
pub fn parse_bs_points(text: &str) -> Result<Vec<Vec<BlockSize>>> {
    let to_bs = |v: Vec<(u64, u32)>| {
        v.into_iter()
            .map(|(bytes, weight)| BlockSize { bytes, weight })
            .collect()
    };
    if text.contains(':') {
        return Ok(vec![to_bs(parse_bs_list(text)?)]);
    }
    let points: Vec<&str> = text.split(',').collect();
    if points.len() > MAX_SWEEP_POINTS {
        return Err(VbError::input(format!(
            "--bs '{text}' has more than {MAX_SWEEP_POINTS} points"
        )));
    }
    points
        .into_iter()
        .map(|p| {
            if p.trim().is_empty() {
                return Err(VbError::input(format!("--bs '{text}' has an empty entry")));
            }
            let bytes = parse_block_size(text, p)?;
            Ok(vec![BlockSize { bytes, weight: 1 }])
        })
        .collect()
}

/// `--write-bs` (or the suite's `write_bs`): one size or one weighted mix,
/// never a sweep (the reads' `--bs` sweeps; writes keep their size).
pub fn parse_write_bs(flag: &str, text: &str) -> Result<Vec<BlockSize>> {
    let mut points =
        parse_bs_points(text).map_err(|e| VbError::input(e.message.replacen("--bs", flag, 1)))?;
    if points.len() != 1 {
        return Err(VbError::input(format!(
            "{flag} '{text}': one size or one weighted mix (64k:30,1m:70); sweep --bs instead"
        )));
    }
    Ok(points.remove(0))
}

/// The swept values of one run; `None` keeps the base run's value.
#[derive(Default, Debug, Clone)]
pub struct Axes {
    pub threads: Option<Vec<u64>>,
    pub iodepth: Option<Vec<u64>>,
    pub bs: Option<Vec<Vec<BlockSize>>>,
    pub read_pct: Option<Vec<u64>>,
    pub rate: Option<Vec<f64>>,
    pub files: Option<Vec<u64>>,
    /// A run's own working set (suite runs).
    pub size: Option<Vec<u64>>,
}

impl Axes {
    /// The number of runs the axes cross into (saturating: it is compared
    /// with `MAX_RUNS`, never allocated).
    pub fn points(&self) -> usize {
        [
            self.threads.as_ref().map(Vec::len),
            self.iodepth.as_ref().map(Vec::len),
            self.bs.as_ref().map(Vec::len),
            self.read_pct.as_ref().map(Vec::len),
            self.rate.as_ref().map(Vec::len),
            self.files.as_ref().map(Vec::len),
            self.size.as_ref().map(Vec::len),
        ]
        .iter()
        .map(|n| n.unwrap_or(1))
        .fold(1usize, |acc, n| acc.saturating_mul(n))
    }
}

/// The cross product of the axes over `base`, in a stable order (threads
/// outermost, then iodepth, block size, read percentage, rate, files, size).
/// Point names come from `name(run)`; a single point keeps the base name.
/// More than `MAX_RUNS` points is refused before anything is built.
pub fn expand(
    base: &RunSpec,
    axes: &Axes,
    name: impl Fn(&RunSpec) -> String,
) -> Result<Vec<RunSpec>> {
    let n = axes.points();
    if n > MAX_RUNS {
        return Err(VbError::input(format!(
            "the swept values cross into {} runs; at most {MAX_RUNS}",
            if n == usize::MAX {
                "too many".to_string()
            } else {
                n.to_string()
            }
        )));
    }
    let mut runs = vec![base.clone()];
    fn cross<T: Clone>(
        runs: Vec<RunSpec>,
        values: &Option<Vec<T>>,
        set: impl Fn(&mut RunSpec, &T),
    ) -> Vec<RunSpec> {
        match values {
            None => runs,
            Some(vs) => runs
                .into_iter()
                .flat_map(|r| {
                    vs.iter()
                        .map(|v| {
                            let mut r = r.clone();
                            set(&mut r, v);
                            r
                        })
                        .collect::<Vec<_>>()
                })
                .collect(),
        }
    }
    runs = cross(runs, &axes.threads, |r, v| r.threads = *v as u32);
    runs = cross(runs, &axes.iodepth, |r, v| r.iodepth = *v as u32);
    runs = cross(runs, &axes.bs, |r, v| r.bs = v.clone());
    runs = cross(runs, &axes.read_pct, |r, v| {
        r.read_pct = (*v).min(255) as u8
    });
    runs = cross(runs, &axes.rate, |r, v| r.rate_iops = Some(*v));
    runs = cross(runs, &axes.files, |r, v| r.files = Some(*v as u32));
    runs = cross(runs, &axes.size, |r, v| r.size = Some(*v));
    if runs.len() > 1 {
        for r in &mut runs {
            r.name = name(r);
        }
    }
    Ok(runs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::spec::Pattern;

    #[test]
    fn ranges_and_lists() {
        assert_eq!(
            parse_counts("--read-pct", "100:0:-10", 0, 100).unwrap(),
            vec![100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0]
        );
        assert_eq!(
            parse_counts("--threads", "1,2,4,8", 1, 4096).unwrap(),
            vec![1, 2, 4, 8]
        );
        assert_eq!(
            parse_counts("--threads", "1:64:*2", 1, 4096).unwrap(),
            vec![1, 2, 4, 8, 16, 32, 64]
        );
        assert_eq!(
            parse_counts("--iodepth", "1:4", 1, 4096).unwrap(),
            vec![1, 2, 3, 4]
        );
        assert_eq!(
            parse_counts("--threads", "1:3,8", 1, 4096).unwrap(),
            vec![1, 2, 3, 8]
        );
        assert_eq!(
            parse_numbers("--rate", "500,1000.5").unwrap(),
            vec![500.0, 1000.5]
        );
    }

    #[test]
    fn bad_sweeps_are_named() {
        assert!(
            parse_counts("--read-pct", "100:0:10", 0, 100)
                .unwrap_err()
                .to_string()
                .contains("never gets")
        );
        assert!(
            parse_counts("--threads", "1.5", 1, 4096)
                .unwrap_err()
                .to_string()
                .contains("not a whole number")
        );
        assert!(
            parse_counts("--threads", "a,b", 1, 4096)
                .unwrap_err()
                .to_string()
                .contains("'a' is not a number")
        );
        assert!(parse_counts("--threads", "1:2:3:4", 1, 4096).is_err());
        assert!(parse_counts("--threads", "1,,2", 1, 4096).is_err());
        assert!(parse_counts("--threads", "0:100000000", 0, 4096).is_err());
        assert_eq!(
            parse_counts("--threads", "5000", 1, 4096)
                .unwrap_err()
                .to_string(),
            "--threads 5000 is outside 1..4096"
        );
    }

    #[test]
    fn huge_sweeps_are_refused_before_they_allocate() {
        // Found in issue 9: these allocated gigabytes in --dry-run.
        let e = parse_numbers("--rate", "1:1e15:*1.000001")
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 10000 points"), "{e}");
        assert!(parse_numbers("--rate", "1:1e300:*1.0000000000000002").is_err());
        assert!(parse_numbers("--rate", "-1e308:1e308:1").is_err());
        assert!(parse_numbers("--rate", "1:5000,1:5001").is_err());
        assert_eq!(parse_numbers("--rate", "1:10000").unwrap().len(), 10_000);
        let axes = Axes {
            read_pct: Some(parse_counts("--read-pct", "0:100", 0, 100).unwrap()),
            threads: Some(parse_counts("--threads", "1:4096", 1, 4096).unwrap()),
            iodepth: Some(parse_counts("--iodepth", "1:4096", 1, 4096).unwrap()),
            ..Axes::default()
        };
        let e = expand(&RunSpec::default(), &axes, |r| r.auto_name()).unwrap_err();
        assert!(e.to_string().contains("at most 10000"), "{e}");
    }

    #[test]
    fn block_size_sweep_versus_mix() {
        assert_eq!(parse_bs_points("4k,64k").unwrap().len(), 2);
        let mix = parse_bs_points("4k:30,64k:70").unwrap();
        assert_eq!(mix.len(), 1);
        assert_eq!(mix[0].len(), 2);
    }

    #[test]
    fn cross_product_in_a_stable_order() {
        let base = RunSpec {
            name: "base".into(),
            rw: Pattern::Randrw,
            read_pct: 50,
            ..RunSpec::default()
        };
        let axes = Axes {
            threads: Some(vec![1, 2, 4, 8]),
            bs: Some(parse_bs_points("4k,64k").unwrap()),
            read_pct: Some(parse_counts("p", "100:0:-10", 0, 100).unwrap()),
            ..Axes::default()
        };
        assert_eq!(axes.points(), 4 * 2 * 11);
        let runs = expand(&base, &axes, |r| r.auto_name()).unwrap();
        assert_eq!(runs.len(), 88);
        assert_eq!(
            (runs[0].threads, runs[0].bs[0].bytes, runs[0].read_pct),
            (1, 4096, 100)
        );
        assert_eq!(
            (runs[1].threads, runs[1].bs[0].bytes, runs[1].read_pct),
            (1, 4096, 90)
        );
        assert_eq!(
            (runs[87].threads, runs[87].bs[0].bytes, runs[87].read_pct),
            (8, 65536, 0)
        );
        let names: std::collections::HashSet<_> = runs.iter().map(|r| r.name.clone()).collect();
        assert_eq!(names.len(), 88, "every point has its own name");
    }

    #[test]
    fn a_single_point_keeps_its_name() {
        let base = RunSpec {
            name: "mine".into(),
            ..RunSpec::default()
        };
        let runs = expand(
            &base,
            &Axes {
                threads: Some(vec![4]),
                ..Axes::default()
            },
            |r| r.auto_name(),
        )
        .unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].name, "mine");
        assert_eq!(runs[0].threads, 4);
    }
}

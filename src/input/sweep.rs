//! Sweeps: a value given as a list (`1,2,4,8`) or a range (`100:0:-10`,
//! `1:64:*2`) expands into one run per point, crossed with the other swept
//! values, as vdbench's forthreads / forxfersize / forrdpct do.

use crate::error::{Result, VbError};
use crate::spec::{BlockSize, RunSpec};
use crate::units::{parse_bs_list, parse_size};

/// Splits a sweep into its points. Numeric ranges are `start:end[:step]`
/// (step may be negative, or `*N` to multiply); lists are comma-separated.
pub fn parse_numbers(flag: &str, text: &str) -> Result<Vec<f64>> {
    let mut out = Vec::new();
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
            [one] => out.push(num(one)?),
            [a, b] | [a, b, _] => {
                let (start, end) = (num(a)?, num(b)?);
                let step = fields.get(2).map(|s| s.trim()).unwrap_or("");
                let points = if let Some(factor) = step.strip_prefix('*') {
                    let f = num(factor)?;
                    if f <= 1.0 || start <= 0.0 || end < start {
                        return Err(VbError::input(format!(
                            "{flag} '{text}': a multiplying range needs 0 < start <= end and a factor above 1"
                        )));
                    }
                    let mut v = Vec::new();
                    let mut x = start;
                    while x <= end * (1.0 + 1e-9) {
                        v.push(x);
                        x *= f;
                    }
                    v
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
                    let n = ((end - start) / step + 1e-9).floor() as usize + 1;
                    if n > 10_000 {
                        return Err(VbError::input(format!(
                            "{flag} '{text}' has {n} points; that is too many"
                        )));
                    }
                    (0..n).map(|i| start + step * i as f64).collect()
                };
                out.extend(points);
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

/// Whole-number points (threads, iodepth, read percentage, files).
pub fn parse_counts(flag: &str, text: &str) -> Result<Vec<u64>> {
    parse_numbers(flag, text)?
        .into_iter()
        .map(|v| {
            if v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64 {
                Ok(v as u64)
            } else {
                Err(VbError::input(format!(
                    "{flag} '{text}': {v} is not a whole number"
                )))
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
    text.split(',')
        .map(|p| {
            let bytes = parse_size(p)?;
            if bytes == 0 {
                return Err(VbError::input(format!("--bs '{text}': a block size of 0")));
            }
            Ok(vec![BlockSize { bytes, weight: 1 }])
        })
        .collect()
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
}

impl Axes {
    pub fn points(&self) -> usize {
        [
            self.threads.as_ref().map(Vec::len),
            self.iodepth.as_ref().map(Vec::len),
            self.bs.as_ref().map(Vec::len),
            self.read_pct.as_ref().map(Vec::len),
            self.rate.as_ref().map(Vec::len),
            self.files.as_ref().map(Vec::len),
        ]
        .iter()
        .map(|n| n.unwrap_or(1))
        .product()
    }
}

/// The cross product of the axes over `base`, in a stable order (threads
/// outermost, then iodepth, block size, read percentage, rate, files).
/// Point names come from `name(run)`; a single point keeps the base name.
pub fn expand(base: &RunSpec, axes: &Axes, name: impl Fn(&RunSpec) -> String) -> Vec<RunSpec> {
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
    if runs.len() > 1 {
        for r in &mut runs {
            r.name = name(r);
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Pattern;

    #[test]
    fn ranges_and_lists() {
        assert_eq!(
            parse_counts("--read-pct", "100:0:-10").unwrap(),
            vec![100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0]
        );
        assert_eq!(
            parse_counts("--threads", "1,2,4,8").unwrap(),
            vec![1, 2, 4, 8]
        );
        assert_eq!(
            parse_counts("--threads", "1:64:*2").unwrap(),
            vec![1, 2, 4, 8, 16, 32, 64]
        );
        assert_eq!(parse_counts("--iodepth", "1:4").unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(
            parse_counts("--threads", "1:3,8").unwrap(),
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
            parse_counts("--read-pct", "100:0:10")
                .unwrap_err()
                .to_string()
                .contains("never gets")
        );
        assert!(
            parse_counts("--threads", "1.5")
                .unwrap_err()
                .to_string()
                .contains("not a whole number")
        );
        assert!(
            parse_counts("--threads", "a,b")
                .unwrap_err()
                .to_string()
                .contains("'a' is not a number")
        );
        assert!(parse_counts("--threads", "1:2:3:4").is_err());
        assert!(parse_counts("--threads", "1,,2").is_err());
        assert!(parse_counts("--threads", "0:100000000").is_err());
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
            read_pct: Some(parse_counts("p", "100:0:-10").unwrap()),
            ..Axes::default()
        };
        assert_eq!(axes.points(), 4 * 2 * 11);
        let runs = expand(&base, &axes, |r| r.auto_name());
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
        );
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].name, "mine");
        assert_eq!(runs[0].threads, 4);
    }
}

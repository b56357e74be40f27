//! Turns `volbench run` flags into a `JobSpec`: every value parsed with the
//! shared unit rules, every default filled in, nothing silently dropped.

use crate::error::{Result, VbError};
use crate::input::cli::RunArgs;
use crate::input::sweep::{self, Axes, parse_bs_points, parse_counts, parse_numbers};
use crate::io::target::{self, TargetKind};
use crate::spec::{Arrivals, EngineChoice, JobSpec, Pattern, RunSpec, TargetSpec};
use crate::units::{parse_count, parse_duration, parse_size};

pub const DEFAULT_DIR_SIZE: u64 = 1 << 30;

pub fn job_from_run_args(a: &RunArgs) -> Result<JobSpec> {
    job_with_size(a, None)
}

/// Like `job_from_run_args`, with the working set to assume when --size is
/// absent instead of inspecting the target here (a multi-host run: each
/// agent inspects its own targets).
pub fn job_with_size(a: &RunArgs, default_size: Option<u64>) -> Result<JobSpec> {
    let rw = Pattern::parse(&a.rw)?;
    let read_pcts = match &a.read_pct {
        None => vec![rw.fixed_read_pct().unwrap_or(50) as u64],
        Some(text) => {
            let v = parse_counts("--read-pct", text)?;
            if let Some(bad) = v.iter().find(|&&p| p > 100) {
                return Err(VbError::input(format!(
                    "--read-pct {bad} is outside 0..100"
                )));
            }
            v
        }
    };
    let bs = parse_bs_points(&a.bs)?;
    let threads = parse_counts("--threads", &a.threads)?;
    let iodepth = parse_counts("--iodepth", &a.iodepth)?;
    let files = parse_counts("--files", &a.files)?;
    let rates = match &a.rate {
        None => None,
        Some(text) if text.trim_end().ends_with('%') => {
            return Err(VbError::input(format!(
                "--rate {text}: a percentage needs a measured maximum; use the latency-curve suite"
            )));
        }
        Some(text) => Some(parse_numbers("--rate", text)?),
    };
    let size = match (&a.size, default_size) {
        (Some(s), _) => parse_size(s)?,
        (None, Some(n)) => n,
        (None, None) => {
            let insp = target::inspect(&a.target)?;
            match (insp.kind, insp.existing_size) {
                (TargetKind::Directory, _) | (_, None) => DEFAULT_DIR_SIZE,
                (_, Some(n)) => n,
            }
        }
    };
    let first_u32 = |flag: &str, v: &[u64]| -> Result<u32> {
        let x = v.first().copied().unwrap_or(1);
        u32::try_from(x).map_err(|_| VbError::input(format!("{flag} {x} is too large")))
    };
    let base = RunSpec {
        name: a.name.clone().unwrap_or_default(),
        rw,
        read_pct: read_pcts[0] as u8,
        bs: bs[0].clone(),
        threads: first_u32("--threads", &threads)?,
        iodepth: first_u32("--iodepth", &iodepth)?,
        warmup_s: parse_duration(&a.warmup)?.as_secs_f64(),
        duration_s: parse_duration(&a.duration)?.as_secs_f64(),
        io_limit: a.io_limit.as_deref().map(parse_size).transpose()?,
        rate_iops: rates.as_ref().and_then(|r| r.first().copied()),
        arrivals: Arrivals::parse(&a.arrivals)?,
        steady: a.steady,
        ..RunSpec::default()
    };
    let many = |n: usize| n > 1;
    let axes = Axes {
        threads: many(threads.len()).then_some(threads),
        iodepth: many(iodepth.len()).then_some(iodepth),
        bs: many(bs.len()).then_some(bs),
        read_pct: many(read_pcts.len()).then_some(read_pcts),
        rate: rates.filter(|r| many(r.len())),
        files: many(files.len()).then(|| files.clone()),
    };
    let user_name = a.name.clone();
    let mut runs = sweep::expand(&base, &axes, |r| match &user_name {
        Some(n) => format!("{n}-{}", r.auto_name()),
        None => r.auto_name(),
    });
    if runs.len() == 1 && user_name.is_none() {
        runs[0].name = runs[0].auto_name();
    }
    let job = JobSpec {
        target: TargetSpec {
            path: a.target.clone(),
            size,
            files: first_u32("--files", &files)?,
            direct: !a.buffered,
            allow_overwrite: a.allow_overwrite,
        },
        engine: EngineChoice::parse(&a.engine)?,
        interval_s: parse_duration(&a.interval)?.as_secs_f64(),
        seed: parse_count("--seed", &a.seed)?,
        runs,
        suite: None,
    };
    job.validate()?;
    Ok(job)
}

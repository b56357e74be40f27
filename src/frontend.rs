//! Turns `volbench run` flags into a `JobSpec`: every value parsed with the
//! shared unit rules, every default filled in, nothing silently dropped.

use crate::cli::RunArgs;
use crate::error::{Result, VbError};
use crate::spec::{BlockSize, EngineChoice, JobSpec, Pattern, RunSpec, TargetSpec};
use crate::target::{self, TargetKind};
use crate::units::{parse_bs_list, parse_count, parse_duration, parse_size};

pub const DEFAULT_DIR_SIZE: u64 = 1 << 30;

fn count_u32(flag: &str, text: &str) -> Result<u32> {
    let v = parse_count(flag, text)?;
    u32::try_from(v).map_err(|_| VbError::input(format!("{flag} {text} is too large")))
}

pub fn job_from_run_args(a: &RunArgs) -> Result<JobSpec> {
    let size = match &a.size {
        Some(s) => parse_size(s)?,
        None => {
            let insp = target::inspect(&a.target)?;
            match (insp.kind, insp.existing_size) {
                (TargetKind::Directory, _) | (_, None) => DEFAULT_DIR_SIZE,
                (_, Some(n)) => n,
            }
        }
    };
    job_with_size(a, size)
}

/// The job with a known working-set size (a multi-host run cannot inspect
/// the targets from here: each agent does it for its own).
pub fn job_with_size(a: &RunArgs, size: u64) -> Result<JobSpec> {
    let rw = Pattern::parse(&a.rw)?;
    let read_pct = match (&a.read_pct, rw.fixed_read_pct()) {
        (None, Some(p)) => p,
        (None, None) => 50,
        (Some(text), _) => {
            let v = parse_count("--read-pct", text)?;
            if v > 100 {
                return Err(VbError::input(format!("--read-pct {v} is outside 0..100")));
            }
            v as u8
        }
    };
    let bs = parse_bs_list(&a.bs)?
        .into_iter()
        .map(|(bytes, weight)| BlockSize { bytes, weight })
        .collect();
    let mut run = RunSpec {
        name: String::new(),
        rw,
        read_pct,
        bs,
        threads: count_u32("--threads", &a.threads)?,
        iodepth: count_u32("--iodepth", &a.iodepth)?,
        warmup_s: parse_duration(&a.warmup)?.as_secs_f64(),
        duration_s: parse_duration(&a.duration)?.as_secs_f64(),
    };
    run.name = a.name.clone().unwrap_or_else(|| run.auto_name());
    let job = JobSpec {
        target: TargetSpec {
            path: a.target.clone(),
            size,
            files: count_u32("--files", &a.files)?,
            direct: !a.buffered,
            allow_overwrite: a.allow_overwrite,
        },
        engine: EngineChoice::parse(&a.engine)?,
        interval_s: parse_duration(&a.interval)?.as_secs_f64(),
        seed: parse_count("--seed", &a.seed)?,
        runs: vec![run],
    };
    job.validate()?;
    Ok(job)
}

/// The six patterns of the vendors' papers (8 KiB random read, write and
/// 50/50; 64 KiB sequential read, write and 50/50), as `volbench quick` runs them.
pub fn six_patterns(duration_s: f64, warmup_s: f64, threads: u32, iodepth: u32) -> Vec<RunSpec> {
    let mk = |name: &str, rw: Pattern, read_pct: u8, bs: u64| RunSpec {
        name: name.into(),
        rw,
        read_pct,
        bs: vec![BlockSize {
            bytes: bs,
            weight: 1,
        }],
        threads,
        iodepth,
        warmup_s,
        duration_s,
    };
    vec![
        mk("8k-random-read", Pattern::Randread, 100, 8 << 10),
        mk("8k-random-write", Pattern::Randwrite, 0, 8 << 10),
        mk("8k-random-50-50", Pattern::Randrw, 50, 8 << 10),
        mk("64k-seq-read", Pattern::Read, 100, 64 << 10),
        mk("64k-seq-write", Pattern::Write, 0, 64 << 10),
        mk("64k-seq-50-50", Pattern::Rw, 50, 64 << 10),
    ]
}

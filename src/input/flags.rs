//! Turns `volbench run` flags into a `JobSpec`: every value parsed with the
//! shared unit rules, every default filled in, nothing silently dropped.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::{Result, VbError};
use crate::input::args::RunArgs;
use crate::input::sweep::{self, Axes, parse_bs_points, parse_counts, parse_numbers};
use crate::spec::engine::Platform;
use crate::spec::{JobSpec, Pattern, RunSpec, TargetSpec, WriteSync, defaults};
use crate::units::bounds;
use crate::units::parse_size_in;

/// The job the flags describe. Without --size it carries the directory
/// default; a file or device is used whole when its plan decides the size
/// (`plan::size`), here or on each host.
pub(crate) fn job_from_run_args(a: &RunArgs) -> Result<JobSpec> {
    let c = &a.common;
    // The path ends up in result.json as text; refuse it now rather than
    // after the benchmark.
    check_target_path(&c.target)?;
    crate::input::replay::check_flags(a)?;
    if let Some(job) = crate::input::meta::job(a)? {
        if let Some((k, _)) = crate::input::shape::flag_texts(&c.shape).first() {
            return Err(VbError::input(format!(
                "--{} is for block I/O, not a metadata run (--ops)",
                k.replace('_', "-")
            )));
        }
        return Ok(job);
    }
    if let Some(n) = &a.name {
        bounds::name("--name", n)?;
    }
    let rw = match &a.rw {
        Some(t) => Pattern::parse(t)?,
        None => defaults::PATTERN,
    };
    let read_pcts = match &a.read_pct {
        None => vec![rw.fixed_read_pct().unwrap_or(defaults::MIXED_READ_PCT) as u64],
        Some(text) => parse_counts("--read-pct", text, 0, 100)?,
    };
    let bs = match &a.bs {
        Some(t) => parse_bs_points(t)?,
        None => vec![RunSpec::default().bs],
    };
    let write_bs = match &a.write_bs {
        Some(t) => sweep::parse_write_bs("--write-bs", t)?,
        None => Vec::new(),
    };
    // The flags `run` shares with `suite run`, each read once.
    let o = c.overrides()?;
    let or = |v: &Option<Vec<u64>>, default: u32| v.clone().unwrap_or(vec![u64::from(default)]);
    let threads = or(&o.threads, defaults::THREADS);
    let iodepth = or(&o.iodepth, defaults::IODEPTH);
    let files = or(&o.files, defaults::FILES);
    let rate_bytes = match &a.rate {
        Some(t) => crate::spec::shape::parse_bandwidth("--rate", t)?,
        None => None,
    };
    let rates = match &a.rate {
        None => None,
        Some(_) if rate_bytes.is_some() => None,
        Some(text) if text.trim_end().ends_with('%') => {
            return Err(VbError::input(format!(
                "--rate {text}: a percentage needs a measured maximum; use the latency-curve suite"
            )));
        }
        Some(text) => {
            let v = parse_numbers("--rate", text)?;
            for r in &v {
                bounds::number("--rate", *r, bounds::MIN_RATE, bounds::MAX_RATE)?;
            }
            Some(v)
        }
    };
    let size = o.size.unwrap_or(defaults::DIR_SIZE);
    let warmup_s = o.warmup_s.unwrap_or(defaults::WARMUP_S);
    let duration_s = o.duration_s.unwrap_or(defaults::DURATION_S);
    let interval_s = o.interval_s.unwrap_or(defaults::INTERVAL_S);
    let io_limit = a
        .io_limit
        .as_deref()
        .map(|t| parse_size_in("--io-limit", t, 1, bounds::MAX_SIZE))
        .transpose()?;
    let first = |v: &[u64]| -> u32 {
        // The parsers above bound every point well inside u32.
        v.first()
            .copied()
            .and_then(|x| u32::try_from(x).ok())
            .unwrap_or(1)
    };
    let mut base = RunSpec {
        name: a.name.clone().unwrap_or_default(),
        rw,
        read_pct: read_pcts.first().copied().unwrap_or(50).min(100) as u8,
        bs: bs.first().cloned().unwrap_or_default(),
        write_bs,
        threads: first(&threads),
        iodepth: first(&iodepth),
        warmup_s,
        duration_s,
        io_limit,
        rate_iops: rates.as_ref().and_then(|r| r.first().copied()),
        arrivals: o.arrivals.unwrap_or(defaults::ARRIVALS),
        steady: o.steady,
        shape: crate::spec::shape::Shape {
            rate_bytes,
            ..o.shape.clone()
        },
        ..RunSpec::default()
    };
    if read_pcts.len() > 1 {
        let flag = match (&a.rates.rate_iops, &a.rates.rate_bw) {
            (Some(_), _) => Some("--rate-iops"),
            (None, Some(_)) => Some("--rate-bw"),
            (None, None) => None,
        };
        if let Some(flag) = flag {
            return Err(VbError::input(format!(
                "{flag} caps each direction of one mix; sweep --read-pct without it"
            )));
        }
    }
    let mix_given = a.read_pct.is_some() || !rw.is_mixed();
    crate::input::rate::apply(&a.rates, mix_given, &mut base)?;
    let many = |n: usize| n > 1;
    let axes = Axes {
        threads: many(threads.len()).then_some(threads),
        iodepth: many(iodepth.len()).then_some(iodepth),
        bs: many(bs.len()).then_some(bs),
        read_pct: many(read_pcts.len()).then_some(read_pcts),
        rate: rates.filter(|r| many(r.len())),
        files: many(files.len()).then(|| files.clone()),
        size: None,
    };
    let user_name = a.name.clone();
    let mut runs = sweep::expand(&base, &axes, |r| match &user_name {
        Some(n) => format!("{n}-{}", r.auto_name()),
        None => r.auto_name(),
    })?;
    if let [only] = runs.as_mut_slice() {
        if user_name.is_none() {
            only.name = only.auto_name();
        }
    }
    let mut job = JobSpec {
        target: TargetSpec {
            path: c.target.clone(),
            size,
            files: first(&files),
            direct: defaults::DIRECT && !o.buffered,
            allow_overwrite: o.allow_overwrite,
            write_sync: o.write_sync.unwrap_or(WriteSync::None),
            data: o.data.spec()?,
            fill: crate::spec::fill::FillSpec {
                bs: o.fill_bs.unwrap_or(crate::spec::fill::DEFAULT_BS),
                invalidate: o.invalidate.unwrap_or(true),
                threads: o.fill_threads,
            },
            open_files: o.open_files,
        },
        engine: o.engine.unwrap_or(defaults::ENGINE),
        interval_s,
        seed: o.seed.unwrap_or(defaults::SEED),
        runs,
        suite: None,
        targets: None,
        reading: o.reading,
    };
    crate::input::replay::apply(a, &mut job)?;
    job.validate()?;
    Ok(job)
}

/// A target path must be text (it is recorded, templated and sent to
/// hosts as such) and not empty. Whether it names a path of this system
/// is asked where it is known where it runs: here (`check_here`), or on
/// each host by its system (`hosts::assign`).
pub(crate) fn check_target_path(path: &std::path::Path) -> Result<()> {
    if path.as_os_str().is_empty() {
        return Err(VbError::input("--target is empty"));
    }
    if path.to_str().is_none() {
        return Err(VbError::input(format!(
            "--target {} is not valid UTF-8; results record the path as text, so give it a UTF-8 name",
            path.to_string_lossy().escape_debug()
        )));
    }
    Ok(())
}

/// A target of a run here must be a path of this system.
pub(crate) fn check_here(path: &std::path::Path) -> Result<()> {
    check_target_path(path)?;
    match path.to_str().and_then(|p| foreign_path(p, Platform::HERE)) {
        Some(why) => Err(VbError::input(why)),
        None => Ok(()),
    }
}

/// Why `--target` names a path of the other system: on Linux a drive
/// letter, a UNC share or a `\\.\` device; on Windows a Linux device or
/// kernel path (`/dev`, `/proc`, `/sys`). Taken as written it would make a
/// file set with a strange name in the current directory, or look for a
/// device that cannot exist here.
pub(crate) fn foreign_path(p: &str, here: Platform) -> Option<String> {
    match (here, system_of_path(p)) {
        (Platform::Linux, Some(Platform::Windows)) => Some(format!(
            "--target '{p}' is a Windows path and this volbench runs on Linux: name the \
             path as it is mounted here (a diskspd line maps its paths with --map)"
        )),
        (Platform::Windows, Some(Platform::Linux)) => Some(format!(
            "--target '{p}' is a Linux device or kernel path and this volbench runs on \
             Windows: name a drive path, a \\\\server\\share path or \\\\.\\PhysicalDriveN"
        )),
        _ => None,
    }
}

/// Why a many-host run's target `p` cannot be a path on a host of
/// `system` (its `os=`), or None.
pub(crate) fn foreign_on_host(p: &str, system: Platform) -> Option<String> {
    match (system, system_of_path(p)) {
        (Platform::Linux, Some(Platform::Windows)) => Some(format!(
            "target '{p}' is a Windows path and the host is a Linux one; add os=windows \
             to its line in the hosts file if it runs Windows, or give it its own target="
        )),
        (Platform::Windows, Some(Platform::Linux)) => Some(format!(
            "target '{p}' is a Linux device or kernel path and the host is os=windows; \
             give it its own target= (a drive path or a \\\\server\\share path)"
        )),
        _ => None,
    }
}

/// The one system a path can only belong to: a drive letter, a UNC share
/// or a `\\.\` device is Windows'; `/dev`, `/proc`, `/sys` are Linux's.
fn system_of_path(p: &str) -> Option<Platform> {
    let b = p.as_bytes();
    let drive = matches!(b, [d, b':', b'\\' | b'/', ..] if d.is_ascii_alphabetic());
    if drive || p.starts_with("\\\\") {
        return Some(Platform::Windows);
    }
    let linux = ["/dev", "/proc", "/sys"]
        .iter()
        .any(|k| p == *k || p.starts_with(&format!("{k}/")));
    linux.then_some(Platform::Linux)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_of_the_other_system_is_refused_by_name() {
        for p in [
            r"Z:\io.dat",
            "c:/data",
            r"\\server\share\f",
            r"\\.\PhysicalDrive1",
        ] {
            let why = foreign_path(p, Platform::Linux).unwrap_or_default();
            assert!(why.contains(p) && why.contains("Windows path"), "{why}");
            assert!(foreign_path(p, Platform::Windows).is_none(), "{p}");
        }
        for p in ["/dev/sdb", "/proc", "/sys/block/x"] {
            let why = foreign_path(p, Platform::Windows).unwrap_or_default();
            assert!(why.contains(p) && why.contains("Linux device"), "{why}");
            assert!(foreign_path(p, Platform::Linux).is_none(), "{p}");
        }
        // Names that only look alike stay the user's.
        for p in ["/mnt/devices", "/srv/c:x", "data:1", "/device"] {
            assert!(foreign_path(p, Platform::Linux).is_none(), "{p}");
            assert!(foreign_path(p, Platform::Windows).is_none(), "{p}");
        }
    }
}

//! The fill flag (--fill-bs), shared by `run` and `suite run` through
//! `CommonArgs`, and its parsing (the suite key `fill_bs` uses the same).

use clap::Args;

use crate::error::Result;
use crate::spec::fill::FillSpec;
use crate::units::{bounds, parse_size_in};

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct FillArgs {
    /// Transfer size of the fill, the sequential write of every file of a
    /// set volbench creates before the first run (vdbench FillWrite
    /// xfersize), 512..64M in whole 512-byte sectors [default: 1M]; with
    /// direct I/O a multiple of the target's alignment.
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub(crate) fill_bs: Option<String>,

    /// Threads of the fill, 1..64, each writing one file at a time
    /// (vdbench's forthreads on its FillWrite) [default: one per file, at
    /// most 4]; 1 writes the files one after the other.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) fill_threads: Option<String>,

    /// Keep the target's cached pages between runs; by default volbench
    /// drops them (posix_fadvise DONTNEED on each file) before every
    /// buffered run, as fio's invalidate=1, so a run measures the storage,
    /// not what the fill or the run before left in memory.
    #[arg(long, conflicts_with = "invalidate")]
    pub(crate) no_invalidate: bool,

    /// Drop the target's cached pages before each buffered run (the
    /// default; overrides a suite's `invalidate = false`).
    #[arg(long)]
    pub(crate) invalidate: bool,
}

/// The flags' word on invalidation, if they say one.
pub(crate) fn invalidate_flag(a: &FillArgs) -> Option<bool> {
    if a.no_invalidate {
        Some(false)
    } else if a.invalidate {
        Some(true)
    } else {
        None
    }
}

/// `--fill-threads` or the suite's `fill_threads`, `key` naming it.
pub(crate) fn fill_threads(key: &str, text: &str) -> Result<u32> {
    let n = crate::units::parse_count_in(key, text, 1, u64::from(bounds::MAX_FILL_THREADS))?;
    Ok(u32::try_from(n).unwrap_or(bounds::MAX_FILL_THREADS))
}

/// `key` names the value in errors (`--fill-bs` or the suite's `fill_bs`).
pub(crate) fn fill_spec(key: &str, text: Option<&str>, invalidate: bool) -> Result<FillSpec> {
    let bs = match text {
        None => crate::spec::fill::DEFAULT_BS,
        Some(t) => parse_size_in(key, t, bounds::MIN_FILL_BS, bounds::MAX_FILL_BS)?,
    };
    Ok(FillSpec {
        bs,
        invalidate,
        threads: None,
    })
}

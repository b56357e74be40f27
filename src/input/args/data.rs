//! The data flags (--compress, --dedup, --verify, --journal), shared by
//! `run` and `suite run` through `CommonArgs`, and their parsing.

use std::path::PathBuf;

use clap::Args;

use crate::error::{Result, VbError};
use crate::input::overrides::DataFlags;
use crate::spec::data::DataSpec;
use crate::units::{bounds, parse_count_in, parse_size_in};

#[derive(Args, Debug, Clone, Default)]
pub struct DataArgs {
    /// Make written (and filled) blocks compress about R:1 with zstd, lz4 or
    /// gzip, block by block as storage compresses, 1..16 [default: 1,
    /// incompressible].
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    pub compress: Option<String>,

    /// Write R copies of each distinct --dedup-unit block over the data set,
    /// 1..1000000 [default: 1, every block unique].
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    pub dedup: Option<String>,

    /// The block --dedup duplicates: a power of two, 512..1M, dividing every
    /// --bs [default: 4k].
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub dedup_unit: Option<String>,

    /// Check every read: remember each block's last write (4 bytes per
    /// block, shown by --dry-run) and compare offset, write counter and
    /// checksum of every sector read; mismatches are reported and counted
    /// (data_errors) and fail the run (exit 1).
    #[arg(long)]
    pub verify: bool,

    /// With --verify: stop the run at this many mismatches, 1..1000000
    /// [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_data_errors: Option<String>,

    /// With --verify: keep the write counters in this file across runs,
    /// crashes and reboots, for a later run or `volbench verify` to check
    /// against (created if missing, allocated in full: no room is exit 4;
    /// an existing one must be volbench's journal of the same file set and
    /// fill; truncated mid-run, the run fails with exit 1).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
}

/// The data flags, parsed (bounds checked) and checked together, with the
/// defaults filled in.
pub fn data_spec(a: &DataArgs) -> Result<DataSpec> {
    a.flags()?.spec()
}

impl DataArgs {
    /// The data flags as given, each parsed once; a suite's data keys fill
    /// in the rest (`input::suite`).
    pub(crate) fn flags(&self) -> Result<DataFlags> {
        if let Some(j) = &self.journal {
            if j.as_os_str().is_empty() || j.to_str().is_none() {
                return Err(VbError::input(
                    "--journal: give a non-empty UTF-8 path (it is recorded in results)",
                ));
            }
        }
        Ok(DataFlags {
            compress: self
                .compress
                .as_deref()
                .map(|t| compress("--compress", t))
                .transpose()?,
            dedup: self
                .dedup
                .as_deref()
                .map(|t| dedup("--dedup", t))
                .transpose()?,
            dedup_unit: self
                .dedup_unit
                .as_deref()
                .map(|t| dedup_unit("--dedup-unit", t))
                .transpose()?,
            verify: self.verify,
            max_data_errors: self
                .max_data_errors
                .as_deref()
                .map(|t| parse_count_in("--max-data-errors", t, 1, bounds::MAX_DATA_ERRORS))
                .transpose()?,
            journal: self.journal.clone(),
        })
    }
}

/// A compressibility ratio (`--compress`, the suite key `compress`).
pub(crate) fn compress(key: &str, t: &str) -> Result<f64> {
    let v = t
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| {
            VbError::input(format!(
                "{key} '{t}' is not a number (a ratio such as 2 or 3.5)"
            ))
        })?;
    bounds::number(key, v, bounds::MIN_COMPRESS, bounds::MAX_COMPRESS)
}

/// A deduplication ratio (`--dedup`, the suite key `dedup`).
pub(crate) fn dedup(key: &str, t: &str) -> Result<u64> {
    parse_count_in(key, t, 1, bounds::MAX_DEDUP)
}

/// The unit of deduplication (`--dedup-unit`, the suite key `dedup_unit`).
pub(crate) fn dedup_unit(key: &str, t: &str) -> Result<u64> {
    parse_size_in(key, t, bounds::MIN_DEDUP_UNIT, bounds::MAX_DEDUP_UNIT)
}

#[derive(Args, Debug, Clone)]
pub(crate) struct VerifyArgs {
    /// The directory holding the file set (as given to `run --target`: a
    /// path, or an nfs:// URL, read through volbench's own client).
    #[arg(long, value_name = "DIR")]
    pub(crate) target: PathBuf,

    /// The journal a `run --verify --journal` kept for this set: each block
    /// must then hold its last acknowledged write, not just any.
    #[arg(long, value_name = "FILE")]
    pub(crate) journal: Option<PathBuf>,
}

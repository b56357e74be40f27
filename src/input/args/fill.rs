//! The fill flag (--fill-bs), shared by `run` and `suite run` through
//! `CommonArgs`, and its parsing (the suite key `fill_bs` uses the same).

use clap::Args;

use crate::error::Result;
use crate::spec::fill::FillSpec;
use crate::units::{bounds, parse_size_in};

#[derive(Args, Debug, Clone, Default)]
pub struct FillArgs {
    /// Transfer size of the fill, the sequential write of every file of a
    /// set volbench creates before the first run (vdbench FillWrite
    /// xfersize), 512..64M in whole 512-byte sectors [default: 1M]; with
    /// direct I/O a multiple of the target's alignment.
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub fill_bs: Option<String>,
}

/// `key` names the value in errors (`--fill-bs` or the suite's `fill_bs`).
pub fn fill_spec(key: &str, text: Option<&str>) -> Result<FillSpec> {
    match text {
        None => Ok(FillSpec::default()),
        Some(t) => Ok(FillSpec {
            bs: parse_size_in(key, t, bounds::MIN_FILL_BS, bounds::MAX_FILL_BS)?,
        }),
    }
}

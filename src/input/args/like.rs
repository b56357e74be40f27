//! The flags of `run --like PROFILE`: the workload a production profile
//! (`volbench capture`) describes, at its rate or its concurrency, scaled.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct LikeArgs {
    /// Run the workload a profile (`volbench capture`) describes: its
    /// read/write mix and mean request size, at its mean IOPS (open loop)
    /// or with its mean requests in flight (--like-mode concurrency). Flags
    /// given beside it (--rw, --read-pct, --bs, --rate, --threads) win;
    /// --dry-run shows what was derived from what.
    #[arg(long, value_name = "PROFILE")]
    pub(crate) like: Option<PathBuf>,

    /// rate: the captured IOPS, open loop (the default); concurrency: as
    /// many threads as requests were in flight, closed loop.
    #[arg(long, value_name = "MODE", requires = "like")]
    pub(crate) like_mode: Option<String>,

    /// The profile's device to take (kernel name) [default: the busiest].
    #[arg(long, value_name = "NAME", requires = "like")]
    pub(crate) like_device: Option<String>,

    /// Multiply the captured rate (or concurrency) for growth: 2x, 1.5,
    /// 0.01..1000.
    #[arg(long, value_name = "FACTOR", requires = "like")]
    pub(crate) scale: Option<String>,
}

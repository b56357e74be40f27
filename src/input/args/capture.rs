//! The flags of `volbench capture`: what to watch, for how long, and where
//! the profile goes.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug, Clone)]
pub(crate) struct CaptureArgs {
    /// A block device to watch, by path (/dev/sdb, /dev/disk/by-id/...) or
    /// kernel name (sdb); repeat for several. Without --device or --mount,
    /// every whole device that has done I/O and every NFS mount is watched.
    #[arg(long = "device", value_name = "DEV")]
    pub(crate) devices: Vec<String>,

    /// A mounted directory to watch: its NFS mount (per-operation RTT,
    /// execution time, retransmissions) or the block devices under it.
    #[arg(long = "mount", value_name = "DIR")]
    pub(crate) mounts: Vec<PathBuf>,

    /// Record every block request of one --device instead of counters:
    /// issue and completion times, offset, size and op of each, from the
    /// kernel's block tracepoints (tracefs; root), into a volbench trace
    /// (CSV, volbench.trace/v1) that `run --replay` reads. No I/O is done.
    #[arg(long, requires = "devices", conflicts_with_all = ["mounts", "interval"])]
    pub(crate) trace: bool,

    // The help of these two is made from the bounds they are checked
    // against, so it cannot disagree with them.
    #[arg(
        long,
        value_name = "TIME",
        default_value = "60s",
        help = crate::units::bounds::capture_duration_help()
    )]
    pub(crate) duration: String,

    #[arg(
        long,
        value_name = "TIME",
        default_value = "1s",
        help = crate::units::bounds::capture_interval_help()
    )]
    pub(crate) interval: String,

    /// The profile to write (JSON, volbench.profile/v1), or with --trace
    /// the trace (volbench.trace/v1). An existing file
    /// is never replaced; `-` writes to stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub(crate) output: PathBuf,
}

//! The flags of `volbench run` beyond the shared ones: the workload
//! (`RunArgs`) and a metadata run's tree (`MetaArgs`).

use clap::Args;

use super::{CommonArgs, like, rate, replay};

#[derive(Args, Debug, Clone)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,

    /// Access pattern: read, write, randread, randwrite, rw, randrw
    /// [default: randread].
    #[arg(long, value_name = "PATTERN")]
    pub(crate) rw: Option<String>,

    /// Percentage of reads for rw and randrw [default: 50]. Lists and ranges
    /// sweep: 100,75,50 or 100:0:-10.
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub(crate) read_pct: Option<String>,

    /// Block size, 1 byte..1G [default: 4k]; a list sweeps (4k,64k); weights
    /// make one mix (4k:30,64k:70). threads x iodepth x the largest block is
    /// at most 4G.
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub(crate) bs: Option<String>,

    /// Writes' own block size, or one weighted mix of them (64k:30,1m:70);
    /// --bs then sizes the reads alone: --bs 8k --write-bs 128k (fio
    /// bs=8k,128k).
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub(crate) write_bs: Option<String>,

    /// Bypass the page cache with O_DIRECT (the default).
    #[arg(long, conflicts_with = "buffered")]
    pub(crate) direct: bool,

    /// Stop each run after this many bytes of I/O (warm-up included), or at
    /// --duration if that comes first. Use --warmup 0 for exact totals.
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub(crate) io_limit: Option<String>,

    /// Open-loop target rate in IOPS across all threads, 0.01..1e9 (a list
    /// sweeps), or a bandwidth across all threads: 100MiB/s (1KiB/s..1PiB/s).
    /// Latency is then measured from each I/O's intended start, with the
    /// service time reported beside it.
    #[arg(long, value_name = "IOPS", allow_negative_numbers = true)]
    pub(crate) rate: Option<String>,

    #[command(flatten)]
    pub(crate) rates: rate::RateArgs,

    /// Name of the run in results (default: derived from the workload);
    /// printable, one line, at most 128 characters.
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,

    #[command(flatten)]
    pub(crate) meta: MetaArgs,

    #[command(flatten)]
    pub(crate) like: like::LikeArgs,

    #[command(flatten)]
    pub(crate) replay: replay::ReplayArgs,
}

/// Metadata and small-file runs: a tree of files and operations on it.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Files and metadata")]
pub(crate) struct MetaArgs {
    /// Operations on a tree of files instead of block I/O. A plain list runs
    /// each as a phase over the whole tree, in order (create,stat,read,delete);
    /// weights make one timed mix over an existing tree
    /// (stat:40,open:20,read:20,create:10,delete:10). Operations: mkdir,
    /// create, open, stat, setattr, read, write, append, rename, readdir,
    /// delete, rmdir. With --hosts, each host works in TARGET/hostN of one
    /// shared tree, or in a tree of its own if --target has {host}. An
    /// nfs:// or smb:// target runs them through the protocol, no mount
    /// (each host a tree of its own).
    #[arg(long, value_name = "OPS")]
    pub(crate) ops: Option<String>,

    /// Directory levels below the target, 0..16; files sit in the deepest [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) depth: Option<String>,

    /// Directories in each directory, 1..100000 [default: 10].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) width: Option<String>,

    /// Files in each leaf directory [default: 100]. Files in all:
    /// width^depth x files-per-dir, at most 1,000,000,000.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) files_per_dir: Option<String>,

    /// File size, 0 bytes..1G, or a weighted mix: 3k:50,64k:40,1m:10 [default: 4k].
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub(crate) file_size: Option<String>,

    /// All threads work in the same directories (contending for their
    /// locks) instead of each in directories of its own.
    #[arg(long)]
    pub(crate) shared_dirs: bool,

    /// Sync and drop the client's page, dentry and inode caches before each
    /// phase, so stat and read are served by the storage (root).
    #[arg(long)]
    pub(crate) drop_caches: bool,

    /// With a create phase: keep each file already in the tree at its full
    /// size and make only the missing or short ones, so a tree left
    /// part-made (a create phase stopped) is completed rather than made
    /// again (vdbench's format=restart); the phase counts the files it made.
    #[arg(long)]
    pub(crate) keep_complete: bool,
}

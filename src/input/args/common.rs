//! The flags `run` and `suite run` share (`CommonArgs`), and where a job's
//! results go (`OutputArgs`), defined once.

use std::path::PathBuf;

use clap::Args;

use super::{CatalogueArg, HostArgs, live};

/// The flags `run` and `suite run` share, defined once. A value left out
/// takes the suite's own or, failing that, `spec::defaults`.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct CommonArgs {
    /// A directory (volbench creates and fills its own file set there), an
    /// existing regular file, or a block device. No symbolic link below it
    /// is followed; only regular files volbench created are written; one run
    /// per target at a time (a lock says who holds it). Under /dev, /proc
    /// and /sys only an existing block device; tmpfs, ramfs and zram are
    /// run but named as memory. Or a directory on an NFS server, without a
    /// mount: nfs://SERVER/EXPORT/DIR?version=3 (or 4.1; a :PORT after the
    /// server, and uid=, gid=, rsize=, wsize=, reconnect=SECONDS (how long a
    /// lost server is waited for, 1..3600, default 60) keys, as
    /// docs/guide/nfs.md says).
    /// Or a directory on an SMB share, without Windows or a mount:
    /// smb://USER@SERVER/SHARE/DIR?dialect=3.1.1 (USER@ left out for a guest;
    /// signing=, encryption=, channels=, reconnect=SECONDS (how long a lost
    /// server is waited for, 1..3600, default 60) keys; the password from
    /// VOLBENCH_SMB_PASSWORD or a mode-0600 credentials= file, as
    /// docs/guide/smb.md says).
    #[arg(long, value_name = "PATH|URL")]
    pub(crate) target: PathBuf,

    /// Working set on this host: 512, 4k, 64KiB, 1m, 4G, 1T (binary units;
    /// at most 8P) [default: 1G for a directory, the whole file or device otherwise].
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub(crate) size: Option<String>,

    /// Number of files the working set is split into (directory targets,
    /// 1..65536) [default: 1]; a list sweeps, each count with its own file
    /// set under TARGET/files-N. Each I/O thread holds the set open when N
    /// plus 64 fits the open-file limit (`ulimit -Hn`), else it keeps that
    /// many open and opens the others as its I/Os reach them.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) files: Option<String>,

    /// The most files of the set each I/O thread keeps open at a time,
    /// 1..65536, at least --iodepth; the others are opened as its I/Os reach
    /// them, the least recently used idle one closed (fio's openfiles)
    /// [default: all of them, as the open-file limit allows].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) open_files: Option<String>,

    /// Threads issuing I/O, 1..4096 [default: 1]; a list or range sweeps
    /// (1,2,4,8 or 1:64:*2; at most 10000 points, 10000 runs in all).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) threads: Option<String>,

    /// Outstanding I/Os per thread, 1..4096 [default: 1] (threads x iodepth
    /// at most 65536); a list or range sweeps.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) iodepth: Option<String>,

    /// Measured time per run: 60s, 5m, 1m30s (1ms..30d) [default: 60s].
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub(crate) duration: Option<String>,

    /// Warm-up before measuring (0..30d) [default: 5s]; measured and
    /// reported apart, excluded from totals.
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub(crate) warmup: Option<String>,

    /// I/O engine: auto, psync, io_uring, null, overlapped, nfs, smb [default: auto].
    /// auto uses io_uring when iodepth > 1 and psync otherwise on Linux;
    /// overlapped (I/O completion ports) is the Windows build's engine; nfs
    /// and smb (volbench's own NFS and SMB clients) are what nfs:// and
    /// smb:// targets run on.
    #[arg(long, value_name = "ENGINE")]
    pub(crate) engine: Option<String>,

    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub(crate) buffered: bool,

    /// An nfs:// target: TCP connections each I/O thread's own client opens
    /// to the server, its requests spread over them (a mount's nconnect;
    /// the URL's nconnect= says the same), 1..64 [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) nfs_connections: Option<String>,

    /// An smb:// target: channels bound to each I/O thread's SMB session
    /// (multichannel, over the server's interfaces as it reports them), its
    /// requests spread over them (the URL's channels= says the same), 1..32
    /// [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) smb_channels: Option<String>,

    /// What each write waits for: none, dsync (O_DSYNC: its data on stable
    /// storage, write-through) or sync (O_SYNC: data and metadata) [default: none].
    #[arg(long, value_name = "MODE")]
    pub(crate) write_sync: Option<String>,

    /// Spacing of rate-limited I/Os: uniform or poisson [default: uniform].
    #[arg(long, value_name = "KIND")]
    pub(crate) arrivals: Option<String>,

    /// End the warm-up once IOPS are steady (last 5 intervals within 10% of
    /// their mean, drift under 10%); --warmup becomes the cap.
    #[arg(long)]
    pub(crate) steady: bool,

    /// Length of each time-series interval (50ms..1h) [default: 1s].
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub(crate) interval: Option<String>,

    /// Random seed: the same seed gives the same offsets [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) seed: Option<String>,

    /// Allow writing to a block device or to an existing file volbench did
    /// not create. Its data is destroyed.
    #[arg(long)]
    pub(crate) allow_overwrite: bool,

    /// What the storage should deliver, to compare with: a catalogue entry
    /// and quota (anf-premium:4TiB, azure-p30) or figures (iops=500,mib_s=60),
    /// or both (an explicit figure wins). Recorded in result.json; the
    /// diagnosis says how near each run came.
    #[arg(long, value_name = "SERVICE[:QUOTA]|iops=N,mib_s=N")]
    pub(crate) expect: Option<String>,

    /// A production profile (`volbench capture -o PROFILE`): at its end the
    /// run states its headroom over production, as `compare PROFILE
    /// RESULT` does (terminal, result.json `headroom`, report). A file that
    /// is not a profile, or one of a newer schema, is refused before any I/O.
    #[arg(long, value_name = "PROFILE")]
    pub(crate) expect_from: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub(crate) shape: crate::input::args::shape::ShapeArgs,

    #[command(flatten)]
    pub(crate) targets: crate::input::args::targets::TargetListArgs,

    #[command(flatten)]
    pub(crate) catalogue: CatalogueArg,

    #[command(flatten)]
    pub(crate) data: crate::input::args::data::DataArgs,

    #[command(flatten)]
    pub(crate) fill: crate::input::args::fill::FillArgs,

    #[command(flatten)]
    pub(crate) out: OutputArgs,

    #[command(flatten)]
    pub(crate) remote: HostArgs,

    #[command(flatten)]
    pub(crate) reading: crate::input::args::reading::ReadingArgs,
}

/// Where results go, for every command that runs a job.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct OutputArgs {
    /// Write result.json, summary.csv, tables.md, table CSVs and report.html
    /// into this directory (checked before any I/O; files are never written
    /// over anything but volbench's own regular files).
    #[arg(long, value_name = "DIR")]
    pub(crate) output: Option<PathBuf>,

    /// Print the result as JSON on stdout (the summary goes to stderr).
    #[arg(long)]
    pub(crate) json: bool,

    /// Print the resolved spec and plan, do no I/O.
    #[arg(long)]
    pub(crate) dry_run: bool,

    #[command(flatten)]
    pub(crate) live: live::LiveArgs,

    #[command(flatten)]
    pub(crate) keep: super::results::KeepArg,
}

impl OutputArgs {
    /// Where the result goes, as the flags say.
    pub(crate) fn spec(&self) -> crate::spec::output::OutputSpec {
        let stdout = |p: &Option<PathBuf>| p.as_deref().is_some_and(crate::spec::output::is_stdout);
        crate::spec::output::OutputSpec {
            dir: self.output.clone(),
            json: self.json,
            dry_run: self.dry_run,
            live_on_stdout: stdout(&self.live.live) || stdout(&self.live.live_csv),
            quiet: self.live.quiet,
            sinks: self.sinks(),
        }
    }
}

impl OutputArgs {
    /// The sinks the flags (and the environment) name: the results store
    /// when `--store` is given or `$VOLBENCH_STORE` set.
    fn sinks(&self) -> Vec<crate::spec::output::SinkSpec> {
        let from_env =
            std::env::var(crate::spec::output::STORE_ENV).is_ok_and(|v| !v.trim().is_empty());
        if self.keep.store.is_some() || from_env {
            vec![crate::spec::output::SinkSpec::Store(
                self.keep.store.clone(),
            )]
        } else {
            Vec::new()
        }
    }
}

//! Command-line types. Clap stops here: values arrive as text and are
//! parsed by the spec layer, so every front end shares one set of rules and
//! error messages.

pub(crate) mod capture;
pub mod data;
pub(crate) mod fill;
pub mod help;
pub(crate) mod host_counts;
pub(crate) mod hosts;
pub(crate) mod launch;
pub(crate) mod like;
pub(crate) mod live;
pub(crate) mod rate;
pub(crate) mod reading;
pub(crate) mod replay;
pub(crate) mod shape;
pub(crate) mod suite_variant;
pub(crate) mod targets;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use hosts::HostArgs;

#[derive(Parser, Debug)]
#[command(
    name = "volbench",
    version = super::version::LONG,
    about = "Storage benchmark for volumes, file shares and disks: the vendors' methods in one binary",
    long_about = None
)]
// The exit codes and `run -h`'s short list are set in help.rs.
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: the size difference between variants is irrelevant.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one workload (or a sweep of them) against a target.
    Run(RunArgs),
    /// Watch the host's block devices, NFS mounts, CPUs and interfaces
    /// while production runs (no I/O of ours) and write their profile.
    #[command(
        long_about = "Watch the host's own counters while production runs, doing no I/O: \
        /proc/diskstats for block devices, /proc/self/mountstats for NFS mounts (per operation: \
        round trip, execution time, retransmissions), /proc/stat and /proc/net/dev. Per interval: \
        IOPS and MiB/s by direction, the read/write mix, mean request size, requests in flight and \
        await; then peak, p95 over intervals and mean. The profile (volbench.profile/v1, \
        docs/reference/profile-format.md) is read by `volbench report PROFILE`. Ctrl-C ends the \
        capture early and still writes what was seen."
    )]
    Capture(capture::CaptureArgs),
    /// A short pass of the six vendor patterns on a temporary directory here.
    Quick(QuickArgs),
    /// The vendors' methods as suites: list, show (to copy and edit), run.
    #[command(subcommand)]
    Suite(SuiteCommand),
    /// Little's law: the concurrency an IOPS target needs at a latency, or
    /// the IOPS or latency a concurrency allows. Give two of the three.
    Plan(PlanArgs),
    /// What a volume of a service level can do (--quota), or the quota a
    /// need takes (--need), from the catalogue, with the formula.
    #[command(
        long_about = "What a volume of a service level can do, or the quota a need takes, from \
        the catalogue of published limits (`volbench service list`), with the formula written out. \
        `size --service anf-premium --quota 4TiB` gives 64 MiB/s per TiB x 4 TiB = 256 MiB/s; \
        `size --service anf-premium --need 4500MiB/s` gives 70.31 TiB. A family of disk tiers \
        (azure-premium-ssd) answers with the tier that fits."
    )]
    Size(SizeArgs),
    /// The catalogue of service levels and published limits: list, show.
    #[command(subcommand)]
    Service(ServiceCommand),
    /// Build the report of one or more results: HTML with charts (the
    /// default), or the tables as Markdown, CSV or JSON on stdout.
    #[command(
        long_about = "Build the report of one or more results from their result.json files \
        alone. Runs of all the given results are taken together: runs identical but for the read \
        percentage are drawn as a read/write-mix chart, runs identical but for threads, iodepth or \
        rate as an IOPS-vs-latency curve, other sets as bars per pattern; every run also gets its \
        time series and latency percentiles. The HTML file is self-contained (inline SVG and CSS, \
        no scripts, nothing fetched) and prints on A4."
    )]
    Report(ReportArgs),
    /// Compare results: each metric of each matched run with its ratio to
    /// the first result, warnings where specs differ, and an HTML report.
    #[command(
        long_about = "Compare two or more results. Runs are matched by name, else by an \
        identical workload; the table shows IOPS, MiB/s, mean and p99 latency per run and operation \
        with the ratio to the first result (e.g. \"read MiB/s 1,520 → 3,500, 2.30x\"). Differences \
        in the matched specs (block size, threads, working set, direct I/O...) are warned about. \
        An HTML comparison report with the charts overlaid is written too. Given a profile \
        (volbench capture) and one result, it states the headroom instead: production's peak \
        against what the volume gave and the limits the result states, the nearest limit first; \
        --json prints it as volbench.headroom/v1 and --fail-below RATIO exits 6 below RATIO x \
        headroom."
    )]
    Compare(CompareArgs),
    /// Remove a tree of files a metadata run (`run --ops`) made: only
    /// volbench's own names under a directory holding its tree marker.
    Clean(CleanArgs),
    /// Read a file set back and check every sector: its checksum, offset
    /// and, with --journal, that it holds the last acknowledged write.
    /// Exit 1 with each mismatch's file, offset, expected and found; exit 5
    /// (not corruption) for a set written without --verify since its fill.
    Verify(crate::input::args::data::VerifyArgs),
    /// Turn a fio job file, vdbench parameter file or diskspd command line
    /// into an editable suite file, each option mapped, noted or refused.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Run a fio job file: its import, then `suite run` (--dry-run shows it).
    Fio(FioRunArgs),
    /// Run vdbench parameter files: their import, then `suite run`.
    Vdbench(VdbenchRunArgs),
    /// Run a diskspd command line: its import, then `suite run`.
    Diskspd(DiskspdRunArgs),
    /// The far end of a multi-host run, started by `run --hosts` over ssh;
    /// speaks the agent protocol on stdin/stdout.
    #[command(hide = true)]
    Agent(AgentArgs),
    /// Print a shell completion script (bash, zsh, fish); README: Installing.
    Completions(launch::CompletionsArgs),
    /// Print a man page (roff), or write all of them with --dir; README: Installing.
    Man(launch::ManArgs),
}

#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum SuiteCommand {
    /// List the built-in suites.
    List,
    /// Print a suite's file (built-in name or path), to copy and edit.
    Show {
        #[arg(value_name = "NAME|FILE")]
        suite: String,
        #[command(flatten)]
        published: crate::input::args::suite_variant::PublishedArg,
    },
    /// Run a built-in suite or a suite file.
    Run(SuiteRunArgs),
}

#[derive(Subcommand, Debug)]
pub enum ServiceCommand {
    /// List the catalogue: name, what it is, its limits.
    List(CatalogueArg),
    /// Show one entry: its limits, formula and source.
    Show {
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        catalogue: CatalogueArg,
    },
}

/// Where the catalogue comes from besides the built-in one.
#[derive(Args, Debug, Clone, Default)]
pub struct CatalogueArg {
    /// A catalogue file of your own (TOML, `[[service]]` entries as in
    /// `services/` of the source; an entry replaces a built-in one of the
    /// same name). ~/.config/volbench/services.toml is read too when it exists.
    #[arg(long, value_name = "FILE")]
    pub catalogue: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct SizeArgs {
    /// A catalogue entry (anf-premium, azure-p30, aws-gp3...) or a family
    /// of disk tiers (azure-premium-ssd, azure-standard-hdd).
    #[arg(long, value_name = "NAME")]
    pub service: String,

    /// The provisioned size to answer for: 500GiB, 4TiB, 70.31TiB.
    #[arg(long, value_name = "SIZE", conflicts_with = "need")]
    pub quota: Option<String>,

    /// What is needed: 4500MiB/s, 2GiB/s or 20000iops; answers the quota.
    #[arg(long, value_name = "RATE")]
    pub need: Option<String>,

    #[command(flatten)]
    pub catalogue: CatalogueArg,
}

#[derive(Args, Debug, Clone)]
pub struct SuiteRunArgs {
    /// Built-in suite name (see `suite list`) or a suite file.
    #[arg(value_name = "NAME|FILE")]
    pub suite: String,

    /// Do not run (and discard) a copy of the first run before the others.
    #[arg(long)]
    pub no_warmup_run: bool,

    #[command(flatten)]
    pub published: crate::input::args::suite_variant::PublishedArg,

    /// A value given here replaces the suite's own for every run; runs that
    /// set threads or iodepth themselves keep theirs.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The flags `run` and `suite run` share, defined once. A value left out
/// takes the suite's own or, failing that, `spec::defaults`.
#[derive(Args, Debug, Clone, Default)]
pub struct CommonArgs {
    /// A directory (volbench creates and fills its own file set there), an
    /// existing regular file, or a block device. No symbolic link below it
    /// is followed; only regular files volbench created are written; one run
    /// per target at a time (a lock says who holds it). Under /dev, /proc
    /// and /sys only an existing block device; tmpfs, ramfs and zram are
    /// run but named as memory.
    #[arg(long, value_name = "PATH")]
    pub target: PathBuf,

    /// Working set on this host: 512, 4k, 64KiB, 1m, 4G, 1T (binary units;
    /// at most 8P) [default: 1G for a directory, the whole file or device otherwise].
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub size: Option<String>,

    /// Number of files the working set is split into (directory targets,
    /// 1..65536) [default: 1]; a list sweeps, each count with its own file
    /// set under TARGET/files-N.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub files: Option<String>,

    /// Threads issuing I/O, 1..4096 [default: 1]; a list or range sweeps
    /// (1,2,4,8 or 1:64:*2; at most 10000 points, 10000 runs in all).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub threads: Option<String>,

    /// Outstanding I/Os per thread, 1..4096 [default: 1] (threads x iodepth
    /// at most 65536); a list or range sweeps.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub iodepth: Option<String>,

    /// Measured time per run: 60s, 5m, 1m30s (1ms..30d) [default: 60s].
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub duration: Option<String>,

    /// Warm-up before measuring (0..30d) [default: 5s]; measured and
    /// reported apart, excluded from totals.
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub warmup: Option<String>,

    /// I/O engine: auto, psync, io_uring, null, overlapped [default: auto].
    /// auto uses io_uring when iodepth > 1 and psync otherwise on Linux;
    /// overlapped (I/O completion ports) is the Windows build's engine.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,

    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,

    /// What each write waits for: none, dsync (O_DSYNC: its data on stable
    /// storage, write-through) or sync (O_SYNC: data and metadata) [default: none].
    #[arg(long, value_name = "MODE")]
    pub write_sync: Option<String>,

    /// Spacing of rate-limited I/Os: uniform or poisson [default: uniform].
    #[arg(long, value_name = "KIND")]
    pub arrivals: Option<String>,

    /// End the warm-up once IOPS are steady (last 5 intervals within 10% of
    /// their mean, drift under 10%); --warmup becomes the cap.
    #[arg(long)]
    pub steady: bool,

    /// Length of each time-series interval (50ms..1h) [default: 1s].
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub interval: Option<String>,

    /// Random seed: the same seed gives the same offsets [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub seed: Option<String>,

    /// Allow writing to a block device or to an existing file volbench did
    /// not create. Its data is destroyed.
    #[arg(long)]
    pub allow_overwrite: bool,

    /// What the storage should deliver, to compare with: a catalogue entry
    /// and quota (anf-premium:4TiB, azure-p30) or figures (iops=500,mib_s=60),
    /// or both (an explicit figure wins). Recorded in result.json; the
    /// diagnosis says how near each run came.
    #[arg(long, value_name = "SERVICE[:QUOTA]|iops=N,mib_s=N")]
    pub expect: Option<String>,

    /// A production profile (`volbench capture -o PROFILE`): at its end the
    /// run states its headroom over production, as `compare PROFILE
    /// RESULT` does (terminal, result.json `headroom`, report). A file that
    /// is not a profile, or one of a newer schema, is refused before any I/O.
    #[arg(long, value_name = "PROFILE")]
    pub expect_from: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub shape: crate::input::args::shape::ShapeArgs,

    #[command(flatten)]
    pub targets: crate::input::args::targets::TargetListArgs,

    #[command(flatten)]
    pub catalogue: CatalogueArg,

    #[command(flatten)]
    pub data: crate::input::args::data::DataArgs,

    #[command(flatten)]
    pub fill: crate::input::args::fill::FillArgs,

    #[command(flatten)]
    pub out: OutputArgs,

    #[command(flatten)]
    pub remote: HostArgs,

    #[command(flatten)]
    pub reading: crate::input::args::reading::ReadingArgs,
}

/// Where results go, for every command that runs a job.
#[derive(Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Write result.json, summary.csv, tables.md, table CSVs and report.html
    /// into this directory (checked before any I/O; files are never written
    /// over anything but volbench's own regular files).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Print the result as JSON on stdout (the summary goes to stderr).
    #[arg(long)]
    pub json: bool,

    /// Print the resolved spec and plan, do no I/O.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub live: live::LiveArgs,
}

#[derive(Args, Debug, Clone)]
pub struct PlanArgs {
    /// Latency per I/O: 1.3ms, 800us, 0.002s.
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub latency: Option<String>,

    /// IOPS wanted (or observed).
    #[arg(long, value_name = "IOPS", allow_negative_numbers = true)]
    pub iops: Option<String>,

    /// I/Os in flight: threads x iodepth, summed over hosts.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub concurrency: Option<String>,

    /// Spread the concurrency over this many client hosts.
    #[arg(
        long,
        value_name = "N",
        default_value = "1",
        allow_negative_numbers = true
    )]
    pub hosts: String,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// Self-contained page with charts.
    Html,
    /// The loaded results plus the sweeps found in them.
    Json,
    /// summary.csv's columns with a last column `source`.
    Csv,
    /// The report's tables as Markdown.
    Md,
    /// fio's --output-format=json shape, for fio tooling (fio-plot...).
    FioJson,
    /// Every interval of every run (and host) per op: IOPS, MiB/s, latency
    /// mean/p50/p99/p99.9/max from the interval's own histogram.
    IntervalsCsv,
    /// I/Os per latency band (10us, 20us, 50us ... 10s) per run and op,
    /// IOMeter-style, from the run's merged histogram.
    LatencyBuckets,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Result directories (holding result.json) or result.json files.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    /// Where to write. Default for html: DIR/report.html with one DIR (a
    /// required option with several); stdout for the other formats. `-`
    /// or /dev/stdout means stdout. fio-json into an existing directory: a file per run.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// What to produce.
    #[arg(long, value_enum, default_value = "html")]
    pub format: ReportFormat,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Result directories (or result.json files); the first is the base the
    /// ratios are taken against. Or a profile (volbench capture) and one
    /// result: the headroom of that volume over production.
    #[arg(value_name = "DIR", num_args = 2.., required = true)]
    pub dirs: Vec<PathBuf>,

    /// Write the HTML comparison report to FILE (none without it, so a
    /// comparison leaves nothing in the current directory; `-`: none).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print the comparison table as Markdown instead of a terminal table.
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,

    /// Print the verdict as JSON (schema volbench.compare/v1: every matched
    /// figure, its ratio, and whether it failed) instead of the tables.
    #[arg(long)]
    pub json: bool,

    /// Exit 6 when any matched figure of a later result is worse than RATIO
    /// times the first's (0 < RATIO <= 10): IOPS and MiB/s below RATIO x the
    /// base, latencies above base / RATIO. 0.9 fails a 10% drop.
    #[arg(long, value_name = "RATIO")]
    pub fail_below: Option<String>,

    /// The figures --fail-below judges, comma-separated: iops, mib_s,
    /// mean_lat, p99_lat [default: all four].
    #[arg(long, value_name = "LIST", requires = "fail_below")]
    pub fail_on: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Access pattern: read, write, randread, randwrite, rw, randrw
    /// [default: randread].
    #[arg(long, value_name = "PATTERN")]
    pub rw: Option<String>,

    /// Percentage of reads for rw and randrw [default: 50]. Lists and ranges
    /// sweep: 100,75,50 or 100:0:-10.
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub read_pct: Option<String>,

    /// Block size, 1 byte..1G [default: 4k]; a list sweeps (4k,64k); weights
    /// make one mix (4k:30,64k:70). threads x iodepth x the largest block is
    /// at most 4G.
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub bs: Option<String>,

    /// Bypass the page cache with O_DIRECT (the default).
    #[arg(long, conflicts_with = "buffered")]
    pub direct: bool,

    /// Stop each run after this many bytes of I/O (warm-up included), or at
    /// --duration if that comes first. Use --warmup 0 for exact totals.
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub io_limit: Option<String>,

    /// Open-loop target rate in IOPS across all threads, 0.01..1e9 (a list
    /// sweeps), or a bandwidth across all threads: 100MiB/s (1KiB/s..1PiB/s).
    /// Latency is then measured from each I/O's intended start, with the
    /// service time reported beside it.
    #[arg(long, value_name = "IOPS", allow_negative_numbers = true)]
    pub rate: Option<String>,

    #[command(flatten)]
    pub rates: rate::RateArgs,

    /// Name of the run in results (default: derived from the workload);
    /// printable, one line, at most 128 characters.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    #[command(flatten)]
    pub meta: MetaArgs,

    #[command(flatten)]
    pub like: like::LikeArgs,

    #[command(flatten)]
    pub replay: replay::ReplayArgs,
}

#[derive(Args, Debug, Clone)]
pub struct QuickArgs {
    /// Directory to create the temporary file set in.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,

    /// Measured time per pattern.
    #[arg(
        long,
        value_name = "D",
        default_value = "5s",
        allow_negative_numbers = true
    )]
    pub duration: String,

    /// Working set.
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "256m",
        allow_negative_numbers = true
    )]
    pub size: String,

    /// Write result.json, summary.csv and report.html into this directory.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Keep the temporary file set instead of removing it.
    #[arg(long)]
    pub keep: bool,
}

#[derive(Args, Debug, Clone)]
pub struct AgentArgs {
    /// The coordinator's session name (informational).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
}

/// Metadata and small-file runs: a tree of files and operations on it.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Files and metadata")]
pub struct MetaArgs {
    /// Operations on a tree of files instead of block I/O. A plain list runs
    /// each as a phase over the whole tree, in order (create,stat,read,delete);
    /// weights make one timed mix over an existing tree
    /// (stat:40,open:20,read:20,create:10,delete:10). Operations: mkdir,
    /// create, open, stat, setattr, read, write, append, rename, readdir,
    /// delete, rmdir. With --hosts, each host works in TARGET/hostN of one
    /// shared tree, or in a tree of its own if --target has {host}.
    #[arg(long, value_name = "OPS")]
    pub ops: Option<String>,

    /// Directory levels below the target, 0..16; files sit in the deepest [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub depth: Option<String>,

    /// Directories in each directory, 1..100000 [default: 10].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub width: Option<String>,

    /// Files in each leaf directory [default: 100]. Files in all:
    /// width^depth x files-per-dir, at most 1,000,000,000.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub files_per_dir: Option<String>,

    /// File size, 0 bytes..1G, or a weighted mix: 3k:50,64k:40,1m:10 [default: 4k].
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true)]
    pub file_size: Option<String>,

    /// All threads work in the same directories (contending for their
    /// locks) instead of each in directories of its own.
    #[arg(long)]
    pub shared_dirs: bool,

    /// Sync and drop the client's page, dentry and inode caches before each
    /// phase, so stat and read are served by the storage (root).
    #[arg(long)]
    pub drop_caches: bool,
}

#[derive(Args, Debug, Clone)]
pub struct CleanArgs {
    /// The tree's directory (the --target of the run that made it; for a
    /// tree many hosts shared, every hostN part in it is cleaned).
    #[arg(long, value_name = "DIR")]
    pub target: PathBuf,
}

/// `volbench import TOOL ...`.
#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// A fio job file (`include` followed, `${VAR}` from the environment).
    Fio {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        to: ImportTo,
    },
    /// vdbench parameter files, read as one (`include=` followed).
    Vdbench {
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        to: ImportTo,
    },
    /// A diskspd command line, after `--`: `import diskspd -- -c50G -d300 ...`
    /// (required, so diskspd's `-o4` is never read as this command's `-o`).
    Diskspd {
        #[command(flatten)]
        to: ImportTo,
        #[arg(
            value_name = "ARGS",
            required = true,
            last = true,
            allow_hyphen_values = true
        )]
        args: Vec<String>,
    },
}

/// Where an import goes and how foreign paths are found.
#[derive(Args, Debug, Clone, Default)]
pub struct ImportTo {
    /// Write the suite here (and, for many hosts, its hosts file beside it
    /// as FILE.hosts) instead of printing it (`-` or /dev/stdout prints
    /// it); an existing file is never replaced.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub map: MapArgs,
}

#[derive(Args, Debug, Clone, Default)]
pub struct MapArgs {
    /// Where a Windows path or disk number is on this machine:
    /// 'z:\=/mnt/share/', '#1=/dev/sdb' (repeatable; longest prefix wins).
    #[arg(long = "map", value_name = "FROM=TO")]
    pub map: Vec<String>,
}

/// The flags of `volbench fio|vdbench|diskspd`: the import's target can be
/// replaced, and the run flags of `suite run` apply.
#[derive(Args, Debug, Clone, Default)]
pub struct ImportRunArgs {
    /// Run against this target instead of the one the job names.
    #[arg(long, value_name = "PATH")]
    pub target: Option<PathBuf>,

    /// Allow writing to a block device or to an existing file volbench did
    /// not create. Its data is destroyed.
    #[arg(long)]
    pub allow_overwrite: bool,

    #[command(flatten)]
    pub map: MapArgs,

    #[command(flatten)]
    pub out: OutputArgs,

    #[command(flatten)]
    pub remote: HostArgs,
}

#[derive(Args, Debug, Clone)]
pub struct FioRunArgs {
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub run: ImportRunArgs,
}

#[derive(Args, Debug, Clone)]
pub struct VdbenchRunArgs {
    /// Parameter files, as vdbench's -f.
    #[arg(short = 'f', value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub run: ImportRunArgs,
}

#[derive(Args, Debug, Clone)]
pub struct DiskspdRunArgs {
    #[command(flatten)]
    pub run: ImportRunArgs,
    /// diskspd's switches and targets, as written for diskspd.
    #[arg(
        value_name = "ARGS",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

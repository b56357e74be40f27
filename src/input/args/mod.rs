//! Command-line types. Clap stops here: values arrive as text and are
//! parsed by the spec layer, so every front end shares one set of rules and
//! error messages.

pub(crate) mod capture;
mod common;
pub mod data;
pub(crate) mod fill;
pub mod help;
pub(crate) mod host_counts;
pub(crate) mod hosts;
mod import;
pub(crate) mod launch;
pub(crate) mod like;
pub(crate) mod live;
pub(crate) mod rate;
pub(crate) mod reading;
pub(crate) mod replay;
pub(crate) mod results;
mod run;
pub(crate) mod shape;
pub(crate) mod suite_variant;
pub(crate) mod targets;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub(crate) use common::{CommonArgs, OutputArgs};
pub(crate) use hosts::HostArgs;
pub(crate) use import::{
    DiskspdRunArgs, FioRunArgs, ImportCommand, ImportRunArgs, ImportTo, VdbenchRunArgs,
};
pub(crate) use results::{CompareArgs, ReportArgs, ReportFormat};
pub(crate) use run::RunArgs;

#[derive(Parser, Debug)]
#[command(
    name = "volbench",
    version = super::version::long(),
    about = "Storage benchmark for volumes, file shares and disks: the vendors' methods in one binary",
    long_about = None
)]
// The exit codes and `run -h`'s short list are set in help.rs.
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

// Parsed once per process: the size difference between variants is irrelevant.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
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
    /// Remove the file set a run made, or the tree of files a metadata run
    /// (`run --ops`) made: only volbench's own files, proven, under a
    /// directory holding the set's or the tree's marker.
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
    // -v is vdbench's data validation here, as in vdbench's own command
    // line: --verbose keeps only its long name.
    #[command(mut_arg("verbose", |a| a.short(None)))]
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
    #[command(flatten)]
    Store(results::StoreCommands),
}

#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub(crate) enum SuiteCommand {
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
pub(crate) enum ServiceCommand {
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
pub(crate) struct CatalogueArg {
    /// A catalogue file of your own (TOML, `[[service]]` entries as in
    /// `services/` of the source; an entry replaces a built-in one of the
    /// same name). ~/.config/volbench/services.toml is read too when it exists.
    #[arg(long, value_name = "FILE")]
    pub(crate) catalogue: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct SizeArgs {
    /// A catalogue entry (anf-premium, azure-p30, aws-gp3...) or a family
    /// of disk tiers (azure-premium-ssd, azure-standard-hdd).
    #[arg(long, value_name = "NAME")]
    pub(crate) service: String,

    /// The provisioned size to answer for: 500GiB, 4TiB, 70.31TiB.
    #[arg(long, value_name = "SIZE", conflicts_with = "need")]
    pub(crate) quota: Option<String>,

    /// What is needed: 4500MiB/s, 2GiB/s or 20000iops; answers the quota.
    #[arg(long, value_name = "RATE")]
    pub(crate) need: Option<String>,

    #[command(flatten)]
    pub(crate) catalogue: CatalogueArg,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct SuiteRunArgs {
    /// Built-in suite name (see `suite list`) or a suite file. A file's
    /// `[[include]]` entries (`file = "PATH"`, relative to it, or
    /// `suite = "NAME"`) bring other suites' runs in where they stand, each
    /// with its own `[defaults]` (docs/reference/suite-format.md).
    #[arg(value_name = "NAME|FILE")]
    pub(crate) suite: String,

    /// Do not run (and discard) a copy of the first run before the others.
    #[arg(long)]
    pub(crate) no_warmup_run: bool,

    #[command(flatten)]
    pub(crate) published: crate::input::args::suite_variant::PublishedArg,

    /// A value given here replaces the suite's own for every run; runs that
    /// set threads or iodepth themselves keep theirs.
    #[command(flatten)]
    pub(crate) common: CommonArgs,
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

#[derive(Args, Debug, Clone)]
pub(crate) struct QuickArgs {
    /// Directory to create the temporary file set in.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(crate) dir: PathBuf,

    /// Measured time per pattern.
    #[arg(
        long,
        value_name = "D",
        default_value = "5s",
        allow_negative_numbers = true
    )]
    pub(crate) duration: String,

    /// Working set.
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "256m",
        allow_negative_numbers = true
    )]
    pub(crate) size: String,

    /// Write result.json, summary.csv and report.html into this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) output: Option<PathBuf>,

    /// Keep the temporary file set instead of removing it.
    #[arg(long)]
    pub(crate) keep: bool,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct AgentArgs {
    /// The coordinator's session name (informational).
    #[arg(long, value_name = "NAME")]
    pub(crate) session: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct CleanArgs {
    /// The --target of the run that made it: a file set's directory (the
    /// files its marker lists that are still its own; anything else there
    /// is left), or a tree's (for a tree many hosts shared, every hostN
    /// part in it is cleaned); a local directory, or an nfs:// or smb://
    /// URL. Neither there: refused, exit 3.
    #[arg(long, value_name = "DIR|URL")]
    pub(crate) target: PathBuf,
}

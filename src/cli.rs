//! Command-line types. Clap stops here: values arrive as text and are
//! parsed by the spec layer, so every front end shares one set of rules and
//! error messages.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "volbench",
    version,
    about = "Storage benchmark for volumes, file shares and disks: the vendors' methods in one binary",
    long_about = None,
    after_help = "Exit codes: 0 done; 1 the run failed (I/O error); 2 bad input; \
                  3 refused for safety; 4 target unusable; 130 interrupted (results so far written)."
)]
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
    /// A short pass of the six vendor patterns on a temporary directory here.
    Quick(QuickArgs),
    /// The vendors' methods as suites: list, show (to copy and edit), run.
    #[command(subcommand)]
    Suite(SuiteCommand),
    /// Little's law: the concurrency an IOPS target needs at a latency, or
    /// the IOPS or latency a concurrency allows. Give two of the three.
    Plan(PlanArgs),
    /// The far end of a multi-host run, started by `run --hosts` over ssh;
    /// speaks the agent protocol on stdin/stdout.
    #[command(hide = true)]
    Agent(AgentArgs),
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
    },
    /// Run a built-in suite or a suite file.
    Run(SuiteRunArgs),
}

#[derive(Args, Debug, Clone)]
pub struct SuiteRunArgs {
    /// Built-in suite name (see `suite list`) or a suite file.
    #[arg(value_name = "NAME|FILE")]
    pub suite: String,

    /// Directory (or file, or block device) to benchmark.
    #[arg(long, value_name = "PATH")]
    pub target: PathBuf,

    /// Working set on this host (replaces the suite's default).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,

    /// Files in the working set (replaces the suite's default).
    #[arg(long, value_name = "N")]
    pub files: Option<String>,

    /// Threads (replaces the suite's default; runs that set their own keep them).
    #[arg(long, value_name = "N")]
    pub threads: Option<String>,

    /// Outstanding I/Os per thread (replaces the suite's default).
    #[arg(long, value_name = "N")]
    pub iodepth: Option<String>,

    /// Measured time per run (replaces the suite's default).
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,

    /// Warm-up per run (replaces the suite's default).
    #[arg(long, value_name = "D")]
    pub warmup: Option<String>,

    /// I/O engine: auto, psync, io_uring, null.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,

    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,

    /// Time-series interval.
    #[arg(long, value_name = "D")]
    pub interval: Option<String>,

    /// Random seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<String>,

    /// End each warm-up once IOPS are steady; --warmup becomes the cap.
    #[arg(long)]
    pub steady: bool,

    /// Spacing of rate-limited I/Os, uniform or poisson (replaces the suite's default).
    #[arg(long, value_name = "KIND")]
    pub arrivals: Option<String>,

    /// Do not run (and discard) a copy of the first run before the others.
    #[arg(long)]
    pub no_warmup_run: bool,

    /// Write result.json, summary.csv, tables.md and table CSVs here.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Print the result as JSON on stdout (the tables go to stderr).
    #[arg(long)]
    pub json: bool,

    /// Print the expanded plan and spec, do no I/O.
    #[arg(long)]
    pub dry_run: bool,

    /// Allow writing to a block device or an existing file volbench did not create.
    #[arg(long)]
    pub allow_overwrite: bool,

    #[command(flatten)]
    pub remote: HostArgs,
}

#[derive(Args, Debug, Clone)]
pub struct PlanArgs {
    /// Latency per I/O: 1.3ms, 800us, 0.002s.
    #[arg(long, value_name = "D")]
    pub latency: Option<String>,

    /// IOPS wanted (or observed).
    #[arg(long, value_name = "IOPS")]
    pub iops: Option<String>,

    /// I/Os in flight: threads x iodepth, summed over hosts.
    #[arg(long, value_name = "N")]
    pub concurrency: Option<String>,

    /// Spread the concurrency over this many client hosts.
    #[arg(long, value_name = "N", default_value = "1")]
    pub hosts: String,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// A directory (volbench creates and fills its own file set there), an
    /// existing regular file, or a block device.
    #[arg(long, value_name = "PATH")]
    pub target: PathBuf,

    /// Working set on this host: 512, 4k, 64KiB, 1m, 4G, 1T (binary units).
    /// Default: 1G for a directory, the whole file or device otherwise.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,

    /// Number of files the working set is split into (directory targets); a
    /// list sweeps, each count with its own file set under TARGET/files-N.
    #[arg(long, value_name = "N", default_value = "1")]
    pub files: String,

    /// Access pattern: read, write, randread, randwrite, rw, randrw.
    #[arg(long, value_name = "PATTERN", default_value = "randread")]
    pub rw: String,

    /// Percentage of reads for rw and randrw [default: 50]. Lists and ranges
    /// sweep: 100,75,50 or 100:0:-10.
    #[arg(long, value_name = "P")]
    pub read_pct: Option<String>,

    /// Block size; a list sweeps (4k,64k); weights make one mix (4k:30,64k:70).
    #[arg(long, value_name = "SIZE", default_value = "4k")]
    pub bs: String,

    /// Threads issuing I/O; a list or range sweeps (1,2,4,8 or 1:64:*2).
    #[arg(long, value_name = "N", default_value = "1")]
    pub threads: String,

    /// Outstanding I/Os per thread; a list or range sweeps.
    #[arg(long, value_name = "N", default_value = "1")]
    pub iodepth: String,

    /// I/O engine: auto, psync, io_uring, null. auto uses io_uring when
    /// iodepth > 1 and psync otherwise.
    #[arg(long, value_name = "ENGINE", default_value = "auto")]
    pub engine: String,

    /// Bypass the page cache with O_DIRECT (the default).
    #[arg(long, conflicts_with = "buffered")]
    pub direct: bool,

    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,

    /// Measured time per run: 60s, 5m, 1m30s.
    #[arg(long, value_name = "D", default_value = "60s")]
    pub duration: String,

    /// Warm-up before measuring; measured and reported apart, excluded from totals.
    #[arg(long, value_name = "D", default_value = "5s")]
    pub warmup: String,

    /// Stop each run after this many bytes of I/O (warm-up included), or at
    /// --duration if that comes first. Use --warmup 0 for exact totals.
    #[arg(long, value_name = "SIZE")]
    pub io_limit: Option<String>,

    /// Open-loop target rate in IOPS across all threads (a list sweeps).
    /// Latency is then measured from each I/O's intended start, with the
    /// service time reported beside it.
    #[arg(long, value_name = "IOPS")]
    pub rate: Option<String>,

    /// Spacing of rate-limited I/Os: uniform or poisson.
    #[arg(long, value_name = "KIND", default_value = "uniform")]
    pub arrivals: String,

    /// End the warm-up once IOPS are steady (last 5 intervals within 10% of
    /// their mean, drift under 10%); --warmup becomes the cap.
    #[arg(long)]
    pub steady: bool,

    /// Length of each time-series interval.
    #[arg(long, value_name = "D", default_value = "1s")]
    pub interval: String,

    /// Random seed: the same seed gives the same offsets.
    #[arg(long, value_name = "N", default_value = "1")]
    pub seed: String,

    /// Name of the run in results (default: derived from the workload).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Write result.json and summary.csv into this directory.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Print the result as JSON on stdout (the summary goes to stderr).
    #[arg(long)]
    pub json: bool,

    /// Print the resolved spec and plan, do no I/O.
    #[arg(long)]
    pub dry_run: bool,

    /// Allow writing to a block device or to an existing file volbench did
    /// not create. Its data is destroyed.
    #[arg(long)]
    pub allow_overwrite: bool,

    #[command(flatten)]
    pub remote: HostArgs,
}

#[derive(Args, Debug, Clone)]
pub struct QuickArgs {
    /// Directory to create the temporary file set in.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,

    /// Measured time per pattern.
    #[arg(long, value_name = "D", default_value = "5s")]
    pub duration: String,

    /// Working set.
    #[arg(long, value_name = "SIZE", default_value = "256m")]
    pub size: String,

    /// Write result.json and summary.csv into this directory.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Keep the temporary file set instead of removing it.
    #[arg(long)]
    pub keep: bool,
}

/// Running one job on many client hosts at once, over ssh.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Many hosts")]
pub struct HostArgs {
    /// Run on these hosts at once (comma list; anything ssh accepts: names,
    /// addresses, user@host, ~/.ssh/config aliases). --target becomes a
    /// template: {host}, {index} (position from 0), {1..6}, {a,b}.
    #[arg(long, value_name = "HOST,...", conflicts_with = "hosts_file")]
    pub hosts: Option<String>,

    /// Like --hosts, one host a line; '#' comments; per-host overrides after
    /// the name: target=TEMPLATE threads=N.
    #[arg(long, value_name = "FILE")]
    pub hosts_file: Option<PathBuf>,

    /// The command that reaches a host, run as CMD HOST REMOTE-COMMAND
    /// [default: ssh, or $VOLBENCH_SSH_COMMAND]. When the program is ssh,
    /// -T -o BatchMode=yes -o ServerAliveInterval=5 -o ServerAliveCountMax=3
    /// -o ConnectTimeout=10 are added after your words.
    #[arg(long, value_name = "CMD")]
    pub ssh_command: Option<String>,

    /// Copy this volbench binary to each host (into --push-dir, named by
    /// its content hash, reused when already there) and run that copy.
    #[arg(long)]
    pub push_binary: bool,

    /// Cache directory on the hosts for --push-binary.
    #[arg(long, value_name = "DIR", default_value = "~/.cache/volbench")]
    pub push_dir: String,

    /// volbench on the hosts, when not pushed: a command on their PATH or a path.
    #[arg(long, value_name = "PATH", default_value = "volbench")]
    pub remote_volbench: String,

    /// Let several hosts use the same target path (each host's own disk
    /// under one name, or deliberately shared files). Hosts sharing a path
    /// prepare it one after the other.
    #[arg(long)]
    pub shared_target: bool,

    /// Give up on a host silent this long (no heartbeat, no data); an agent
    /// that hears nothing from here as long stops its I/O and exits.
    #[arg(long, value_name = "D", default_value = "5s")]
    pub host_timeout: String,

    /// Name shown on the agents' command lines (to find them with ps).
    #[arg(long, value_name = "NAME", hide = true)]
    pub session: Option<String>,
}

impl HostArgs {
    pub fn is_multi_host(&self) -> bool {
        self.hosts.is_some() || self.hosts_file.is_some()
    }
}

#[derive(Args, Debug, Clone)]
pub struct AgentArgs {
    /// The coordinator's session name (informational).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
}

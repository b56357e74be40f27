//! The flags of the commands that read results: `report`, `compare`, and
//! the store's (`history`, `baseline`, `store import`), with `--store`,
//! where a run's result is kept and where these read it.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReportFormat {
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

impl From<ReportFormat> for crate::spec::output::View {
    fn from(f: ReportFormat) -> Self {
        use crate::spec::output::View;
        match f {
            ReportFormat::Html => View::Html,
            ReportFormat::Json => View::Json,
            ReportFormat::Csv => View::Csv,
            ReportFormat::Md => View::Md,
            ReportFormat::FioJson => View::FioJson,
            ReportFormat::IntervalsCsv => View::IntervalsCsv,
            ReportFormat::LatencyBuckets => View::LatencyBuckets,
        }
    }
}

#[derive(Args, Debug, Clone)]
pub(crate) struct ReportArgs {
    /// Result directories (holding result.json), result.json files, or runs
    /// in the store: store:ID, store:latest, store:baseline.
    #[arg(value_name = "DIR", required_unless_present = "trend")]
    pub(crate) dirs: Vec<PathBuf>,

    /// Where to write. Default for html: DIR/report.html with one DIR (a
    /// required option with several); stdout for the other formats. `-`
    /// or /dev/stdout means stdout. fio-json into an existing directory: a file per run.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    /// What to produce.
    #[arg(long, value_enum, default_value = "html")]
    pub(crate) format: ReportFormat,

    #[command(flatten)]
    pub(crate) trend: TrendArgs,

    /// Print each I/O thread's figures per run (ops, MiB, IOPS, MiB/s, mean,
    /// p50, p99, max from the thread's own histogram), as diskspd -L does,
    /// with the run's totals beneath; a terminal table, or Markdown / CSV
    /// with --format md / csv.
    #[arg(long)]
    pub(crate) per_thread: bool,

    #[command(flatten)]
    pub(crate) store: StoreArg,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct CompareArgs {
    /// Result directories (or result.json files, or store:ID, store:latest,
    /// store:baseline); the first is the base the ratios are taken against.
    /// Or a profile (volbench capture) and one result: the headroom of that
    /// volume over production.
    #[arg(value_name = "DIR", num_args = 1.., required = true)]
    pub(crate) dirs: Vec<PathBuf>,

    /// Compare against the store's baseline of the results' target and
    /// suite (`volbench baseline set`): it becomes the base, first.
    #[arg(long, value_name = "WHAT", value_parser = ["baseline"])]
    pub(crate) against: Option<String>,

    #[command(flatten)]
    pub(crate) store: StoreArg,

    /// Write the HTML comparison report to FILE (none without it, so a
    /// comparison leaves nothing in the current directory; `-`: none).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    /// Print the comparison table as Markdown instead of a terminal table.
    #[arg(long, conflicts_with = "json")]
    pub(crate) markdown: bool,

    /// Print the verdict as JSON (schema volbench.compare/v1: every matched
    /// figure, its ratio, and whether it failed) instead of the tables.
    #[arg(long)]
    pub(crate) json: bool,

    /// Exit 6 when any matched figure of a later result is worse than RATIO
    /// times the first's (0 < RATIO <= 10): IOPS and MiB/s below RATIO x the
    /// base, latencies above base / RATIO. 0.9 fails a 10% drop.
    #[arg(long, value_name = "RATIO")]
    pub(crate) fail_below: Option<String>,

    /// The figures --fail-below judges, comma-separated: iops, mib_s,
    /// mean_lat, p99_lat [default: all four].
    #[arg(long, value_name = "LIST", requires = "fail_below")]
    pub(crate) fail_on: Option<String>,
}

/// `run --store`: keep the run's result in a store as well.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct KeepArg {
    /// Keep the result in a store too: a SQLite file (made when absent),
    /// or postgres://USER@HOST/DB for a team (password from PGPASSWORD or
    /// the URL, never printed). Alone: the default store,
    /// $XDG_DATA_HOME/volbench/history.db. $VOLBENCH_STORE does the same.
    /// Checked before any I/O.
    #[arg(long, value_name = "PATH|URL", num_args = 0..=1, default_missing_value = "")]
    pub(crate) store: Option<String>,
}

/// The store a command reads.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct StoreArg {
    /// The store to read (a SQLite file or postgres://...) [default:
    /// $VOLBENCH_STORE, else $XDG_DATA_HOME/volbench/history.db].
    #[arg(long, value_name = "PATH|URL")]
    pub(crate) store: Option<String>,
}

/// `report --trend`: one workload on one target over time, from the store.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct TrendArgs {
    /// Add the trend to the HTML report: IOPS and p99 of each stored run of
    /// the workload on the target, oldest first, runs whose conditions
    /// differ from the newest marked. Without results named, the report is
    /// of the target's newest stored run.
    #[arg(long)]
    pub(crate) trend: bool,

    /// The target the trend is of [default: that of the first result
    /// named, else of the newest stored run].
    #[arg(long, value_name = "PATH", requires = "trend")]
    pub(crate) target: Option<String>,

    /// The workload (run name) [default: each one the report's result ran].
    #[arg(long, value_name = "NAME", requires = "trend")]
    pub(crate) workload: Option<String>,

    /// Only runs since then: 2026-11-01, an RFC 3339 time, or 30d.
    #[arg(long, value_name = "WHEN", requires = "trend")]
    pub(crate) since: Option<String>,
}

/// The store's commands, flattened into the top-level command list.
#[derive(Subcommand, Debug)]
pub(crate) enum StoreCommands {
    /// List the runs kept in the store, newest first.
    History(HistoryArgs),
    /// The baseline of a target and suite, which `compare --against
    /// baseline` and `store:baseline` compare with.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// The store itself: import earlier results.
    #[command(subcommand)]
    Store(StoreCommand),
}

#[derive(Args, Debug, Clone)]
pub(crate) struct HistoryArgs {
    /// Only runs on this target (`*` matches any text: '/mnt/anf*').
    #[arg(long, value_name = "PATH")]
    pub(crate) target: Option<String>,

    /// Only runs of this suite.
    #[arg(long, value_name = "NAME")]
    pub(crate) suite: Option<String>,

    /// Only runs started since then: 2026-11-01, an RFC 3339 time, or 30d.
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,

    /// At most this many runs, newest first (1..1000000) [default: 50].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) limit: Option<String>,

    /// Print the runs as JSON (schema volbench.history/v1).
    #[arg(long)]
    pub(crate) json: bool,

    #[command(flatten)]
    pub(crate) store: StoreArg,
}

#[derive(Subcommand, Debug)]
pub(crate) enum BaselineCommand {
    /// Make run ID (`volbench history` lists them) the baseline of its
    /// target and suite, in place of the one before.
    Set {
        #[arg(value_name = "ID")]
        id: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// List the baselines: target, suite, run.
    List {
        #[command(flatten)]
        store: StoreArg,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum StoreCommand {
    /// Store earlier results: result directories, result.json files, fio
    /// JSON output (--output-format=json or json+), or a directory of them.
    Import {
        #[arg(value_name = "DIR|FILE", required = true)]
        paths: Vec<PathBuf>,
        /// The store to import into (made when absent) [default:
        /// $VOLBENCH_STORE, else $XDG_DATA_HOME/volbench/history.db].
        #[arg(long, value_name = "PATH|URL")]
        store: Option<String>,
    },
}

//! The flags of `volbench report` and `volbench compare`.

use std::path::PathBuf;

use clap::Args;

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

    /// Where to write the HTML comparison report; `-` for none.
    #[arg(
        short = 'o',
        long,
        value_name = "FILE",
        default_value = "volbench-compare.html"
    )]
    pub output: PathBuf,

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
